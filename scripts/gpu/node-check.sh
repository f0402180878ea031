#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # stage_* functions are called indirectly
# funnel on a node of several GPUs (2 to 8), through funnel-run. Stages:
#   build     configure BUILD_DIR (CUDA on) and build funnel-stencil, funnel-bench, the GPU halo,
#             memory and IPC tests, ipc_import_probe and funnel_mps_client
#   probe     tests/ipc/ipc_import_probe: pool, legacy and VMM imports of 1-16 GiB, on one GPU
#             and across GPUs a process cannot see (which sizes the driver maps, which crash)
#   tests     ctest: halo_gpu, memory_gpu, ipc_gpu, path_choice_unit
#   bitwise   heat3d 64x48x40 double split over 1..N GPUs (2 and all of them) at 1, 4 and 16 ranks
#             per GPU with --halo auto, ipc and mpi, two steps per launch (auto, mpi) at 1 and 4,
#             2 ranks per GPU time-sliced (--mps off), and boxes placed by GPU (--placement device)
#             at 4 and 16 (jacobi2d at 4); on every GPU 48 ranks a GPU by GPU, 7 and 13 ranks,
#             and a grid one cell thick: the field bitwise equal to one rank's;
#             auto must take peer-ordered links;
#             jacobi2d likewise at 1 and 4 ranks per GPU
#   bigbox    ranks of 6 and 8 GiB fields over IPC (2 ranks on one GPU 1536x1024x1024 double,
#             one rank per GPU 2048x1024x1024 double, and on every GPU of a node of more than 2
#             with --halo ipc): they run; a grid no GPU holds: one line
#   kill      a rank on the second GPU killed (SIGKILL) mid-run: the job ends, naming it
#   teardown  kill -9 of mpirun with 16 ranks per GPU on every GPU: MPS processes left at 10 s
#   startup   16 ranks per GPU on every GPU (funnel_mps_client): funnel-run against a ten-line
#             wrapper that starts one daemon, median of STARTUP_ROUNDS (default 3) interleaved
#             jobs each (goal: no slower; rounds of one launcher spread by up to a second, so use
#             5 or more to decide), and when the last rank's app started; shown beside:
#             funnel-run with nvidia-smi -L answered from a file
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on the peer path (1 rank on every GPU),
#             memcheck on the staged path with two steps per launch
#   scaling   funnel-bench scaling (SCALING_ARGS, default: its defaults; runs split by ';')
# Usage: scripts/gpu/node-check.sh [--build-dir DIR] [--stages LIST] [--help]
# Logs go to $OUT (or ./gpu-out); a short table is printed last. Every MPS daemon is stopped.
set -euo pipefail

usage() { sed -n '5,32p' "$0" | sed 's/^# \{0,1\}//'; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${root}/build-gpu
stages=build,probe,tests,bitwise,bigbox,kill,teardown,startup,sanitize,scaling
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --stages) stages=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "node-check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
startup_rounds=${STARTUP_ROUNDS:-3}
[[ ${startup_rounds} =~ ^[1-9][0-9]?$ ]] || {
  echo "node-check.sh: STARTUP_ROUNDS='${startup_rounds}' is not allowed (1-99)" >&2
  exit 2
}
out=${OUT:-${root}/gpu-out}
mkdir -p "${out}"
[[ ${build} = /* ]] || build=${root}/${build}
cd "${root}"
# The jobs run in a scratch directory: what they write there (a checkpoint on SIGTERM) goes too.
work=$(mktemp -d "${TMPDIR:-/tmp}/funnel-node-check.XXXXXX")
trap 'rm -rf "${work}"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Ranks are not bound to one core each: the end-of-run check of heat3d is OpenMP on the host.
export OMPI_MCA_hwloc_base_binding_policy=none OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0
stencil=${build}/bin/funnel-stencil
run=${FUNNEL_RUN:-${root}/launch/funnel-run}  # FUNNEL_RUN: another launcher to check
gpus=$(nvidia-smi -L | wc -l)
table=()
record() { table+=("$(printf '%-9s %-42s %-6s %s' "$1" "$2" "$3" "$4")"); }
verdict() { if "$@"; then echo ok; else echo FAIL; fi; }
gpu_list() { seq -s, 0 $(($1 - 1)); }
mps_left() { pgrep -c -f 'nvidia-cuda-mps-(control|server)' || true; }
# wait_mps_gone SECONDS: waits until no MPS process is left, at most SECONDS (a job's reaper stops
# its daemons after mpirun has returned); prints the seconds waited, rounded up.
wait_mps_gone() {
  local steps=0
  while (($(mps_left) > 0 && steps < $1 * 5)); do sleep 0.2; steps=$((steps + 1)); done
  echo $(((steps + 4) / 5))
}

stage_build() {
  # shellcheck source=scripts/gpu/debs.sh
  source "${root}/scripts/gpu/debs.sh"
  local t0=${SECONDS}
  if ! funnel_gpu_configure "${build}" >"${out}/configure.log" 2>&1; then
    grep -E -B2 -A8 "CMake Error|error" "${out}/configure.log" | head -60
    record build "configure" FAIL "see configure.log"
    return 1
  fi
  if cmake --build "${build}" -j "$(nproc)" --target funnel-stencil funnel-bench halo_gpu \
    memory_gpu ipc_gpu path_choice_unit ipc_import_probe funnel_mps_client >"${out}/build.log" 2>&1; then
    record build "targets" ok "$((SECONDS - t0)) s"
  else
    grep -E -A5 "error|FAILED" "${out}/build.log" | head -40
    record build "targets" FAIL "see build.log"
    return 1
  fi
}

stage_probe() {
  local cases=(pool:1:0:0 pool:5:0:0 pool:5.5:0:0 legacy:8:0:0 vmm:8:0:0 pool:1:0:1 legacy:8:0:1)
  "${build}/bin/ipc_import_probe" "${cases[@]}" | tee "${out}/probe.log"
  record probe "pool import 5 GiB / 5.5 GiB" info \
    "$(grep -E '^pool +5(\.5)? ' "${out}/probe.log" | sed 's/.*: //' | paste -sd/)"
  record probe "legacy IPC 8 GiB, other GPU hidden" \
    "$(verdict grep -qE '^legacy +8 GiB +GPU 0 -> GPU 1: ok' "${out}/probe.log")" ""
}

stage_tests() {
  local rc=0
  ctest --test-dir "${build}" -R '^(halo_gpu|memory_gpu|ipc_gpu|path_choice_unit)$' \
    --output-on-failure --timeout 300 >"${out}/ctest.log" 2>&1 || rc=$?
  record tests "halo_gpu memory_gpu ipc_gpu path_choice" "$( ((rc == 0)) && echo ok || echo FAIL)" \
    "$(grep -E 'tests passed' "${out}/ctest.log" | tail -1)"
}

# stencil_run TAG RANKS FUNNEL_RUN_ARGS... -- APP_ARGS...: one job through funnel-run.
stencil_run() {
  local tag=$1 ranks=$2
  shift 2
  local -a fr=()
  while [[ $1 != -- ]]; do fr+=("$1"); shift; done
  shift
  (cd "${work}" && timeout 300 mpirun -np "${ranks}" "${run}" "${fr[@]}" -- "${stencil}" "$@") \
    >"${out}/${tag}.log" 2>&1
}

# bitwise_case TAG RANKS REF FUNNEL_RUN_ARGS... -- APP_ARGS...: one split run whose dumped field
# must equal REF byte for byte; counts it in ok / bad (stage_bitwise's).
bitwise_case() {
  local tag=$1 ranks=$2 ref=$3
  shift 3
  if stencil_run "${tag}" "${ranks}" "$@" --field-dump "${out}/${tag}.bin" &&
    cmp -s "${ref}" "${out}/${tag}.bin"; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1)); echo "bitwise FAIL: ${tag}"; tail -3 "${out}/${tag}.log"
  fi
  rm -f "${out}/${tag}.bin"
}

stage_bitwise() {
  local heat=(--problem heat3d --n "64,48,40" --dtype double --steps 12)
  local jac=(--problem jacobi2d --n "258,130" --steps 30)
  local ok=0 bad=0 g rpg halo list
  local heat_ref=${out}/ref-heat.bin jac_ref=${out}/ref-jac.bin
  stencil_run bw-heat-ref 1 --gpus 0 -- "${heat[@]}" --field-dump "${heat_ref}" || true
  stencil_run bw-jac-ref 1 --gpus 0 -- "${jac[@]}" --field-dump "${jac_ref}" || true
  local counts=(2)
  ((gpus > 2)) && counts+=("${gpus}")
  for g in "${counts[@]}"; do
    list=$(gpu_list "${g}")
    for rpg in 1 4 16; do
      for halo in auto ipc mpi; do
        bitwise_case "bw-heat-${g}g-${rpg}-${halo}" $((g * rpg)) "${heat_ref}" --gpus "${list}" \
          -- "${heat[@]}" --halo "${halo}"
      done
    done
    # Two steps per launch (auto takes it for fields larger than L2): overlapped pairs.
    for rpg in 1 4; do
      for halo in auto mpi; do
        bitwise_case "bw-heat-${g}g-${rpg}-${halo}-pairs" $((g * rpg)) "${heat_ref}" \
          --gpus "${list}" -- "${heat[@]}" --halo "${halo}" --steps-per-launch 2
      done
    done
    for rpg in 1 4; do
      bitwise_case "bw-jac-${g}g-${rpg}" $((g * rpg)) "${jac_ref}" --gpus "${list}" -- "${jac[@]}"
    done
    # Boxes placed by GPU (the ranks of a GPU take a slab) under the round-robin binding.
    for rpg in 4 16; do
      bitwise_case "bw-heat-${g}g-${rpg}-device" $((g * rpg)) "${heat_ref}" --gpus "${list}" \
        -- "${heat[@]}" --placement device
    done
    bitwise_case "bw-jac-${g}g-4-device" $((4 * g)) "${jac_ref}" --gpus "${list}" \
      -- "${jac[@]}" --placement device
    # Time-sliced ranks (no MPS): stream-signalled GPU-ordered links between the GPUs.
    bitwise_case "bw-heat-${g}g-2-mpsoff" $((2 * g)) "${heat_ref}" --gpus "${list}" --mps off \
      -- "${heat[@]}"
  done
  # The shapes users run that the counts above miss, on every GPU: 48 ranks a GPU with boxes by
  # GPU, prime rank counts (uneven GPUs), and a grid one cell thick.
  list=$(gpu_list "${gpus}")
  bitwise_case "bw-heat-48-device" $((48 * gpus)) "${heat_ref}" --gpus "${list}" \
    -- "${heat[@]}" --placement device
  bitwise_case "bw-heat-7-auto" 7 "${heat_ref}" --gpus "${list}" -- "${heat[@]}"
  bitwise_case "bw-heat-13-device" 13 "${heat_ref}" --gpus "${list}" -- "${heat[@]}" \
    --placement device
  bitwise_case "bw-heat-13-mpi" 13 "${heat_ref}" --gpus "${list}" -- "${heat[@]}" --halo mpi
  local thin=(--problem heat3d --n "64,48,1" --dtype double --steps 12)
  local thin_ref=${out}/ref-thin.bin
  stencil_run bw-thin-ref 1 --gpus 0 -- "${thin[@]}" --field-dump "${thin_ref}" || true
  bitwise_case "bw-thin-7-device" 7 "${thin_ref}" --gpus "${list}" -- "${thin[@]}" \
    --placement device
  bitwise_case "bw-thin-4-y" 4 "${thin_ref}" --gpus "${list}" -- "${thin[@]}" --dims 1,4,1
  record bitwise "N ranks on 2..${gpus} GPUs = 1 rank" "$( ((bad == 0)) && echo ok || echo FAIL)" \
    "${ok} equal, ${bad} not"
  record bitwise "auto takes peer-ordered between GPUs" \
    "$(verdict grep -q 'peer-ordered' "${out}/bw-heat-2g-1-auto.log")" \
    "$(grep -m1 '  halo:' "${out}/bw-heat-2g-1-auto.log" | cut -c1-80)"
  local waited
  waited=$(wait_mps_gone 15)
  record bitwise "MPS gone after the jobs" "$(verdict test "$(mps_left)" -eq 0)" "${waited} s"
}

# bigbox_case TAG WHAT RANKS GPU_LIST APP_ARGS...: one big-box job that must run; the detail is
# rank 0's halo links from the plan.
bigbox_case() {
  local tag=$1 what=$2 ranks=$3 list=$4 rc=0
  shift 4
  stencil_run "${tag}" "${ranks}" --gpus "${list}" -- "$@" --steps 4 || rc=$?
  record bigbox "${what}" "$(verdict test "${rc}" -eq 0)" \
    "rc ${rc}; $(grep -m1 'rank 0:' "${out}/${tag}.log" | sed 's/.*rank 0://' | cut -c1-40)"
}

stage_bigbox() {
  local rc
  bigbox_case big-1gpu "2 ranks, 1 GPU, 6 GiB fields (IPC)" 2 0,0 --n 1536,1024,1024 --halo auto
  bigbox_case big-2gpu "1 rank/GPU, 8 GiB fields (peer)" 2 0,1 --n 2048,1024,1024 --halo auto
  if ((gpus > 2)); then
    bigbox_case big-allgpu "1 rank/GPU on ${gpus} GPUs, 8 GiB fields (--halo ipc)" "${gpus}" \
      "$(gpu_list "${gpus}")" --n "$((1024 * gpus)),1024,1024" --halo ipc
  fi
  rc=0; stencil_run big-nofit 2 --gpus 0,1 -- --n 32768,1024,1024 --steps 4 --halo auto || rc=$?
  record bigbox "a grid that fits no GPU: exit 1, one line" \
    "$(verdict test "${rc}" -eq 1 -a "$(grep -c 'funnel-stencil: ' "${out}/big-nofit.log")" -le 1)" \
    "$(grep -m1 -i 'error\|memory' "${out}/big-nofit.log" | cut -c1-90)"
}

# The pid of funnel-stencil of rank $1 (OpenMPI's OMPI_COMM_WORLD_RANK in its environment).
rank_pid() {
  local p
  for p in $(pgrep -f "${stencil}"); do
    if tr '\0' '\n' <"/proc/${p}/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "${p}"; return 0
    fi
  done
  return 1
}

stage_kill() {
  local t0 rc=0 victim
  # A directory of its own: the checkpoint another stage's job wrote on SIGTERM is not its.
  mkdir -p "${work}/kill" && cd "${work}/kill"
  FUNNEL_HALO_TIMEOUT=10 mpirun -np 4 "${run}" --gpus 0,1 -- "${stencil}" --n 256,256,256 \
    --steps 1000000 --quiet >"${out}/kill.log" 2>&1 &
  local job=$!
  sleep 8
  victim=$(rank_pid 1 || true)
  t0=${SECONDS}
  [[ -n ${victim} ]] && kill -KILL "${victim}"
  wait "${job}" || rc=$?
  record kill "rank 1 (GPU 1) SIGKILLed: job ends" "$(verdict test -n "${victim}" -a "${rc}" -ne 0)" \
    "rc ${rc} after $((SECONDS - t0)) s; names rank 1: $(grep -c 'rank 1' "${out}/kill.log") lines"
  local waited
  waited=$(wait_mps_gone 15)
  record kill "MPS gone after the job" "$(verdict test "$(mps_left)" -eq 0)" "${waited} s"
}

stage_teardown() {
  local ranks=$((16 * gpus)) job left10 running=0
  # A directory of its own: the checkpoint another stage's job wrote on SIGTERM is not its.
  mkdir -p "${work}/teardown" && cd "${work}/teardown"
  mpirun -np "${ranks}" "${run}" --gpus "$(gpu_list "${gpus}")" -- "${stencil}" \
    --n 256,256,512 --steps 1000000 --quiet >"${out}/teardown.log" 2>&1 &
  job=$!
  sleep 15
  kill -0 "${job}" 2>/dev/null && running=1
  kill -KILL "${job}" 2>/dev/null || true
  local t=0
  while ((t < 10)); do sleep 1; t=$((t + 1)); done
  left10=$(mps_left)
  local waited
  waited=$((10 + $(wait_mps_gone 30)))
  record teardown "kill -9 mpirun, ${ranks} ranks: MPS at 10 s" \
    "$(verdict test "${left10}" -eq 0 -a "${running}" -eq 1)" \
    "${left10} MPS processes at 10 s; none after ${waited} s"
  pkill -KILL -f "${stencil}" 2>/dev/null || true
  wait_mps_gone 30 >/dev/null
}

# A ten-line site wrapper, what funnel-run's start-up is compared with: local rank 0 starts one
# MPS daemon for the node's GPUs, every rank takes GPU (local rank mod GPUs) and waits for the pipe.
write_plain_wrapper() {
  cat >"${work}/plain-wrapper.sh" <<'WRAPPER'
#!/usr/bin/env bash
set -euo pipefail
gpu=$((OMPI_COMM_WORLD_LOCAL_RANK % PLAIN_GPUS))
dir=${PLAIN_DIR}
# PLAIN_PER_GPU=1: a daemon per GPU (started by the GPU's first rank), else one for the node.
if [[ -n ${PLAIN_PER_GPU:-} ]]; then dir=${PLAIN_DIR}/g${gpu}; fi
export CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe CUDA_MPS_LOG_DIRECTORY=${dir}/log
if [[ ${OMPI_COMM_WORLD_LOCAL_RANK} == 0 || ( -n ${PLAIN_PER_GPU:-} && ${OMPI_COMM_WORLD_LOCAL_RANK} -lt ${PLAIN_GPUS} ) ]]; then
  mkdir -p -m 700 "${dir}" "${CUDA_MPS_PIPE_DIRECTORY}" "${CUDA_MPS_LOG_DIRECTORY}"
  if [[ -n ${PLAIN_PER_GPU:-} ]]; then
    CUDA_VISIBLE_DEVICES=${gpu} nvidia-cuda-mps-control -d
  else
    nvidia-cuda-mps-control -d
  fi
fi
until [[ -e ${CUDA_MPS_PIPE_DIRECTORY}/control ]]; do sleep 0.05; done
if [[ -n ${PLAIN_PER_GPU:-} ]]; then unset CUDA_VISIBLE_DEVICES; else export CUDA_VISIBLE_DEVICES=${gpu}; fi
exec "$@"
WRAPPER
  chmod 755 "${work}/plain-wrapper.sh"
}

now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# last_start LOG T0_MS: ms from T0 to the last rank's app start (the stamps of write_stamp).
last_start() {
  awk -v t0="$2" '/^app-start / { if ($2 - t0 > m) m = $2 - t0 } END { print m + 0 }' "$1"
}

# The app of every start-up job: stamps its start (ms) on stderr, then runs the client.
write_stamp() {
  # shellcheck disable=SC2016 # the script's text, expanded when it runs
  printf '%s\n' '#!/usr/bin/env bash' \
    'printf "app-start %s\n" "$((${EPOCHREALTIME/./} / 1000))" >&2' 'exec "$@"' >"${work}/stamp.sh"
  chmod 755 "${work}/stamp.sh"
}

# A stand-in nvidia-smi, first on PATH, that answers -L from one listing taken now (for the
# startup stage's experiment: what each rank's own listing costs funnel-run).
write_listing_shim() {
  mkdir -p "${work}/shim"
  nvidia-smi -L >"${work}/shim/listing"
  printf '%s\n' '#!/usr/bin/env bash' \
    "if [[ \$# == 1 && \$1 == -L ]]; then cat '${work}/shim/listing'; exit 0; fi" \
    "exec '$(command -v nvidia-smi)' \"\$@\"" >"${work}/shim/nvidia-smi"
  chmod 755 "${work}/shim/nvidia-smi"
}

# startup_job TAG ROUND COMMAND...: one start-up job (its log startup-TAG-ROUND.log); appends its
# wall time to wall[TAG] and when its last rank's app started to last[TAG] (ms, stage_startup's).
startup_job() {
  local tag=$1 round=$2 t0 log
  shift 2
  log=${out}/startup-${tag}-${round}.log
  t0=$(now_ms)
  timeout 300 "$@" >"${log}" 2>&1 || true
  wall[${tag}]+=" $(($(now_ms) - t0))"
  last[${tag}]+=" $(last_start "${log}" "${t0}")"
}

# median_of "N N ...": the median of a list of numbers.
median_of() { tr ' ' '\n' <<<"$1" | grep . | median; }

stage_startup() {
  local ranks=$((16 * gpus)) round p f dir g client=${build}/bin/funnel_mps_client
  local -A wall=() last=()
  local -a app=("${work}/stamp.sh" "${client}" --elements 1024)
  local -a funnel_run=(mpirun -np "${ranks}" "${run}" --gpus "$(gpu_list "${gpus}")" --)
  write_plain_wrapper
  write_stamp
  write_listing_shim
  cd "${work}"
  for ((round = 1; round <= startup_rounds; round++)); do
    dir=${work}/plain-${round}
    startup_job plain "${round}" env PLAIN_DIR="${dir}" PLAIN_GPUS="${gpus}" \
      mpirun -np "${ranks}" "${work}/plain-wrapper.sh" "${app[@]}"
    CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe nvidia-cuda-mps-control <<<quit >/dev/null 2>&1 || true
    wait_mps_gone 60 >/dev/null
    startup_job funnel "${round}" "${funnel_run[@]}" "${app[@]}"
    wait_mps_gone 60 >/dev/null
    # funnel-run with every rank's nvidia-smi -L answered from a file (shown, not judged).
    startup_job shim "${round}" env PATH="${work}/shim:${PATH}" "${funnel_run[@]}" "${app[@]}"
    wait_mps_gone 60 >/dev/null
    # The ten-line wrapper with a daemon per GPU, as funnel-run runs them (shown, not judged).
    startup_job pergpu "${round}" env PLAIN_DIR="${dir}-g" PLAIN_GPUS="${gpus}" PLAIN_PER_GPU=1 \
      mpirun -np "${ranks}" "${work}/plain-wrapper.sh" "${app[@]}"
    for g in $(seq 0 $((gpus - 1))); do
      CUDA_MPS_PIPE_DIRECTORY=${dir}-g/g${g}/pipe nvidia-cuda-mps-control <<<quit >/dev/null 2>&1 || true
    done
    wait_mps_gone 60 >/dev/null
  done
  record startup "the same wrapper, one daemon per GPU" info "median $(median_of "${wall[pergpu]}") ms"
  record startup "last rank's app start: funnel-run / wrapper" info \
    "median $(median_of "${last[funnel]}") ms / $(median_of "${last[plain]}") ms after mpirun"
  record startup "funnel-run, nvidia-smi -L from a file" info \
    "median $(median_of "${wall[shim]}") ms; last app start $(median_of "${last[shim]}") ms"
  p=$(median_of "${wall[plain]}")
  f=$(median_of "${wall[funnel]}")
  record startup "${ranks} ranks: funnel-run / plain wrapper" \
    "$(awk -v f="${f}" -v p="${p}" 'BEGIN { print (f <= p) ? "met" : "unmet" }')" \
    "$(awk -v f="${f}" -v p="${p}" 'BEGIN { printf "%.2fx (median %d ms vs %d ms)", f / p, f, p }')"
  record startup "all clients ran ($((4 * startup_rounds)) jobs)" \
    "$(verdict test "$(cat "${out}"/startup-*-[0-9]*.log | grep -c "^clients total=${ranks} ok=${ranks} ")" -eq $((4 * startup_rounds)))" ""
}

stage_sanitize() {
  local tool rc
  for tool in memcheck racecheck synccheck; do
    rc=0
    (cd "${work}" && timeout 400 mpirun -np "${gpus}" "${run}" --gpus "$(gpu_list "${gpus}")" -- \
      compute-sanitizer --tool "${tool}" --error-exitcode 9 "${stencil}" \
      --n "$((16 * gpus)),24,20" --steps 6 --dtype float --quiet) \
      >"${out}/sanitize-${tool}.log" 2>&1 || rc=$?
    record sanitize "peer path, ${gpus} ranks on ${gpus} GPUs: ${tool}" "$(verdict test "${rc}" -eq 0)" \
      "$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "${out}/sanitize-${tool}.log")"
  done
  # The staged path with two steps per launch: overlapped pairs, faces through the host.
  rc=0
  (cd "${work}" && timeout 400 mpirun -np 2 "${run}" --gpus 0,1 -- compute-sanitizer \
    --tool memcheck --error-exitcode 9 "${stencil}" --n 32,24,20 --steps 7 --dtype float \
    --halo mpi --steps-per-launch 2 --quiet) >"${out}/sanitize-staged.log" 2>&1 || rc=$?
  record sanitize "staged pairs, 2 ranks on 2 GPUs: memcheck" "$(verdict test "${rc}" -eq 0)" \
    "$(grep -m1 -E 'ERROR SUMMARY' "${out}/sanitize-staged.log")"
}

# SCALING_ARGS: funnel-bench scaling's options; several runs separated by ';' (scaling-K.json).
stage_scaling() {
  local rc k=0 args
  local -a runs
  IFS=';' read -ra runs <<<"${SCALING_ARGS:- }"
  for args in "${runs[@]}"; do
    k=$((k + 1))
    rc=0
    # shellcheck disable=SC2086 # a list of options
    (cd "${work}" && timeout 3000 "${build}/bin/funnel-bench" scaling ${args} \
      --json "${out}/scaling-${k}.json") >"${out}/scaling-${k}.log" 2>&1 || rc=$?
    grep -E 'GPUs (strong|weak)' "${out}/scaling-${k}.log" | cut -c1-150 || true
    record scaling "funnel-bench scaling ${args:0:30}" "$( ((rc == 0)) && echo ok || echo FAIL)" \
      "scaling-${k}.log"
  done
}

IFS=, read -ra wanted <<<"${stages}"
status=0
for s in "${wanted[@]}"; do
  case "${s}" in
    build | probe | tests | bitwise | bigbox | kill | teardown | startup | sanitize | scaling)
      "stage_${s}" || status=1 ;;
    *) echo "node-check.sh: unknown stage '${s}' (see --help)" >&2; exit 2 ;;
  esac
done
pkill -f 'nvidia-cuda-mps-control' 2>/dev/null || true
{
  printf '\n%-9s %-42s %-6s %s\n' stage check result detail
  printf '%s\n' "${table[@]}"
} | tee "${out}/summary.txt"
# The logs go into one archive: fewer files to copy back from the node.
tar czf /tmp/node-logs.tgz -C "${out}" --exclude='*.bin' . && mv /tmp/node-logs.tgz "${out}/"
(cd "${out}" && find . -maxdepth 1 -type f ! -name node-logs.tgz ! -name summary.txt \
  ! -name 'scaling-*.json' -delete)
exit "${status}"
