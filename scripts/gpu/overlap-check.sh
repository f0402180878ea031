#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel-stencil's ways of ordering resident steps at the rank counts users run, on one GPU
# through funnel-run with MPS: each field bitwise equal to one rank's (--field-dump)
# for each of
#   graphs   the default: 8 steps per CUDA graph, kernel-signalled halos (10 steps: one graph,
#            then two steps alone)
#   on, off  --graphs off with --halo-overlap on / off (kernel signals, steps one by one)
#   stream   FUNNEL_HALO_SIGNALS=stream: stream memory operations, so no graphs, overlap on
# on
#   heat3d 96x80x64, 10 steps, on 7, 17, 32 and 48 ranks (primes and dense sharing)
#   heat3d 96x1x1 on 48 ranks (boxes of 2 cells, the smallest funnel splits to) and 96x80x1
#   (one cell thick) on 7 ranks; 48x1x1 on 48 ranks (boxes of 1 cell) is refused: exit 2, one line
# Usage: scripts/gpu/overlap-check.sh [--help] BUILD_DIR   (details under $OUT or ./gpu-out;
# OVERLAP_BACKEND=host OVERLAP_MPS=off OVERLAP_RANKS="3 5" run the same without a GPU)
# A short table is printed last; the exit status is non-zero when any check failed.
set -euo pipefail

usage() { sed -n '4,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then usage; exit 0; fi
[[ $# -eq 1 ]] || { usage >&2; exit 2; }
build=$(cd "$1" && pwd)
app=${build}/bin/funnel-stencil
runner=${build}/bin/funnel-run
out=${OUT:-$(pwd)/gpu-out}/overlap
mkdir -p "${out}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
backend=${OVERLAP_BACKEND:-cuda}
read -ra counts <<<"${OVERLAP_RANKS:-7 17 32 48}"
work=$(mktemp -d "${TMPDIR:-/tmp}/funnel-overlap.XXXXXX")
trap 'rm -rf "${work}"' EXIT

table=()
status=0
record() { # record NAME ok|FAIL DETAIL
  table+=("$(printf '%-40s %-5s %s' "$1" "$2" "$3")")
  if [[ $2 == FAIL ]]; then status=1; fi
  return 0
}

# variant MODE: the arguments of one way of ordering the steps (see the top).
variant() {
  case $1 in
    graphs | stream) echo "--graphs auto" ;;
    on | off) echo "--graphs off --halo-overlap $1" ;;
  esac
}

# stencil NAME RANKS ARGS...: one run into ${work}/NAME.bin; prints its exit status.
# FUNNEL_HALO_SIGNALS passes through (the stream variant sets it).
stencil() {
  local name=$1 ranks=$2 rc=0
  shift 2
  timeout -k 5 300 mpirun --bind-to none -np "${ranks}" -x FUNNEL_HALO_SIGNALS \
    "${runner}" --mps "${OVERLAP_MPS:-on}" -- \
    "${app}" --backend "${backend}" --problem heat3d --steps 10 --quiet \
    --field-dump "${work}/${name}.bin" "$@" >"${out}/${name}.log" 2>&1 || rc=$?
  echo "${rc}"
}

# grid NAME GRID RANKS...: one rank's field, then each count in each variant.
grid() {
  local name=$1 cells=$2 n mode rc
  shift 2
  rc=$(stencil "${name}-1" 1 --n "${cells}")
  if [[ ${rc} -ne 0 ]]; then
    record "${name} ${cells}: 1 rank" FAIL "exit ${rc}; see ${name}-1.log"
    return 0
  fi
  for n in "$@"; do
    for mode in graphs on off stream; do
      local signals=auto
      [[ ${mode} == stream ]] && signals=stream
      # shellcheck disable=SC2046 # variant's words are separate arguments
      rc=$(FUNNEL_HALO_SIGNALS=${signals} stencil "${name}-${n}-${mode}" "${n}" --n "${cells}" \
        $(variant "${mode}"))
      if [[ ${rc} -ne 0 ]]; then
        record "${name} ${cells}: ${n} ranks, ${mode}" FAIL "exit ${rc}"
      elif cmp -s "${work}/${name}-1.bin" "${work}/${name}-${n}-${mode}.bin"; then
        record "${name} ${cells}: ${n} ranks, ${mode}" ok "bitwise = 1 rank"
      else
        record "${name} ${cells}: ${n} ranks, ${mode}" FAIL "field differs from 1 rank"
      fi
    done
  done
}

grid cube 96,80,64 "${counts[@]}"
grid cells 96,1,1 "${counts[-1]}"
# Boxes of one cell along a split axis get no ghosts: refused by every rank alike, one line.
rc=$(stencil refused "${counts[-1]}" --n 48,1,1)
lines=$(grep -c 'leaves boxes of 1 cell' "${out}/refused.log" || true)
if [[ ${rc} -eq 2 && ${lines} -eq 1 ]]; then
  record "48,1,1 on ${counts[-1]} ranks refused" ok "exit 2, one line"
else
  record "48,1,1 on ${counts[-1]} ranks refused" FAIL "exit ${rc}, ${lines} line(s)"
fi
grid thin 96,80,1 "${counts[0]}"

printf '%s\n' "${table[@]}" | tee "${out}/table.txt"
exit "${status}"
