# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The app: its environment, the signals passed on to it, and the one line about a node whose app
# failed. Also what a signal during the start-up (before the app runs) does.
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"
# shellcheck source=SCRIPTDIR/report.sh
source "${BASH_SOURCE[0]%/*}/report.sh"

# Resolves the app like a shell would: 127 when it is not found, 126 when it cannot be run.
check_app() {
  ((${#app_argv[@]} > 0)) || usage_error "no app given (usage: ${PROG} [options] -- APP [ARGS...])"
  local app=${app_argv[0]} path
  if [[ ${app} == */* ]]; then
    path=${app}
    [[ -e ${path} ]] || {
      if ((speaker)); then printf '%s: %s: No such file or directory\n' "${PROG}" "${app}" >&2; fi
      startup_exit 127
    }
  else
    path=$(type -P -- "${app}") || {
      if ((speaker)); then printf '%s: %s: command not found\n' "${PROG}" "${app}" >&2; fi
      startup_exit 127
    }
  fi
  if [[ -d ${path} || ! -x ${path} ]]; then
    if ((speaker)); then
      printf '%s: %s: Permission denied (not an executable file)\n' "${PROG}" "${app}" >&2
    fi
    startup_exit 126
  fi
}

export_app_environment() {
  export FUNNEL_LAUNCHER=funnel-run FUNNEL_LOCAL_RANK=${local_rank} FUNNEL_LOCAL_SIZE=${local_size}
  export FUNNEL_MPS=${mps_use} FUNNEL_RUN_DIR=${job_dir}/run
  if ((my_gpu >= 0)); then
    export FUNNEL_GPU_UUID=${all_uuid[my_gpu]} FUNNEL_GPU_INDEX=${all_index[my_gpu]}
    export FUNNEL_RANKS_ON_GPU=${ranks_on_gpu}
    if [[ -n ${inst_dir} && ${opt_client_devices} == unset ]]; then
      unset CUDA_VISIBLE_DEVICES
    else
      export CUDA_VISIBLE_DEVICES=${all_uuid[my_gpu]}
    fi
  else
    unset FUNNEL_GPU_UUID FUNNEL_GPU_INDEX FUNNEL_RANKS_ON_GPU
  fi
  if [[ ${mps_use} == on ]]; then
    export FUNNEL_MPS_PIPE=${mps_pipe} CUDA_MPS_PIPE_DIRECTORY=${mps_pipe}
    if [[ -n ${mps_log} ]]; then export CUDA_MPS_LOG_DIRECTORY=${mps_log}; fi
    if [[ -n ${thread_pct} ]]; then export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=${thread_pct}; fi
    if [[ -n ${opt_pinned_limit} ]]; then
      # The rank sees one device, so its limit is device 0's.
      export CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="0=${opt_pinned_limit}"
    fi
  else
    unset FUNNEL_MPS_PIPE CUDA_MPS_LOG_DIRECTORY
    # Without the variable a CUDA client asks the daemon at /tmp/nvidia-mps, which a site may run
    # for everybody: an empty directory of the job's keeps such a daemon from serving the rank.
    if [[ ${opt_mps_off_pipe} == private ]]; then
      export CUDA_MPS_PIPE_DIRECTORY=${job_dir}/no-mps
    else
      unset CUDA_MPS_PIPE_DIRECTORY
    fi
  fi
  if [[ -n ${max_connections} ]]; then
    export CUDA_DEVICE_MAX_CONNECTIONS=${max_connections}
  else
    unset CUDA_DEVICE_MAX_CONNECTIONS
  fi
  report_environment
}

# shellcheck disable=SC2317 # called by trap
forward_signal() {
  interrupted=1
  forwarded+="$1 "
  if [[ -n ${child} ]]; then kill -s "$1" "${child}" 2>/dev/null || true; fi
}

# The set-up begins (before setup_job: in main, or in gpu_listing for a rank that registers while
# it lists the GPUs): from here on a signal ends the rank (abort_startup) and the reaper the job.
begin_setup() {
  ((!setup_begun)) || return 0
  setup_begun=1
  exec {msg_fd}>&2
  trap 'abort_startup SIGTERM 143' TERM
  trap 'abort_startup SIGINT 130' INT
  trap 'abort_startup SIGHUP 129' HUP
  trap '' USR1 USR2
  trap leave_startup EXIT
}

# Any exit during start-up (abort_startup, a die, or a signal trap that bash dropped): when no
# reaper runs for the job directory (the signal came before one was started, or stopped the one
# being started), this rank starts one, so that the directory does not outlive the job. Bash
# before 5.3 can drop a trap whose signal arrives while it parses a $(...) (it reports
# "unexpected EOF while looking for matching ')'" and exits 2 without running abort_startup;
# docs/funnel-run.md says how often): this EXIT trap still runs then.
# shellcheck disable=SC2317 # called by trap
leave_startup() {
  trap '' HUP INT TERM
  if [[ -n ${job_dir} ]] && is_private_dir "${job_dir}" && ! recorded_alive "${job_dir}/reaper"; then
    start_reaper 2>/dev/null || true
  fi
}

# A signal while the job is being set up: nothing has run yet, so stop here. The reaper sees this
# rank's registration gone and stops a daemon this rank may have started (leave_startup starts
# one if none runs). The line goes to the standard error the rank started with (msg_fd): bash runs
# a trap where the signal finds it, which may be inside a '{ ...; } 2>/dev/null'.
# shellcheck disable=SC2317 # called by trap
abort_startup() {
  local sig=$1 code=$2
  trap '' HUP INT TERM
  deregister_rank
  release_locks
  warn "${sig} during start-up: the app was not started" 2>&"${msg_fd}"
  exit "${code}"
}

# The MPS server's line naming the client that caused a fatal GPU fault ("Client {PID: 4080,
# Context: 1} encountered a fatal GPU error."), without its time stamp, or nothing. The server
# ends the CUDA work of every client of its GPU, so every rank of the GPU fails, most of them as
# an echo; it writes the line once it has begun to, so a rank may see its error first.
# Only what the server wrote during this job counts, from byte $1 on (an earlier job step of the
# same job may have used the same daemon; see record_log_sizes).
mps_fault_line() {
  [[ ${mps_use} == on && -n ${mps_log} && -r ${mps_log}/server.log ]] || return 0
  tail -c "+$(($1 + 1))" -- "${mps_log}/server.log" 2>/dev/null |
    grep -m 1 -E -- 'Client \{PID: [0-9]+,[^}]*\} encountered a fatal GPU error' |
    sed 's/^\[[^]]*\] *//' || true
}

# shellcheck disable=SC2317 # called through wait_while_for
no_mps_fault_line() { [[ -z $(mps_fault_line "$1") ]]; }

# report_app_end STATUS PID LOG_SEEN: one line for the first rank of the node whose app (PID)
# ended with STATUS for a reason funnel-run did not pass on (a signal it forwarded explains the
# status): its rank, GPU, status or signal. When the GPU's MPS server says that a client caused a
# fatal fault (within 1 s), the line names that client's rank instead (from the job's
# ranks/<app pid>.client records), with the server's words: the failures of the other ranks are
# its echo.
report_app_end() {
  local rc=$1 pid=$2 seen=$3 what sig="" fault faulty who=""
  if ((rc > 128)); then
    sig=$(kill -l $((rc - 128)) 2>/dev/null) || sig=$((rc - 128))
    [[ ${forwarded} != *" ${sig} "* ]] || return 0
    what="was killed by signal SIG${sig}"
  else
    [[ ${forwarded} == " " ]] || return 0
    what="exited with status ${rc}"
  fi
  # Once per node and job: the ranks that follow the first failure are usually its echo. They
  # wait (at most 2 s) until that line is out: the launcher ends the job when the first rank
  # exits non-zero, and may kill the reporting wrapper before it writes.
  if [[ -n ${job_dir} ]] && ! create_new "${job_dir}/failure-reported"; then
    wait_while_for 2 test ! -e "${job_dir}/failure-written"
    return 0
  fi
  local gpu=""
  if ((my_gpu >= 0)); then gpu=" on GPU ${all_index[my_gpu]} (${all_uuid[my_gpu]})"; fi
  # The server may write its line after this rank saw its error: under MPS, wait for it up to
  # 1 s (docs/funnel-run.md, "A rank that faults"). The ranks that wait for this rank's line
  # wait up to 2 s.
  if [[ ${mps_use} == on && -n ${mps_log} ]]; then wait_while_for 1 no_mps_fault_line "${seen}"; fi
  fault=$(mps_fault_line "${seen}")
  if [[ -n ${fault} ]]; then
    faulty=$(sed -n 's/^Client {PID: \([0-9]*\),.*/\1/p' <<<"${fault}")
    if [[ -n ${job_dir} && -r ${job_dir}/ranks/${faulty}.client ]]; then
      read_head who <"${job_dir}/ranks/${faulty}.client" || true
    fi
    local line
    if [[ ${who} =~ ^([0-9?]+)\ ([0-9]+)$ ]]; then
      printf -v line '%s: rank %s (local rank %s)%s: the app (pid %s) caused a fatal GPU fault' \
        "${PROG}" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${gpu}" "${faulty}"
      line+=" (MPS server: ${fault}); the server ended the CUDA work of every rank on this GPU"
    else # a client funnel-run did not start itself, e.g. a child of an app
      printf -v line '%s: rank %s (local rank %s)%s: the app (pid %s) %s after a fatal GPU fault' \
        "${PROG}" "$(global_rank)" "${local_rank}" "${gpu}" "${pid}" "${what}"
      line+=" of MPS client pid ${faulty} (MPS server: ${fault})"
    fi
    printf '%s\n' "${line}" >&2
  else
    printf '%s: rank %s (local rank %s)%s: the app (pid %s) %s\n' "${PROG}" "$(global_rank)" \
      "${local_rank}" "${gpu}" "${pid}" "${what}" >&2
  fi
  [[ -z ${job_dir} ]] || create_new "${job_dir}/failure-written" || true
}

run_app() {
  local sig
  for sig in TERM INT HUP USR1 USR2; do
    # shellcheck disable=SC2064 # the signal name is meant to be fixed now
    trap "forward_signal ${sig}" "${sig}"
  done
  # The start-up is over: the app does not get the copy of the rank's standard error.
  if ((msg_fd > 2)); then exec {msg_fd}>&-; fi
  msg_fd=2
  local app_record="" log_seen=0
  [[ -z ${registered} ]] || app_record=${registered%.wrapper}.app
  if [[ -n ${inst_dir} ]]; then
    # The job's own daemon: its log from where it stood when the job's first rank came.
    local tag size
    while read -r tag size; do
      if [[ ${tag} == "${inst_dir##*/}" && ${size} =~ ^[0-9]{1,15}$ ]]; then log_seen=${size}; fi
    done 2>/dev/null <"${job_dir}/log-start" || true
  elif [[ -n ${mps_log} ]]; then
    # A site daemon serves other jobs too: its log from this rank's start on.
    log_seen=$(stat -c %s -- "${mps_log}/server.log" 2>/dev/null || echo 0)
  fi
  (
    trap - TERM INT HUP USR1 USR2 QUIT
    # The app's pid is recorded before it starts, so the reaper knows it even if this wrapper is
    # killed right away.
    if [[ -n ${app_record} ]]; then record_process "${app_record}" "${BASHPID}"; fi
    # Who the app is, for the line about a fatal GPU fault (the MPS server names clients by
    # pid). Written before the app runs: another rank's wrapper may report the fault first.
    if [[ -n ${job_dir} ]]; then
      create_new "${job_dir}/ranks/${BASHPID}.client" "$(global_rank) ${local_rank}" || true
    fi
    exec "${app_argv[@]}"
  ) &
  child=$!
  local rc=0 st got=0
  while :; do
    interrupted=0
    if wait "${child}" 2>/dev/null; then st=0; else st=$?; fi
    # A trapped signal makes wait return early with 128+signal, so wait again; 127 then says the
    # app's status was collected by the wait before.
    if ((got && st == 127)); then break; fi
    rc=${st}
    got=1
    ((interrupted)) || break
  done
  trap '' TERM INT HUP USR1 USR2
  if ((rc != 0)); then report_app_end "${rc}" "${child}" "${log_seen}"; fi
  report_if_last
  deregister_rank
  return "${rc}"
}
