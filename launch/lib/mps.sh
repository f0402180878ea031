# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The life of a job's MPS daemons: a rank starts its GPU's daemon or joins it, under the GPU's
# lock; the job's reaper, a detached funnel-run, stops every daemon of the job and removes the
# job directory once no rank registered there lives. Only the job's own daemons and their
# servers are ever signalled (is_mps_process; docs/security.md row 3).
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# Runs one nvidia-cuda-mps-control command against the daemon of GPU directory $1.
mps_command() {
  local dir=$1 cmd=$2
  CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe CUDA_MPS_LOG_DIRECTORY=${dir}/log \
    timeout 10 nvidia-cuda-mps-control <<<"${cmd}" 2>/dev/null
}

mps_answers() { mps_command "$1" get_server_list >/dev/null; }

# daemon_alive DIR [PID_VAR]: the recorded daemon of GPU directory DIR still runs and is ours;
# PID_VAR, when given, gets its pid.
daemon_alive() {
  local daemon
  recorded_alive "$1/daemon" daemon && is_mps_process "${daemon}" "${uid}" || return 1
  if [[ -n ${2:-} ]]; then printf -v "$2" '%s' "${daemon}"; fi
}

# The recorded daemon of GPU directory $1 runs but has no pipe yet.
# shellcheck disable=SC2317 # called through wait_while
daemon_starting() { [[ ! -e $1/pipe/control ]] && daemon_alive "$1"; }

# Records, in GPU directory $1, the daemon serving its pipe directory: the pid its pid file
# names, or the control daemon started with that pipe directory, when that process runs as this
# user from an MPS executable (a pid file can outlive its process and be reused).
adopt_daemon_pid() {
  local dir=$1 pid="" # the pid file may end without a newline: read fails, yet sets pid
  if [[ ! -L ${dir}/pipe/${MPS_PID_FILE} && -f ${dir}/pipe/${MPS_PID_FILE} ]] &&
    { read_head pid <"${dir}/pipe/${MPS_PID_FILE}" || [[ -n ${pid:-} ]]; } 2>/dev/null &&
    is_mps_process "${pid}" "${uid}"; then
    record_process "${dir}/daemon" "${pid}"
    return 0
  fi
  # pgrep only narrows the search; uid, executable and environment decide.
  for pid in $(pgrep -u "${uid}" -f nvidia-cuda-mps-control 2>/dev/null || true); do
    if is_mps_process "${pid}" "${uid}" && tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null |
      grep -qxF "CUDA_MPS_PIPE_DIRECTORY=${dir}/pipe"; then
      record_process "${dir}/daemon" "${pid}"
      return 0
    fi
  done
  return 1
}

# ---- a rank: start or join its GPU's daemon -----------------------------------------------------
start_daemon() {
  local dir=$1 rc=0
  note "starting the MPS control daemon for GPU ${all_uuid[my_gpu]} in ${dir}/pipe"
  (
    close_descriptors
    exec env CUDA_VISIBLE_DEVICES="${all_uuid[my_gpu]}" CUDA_MPS_PIPE_DIRECTORY="${dir}/pipe" \
      CUDA_MPS_LOG_DIRECTORY="${dir}/log" nvidia-cuda-mps-control -d </dev/null \
      >"${dir}/log/start.out" 2>&1
  ) || rc=$?
  adopt_daemon_pid "${dir}" || true
  if ((rc != 0)); then
    fail_instance "${dir}" "nvidia-cuda-mps-control -d failed (exit ${rc}) for GPU" \
      "${all_uuid[my_gpu]} (pipe ${dir}/pipe): $(tr '\n' ' ' <"${dir}/log/start.out" 2>/dev/null)"
  fi
}

wait_for_daemon() {
  local dir=$1 deadline=$((SECONDS + opt_mps_wait))
  until mps_answers "${dir}"; do
    ((SECONDS < deadline)) || fail_instance "${dir}" "the MPS daemon for GPU" \
      "${all_uuid[my_gpu]} did not answer within ${opt_mps_wait} s (pipe ${dir}/pipe, log" \
      "${dir}/log; see --mps-wait)"
    sleep 0.1
  done
  [[ -e ${dir}/daemon ]] || adopt_daemon_pid "${dir}" ||
    warn "the MPS daemon in ${dir}/pipe cannot be found by pid: the reaper can only ask it to quit"
}

# fail_instance DIR MESSAGE...: the GPU's daemon cannot serve this job. The message is kept in
# DIR/failed, so the GPU's other ranks exit without saying it again.
fail_instance() {
  local dir=$1
  shift
  write_file "${dir}/failed" "$*"
  die "$*"
}

# Join the job's daemon for this GPU (inst_dir), or start it under the GPU's lock. A daemon that
# has its pipe and is the process recorded is joined without the lock: it answers, and it stays
# while this rank is registered.
setup_mps() {
  local dir=${inst_dir}
  if [[ -e ${dir}/pipe/control ]] && recorded_alive "${dir}/daemon"; then return 0; fi
  take_lock inst_lock_fd "${dir}" $((opt_mps_wait + 5)) create ||
    die "could not lock ${dir}/lock within $((opt_mps_wait + 5)) s"
  if [[ -e ${dir}/failed ]]; then startup_exit 1; fi # another rank of this GPU has said why
  mkdir -m 700 -- "${dir}/pipe" "${dir}/log" 2>/dev/null || true
  if ! daemon_alive "${dir}" && ! { [[ -e ${dir}/pipe/control ]] && mps_answers "${dir}"; }; then
    rm -f -- "${dir}/daemon"
    start_daemon "${dir}"
    wait_for_daemon "${dir}"
  fi
  release_locks
}

# ---- stopping -----------------------------------------------------------------------------------
# Stops the daemon of GPU directory $1 and removes the directory (the caller holds its lock):
# quit, a bounded wait, then SIGKILL for the daemon and the servers it had, each only while it
# is still the process recorded (pid, start time), runs as this user and is an MPS executable.
stop_instance() {
  local dir=$1 daemon_pid="" s start
  local -a servers=()
  daemon_alive "${dir}" daemon_pid ||
    { adopt_daemon_pid "${dir}" && daemon_alive "${dir}" daemon_pid; } || daemon_pid=""
  # A daemon still starting gets the same bounded time to open its pipe before it is asked.
  if [[ -n ${daemon_pid} ]]; then wait_while daemon_starting "${dir}"; fi
  if [[ -e ${dir}/pipe/control ]] && command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    for s in $(mps_command "${dir}" get_server_list || true); do
      if is_mps_process "${s}" "${uid}" && start_time_of "${s}" start; then
        servers+=("${s}:${start}")
      fi
    done
    mps_command "${dir}" quit >/dev/null || true
  fi
  if [[ -n ${daemon_pid} ]]; then wait_while daemon_alive "${dir}"; fi
  if [[ -n ${daemon_pid} ]] && daemon_alive "${dir}"; then
    warn "MPS daemon ${daemon_pid} did not quit within ${quit_wait} s: killing it"
    kill -KILL "${daemon_pid}" 2>/dev/null || true
    for s in "${servers[@]}"; do
      if start_time_of "${s%%:*}" start && [[ ${start} == "${s#*:}" ]] &&
        is_mps_process "${s%%:*}" "${uid}"; then
        kill -KILL "${s%%:*}" 2>/dev/null || true
      fi
    done
  fi
  remove_tree "${dir}" || true # its job directory goes next, or says what it could not remove
}

# stop_job DIR all|keep [COUNT_VAR]: stops every GPU daemon of job directory DIR (the caller
# holds its lock); with all the job directory goes too, and the status says whether all of it
# went. COUNT_VAR, when given, gets the number of GPU directories stopped. The GPUs' daemons are
# stopped at once, each by a subshell holding that GPU's lock: one after the other, a node of N
# GPUs waited up to N times for a daemon to quit (docs/funnel-run.md, "Teardown"). The job
# directory is then renamed over a fresh empty directory (mkdtemp), so that a rank arriving now
# makes a new one instead of joining one that is being removed.
stop_job() {
  local dir=$1 what=$2 inst gone pid stopped=0
  local -a stoppers=()
  for inst in "${dir}"/g*-*; do
    [[ ! -L ${inst} && -d ${inst} ]] || continue
    (
      # shellcheck disable=SC2034 # take_lock sets it; the lock ends with the subshell
      local gpu_lock
      take_lock gpu_lock "${inst}" $((quit_wait + 15)) || true
      stop_instance "${inst}"
    ) &
    stoppers+=("$!")
    stopped=$((stopped + 1))
  done
  for pid in "${stoppers[@]}"; do wait "${pid}" || true; done
  if [[ -n ${3:-} ]]; then printf -v "$3" '%s' "${stopped}"; fi
  [[ ${what} == all ]] || return 0
  # A directory left half removed (a reaper killed meanwhile) has its .gone name already.
  if [[ ${dir##*/} != *.gone.* ]] && gone=$(mktemp -d -- "${dir}.gone.XXXXXX" 2>/dev/null); then
    if mv -fT -- "${dir}" "${gone}" 2>/dev/null; then dir=${gone}; else rmdir -- "${gone}"; fi
  fi
  remove_tree "${dir}"
}

# ---- the reaper ---------------------------------------------------------------------------------
# Starts the job's reaper (funnel-run --internal-reap), recorded in the job directory. Both
# long-lived processes (reaper, daemon) must not inherit a lock (a flock lives as long as any copy
# of its descriptor) nor the launcher's output pipes (mpirun and srun wait for those to close).
# The reaper is started from a short-lived subshell so that it is never a descendant of this
# wrapper: a launcher that kills the wrapper's process tree (srun's proctrack, mpirun) does not
# reach it. It ignores the signals a launcher sends to the wrapper's process group from the start:
# one that came before setsid would otherwise stop it with the rank, leaving the directory to
# nobody.
start_reaper() {
  (
    trap '' HUP INT TERM
    close_descriptors
    FUNNEL_MPS_QUIT_WAIT=${quit_wait} FUNNEL_REAPER_INTERVAL=${reaper_interval} \
      setsid "${SELF}" --internal-reap "${job_dir}" </dev/null >>"${job_dir}/reaper.log" 2>&1 &
    record_process "${job_dir}/reaper" $!
  )
}

# Watches job directory $1 until no registered rank is alive, then stops its daemons and removes
# the directory. Runs detached (setsid) so that nothing killing the ranks kills it.
reap() {
  local dir=$1 lock_fd pid start
  trap '' HUP INT TERM USR1 USR2
  set +e
  cd / || exit 1 # not the rank's directory: the reaper may outlive it
  # Only a private directory of this user's: one another user made (a predictable name) is not
  # the job's, whatever its records say.
  is_private_dir "${dir}" || exit 0
  while [[ -d ${dir} ]]; do
    sleep "${reaper_interval}"
    take_lock lock_fd "${dir}" 5 2>/dev/null || continue
    # Another reaper took over (this one was thought dead): leave it to that one.
    if ! read_record "${dir}/reaper" pid start || [[ ${pid} != "$$" ]]; then
      release_lock "${lock_fd}"
      exit 0
    fi
    if ! any_live_rank "${dir}"; then
      echo "$(date '+%F %T') no live rank: stopping the job's MPS daemons and removing ${dir}"
      report_in_reaper "${dir}"
      stop_job "${dir}" all
      release_lock "${lock_fd}"
      exit 0
    fi
    release_lock "${lock_fd}"
  done
}
