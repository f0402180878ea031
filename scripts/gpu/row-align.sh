#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Whether padded rows pay for jacobi2d (docs/halo.md, "The split of a small grid"): funnel-stencil
# jacobi2d, norm every iteration, through funnel-run with MPS on GPU 0, rows of n + 2 cells
# (--row-align none) against padded rows (16) and what the default picks (auto), interleaved, for
# boxes from 2 to 34 million cells in rows of 2049 to 8193 cells. On a node of several GPUs also
# 4 ranks a GPU on every GPU against 4 ranks on one (strong efficiency), none against auto.
# Usage: scripts/gpu/row-align.sh [--build-dir DIR] [--rounds N] [--help]   (after
# scripts/gpu/run-all.sh build). One line per job: seconds of the steps, the split, the rows
# padded or not; logs under $OUT/row-align (or ./gpu-out/row-align).
set -uo pipefail

usage() { sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//'; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${root}/build-gpu
rounds=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) [[ $# -ge 2 ]] || { echo "row-align.sh: --build-dir needs a folder" >&2; exit 2; }
      build=$2; shift ;;
    --rounds) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] ||
      { echo "row-align.sh: --rounds needs a positive integer, got '${2:-}'" >&2; exit 2; }
      rounds=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "row-align.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ ${build} = /* ]] || build=${root}/${build}
stencil=${build}/bin/funnel-stencil
[[ -x ${stencil} ]] ||
  { echo "row-align.sh: no ${stencil}: run scripts/gpu/run-all.sh build" >&2; exit 2; }
out=${OUT:-${root}/gpu-out}/row-align
mkdir -p "${out}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The jobs run in a scratch directory: nothing they write stays in the checkout.
work=$(mktemp -d "${TMPDIR:-/tmp}/funnel-row-align.XXXXXX")
trap 'rm -rf "${work}"' EXIT
cd "${work}" || exit 1
gpus=$(nvidia-smi -L | wc -l)

# job TAG RANKS GPU_LIST ARGS...: one job; prints TAG, seconds, split and rows, keeps the seconds
# in $seconds (empty when the job failed).
job() {
  local tag=$1 ranks=$2 list=$3 log=${out}/$1.log
  shift 3
  timeout 300 mpirun -np "${ranks}" "${root}/launch/funnel-run" --gpus "${list}" -- "${stencil}" \
    --problem jacobi2d --check-every 1 --quiet "$@" >"${log}" 2>&1
  seconds=$(grep -m1 -oE 'in [0-9.]+ s' "${log}" | awk '{ print $2 }')
  printf '%-36s %8s s  %s%s\n' "${tag}" "${seconds:-FAIL}" \
    "$(grep -m1 -oE 'decomposition [0-9x]+' "${log}")" \
    "$(grep -q 'rows padded' "${log}" && echo ', rows padded')"
}

# Each case: RANKS GRID ITERATIONS DIMS.
cases=("16 16384,16384 1000 2,8" "24 16384,16384 1000 3,8" "32 16384,16384 1000 4,8"
  "48 16384,16384 1000 6,8" "16 16384,2050 1000 2,8" "32 16384,65538 300 4,8"
  "48 16384,65538 300 6,8" "8 16384,16384 1000 8,1")
for ((round = 1; round <= rounds; round++)); do
  for c in "${cases[@]}"; do
    read -r ranks grid steps dims <<<"${c}"
    for align in none 16 auto; do
      job "r${round}-${ranks}r-${grid/,/x}-${dims/,/x}-${align}" "${ranks}" 0 --n "${grid}" \
        --steps "${steps}" --dims "${dims}" --row-align "${align}"
    done
  done
done

if ((gpus > 1)); then
  list=$(seq -s, 0 $((gpus - 1)))
  for ((round = 1; round <= rounds; round++)); do
    job "r${round}-node-1gpu-4r" 4 0 --n 16384,16384 --steps 1000
    one=${seconds}
    for align in none auto; do
      job "r${round}-node-${gpus}gpu-$((4 * gpus))r-${align}" $((4 * gpus)) "${list}" \
        --n 16384,16384 --steps 1000 --row-align "${align}"
      [[ -n ${one} && -n ${seconds} ]] &&
        awk -v a="${one}" -v b="${seconds}" -v g="${gpus}" \
          'BEGIN { printf "  strong efficiency on %d GPUs: %.3f\n", g, a / (g * b) }'
    done
  done
fi
