#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel-run against real NVIDIA MPS, on the GPU machine (run by scripts/gpu/run-all.sh launch).
#   1. the probe alone on GPU 0 (calibrates a ~200 ms under-occupying kernel)
#   2. 8 ranks on GPU 0 with --mps on: one daemon, every rank an M+C client in nvidia-smi, every
#      rank's runtime on GPU 0's UUID, kernels overlapping (slowest within 1.2x of alone)
#   3. the same with --mps off, for contrast (recorded, not checked)
#   4. after each run and after kill -9 of one rank: no MPS process within 10 s, no directory left
#   5. with 2+ GPUs: 8 ranks over 2 GPUs, one daemon per GPU, each rank's runtime on the GPU
#      funnel-run chose, for both client forms (--mps-client-devices uuid and unset)
# Usage: scripts/gpu/launch-check.sh BUILD_DIR   (details under $OUT or ./gpu-out)
# Prints a short table last; exits non-zero when any check failed. Every MPS daemon it starts is
# stopped before it returns, whatever happens.
set -euo pipefail

build=${1:?usage: launch-check.sh BUILD_DIR}
build=$(cd "${build}" && pwd)
out=${OUT:-$(pwd)/gpu-out}
mkdir -p "${out}"
runner=${build}/bin/funnel-run
probe=${build}/bin/funnel_mps_probe
tmp=$(mktemp -d /tmp/flc.XXXXXX)
export FUNNEL_TMPDIR=${tmp} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
jobs_used=()
table=()
status=0

record() { # record NAME ok|FAIL|info DETAIL
  table+=("$(printf '%-28s %-5s %s' "$1" "$2" "$3")")
  if [[ $2 == FAIL ]]; then status=1; fi
  return 0
}

mps_processes() { pgrep -f 'nvidia-cuda-mps-(control|server)' || true; }

# shellcheck disable=SC2317 # run by trap
# Stops whatever MPS the runs left: funnel-run's own cleanup first, then any daemon whose pipe
# lies in this script's directory.
finish() {
  local rc=$? job pid
  trap - EXIT
  for job in "${jobs_used[@]}"; do "${runner}" --cleanup --job "${job}" >/dev/null 2>&1 || true; done
  for pid in $(mps_processes); do
    if tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=${tmp}"; then
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  done
  rm -rf "${tmp}"
  exit "${rc}"
}
trap finish EXIT

# run_ranks JOB NP LOG FUNNEL_RUN_OPTIONS... -- PROBE_OPTIONS...: mpirun in the background
run_ranks() {
  local job=$1 np=$2 log=$3
  shift 3
  jobs_used+=("${job}")
  local -a opts=() args=()
  while [[ $# -gt 0 && $1 != -- ]]; do opts+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  args=("$@")
  FUNNEL_JOB_ID=${job} mpirun --oversubscribe -np "${np}" "${runner}" --print-binding \
    "${opts[@]}" -- "${probe}" "${args[@]}" >"${log}" 2>&1 &
  launcher=$!
}

# Largest number of "M+C" rows nvidia-smi shows while process $1 runs.
watch_clients() {
  local pid=$1 most=0 now
  while kill -0 "${pid}" 2>/dev/null; do
    now=$(nvidia-smi 2>/dev/null | grep -c 'M+C' || true)
    ((now > most)) && most=${now}
    sleep 0.3
  done
  echo "${most}"
}

# True when no MPS process and nothing in funnel-run's tmpdir is left within 10 s.
torn_down() {
  local deadline=$((SECONDS + 10))
  while ((SECONDS < deadline)); do
    if [[ -z $(mps_processes) && -z $(find "${tmp}" -mindepth 1 -print -quit 2>/dev/null) ]]; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

probe_values() { sed -n "s/^probe .*$1=\([^ ]*\).*/\1/p" "$2"; }
max_of() { sort -g | tail -n 1; }

check_teardown() { # check_teardown NAME
  local t0=${SECONDS}
  if torn_down; then
    record "$1" ok "no MPS process or directory left after $((SECONDS - t0)) s"
  else
    record "$1" FAIL "left: $(mps_processes | tr '\n' ' ') $(find "${tmp}" -mindepth 1 -maxdepth 2 | tr '\n' ' ')"
  fi
}

main() {
  for tool in nvidia-smi nvidia-cuda-mps-control mpirun; do
    command -v "${tool}" >/dev/null || { echo "launch-check: ${tool} not found" >&2; exit 1; }
  done
  [[ -x ${runner} && -x ${probe} ]] || {
    echo "launch-check: ${runner} or ${probe} missing (build with CUDA first)" >&2
    exit 1
  }
  if [[ -n $(mps_processes) ]]; then
    echo "launch-check: an MPS daemon is already running; not touching it" >&2
    mps_processes >&2
    exit 1
  fi
  local -a uuids
  mapfile -t uuids < <(nvidia-smi -L | sed -n 's/.*(UUID: \(GPU-[^)]*\)).*/\1/p')
  echo "GPUs: ${uuids[*]}"
  nvidia-smi -L >"${out}/launch-gpus.txt"

  # 1. alone
  local alone_ms iters log
  log=${out}/launch-alone.log
  run_ranks lc-alone 1 "${log}" --gpus 0 --mps off -- --ms 200
  wait "${launcher}" || true
  alone_ms=$(probe_values kernel_ms "${log}" | max_of)
  iters=$(probe_values iters "${log}" | max_of)
  if [[ -z ${alone_ms} ]]; then
    record "probe alone" FAIL "no probe output (see ${log})"
    cat "${log}"
    return
  fi
  record "probe alone" ok "${alone_ms} ms, ${iters} iterations"

  # 2. 8 ranks under MPS
  log=${out}/launch-mps.log
  run_ranks lc-mps 8 "${log}" --gpus 0 --mps on -- --iters "${iters}" --hold-ms 4000
  local clients rc=0
  clients=$(watch_clients "${launcher}")
  wait "${launcher}" || rc=$?
  local mps_ms ratio wrong
  mps_ms=$(probe_values kernel_ms "${log}" | max_of)
  record "8 ranks --mps on: exit" "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "mpirun status ${rc}"
  record "8 ranks --mps on: clients" "$([[ ${clients} -ge 8 ]] && echo ok || echo FAIL)" \
    "${clients} M+C processes seen in nvidia-smi (want 8)"
  wrong=$(probe_values uuid "${log}" | grep -vcx "${uuids[0]}" || true)
  record "8 ranks --mps on: binding" "$([[ ${wrong} -eq 0 && $(probe_values uuid "${log}" | wc -l) -eq 8 ]] && echo ok || echo FAIL)" \
    "runtime UUIDs: $(probe_values uuid "${log}" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  if [[ -n ${mps_ms} ]]; then
    ratio=$(awk -v a="${mps_ms}" -v b="${alone_ms}" 'BEGIN { printf "%.2f", a / b }')
    record "8 ranks --mps on: overlap" "$(awk -v r="${ratio}" 'BEGIN { print (r <= 1.2) ? "ok" : "FAIL" }')" \
      "slowest ${mps_ms} ms = ${ratio}x alone (want <= 1.2x)"
  else
    record "8 ranks --mps on: overlap" FAIL "no probe output (see ${log})"
  fi
  check_teardown "8 ranks --mps on: teardown"

  # 3. 8 ranks time-sliced, for contrast
  log=${out}/launch-nomps.log
  run_ranks lc-nomps 8 "${log}" --gpus 0 --mps off -- --iters "${iters}"
  rc=0
  wait "${launcher}" || rc=$?
  local off_ms
  off_ms=$(probe_values kernel_ms "${log}" | max_of)
  record "8 ranks --mps off" info "slowest ${off_ms:-?} ms = $(awk -v a="${off_ms:-0}" -v b="${alone_ms}" 'BEGIN { printf "%.2f", a / b }')x alone (status ${rc})"

  # 4. kill -9 of one rank under MPS
  log=${out}/launch-kill.log
  run_ranks lc-kill 8 "${log}" --gpus 0 --mps on -- --iters "${iters}" --hold-ms 60000
  local deadline=$((SECONDS + 60))
  until [[ $(grep -c '^probe ' "${log}" || true) -ge 8 ]] || ((SECONDS > deadline)); do sleep 0.2; done
  local victim
  victim=$(probe_values pid "${log}" | head -n 1)
  if [[ -n ${victim} ]]; then
    kill -KILL "${victim}"
    wait "${launcher}" || true
    check_teardown "kill -9 of a rank: teardown"
  else
    record "kill -9 of a rank" FAIL "no probe process found"
    kill -TERM "${launcher}" 2>/dev/null || true
    wait "${launcher}" || true
  fi

  # 5. two GPUs: one daemon each; which client form binds the rank to the GPU meant
  if ((${#uuids[@]} >= 2)); then
    local form
    for form in uuid unset; do
      log=${out}/launch-2gpu-${form}.log
      run_ranks "lc-2gpu-${form}" 8 "${log}" --gpus 0,1 --mps on --mps-client-devices "${form}" \
        -- --iters "${iters}" --hold-ms 3000
      local daemons=0 now
      while kill -0 "${launcher}" 2>/dev/null; do
        now=$(pgrep -fc 'nvidia-cuda-mps-control -d' || true)
        ((now > daemons)) && daemons=${now}
        sleep 0.3
      done
      rc=0
      wait "${launcher}" || rc=$?
      # funnel-run's binding lines say which GPU each local rank was meant to get.
      local meant seen mismatches=0 r
      for ((r = 0; r < 8; r++)); do
        meant=$(sed -n "s/.*binding .*local_rank=${r} .* uuid=\([^ ]*\).*/\1/p" "${log}" | head -n 1)
        seen=$(sed -n "s/^probe .*local_rank=${r} uuid=\([^ ]*\).*/\1/p" "${log}" | head -n 1)
        [[ -n ${meant} && ${meant} == "${seen}" ]] || mismatches=$((mismatches + 1))
      done
      local verdict=ok
      [[ ${form} == uuid ]] || verdict=info # the default form is the one that must work
      if ((mismatches > 0 || rc != 0)); then [[ ${verdict} == info ]] || verdict=FAIL; fi
      record "2 GPUs, client ${form}" "${verdict}" \
        "${daemons} daemons (want 2), ${mismatches} ranks on another GPU than meant, status ${rc}"
      if [[ ${form} == uuid && ${daemons} -ne 2 ]]; then record "2 GPUs: one daemon per GPU" FAIL "${daemons} seen"; fi
      check_teardown "2 GPUs, client ${form}: teardown"
    done
  else
    record "2 GPUs" info "skipped: 1 GPU on this machine (run on a node of 2 or more GPUs)"
  fi
}

main
printf '\n%-28s %-5s %s\n' check result detail
printf '%s\n' "${table[@]}" | tee "${out}/launch-check.txt"
exit "${status}"
