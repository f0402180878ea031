#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The kernels and the pipeline against their physical bounds, on a GPU node (docs/performance.md).
#   build    configure build-gpu (scripts/gpu/debs.sh) and build what the stages below run
#   check    kernels_gpu: every CUDA kernel shape (vector widths 1, 2, 4) bitwise against the host
#   measure  funnel-bench stencil (resident cases only: heat3d 256^3-1024^3 float and double and
#            jacobi2d 16384^2 with its norm, each on funnel's rows, on rows padded to 8 and 16
#            bytes, and on 16-byte rows whose interior starts on the boundary) and funnel-bench
#            pipeline; JSON under $OUT
#   profile  Nsight Compute (ncu) on one heat3d 512^3 float and one jacobi2d 16384^2 step per row
#            padding: throughput, memory and occupancy sections, what limits each kernel
#   tiling   tests/kernels/heat3d_tiling_probe: heat3d variants tried against funnel's kernel (the
#            2.5D shared-memory z-march, the register column march, the asynchronous march, the
#            shuffled tile), float and double, 256^3 to 1024^3, rows of n + 2 cells and padded
#            rows, against a copy
#   limits   what holds heat3d under a copy: the probe's load ladder and copy kernels, timed, then
#            Nsight Compute (DRAM and L2 throughput, bytes, occupancy) on the copy kernel,
#            funnel's kernel, the column march and the ladder, 512^3 float on padded rows
# Usage: scripts/gpu/kernel-bounds.sh STAGE[,STAGE...]   (default: build,check,measure)
# Logs go to $OUT (or ./gpu-out); a short table is printed last.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-${root}/gpu-out}
build=${BUILD_DIR:-${root}/build-gpu}
stages=${1:-build,check,measure}
bench=${build}/bin/funnel-bench
table=()

record() { table+=("$(printf '%-9s %-6s %s' "$1" "$2" "$3")"); }

usage() {
  sed -n '4,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

stage_build() {
  # shellcheck source=scripts/gpu/debs.sh
  source "${root}/scripts/gpu/debs.sh"
  local t0=${SECONDS}
  if funnel_gpu_configure "${build}" >"${out}/configure.log" 2>&1 &&
    cmake --build "${build}" -j "$(nproc)" --target funnel-bench funnel-stencil \
      kernels_gpu heat3d_tiling_probe >"${out}/build.log" 2>&1; then
    record build ok "$((SECONDS - t0)) s"
  else
    grep -E -A3 "FAILED|error" "${out}/build.log" | head -40 || tail -20 "${out}/configure.log"
    record build FAIL "see build.log"
    return 1
  fi
}

stage_check() {
  if "${build}/bin/kernels_gpu" >"${out}/kernels_gpu.log" 2>&1; then
    record check ok "$(grep -E '^\[  PASSED' "${out}/kernels_gpu.log")"
  else
    grep -E "FAILED|Failure" -A5 "${out}/kernels_gpu.log" | head -40
    record check FAIL "see kernels_gpu.log"
  fi
}

stage_measure() {
  local rc=0
  "${bench}" stencil --row-align 16,none,8 --ranks 1 --split-ranks 1 \
    --json "${out}/stencil.json" >"${out}/stencil.txt" 2>&1 || rc=$?
  grep -E "vs copy" "${out}/stencil.txt" || tail -20 "${out}/stencil.txt"
  record stencil "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "stencil.txt"
  rc=0
  "${bench}" pipeline --json "${out}/pipeline.json" >"${out}/pipeline.txt" 2>&1 || rc=$?
  grep -E "pipelined|k-curve|directions" "${out}/pipeline.txt" || tail -20 "${out}/pipeline.txt"
  record pipeline "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "pipeline.txt"
}

stage_profile() {
  local rc=0
  # One step of each variant (no warm-up, one repetition): heat3d none/16 then jacobi2d none/16.
  ncu --kernel-name regex:'heat3d_3d|jacobi2d' --launch-count 4 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
    --section Occupancy --section WarpStateStats \
    "${bench}" stencil --sizes 512 --dtypes float --steps 1 --warmup 0 --repeat 1 \
    --row-align none,16 --ranks 1 --split-ranks 1 >"${out}/ncu.txt" 2>&1 || rc=$?
  grep -E "heat3d_3d|jacobi2d|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Duration|Registers Per" \
    "${out}/ncu.txt" | head -60
  record profile "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "ncu.txt"
}

stage_tiling() {
  local rc=0 type n rows
  : >"${out}/tiling.txt"
  for rows in none 16; do
    for type in float double; do
      for n in 256 512 1024; do
        TILING_PROBE_ASYNC=1 TILING_PROBE_COLUMNS=1 "${build}/bin/heat3d_tiling_probe" "${type}" \
          "${n}" "${rows}" >>"${out}/tiling.txt" 2>&1 || rc=$?
      done
    done
  done
  grep -E "device copy|MISMATCH" "${out}/tiling.txt" | head -40
  record tiling "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "tiling.txt"
}

stage_limits() {
  local rc=0 probe=${build}/bin/heat3d_tiling_probe
  TILING_PROBE_LADDER=1 TILING_PROBE_ONLY=ladder,copy_vectors "${probe}" float 512 16 \
    >"${out}/ladder.txt" 2>&1 || rc=$?
  grep -E "copy" "${out}/ladder.txt" | head -20
  local metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
  metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
  metrics+=,launch__registers_per_thread
  TILING_PROBE_ONCE=1 TILING_PROBE_LADDER=1 TILING_PROBE_COLUMNS=1 \
    TILING_PROBE_ONLY="copy_vectors,ladder centre,ladder all,column P4 U1 64x4" \
    ncu --kernel-name regex:'heat3d_3d|copy_vectors|load_ladder|column_march' --metrics "${metrics}" \
    "${probe}" float 512 16 >"${out}/limits-ncu.txt" 2>&1 || rc=$?
  grep -E "Context 1|dram__throughput|lts__throughput|lts__t_bytes" "${out}/limits-ncu.txt" |
    sed -E 's/ +/ /g' | cut -c1-120 | head -60
  record limits "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "ladder.txt, limits-ncu.txt"
}

main() {
  case "${stages}" in -h | --help) usage; return 0 ;; esac
  mkdir -p "${out}"
  cd "${root}"
  local stage
  for stage in ${stages//,/ }; do
    case "${stage}" in
      build | check | measure | profile | tiling | limits) "stage_${stage}" || true ;;
      *) echo "kernel-bounds.sh: unknown stage '${stage}' (build, check, measure, profile, tiling, limits)" >&2; return 2 ;;
    esac
  done
  printf '%s\n' "----" "${table[@]}"
}

main "$@"
