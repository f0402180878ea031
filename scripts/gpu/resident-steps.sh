#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2054 # grid sizes are comma lists
# Device-resident steps on a GPU node (docs/halo.md): the GPU-ordered IPC
# halo path, jacobi2d's late norm, the stall watchdog. Stages (comma list, default all):
#   build     configure + build the targets the stages need (build-gpu; CUDA arch 90)
#   test      ctest: the gpu tests of halo and funnel-stencil (incl. the new ones)
#   measure   through funnel-run with MPS, one run each, summary seconds:
#             heat3d float 768x96x96, 500 steps, split along x on 1, 2, 4, 8, 16, 32 ranks,
#             as CUDA graphs (the default), and with --graphs off and --halo-overlap on / off,
#             and the same boxes as
#             independent one-rank runs sharing the GPU (no coupling: the floor);
#             heat3d float 512^3, 200 steps, 1 and 8 ranks (both modes);
#             jacobi2d 16384^2, norm every iteration, 300 iterations: 1 rank, 8 ranks IPC,
#             8 ranks MPI
#   depth     deep halos (--halo-depth K, an exchange every K steps), through funnel-run with
#             MPS, one run each, as a fraction of one rank: heat3d float 768x96x96, 2000 steps,
#             split along x on 8, 16, 32 ranks with K = 1, 2, 3, 4, 6, 8 and auto; heat3d float
#             512^3, 200 steps, 8 ranks with K = 1, 2, 4 and auto
#   scale     deep halos at the rank counts users run, through funnel-run with MPS: 17 ranks on
#             1-cell boxes (refused in one line), 31 ranks K=4 float, 48 ranks K=2, 16 ranks K=3;
#             --halo-overlap on (17 ranks, 2x16x1 boxes), off (31), auto (48) under MPS, and
#             auto (5 ranks) and on (7) time-sliced; each field bitwise against one rank
#   stall     one of 3 ranks stopped (SIGSTOP) or killed (SIGKILL) mid-run, with MPS (kernel
#             signals, graphs), without (stream memory operations) and without MPS but with
#             FUNNEL_HALO_SIGNALS=kernel: the job ends promptly (a line naming a stopped
#             rank); a run right after works
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on halo_gpu and the app's
#             GPU-ordered runs (4 and 8 ranks), with stream and with kernel signals
# Usage: scripts/gpu/resident-steps.sh [STAGES] ; logs and JSON under $OUT, a table last.
set -euo pipefail

usage() { sed -n '5,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-${root}/gpu-out}
build=${BUILD_DIR:-${root}/build-gpu}
stages=${1:-build,test,stall,measure,sanitize}
mkdir -p "${out}"
cd "${root}"
# shellcheck source=scripts/gpu/debs.sh
source "${root}/scripts/gpu/debs.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1
app=${build}/bin/funnel-stencil
run=${build}/bin/funnel-run
table=()
# Each result line is printed at once (a call cut short still shows what ran) and kept for the
# table printed last.
record() {
  table+=("$(printf '%-40s %s' "$1" "$2")")
  printf '%-40s %s\n' "$1" "$2"
}

stage_build() {
  nvidia-smi -L >"${out}/machine.txt" 2>&1 || true
  local t0=${SECONDS}
  if funnel_gpu_configure "${build}" >"${out}/configure.log" 2>&1 &&
    cmake --build "${build}" -j "$(nproc)" --target funnel-stencil halo_gpu \
    h5_read_dataset >"${out}/build.log" 2>&1; then
    record build "ok ($((SECONDS - t0)) s)"
  else
    grep -E -A5 "FAILED|error" "${out}/build.log" | head -40
    record build FAIL
    return 1
  fi
}

stage_test() {
  local rc=0
  timeout 360 ctest --test-dir "${build}" -L gpu -R 'halo_gpu|stencil_gpu' --output-on-failure \
    >"${out}/ctest.log" 2>&1 || rc=$?
  grep -E "\*\*\*|tests passed" "${out}/ctest.log" | sed 's/^ *//' | tail -12
  record test "$(grep -E 'tests passed' "${out}/ctest.log" | tail -1) (rc ${rc})"
}

# stencil NAME RANKS ARGS...: one run through funnel-run (MPS when ranks share the GPU); prints
# the summary's loop seconds.
stencil() {
  local name=$1 ranks=$2
  shift 2
  # 16 and more clients of one MPS server need fewer connections each (docs/funnel-run.md).
  local connections=()
  ((ranks < 16)) || connections=(--max-connections 2)
  if timeout 120 mpirun -np "${ranks}" "${run}" "${connections[@]}" -- "${app}" --backend cuda --quiet \
    --summary "${out}/${name}.json" "$@" >"${out}/${name}.log" 2>&1; then
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time_s'])" "${out}/${name}.json"
  else
    echo "FAIL"
    tail -5 "${out}/${name}.log" >&2
  fi
}

ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.3f}')" "$1" "$2" 2>/dev/null || echo "-"; }

# independent NAME N ARGS...: N one-rank runs at once under one MPS daemon (each unsets the
# launcher's variables, so MPI starts it as a singleton): sharing the GPU without coupling.
# Prints the slowest run's loop seconds.
independent() {
  local name=$1 n=$2
  shift 2
  # shellcheck disable=SC2016 # expanded by the inner bash
  timeout 120 mpirun -np "${n}" "${run}" --mps on --max-connections 2 -- bash -c 'for v in $(env | sed -n "s/^\(OMPI_[A-Za-z0-9_]*\|PMIX_[A-Za-z0-9_]*\)=.*/\1/p"); do unset "${v}"; done; export OMPI_MCA_ess_singleton_isolated=1; exec "${@:2}" --summary "$1.${FUNNEL_LOCAL_RANK}.json"' \
    bash "${out}/${name}" "${app}" --backend cuda --quiet "$@" >"${out}/${name}.log" 2>&1 || true
  python3 -c "import json,glob,sys; print(max(json.load(open(f))['time_s'] for f in glob.glob(sys.argv[1] + '.*.json')))" "${out}/${name}" 2>/dev/null || echo FAIL
}

# variants NAME RANKS ARGS...: graphs (the default), then --graphs off with --halo-overlap on
# and off; prints "graphs on off".
variants() {
  local name=$1 ranks=$2
  shift 2
  local graphs on off
  graphs=$(stencil "${name}-graphs" "${ranks}" "$@")
  on=$(stencil "${name}-on" "${ranks}" "$@" --graphs off --halo-overlap on)
  off=$(stencil "${name}-off" "${ranks}" "$@" --graphs off --halo-overlap off)
  echo "${graphs} ${on} ${off}"
}

# ratios ONE "A B C": each of A B C as a fraction of one rank's time ONE
ratios() {
  local one=$1 t fractions=()
  for t in $2; do fractions+=("$(ratio "${one}" "${t}")"); done
  echo "${fractions[*]}"
}

stage_measure() {
  local one t r
  local small=(--n 768,96,96 --dtype float --steps 500)
  one=$(stencil small-1 1 "${small[@]}" --dims 1,1,1)
  record "768x96x96 float, 1 rank" "${one} s (fractions below: graphs; steps alone, overlap on, off)"
  for r in 2 4 8 16 32; do
    t=$(variants "small-${r}" "${r}" "${small[@]}" --dims "${r},1,1")
    record "768x96x96 float, ${r} ranks" "$(ratios "${one}" "${t}") (${t} s)"
  done
  one=$(stencil big-1 1 --n 512,512,512 --dtype float --steps 200)
  t=$(variants big-8 8 --n 512,512,512 --dtype float --steps 200)
  record "512^3 float, 8 ranks" "$(ratios "${one}" "${t}") (1 rank ${one} s)"
  local jac=(--problem jacobi2d -nx 16384 -ny 16384 -niter 300 -nccheck 1)
  one=$(stencil jacobi-1 1 "${jac[@]}")
  t=$(variants jacobi-8 8 "${jac[@]}" --halo ipc)
  local m
  m=$(stencil jacobi-8-mpi 8 "${jac[@]}" --halo mpi)
  record "jacobi2d 16384^2 nccheck 1, 8 ranks" "ipc $(ratios "${one}" "${t}"), mpi $(ratio "${one}" "${m}") (1 rank ${one} s)"
  pgrep -a nvidia-cuda-mps || true
}

stage_depth() {
  local one r k t line
  local small=(--n 768,96,96 --dtype float --steps 2000)
  one=$(stencil depth-small-1 1 "${small[@]}" --dims 1,1,1)
  record "768x96x96 float 2000 steps, 1 rank" "${one} s"
  for r in 8 16 32; do
    line=""
    for k in 1 2 3 4 6 8 auto; do
      t=$(stencil "depth-small-${r}-${k}" "${r}" "${small[@]}" --dims "${r},1,1" --halo-depth "${k}")
      line+="K=${k} $(ratio "${one}" "${t}")  "
    done
    record "768x96x96 float, ${r} ranks" "${line}"
  done
  one=$(stencil depth-big-1 1 --n 512,512,512 --dtype float --steps 200)
  line=""
  for k in 1 2 4 auto; do
    t=$(stencil "depth-big-8-${k}" 8 --n 512,512,512 --dtype float --steps 200 --halo-depth "${k}")
    line+="K=${k} $(ratio "${one}" "${t}")  "
  done
  record "512^3 float, 8 ranks" "${line}(1 rank ${one} s)"
  pgrep -a nvidia-cuda-mps || true
}

stage_scale() {
  local n mps=on
  # equal N ARGS...: N ranks vs one rank, bitwise (tests/apps/stencil_app_test.py equal),
  # through funnel-run --mps ${mps}.
  equal() {
    n=$1
    shift
    # (called in $(...): a counter would not survive; the arguments name the run)
    local log
    log=${out}/scale-${n}-${mps}-$(printf '%s' "$*" | md5sum | cut -c1-8).log
    timeout 150 python3 tests/apps/stencil_app_test.py --app "${app}" --mpiexec mpirun \
      --np-flag=-np "--preflags=${run} --mps ${mps} --max-connections 2 --" equal -- "${n}" \
      --backend cuda --problem heat3d "$@" >"${log}" 2>&1
    grep -E 'OK:|FAILED|field_layout gives no ghosts' "${log}" | tail -1
  }
  record "17 ranks, 1-cell boxes" "$(equal 17 --n 17,16,16 --steps 13 --dims 17,1,1)"
  record "31 ranks, K=4 float" "$(equal 31 --n 124,8,8 --steps 13 --dims 31,1,1 --halo-depth 4 --dtype float)"
  record "48 ranks, K=2" "$(equal 48 --n 96,16,16 --steps 13 --dims 48,1,1 --halo-depth 2)"
  record "16 ranks, K=3" "$(equal 16 --n 48,32,16 --steps 19 --dims 16,1,1 --halo-depth 3)"
  # Two steps per launch: 48 ranks on 2-cell boxes, 31 ranks with pairs split by
  # --check-every, 17 ranks with graphs of 4 pairs and a step alone (25 steps).
  record "48 ranks, 2 steps per launch, 2-cell boxes" "$(equal 48 --n 96,16,16 --steps 13 --dims 48,1,1 --steps-per-launch 2)"
  record "31 ranks, 2 per launch, pairs split, float" "$(equal 31 --n 62,8,8 --steps 14 --dims 31,1,1 --steps-per-launch 2 --check-every 3 --dtype float)"
  record "17 ranks, 2 per launch, graphs" "$(equal 17 --n 34,16,16 --steps 25 --dims 17,1,1 --steps-per-launch 2)"
  record "19 ranks, 1 step per launch" "$(equal 19 --n 38,16,16 --steps 13 --dims 19,1,1 --steps-per-launch 1)"
  # --halo-overlap auto|on|off at scale (steps alone: graphs would take the exchange-then-
  # update order whatever it says): on and off under MPS, auto (off) time-sliced.
  record "17 ranks, 2x16x1 boxes, overlap on" "$(equal 17 --n 34,16,1 --steps 13 --dims 17,1,1 --graphs off --halo-overlap on)"
  record "31 ranks, overlap off" "$(equal 31 --n 62,8,8 --steps 13 --dims 31,1,1 --graphs off --halo-overlap off)"
  record "48 ranks, overlap auto (on)" "$(equal 48 --n 96,16,16 --steps 13 --dims 48,1,1 --graphs off --halo-overlap auto)"
  mps=off
  record "5 ranks time-sliced, overlap auto (off)" "$(equal 5 --n 10,16,16 --steps 13 --dims 5,1,1 --dtype float)"
  record "7 ranks time-sliced, overlap on" "$(equal 7 --n 14,16,16 --steps 13 --dims 7,1,1 --halo-overlap on)"
}

stage_stall() {
  local how kind rc
  local args=(--backend cuda --n 64,64,96 --steps 10000000 --dims 1,1,3)
  for how in mps plain kernel; do
    local pre=() signals=auto
    [[ ${how} == mps ]] && pre=("--preflags=${run} --mps on --")
    [[ ${how} == kernel ]] && signals=kernel
    for kind in stall kill; do
      rc=0
      FUNNEL_HALO_SIGNALS=${signals} FUNNEL_HALO_TIMEOUT=2 timeout 150 python3 tests/apps/resident_steps_test.py --app "${app}" \
        --mpiexec mpirun "${pre[@]}" "${kind}" -- 3 "${args[@]}" >"${out}/${kind}-${how}.log" 2>&1 || rc=$?
      record "${kind} one of 3 ranks (${how})" "$([[ ${rc} -eq 0 ]] && echo ok || echo "FAIL ${rc}"): $(grep -m1 -E 'job ended' "${out}/${kind}-${how}.log")"
      [[ ${rc} -eq 0 ]] || tail -8 "${out}/${kind}-${how}.log"
    done
  done
  sleep 2
  record "MPS left after the stall runs" "$(pgrep -c -f nvidia-cuda-mps-control || true)"
}

stage_sanitize() {
  local rc=0
  mkdir -p "${out}/sanitizer"
  timeout 400 python3 scripts/gpu/sanitize-gpu-tests.py "${build}" --log "${out}/sanitizer" \
    --only 'halo_gpu|app_heat3d_ipc|app_jacobi2d' >"${out}/sanitizer.log" 2>&1 || rc=$?
  mkdir -p "${out}/sanitizer-kernel"
  FUNNEL_HALO_SIGNALS=kernel timeout 400 python3 scripts/gpu/sanitize-gpu-tests.py "${build}" \
    --log "${out}/sanitizer-kernel" --only 'halo_gpu|app_heat3d_ipc|app_jacobi2d' \
    >>"${out}/sanitizer.log" 2>&1 || rc=$?
  cat "${out}/sanitizer.log"
  tar czf "${out}/sanitizer-logs.tgz" -C "${out}" sanitizer sanitizer-kernel && rm -rf "${out}/sanitizer" "${out}/sanitizer-kernel"
  record sanitize "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL): $(tail -1 "${out}/sanitizer.log")"
}

pack() { (cd "${out}" && tar czf runs.tgz ./*.log ./*.json 2>/dev/null && rm -f ./*.log ./*.json) || true; }

IFS=, read -ra list <<<"${stages}"
for s in "${list[@]}"; do
  declare -F "stage_${s}" >/dev/null || { echo "unknown stage '${s}'" >&2; exit 2; }
  "stage_${s}" || record "${s}" "stage failed"
done
pkill -f nvidia-cuda-mps-control 2>/dev/null || true
pack
printf '\n%s\n' "${table[@]}"
