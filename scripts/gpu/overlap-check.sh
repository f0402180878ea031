#!/usr/bin/env bash
# funnel-stencil --halo-overlap on and off at the rank counts users run, on one GPU through
# funnel-run with MPS (issue #14's option): each field bitwise equal to one rank's
# (--field-dump), for
#   heat3d 96x80x64, 10 steps, on 7, 17, 32 and 48 ranks (primes and dense sharing)
#   heat3d 96x1x1 on 48 ranks (boxes of 2 cells, the smallest funnel splits to) and 96x80x1
#   (one cell thick) on 7 ranks; 48x1x1 on 48 ranks (boxes of 1 cell) is refused: exit 2, one line
# Usage: scripts/gpu/overlap-check.sh [--help] BUILD_DIR   (details under $OUT or ./gpu-out;
# OVERLAP_BACKEND=host OVERLAP_MPS=off OVERLAP_RANKS="3 5" run the same without a GPU)
# A short table is printed last; the exit status is non-zero when any check failed.
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
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

# stencil NAME RANKS ARGS...: one run into ${work}/NAME.bin; prints its exit status.
stencil() {
  local name=$1 ranks=$2 rc=0
  shift 2
  timeout -k 5 300 mpirun --bind-to none -np "${ranks}" "${runner}" --mps "${OVERLAP_MPS:-on}" -- \
    "${app}" --backend "${backend}" --problem heat3d --steps 10 --quiet \
    --field-dump "${work}/${name}.bin" "$@" >"${out}/${name}.log" 2>&1 || rc=$?
  echo "${rc}"
}

# grid NAME GRID RANKS...: one rank's field, then each count with the overlap on and off.
grid() {
  local name=$1 cells=$2 n mode rc
  shift 2
  rc=$(stencil "${name}-1" 1 --n "${cells}")
  if [[ ${rc} -ne 0 ]]; then
    record "${name} ${cells}: 1 rank" FAIL "exit ${rc}; see ${name}-1.log"
    return 0
  fi
  for n in "$@"; do
    for mode in on off; do
      rc=$(stencil "${name}-${n}-${mode}" "${n}" --n "${cells}" --halo-overlap "${mode}")
      if [[ ${rc} -ne 0 ]]; then
        record "${name} ${cells}: ${n} ranks, overlap ${mode}" FAIL "exit ${rc}"
      elif cmp -s "${work}/${name}-1.bin" "${work}/${name}-${n}-${mode}.bin"; then
        record "${name} ${cells}: ${n} ranks, overlap ${mode}" ok "bitwise = 1 rank"
      else
        record "${name} ${cells}: ${n} ranks, overlap ${mode}" FAIL "field differs from 1 rank"
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
