#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # stage_* functions are called indirectly
# Many ranks sharing one GPU through MPS, and a node shared with another user. Stages:
#   build    configure BUILD_DIR (CUDA on) and build only funnel-stencil, funnel-bench and
#            funnel_mps_client (funnel-run comes with the configure)
#   budget   the connection pool of one MPS server: a hand-started daemon, funnel_mps_client
#            with N in 16 24 32 48 and CUDA_DEVICE_MAX_CONNECTIONS in 8 6 4 3 2 1: pass/fail
#   context  24 ranks of funnel-stencil under a hand-started daemon with 8 connections each (more
#            than the pool): a refused rank says why (funnel::binding), never "out of memory ...
#            pool 'cuda'"
#   clients  funnel_mps_client through funnel-run (defaults) at 16, 24 and 48 ranks on one GPU
#   refuse   49 and 60 ranks through funnel-run: one line, the job ends by itself, nothing ran
#   fault    8 ranks, rank 3 faults (illegal address): funnel-run names it in one line, the 7
#            others end with an error (the server ends every client's work), the next job runs
#   heat3d   funnel-stencil heat3d 96^3 through funnel-run at 16, 24, 32, 48 ranks: the field
#            bitwise equal to one rank's (--field-dump)
#   startup  wall time of a 48-rank job through funnel-run vs a plain per-rank wrapper that only
#            starts a daemon (median of 3 each; goal <= 1.1x)
#   share    funnel-bench share at N = 1,2,4,8,16,32,48 (synthetic + heat3d), the synthetic
#            clients under a hand-started daemon at 16, 32, 48 (goal: funnel >= 0.95 of it), and
#            N = 49 reported as refused
#   mpsoff   a system-wide daemon at /tmp/nvidia-mps: does a rank with --mps off attach to it,
#            with --mps-off-pipe private (funnel-run's default) and system?
#   cleanup  a root cleanup (epilog) of other jobs while a job of uid 4242 runs: its daemon lives
# After every funnel-run job: no MPS process and nothing in funnel-run's tmpdir within 15 s.
# Every daemon this script starts is stopped before it returns, whatever happens.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/gpu/dense-sharing.sh [--build-dir DIR] [--stages LIST] [--help]
  --build-dir DIR   the CUDA build to use (default: build-gpu in the repository); the stage
                    "build" configures and builds the targets it needs there
  --stages LIST     comma list of stages (default: all = build,budget,context,clients,refuse,
                    fault,heat3d,startup,share,mpsoff,cleanup); see the head of this script
Environment: DENSE_JOB_TIMEOUT (seconds one mpirun job may take, default 300),
DENSE_STARTUP_ROUNDS (jobs of each kind the startup stage times, default 3; the median counts).
Details go to $OUT/dense (or ./gpu-out/dense); a short table is printed last. Exit status 1
when a check failed (a goal not met is reported, not failed).
USAGE
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${root}/build-gpu
stages=all
all_stages=build,budget,context,clients,refuse,fault,heat3d,startup,share,mpsoff,cleanup
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir)
      [[ $# -ge 2 ]] || { echo "dense-sharing.sh: --build-dir needs a value" >&2; exit 2; }
      build=$2
      shift 2
      ;;
    --stages)
      [[ $# -ge 2 ]] || { echo "dense-sharing.sh: --stages needs a value" >&2; exit 2; }
      stages=$2
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "dense-sharing.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${stages} != all ]] || stages=${all_stages}
[[ ${build} == /* ]] || build=$(pwd)/${build}
out=${OUT:-$(pwd)/gpu-out}/dense
mkdir -p "${out}"
# shellcheck source=scripts/gpu/debs.sh
source "${root}/scripts/gpu/debs.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
runner=${build}/bin/funnel-run
client=${build}/bin/funnel_mps_client
tmp=$(mktemp -d /tmp/fds.XXXXXX)
chmod 711 "${tmp}"
mkdir -m 1777 "${tmp}/t"
export FUNNEL_TMPDIR=${tmp}/t
daemons=()     # pipe directories of the daemons this script started
made_default=0 # 1 when this script made /tmp/nvidia-mps
table=()
status=0
uuid0=""

record() { # record STAGE CHECK ok|FAIL|info|goal|met|unmet DETAIL (goals never fail the run)
  table+=("$(printf '%-8s %-34s %-5s %s' "$1" "$2" "$3" "$4")")
  printf '%-8s %-34s %-5s %s\n' "$1" "$2" "$3" "$4" >>"${out}/checks.txt"
  if [[ $3 == FAIL ]]; then status=1; fi
  return 0
}
verdict() { if "$@"; then echo ok; else echo FAIL; fi; }

mps_processes() { pgrep -f 'nvidia-cuda-mps-(control|server)' || true; }

# mpirun as the GPU scripts use it (root, more ranks than cores, ranks not bound), bounded: a
# job that hangs ends with status 124.
mpi() {
  local np=$1
  shift
  timeout "${DENSE_JOB_TIMEOUT:-300}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "${np}" "$@"
}

# start_daemon DIR: an MPS control daemon of our own for GPU 0, pipe and log under DIR.
start_daemon() {
  local dir=$1 deadline=$((SECONDS + 30))
  mkdir -m 700 "${dir}" "${dir}/pipe" "${dir}/log"
  CUDA_VISIBLE_DEVICES=${uuid0} CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe \
    CUDA_MPS_LOG_DIRECTORY=${dir}/log nvidia-cuda-mps-control -d
  daemons+=("${dir}/pipe")
  until [[ -e ${dir}/pipe/control ]] || ((SECONDS > deadline)); do sleep 0.1; done
}

# stop_daemon PIPE_DIR: quit, and wait (15 s at most) for the daemon to be gone.
stop_daemon() {
  local pipe=$1 pid="" deadline=$((SECONDS + 15))
  # The pid file may end without a newline: read then fails although it set pid.
  if [[ -e ${pipe}/nvidia-cuda-mps-control.pid ]]; then
    read -r pid <"${pipe}/nvidia-cuda-mps-control.pid" || true
  fi
  CUDA_MPS_PIPE_DIRECTORY=${pipe} timeout 10 nvidia-cuda-mps-control <<<quit >/dev/null 2>&1 || true
  while [[ -n ${pid} ]] && kill -0 "${pid}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if [[ -n ${pid} ]] && kill -0 "${pid}" 2>/dev/null; then kill -KILL "${pid}" 2>/dev/null || true; fi
}

# shellcheck disable=SC2317 # run by trap
finish() {
  local rc=$? pipe pid
  trap - EXIT
  for pipe in "${daemons[@]}"; do stop_daemon "${pipe}"; done
  "${runner}" --cleanup >/dev/null 2>&1 || true
  for pid in $(mps_processes); do
    if tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=${tmp}"; then
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  done
  if ((made_default)); then rm -rf /tmp/nvidia-mps; fi
  rm -rf "${tmp}"
  exit "${rc}"
}
trap finish EXIT
trap 'exit 143' TERM INT # so that an outer timeout still runs finish

# True when no MPS process runs and funnel-run's tmpdir is empty (15 s at most).
torn_down() {
  local deadline=$((SECONDS + 15))
  while ((SECONDS < deadline)); do
    if [[ -z $(mps_processes) && -z $(find "${FUNNEL_TMPDIR}" -mindepth 1 -print -quit) ]]; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

check_teardown() { # check_teardown STAGE WHAT
  local t0=${SECONDS}
  if torn_down; then
    record "$1" "$2: teardown" ok "nothing left after $((SECONDS - t0)) s"
  else
    record "$1" "$2: teardown" FAIL "left: $(mps_processes | tr '\n' ' ') $(find "${FUNNEL_TMPDIR}" -mindepth 1 -maxdepth 2 | tr '\n' ' ')"
  fi
}

# clients LOG KEY: a value of the client's summary line ("clients total=N ok=K ...").
clients() { sed -n "s/^clients .*$2=\([0-9]*\).*/\1/p" "$1" | tail -n 1; }
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

stage_build() {
  local t0=${SECONDS}
  if funnel_gpu_configure "${build}" >"${out}/configure.log" 2>&1 &&
    cmake --build "${build}" -j "$(nproc)" --target funnel-stencil funnel-bench funnel_mps_client \
      >"${out}/build.log" 2>&1; then
    record build targets ok "$((SECONDS - t0)) s"
  else
    tail -30 "${out}/build.log" "${out}/configure.log" 2>/dev/null || true
    record build targets FAIL "see build.log"
  fi
}

stage_budget() {
  local dir=${tmp}/budget n c log ok best=0 worst=999999 fits=1 row
  start_daemon "${dir}"
  {
    printf 'connections per client ->'
    printf ' %6s' 8 6 4 3 2 1
    printf '\n'
  } >"${out}/budget.txt"
  for n in 16 24 32 48; do
    row=$(printf 'N=%-2s' "${n}")
    for c in 8 6 4 3 2 1; do
      log=${out}/budget-${n}x${c}.log
      CUDA_DEVICE_MAX_CONNECTIONS=${c} CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe \
        CUDA_MPS_LOG_DIRECTORY=${dir}/log CUDA_VISIBLE_DEVICES=${uuid0} \
        mpi "${n}" "${client}" --elements 65536 >"${log}" 2>&1 || true
      ok=$(clients "${log}" ok)
      if [[ ${ok:-0} == "${n}" ]]; then
        row+=$(printf ' %6s' pass)
        ((n * c <= best)) || best=$((n * c))
      else
        row+=$(printf ' %6s' "${ok:-0}/${n}")
        ((n * c >= worst)) || worst=$((n * c))
        ((n * c > 96)) || fits=0
      fi
    done
    printf '%s\n' "${row}" >>"${out}/budget.txt"
  done
  stop_daemon "${dir}/pipe"
  cat "${out}/budget.txt"
  record budget "largest N x connections that ran" info "${best} (smallest that failed: ${worst})"
  record budget "funnel-run's budget 96 fits" "$([[ ${fits} == 1 ]] && echo ok || echo FAIL)" \
    "every run with N x connections <= 96 passed: $([[ ${fits} == 1 ]] && echo yes || echo no) (see budget.txt)"
}

stage_context() {
  local dir=${tmp}/context log=${out}/context.log pool classified
  start_daemon "${dir}"
  CUDA_DEVICE_MAX_CONNECTIONS=8 CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe CUDA_MPS_LOG_DIRECTORY=${dir}/log \
    CUDA_VISIBLE_DEVICES=${uuid0} mpi 24 "${build}/bin/funnel-stencil" --backend cuda \
    --problem heat3d --n "96,96,96" --steps 5 --quiet >"${log}" 2>&1 || true
  stop_daemon "${dir}/pipe"
  pool=$(grep -c "pool 'cuda'" "${log}" || true)
  classified=$(grep -c 'cannot create a CUDA context' "${log}" || true)
  record context "no refusal reads as a pool's OOM" "$(verdict test "${pool}" -eq 0)" \
    "${pool} line(s) with \"pool 'cuda'\""
  record context "refused ranks say why" "$([[ ${classified} -gt 0 ]] && echo ok || echo info)" \
    "${classified} rank(s): $(grep -m 1 -o 'cannot create a CUDA context.*' "${log}" | cut -c1-160)"
}

stage_clients() {
  local n log rc
  for n in 16 24 48; do
    log=${out}/clients-${n}.log
    rc=0
    FUNNEL_JOB_ID=clients${n} mpi "${n}" "${runner}" --print-binding -- "${client}" \
      >"${log}" 2>&1 || rc=$?
    record clients "${n} ranks" "$(verdict test "$(clients "${log}" ok)" == "${n}")" \
      "ok=$(clients "${log}" ok) failed=$(clients "${log}" failed) status ${rc}; connections $(sed -n 's/.* connections=\([0-9]*\) status.*/\1/p' "${log}" | sort -u | tr '\n' ' ')"
    check_teardown clients "${n} ranks"
  done
}

stage_refuse() {
  local n log rc t0 lines
  for n in 49 60; do
    log=${out}/refuse-${n}.log
    rc=0
    t0=$(now_ms)
    FUNNEL_JOB_ID=refuse${n} mpi "${n}" "${runner}" -- "${client}" >"${log}" 2>&1 || rc=$?
    lines=$(grep -c 'more than MPS allows' "${log}" || true)
    record refuse "${n} ranks" \
      "$(verdict test "${rc}" -ne 0 -a "${rc}" -ne 124 -a "${lines}" -eq 1 -a "$(grep -c '^client ' "${log}" || true)" -eq 0)" \
      "status ${rc} after $(($(now_ms) - t0)) ms, ${lines} refusal line(s), no client ran"
    check_teardown refuse "${n} ranks"
  done
}

stage_fault() {
  local log=${out}/fault.log rc=0 deadline line
  FUNNEL_JOB_ID=fault mpi 8 "${runner}" --mps on -- "${client}" --fault-rank 3 \
    --hold-ms 4000 >"${log}" 2>&1 &
  local job=$!
  # The server's log goes with the job's directory: keep a copy while the ranks hold.
  deadline=$((SECONDS + 60))
  until [[ $(grep -c '^client ' "${log}" || true) -ge 8 ]] || ((SECONDS > deadline)); do sleep 0.2; done
  find "${FUNNEL_TMPDIR}" -path '*/log/*.log' -exec cp {} "${out}/" \; 2>/dev/null || true
  sleep 2 # and again, for what the server logs as it drops the failed clients
  find "${FUNNEL_TMPDIR}" -path '*/log/*.log' -exec cp {} "${out}/" \; 2>/dev/null || true
  wait "${job}" || rc=$?
  line=$(grep 'funnel-run: rank 3 .*caused a fatal GPU fault' "${log}" || true)
  record fault "funnel-run names rank 3" "$(verdict test -n "${line}")" "${line:-no line; see fault.log}"
  record fault "one line about it" "$(verdict test "$(grep -c 'funnel-run: rank .*the app (pid' "${log}")" -eq 1)" \
    "$(grep -c 'funnel-run: rank .*the app (pid' "${log}") line(s)"
  # NVIDIA's MPS documentation, and this driver (measured): the server ends the work of every
  # client of the GPU after a fatal fault. What must hold: they end with an error, not a hang.
  record fault "the other 7 ranks end with an error" \
    "$(verdict test "$(clients "${log}" failed)" == 7 -a "${rc}" -ne 124)" \
    "ok=$(clients "${log}" ok) failed=$(clients "${log}" failed) fault=$(clients "${log}" fault) (status ${rc})"
  record fault "each rank's status and error" info "$(sed -n \
    's/^client rank=\([0-9]*\) .*status=\([a-z]*\) step=\([^ ]*\) error=\([^ ]*\).*/\1:\2@\3:\4/p' \
    "${log}" | sort -n | tr '\n' ' ')"
  record fault "MPS server log about the fault" info \
    "$(grep -ihE 'error|fault|exception|terminat' "${out}"/server.log 2>/dev/null | tail -n 1 || echo 'none copied')"
  check_teardown fault "faulting job"
  log=${out}/fault-next.log
  rc=0
  FUNNEL_JOB_ID=afterfault mpi 8 "${runner}" --mps on -- "${client}" >"${log}" 2>&1 || rc=$?
  record fault "the next job on the GPU" "$(verdict test "$(clients "${log}" ok)" == 8)" \
    "ok=$(clients "${log}" ok) status ${rc}"
  check_teardown fault "next job"
}

stage_heat3d() {
  local app=${build}/bin/funnel-stencil n rc ref=${tmp}/heat-1.bin file
  local -a args=(--backend cuda --problem heat3d --n "96,96,96" --steps 20 --dtype double --quiet)
  rc=0
  FUNNEL_JOB_ID=heat1 mpi 1 "${runner}" -- "${app}" "${args[@]}" --field-dump "${ref}" \
    >"${out}/heat3d-1.log" 2>&1 || rc=$?
  record heat3d "1 rank (reference)" "$(verdict test "${rc}" -eq 0 -a -s "${ref}")" "status ${rc}"
  for n in 16 24 32 48; do
    file=${tmp}/heat-${n}.bin
    rc=0
    FUNNEL_JOB_ID=heat${n} mpi "${n}" "${runner}" -- "${app}" "${args[@]}" \
      --field-dump "${file}" >"${out}/heat3d-${n}.log" 2>&1 || rc=$?
    record heat3d "${n} ranks on one GPU" "$(verdict cmp -s "${ref}" "${file}")" \
      "status ${rc}; field $(cmp -s "${ref}" "${file}" && echo 'bitwise equal to 1 rank' || echo DIFFERS)"
    check_teardown heat3d "${n} ranks"
  done
}

# The plain wrapper funnel-run's start-up is compared with: local rank 0 starts a daemon for the
# job, every rank waits for its pipe, nothing else is set.
write_plain_wrapper() {
  cat >"${tmp}/plain-wrapper.sh" <<'WRAPPER'
#!/usr/bin/env bash
set -euo pipefail
export CUDA_MPS_PIPE_DIRECTORY=${PLAIN_DIR}/pipe CUDA_MPS_LOG_DIRECTORY=${PLAIN_DIR}/log
if [[ ${OMPI_COMM_WORLD_LOCAL_RANK} == 0 ]]; then
  mkdir -m 700 "${PLAIN_DIR}" "${CUDA_MPS_PIPE_DIRECTORY}" "${CUDA_MPS_LOG_DIRECTORY}"
  nvidia-cuda-mps-control -d
fi
until [[ -e ${CUDA_MPS_PIPE_DIRECTORY}/control ]]; do sleep 0.05; done
exec "$@"
WRAPPER
  chmod 755 "${tmp}/plain-wrapper.sh"
}

# plain_run N LOG PROGRAM...: N ranks under the plain wrapper; its daemon stopped afterwards.
plain_run() {
  local n=$1 log=$2 rc=0
  shift 2
  local dir=${tmp}/plain-$$-${RANDOM}
  daemons+=("${dir}/pipe")
  PLAIN_DIR=${dir} mpi "${n}" "${tmp}/plain-wrapper.sh" "$@" >"${log}" 2>&1 || rc=$?
  stop_daemon "${dir}/pipe"
  rm -rf "${dir}"
  return "${rc}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

stage_startup() {
  write_plain_wrapper
  local round t0 plain=() funnel=() p f
  for round in $(seq "${DENSE_STARTUP_ROUNDS:-3}"); do
    t0=$(now_ms)
    plain_run 48 "${out}/startup-plain-${round}.log" "${client}" --elements 1024 || true
    plain+=($(($(now_ms) - t0)))
    torn_down || true
    t0=$(now_ms)
    FUNNEL_JOB_ID=startup${round} mpi 48 "${runner}" -- "${client}" --elements 1024 \
      >"${out}/startup-funnel-${round}.log" 2>&1 || true
    funnel+=($(($(now_ms) - t0)))
    torn_down || true
  done
  p=$(printf '%s\n' "${plain[@]}" | median)
  f=$(printf '%s\n' "${funnel[@]}" | median)
  record startup "48 ranks: funnel-run / plain wrapper" \
    "$(awk -v f="${f}" -v p="${p}" 'BEGIN { print (f <= 1.1 * p) ? "met" : "unmet" }')" \
    "$(awk -v f="${f}" -v p="${p}" 'BEGIN { printf "%.2fx (median %d ms vs %d ms; goal <= 1.1x)", f / p, f, p }')"
  local jobs=$((2 * ${#plain[@]}))
  record startup "all clients ran" \
    "$(verdict test "$(cat "${out}"/startup-*-[0-9]*.log | grep -c '^clients total=48 ok=48 ')" -eq "${jobs}")" \
    "${jobs} jobs of 48 ranks"
}

stage_share() {
  local bench=${build}/bin/funnel-bench json=${out}/share.json rc=0 n
  (cd "${out}" && FUNNEL_TMPDIR=${FUNNEL_TMPDIR} timeout 900 "${bench}" share --backend cuda \
    --ranks 1,2,4,8,16,32,48 --workloads synthetic,heat3d --blocks 2 --launches 100 --box-steps 100 \
    --json "${json}") >"${out}/share.log" 2>&1 || rc=$?
  local failed_points
  failed_points=$(grep -c 'failed:' "${out}/share.log" || true)
  record share "funnel-bench share N=1..48" "$(verdict test "${rc}" -eq 0 -a "${failed_points}" -eq 0)" \
    "status ${rc}; ${failed_points} failed point(s) (see share.log)"
  local row
  for row in "synthetic N=16 (b) vs ideal" "synthetic N=32 (b) vs ideal" \
    "synthetic N=48 (b) vs ideal" "heat3d N=16 (b)/(a)" "heat3d N=32 (b)/(a)"; do
    record share "${row}" info "$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]["share"]["rows"]
print(" ".join("%.3f" % r["ratio"] for r in rows if r["case"] == sys.argv[2]) or "no row")' \
      "${json}" "${row}" 2>&1 | tail -n 1)"
  done
  check_teardown share "funnel-bench share"
  # The same synthetic clients under a hand-started daemon (the plain wrapper).
  write_plain_wrapper
  cat >"${tmp}/compare.py" <<'PY'
import json, sys
n = int(sys.argv[1])
share = json.load(open(sys.argv[2]))["benchmarks"]["share"]
hand = json.load(open(sys.argv[3]))["aggregate_kernels_per_s"]
funnel = [p["rate"] for p in share["raw"]["points"]["synthetic"] if p["ranks"] == n and p["mps"]]
ideal = [r["ratio"] for r in share["rows"] if r["case"] == f"synthetic N={n} (b) vs ideal"]
if not funnel:
    print("no funnel-run point at this N")
else:
    text = f"{funnel[0] / hand:.3f} of the hand-started daemon (goal >= 0.95)"
    if ideal:
        text += f"; vs ideal {ideal[0]:.3f} (goal >= 0.90)"
    print(text)
PY
  local iterations blocks launches
  read -r iterations blocks launches < <(python3 -c '
import json, sys
raw = json.load(open(sys.argv[1]))["benchmarks"]["share"]["raw"]
print(raw["iterations"], raw["blocks"], raw["launches_per_rank"])' "${json}" 2>/dev/null || echo "0 0 0")
  for n in 16 32 48; do
    if [[ ${iterations} == 0 ]]; then
      record share "N=${n} vs a hand-started daemon" FAIL "no share.json to take the kernel from"
      continue
    fi
    plain_run "${n}" "${out}/share-hand-${n}.log" "${bench}" share-worker --backend cuda \
      --blocks "${blocks}" --iterations "${iterations}" --launches "${launches}" \
      --result "${tmp}/hand-${n}.json" || true
    record share "N=${n} funnel-run vs hand daemon" goal \
      "$(python3 "${tmp}/compare.py" "${n}" "${json}" "${tmp}/hand-${n}.json" 2>&1 | tail -n 1)"
  done
  rc=0
  (cd "${out}" && timeout 300 "${bench}" share --backend cuda --ranks 49 --workloads synthetic \
    --launches 20 --json "${out}/share-49.json") >"${out}/share-49.log" 2>&1 || rc=$?
  record share "N=49 reported as refused" "$(verdict test "$(python3 -c '
import json, sys
print(json.load(open(sys.argv[1]))["benchmarks"]["share"]["raw"]["refused"])' "${out}/share-49.json" 2>&1)" == "[{'workload': 'synthetic', 'ranks': 49}]")" \
    "status ${rc} (see share-49.log)"
  check_teardown share "N=49"
}

# Is rank pid $1 a client of the daemon at the default pipe directory?
attached_to_default() {
  local server
  for server in $(nvidia-cuda-mps-control <<<get_server_list 2>/dev/null); do
    if nvidia-cuda-mps-control <<<"get_client_list ${server}" 2>/dev/null | grep -qx "$1"; then
      return 0
    fi
  done
  return 1
}

stage_mpsoff() {
  if [[ -e /tmp/nvidia-mps/control ]]; then
    record mpsoff "system-wide daemon" info "skipped: a daemon already serves /tmp/nvidia-mps"
    return 0
  fi
  [[ -d /tmp/nvidia-mps ]] || made_default=1
  env -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES="${uuid0}" \
    nvidia-cuda-mps-control -d
  daemons+=(/tmp/nvidia-mps)
  local form log pid deadline attached
  for form in private system; do
    log=${out}/mpsoff-${form}.log
    FUNNEL_JOB_ID=mpsoff-${form} mpi 1 "${runner}" --mps off --mps-off-pipe "${form}" \
      -- "${client}" --hold-ms 4000 >"${log}" 2>&1 &
    local job=$!
    deadline=$((SECONDS + 60))
    until grep -q '^client ' "${log}" || ((SECONDS > deadline)); do sleep 0.2; done
    pid=$(sed -n 's/^client .* pid=\([0-9]*\) .*/\1/p' "${log}")
    attached=no
    if [[ -n ${pid} ]] && attached_to_default "${pid}"; then attached=yes; fi
    echo "M+C rows: $(nvidia-smi | grep -c 'M+C' || true)" >>"${log}"
    wait "${job}" || true
    if [[ ${form} == private ]]; then
      record mpsoff "--mps off (private): attached" "$(verdict test "${attached}" == no)" \
        "client ${pid:-?} attached to /tmp/nvidia-mps: ${attached} (want no)"
    else
      record mpsoff "--mps-off-pipe system: attached" info \
        "client ${pid:-?} attached to /tmp/nvidia-mps: ${attached} (what CUDA does by itself)"
    fi
  done
  stop_daemon /tmp/nvidia-mps
  check_teardown mpsoff "system-wide daemon stopped"
}

stage_cleanup() {
  local other=4242 home=${tmp}/home-4242 log=${out}/cleanup-4242.log pid_before pid_after rc=0
  mkdir -p "${home}"
  chown "${other}:${other}" "${home}"
  chmod 755 "${out}"
  touch "${log}"
  chown "${other}" "${log}"
  setpriv --reuid "${other}" --regid "${other}" --clear-groups -- env HOME="${home}" \
    FUNNEL_TMPDIR="${FUNNEL_TMPDIR}" FUNNEL_JOB_ID=other timeout 120 mpirun --oversubscribe \
    --bind-to none -np 2 "${runner}" --mps on -- "${client}" --hold-ms 15000 >"${log}" 2>&1 &
  local job=$!
  local deadline=$((SECONDS + 60))
  until pgrep -u "${other}" -f nvidia-cuda-mps-control >/dev/null || ((SECONDS > deadline)); do sleep 0.2; done
  pid_before=$(pgrep -u "${other}" -f nvidia-cuda-mps-control | head -n 1 || true)
  if [[ -z ${pid_before} ]]; then
    wait "${job}" || true
    record cleanup "a job of uid ${other}" info "skipped: its daemon did not start (see cleanup-4242.log)"
    return 0
  fi
  # Epilogs of other jobs, as root: another user's job, and root's own.
  SLURM_JOB_UID=4343 SLURM_JOB_GID=4343 "${runner}" --cleanup --job mine >>"${out}/cleanup-root.log" 2>&1 || true
  "${runner}" --cleanup --job other >>"${out}/cleanup-root.log" 2>&1 || true
  "${runner}" --cleanup >>"${out}/cleanup-root.log" 2>&1 || true
  pid_after=$(pgrep -u "${other}" -f nvidia-cuda-mps-control | head -n 1 || true)
  record cleanup "uid ${other}'s daemon after root cleanups" "$(verdict test "${pid_after}" == "${pid_before}")" \
    "daemon ${pid_before} -> ${pid_after:-gone}"
  wait "${job}" || rc=$?
  record cleanup "uid ${other}'s job" "$(verdict test "$(clients "${log}" ok)" == 2)" \
    "ok=$(clients "${log}" ok) status ${rc}"
  check_teardown cleanup "uid ${other}'s job"
}

main() {
  local s
  IFS=, read -ra wanted <<<"${stages}"
  for s in "${wanted[@]}"; do
    [[ ,${all_stages}, == *",${s},"* ]] || { echo "dense-sharing.sh: unknown stage '${s}' (see --help)" >&2; exit 2; }
  done
  for s in nvidia-smi nvidia-cuda-mps-control mpirun setpriv python3; do
    command -v "${s}" >/dev/null || { echo "dense-sharing.sh: ${s} not found" >&2; exit 1; }
  done
  # A job that just ended (e.g. ctest's) has its daemon stopped by funnel-run's reaper within
  # seconds: wait for that before calling the daemon someone else's.
  local deadline=$((SECONDS + 30))
  while [[ -n $(mps_processes) ]] && ((SECONDS < deadline)); do sleep 0.5; done
  if [[ -n $(mps_processes) ]]; then
    echo "dense-sharing.sh: an MPS daemon is already running (pids $(mps_processes | tr '\n' ' '));" \
      "not touching it" >&2
    exit 1
  fi
  uuid0=$(nvidia-smi -L | sed -n '1s/.*(UUID: \(GPU-[^)]*\)).*/\1/p')
  {
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv
    echo "stages: ${stages}"
  } >"${out}/machine.txt" 2>&1 || true
  : >"${out}/checks.txt"
  for s in "${wanted[@]}"; do
    if [[ ${s} != build && (! -x ${runner} || ! -x ${client}) ]]; then
      record "${s}" "needs a build" FAIL "${runner} or ${client} missing (stage build)"
      continue
    fi
    echo "=== ${s}"
    "stage_${s}"
  done
}

main
{
  printf '\n%-8s %-34s %-5s %s\n' stage check result detail
  printf '%s\n' "${table[@]}"
} | tee "${out}/dense-sharing.txt"
exit "${status}"
