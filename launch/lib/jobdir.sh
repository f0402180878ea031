# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The job's directory on this node: its name (private to the user), the GPU listing the ranks of a
# launch share, its set-up under the job lock, and the ranks' registrations that tell the reaper
# when the job is over (docs/funnel-run.md, "One job directory per job and node").
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

sanitize() {
  local s=${1//[^A-Za-z0-9_-]/_}
  echo "${s:0:24}"
}

# Prints the job key, <job>.<step>.
job_key_of_launch() {
  local job step
  job=${opt_job:-${SLURM_JOB_ID:-${PBS_JOBID:-${LSB_JOBID:-none}}}}
  # The launch's own id where the launcher has one; the parent (the node's launcher daemon, which
  # all local ranks of one launch share) otherwise.
  step=${OMPI_MCA_ess_base_jobid:-${OMPI_MCA_orte_ess_jobid:-${PMIX_NAMESPACE:-${PALS_APID:-p${PPID}}}}}
  step=${opt_step:-${SLURM_STEP_ID:-${step}}}
  echo "$(sanitize "${job}").$(sanitize "${step}")"
}

# 16 hex digits only this user can derive for job key $1: sha256 of a secret in
# $HOME/.funnel/secret (made, mode 0600, on first use) and the key. Fails when $HOME cannot
# hold the secret.
private_tag() {
  local dir file secret tmp
  [[ ${HOME:-} == /* && -d ${HOME} ]] || return 1
  dir=${HOME%/}/.funnel
  file=${dir}/secret
  mkdir -m 700 -- "${dir}" 2>/dev/null || true
  [[ ! -L ${dir} && -d ${dir} && -O ${dir} ]] || return 1
  if [[ ! -e ${file} && ! -L ${file} ]]; then
    # Ranks starting together race here: each writes its own file, one link wins.
    tmp=${file}.${BASHPID}.${RANDOM}
    secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
    if (umask 077 && create_new "${tmp}" "${secret}"); then
      ln -- "${tmp}" "${file}" 2>/dev/null || true
    fi
    rm -f -- "${tmp}"
  fi
  [[ ! -L ${file} && -f ${file} && -O ${file} ]] || return 1
  [[ $(stat -c %a -- "${file}") == 600 ]] || return 1
  secret=""
  { read_head secret <"${file}"; } 2>/dev/null || true
  [[ ${secret} =~ ^[0-9a-f]{64}$ ]] || return 1
  printf '%s:%s\n' "${secret}" "$1" | sha256sum | cut -c1-16
}

# Prints "PRIVATE DIR": the job directory <tmpdir>/funnel-run-<uid>-<tag> (see --help, "Job
# directories") and whether its name is private (1) or the predictable job key (0). A private
# name is unknown to others until a job makes it; a job key that comes again (a fixed --step,
# several funnel-runs from one shell) gives the same name, which another user may have seen and
# taken since. Then the key's next names are tried, tag(key#1), tag(key#2), ...: every rank of
# the node passes over the same taken names, so all of them land in the same directory.
choose_job_dir() {
  local tag n key=${job_key} dir first=""
  if ! tag=$(private_tag "${key}"); then
    note "\$HOME/.funnel cannot hold funnel-run's secret: the job directory has a predictable name"
    echo "0 ${opt_tmpdir%/}/funnel-run-${uid}-${job_key}"
    return 0
  fi
  for ((n = 1; ; n++)); do
    dir="${opt_tmpdir%/}/funnel-run-${uid}-${tag}"
    if [[ ! -L ${dir} && (! -e ${dir} || -O ${dir}) ]]; then break; fi
    first=${first:-${dir}}
    ((n < JOB_DIR_NAMES)) || die "the ${JOB_DIR_NAMES} job directory names of job key ${job_key}" \
      "in ${opt_tmpdir} are all taken by other users: choose a private --tmpdir"
    key="${job_key}#${n}"
    tag=$(private_tag "${key}") || die "cannot derive a job directory name from \$HOME/.funnel"
  done
  if [[ -n ${first} ]]; then
    warn_once "'${first}' was taken by another user: using the job key's next free name"
  fi
  echo "1 ${dir}"
}

# ---- the node's GPU listing, made once per launch ------------------------------------------------
# gpu_listing STATUS_VAR TEXT_VAR: the exit status and output of `nvidia-smi -L`. NVML's start-up
# is slow, and slower still when every rank of a dense node starts it at once
# (docs/funnel-run.md, "The GPU listing"), so the ranks of one launch on a node (children of the
# same launcher process, in the same control group, whose devices may differ from another's)
# share one listing in the job directory. A rank that finds none there registers in the job first
# (setup_job: from then on the job's reaper removes whatever the rank leaves, however it ends),
# then either claims the listing and makes it, or waits for the rank that claimed it while that
# rank lives. A single rank, a dry run, a job directory with a predictable name, or no answer in
# time: the rank asks nvidia-smi itself.
gpu_listing() {
  local listing_file_ listing_cgroup_="" listing_waited_
  if ((local_size > 1 && !opt_dry_run && job_dir_private)); then
    { read -r -d '' listing_cgroup_ <"/proc/${BASHPID}/cgroup"; } 2>/dev/null || true
    listing_cgroup_=${listing_cgroup_//$'\n'/;}
  fi
  if [[ -n ${listing_cgroup_} ]] && listing_file_of listing_file_ "${listing_cgroup_}"; then
    if read_listing "${listing_file_}" "${listing_cgroup_}" "$1" "$2"; then return 0; fi
    begin_setup
    setup_job
    if read_listing "${listing_file_}" "${listing_cgroup_}" "$1" "$2"; then return 0; fi
    if claim_listing "${listing_file_}"; then
      make_listing "${listing_file_}" "${listing_cgroup_}" "$1" "$2" && return 0
    else
      # Claimed by another rank: its answer comes within NVML's start-up, unless that rank ends
      # first. (An answer of another control group, whose checksum is the same, is not read.)
      listing_waited_=0
      while [[ ! -e ${listing_file_} ]] && recorded_alive "${listing_file_}.claim" &&
        ((listing_waited_ < LISTING_WAIT_CS)); do
        sleep 0.02
        listing_waited_=$((listing_waited_ + 2))
      done
      read_listing "${listing_file_}" "${listing_cgroup_}" "$1" "$2" && return 0
    fi
  fi
  run_gpu_listing "$1" "$2"
}

# run_gpu_listing STATUS_VAR TEXT_VAR: nvidia-smi -L, run by this rank.
run_gpu_listing() {
  local -n run_status_=$1 run_text_=$2
  run_status_=0
  # shellcheck disable=SC2034 # a nameref: the caller's variable
  run_text_=$(nvidia-smi -L 2>&1) || run_status_=$?
}

# make_listing FILE CGROUP STATUS_VAR TEXT_VAR: nvidia-smi -L into the claimed FILE; false when
# its answer could not be read back. It runs in the background and the rank waits for it with
# `wait`, which a signal interrupts: the start-up's trap then ends the rank at once, not when
# NVML is done.
make_listing() {
  local -n make_status_=$3 make_text_=$4
  local make_pid_
  make_status_=0
  # A new file (noclobber: O_EXCL), as create_new makes them.
  set -o noclobber
  nvidia-smi -L >"$1.out" 2>&1 &
  make_pid_=$!
  set +o noclobber
  wait "${make_pid_}" || make_status_=$?
  make_text_=""
  [[ ! -L $1.out && -f $1.out ]] || return 1
  { IFS= read -r -d '' make_text_ <"$1.out"; } 2>/dev/null || true
  make_text_=${make_text_%$'\n'}
  write_file "$1" "$2"$'\n'"${make_status_}"$'\n'"${make_text_}"
}

# listing_file_of VAR CGROUP: the launch's listing in the job directory,
# gpus.<launcher's pid>.<its start>.<checksum of CGROUP>.
listing_file_of() {
  local -n of_file_=$1
  local of_start_ of_sum_
  start_time_of "${PPID}" of_start_ || return 1
  of_sum_=$(cksum <<<"$2") || return 1
  # shellcheck disable=SC2034 # a nameref: the caller's variable
  of_file_="${job_dir}/gpus.${PPID}.${of_start_}.${of_sum_%% *}"
}

# read_listing FILE CGROUP STATUS_VAR TEXT_VAR: the listing in FILE, when FILE is a regular file of
# ours in our private job directory, made in control group CGROUP.
read_listing() {
  local -n read_status_=$3 read_text_=$4
  local read_all_="" read_cgroup_ read_rc_
  [[ ! -L $1 && -f $1 && -O $1 ]] || return 1
  is_private_dir "${job_dir}" || return 1
  { IFS= read -r -d '' read_all_ <"$1"; } 2>/dev/null || true
  read_cgroup_=${read_all_%%$'\n'*}
  read_all_=${read_all_#*$'\n'}
  read_rc_=${read_all_%%$'\n'*}
  [[ ${read_cgroup_} == "$2" && ${read_rc_} =~ ^[0-9]{1,3}$ ]] || return 1
  read_all_=${read_all_#*$'\n'}
  # shellcheck disable=SC2034 # namerefs: the caller's variables
  read_status_=${read_rc_}
  # shellcheck disable=SC2034
  read_text_=${read_all_%$'\n'}
}

# claim_listing FILE: true when this rank (registered in the job) is the one to make FILE: it made
# FILE.claim, its process record, which the ranks that wait read to know it still lives.
claim_listing() {
  local claim_start_=0
  start_time_of $$ claim_start_ || true
  create_new "$1.claim" "$$ ${claim_start_}"
}

# Prints the GPU's part of the name: its index and the UUID's first 8 hex digits, unique on a
# node and short, since the MPS pipe inside must fit a Unix socket path (site TMPDIRs can be long).
gpu_tag() {
  local hex=${all_uuid[my_gpu]#GPU-}
  echo "g${all_index[my_gpu]}-${hex:0:8}"
}

# True when a registered rank of job directory $1 still lives (its wrapper or its app); the
# registrations of ranks found gone on the way are dropped. It stops at the first live rank:
# every rank of a dense job asks under the job's lock, one after the other, so the answer must
# not cost a look at every rank already there (the reaper drops the rest once none lives).
any_live_rank() {
  local dir=$1 reg
  for reg in "${dir}"/ranks/*.wrapper; do
    [[ -L ${reg} || -e ${reg} ]] || continue
    if recorded_alive "${reg}" || recorded_alive "${reg%.wrapper}.app"; then return 0; fi
    rm -f -- "${reg}" "${reg%.wrapper}.app"
  done
  return 1
}

deregister_rank() {
  if [[ -n ${registered} ]]; then
    rm -f -- "${registered}" "${registered%.wrapper}.app"
    registered=""
  fi
}

# Under the job lock: stops what an earlier job with the same key left (no live rank, no
# reaper), starts the job's reaper unless one runs, and registers this rank (sets registered).
# From here on a signal or a failure leaves the teardown to the reaper.
setup_job() {
  local owner start
  [[ -z ${registered} ]] || return 0 # registered already, while it listed the GPUs (gpu_listing)
  if ((!job_dir_private)) && owner=$(stat -c %u -- "${job_dir}" 2>/dev/null) &&
    [[ ${owner} != "${uid}" ]]; then
    die "'${job_dir}' belongs to uid ${owner}: another user took this predictable name. Give" \
      "funnel-run a \$HOME where it can keep its secret (\$HOME/.funnel; then the name is" \
      "private) or a private --tmpdir"
  fi
  take_lock job_lock_fd "${job_dir}" $((opt_mps_wait + 5)) create ||
    die "could not lock ${job_dir}/lock within $((opt_mps_wait + 5)) s"
  # Every rank of a dense job passes here one after the other: what follows avoids forks.
  local reaper_alive=0 inst live=0
  if recorded_alive "${job_dir}/reaper"; then reaper_alive=1; fi
  if any_live_rank "${job_dir}"; then live=1; fi
  # The reaper first, before anything else is written: a launcher may SIGKILL ranks it is still
  # starting (Open MPI does when the launch is cancelled), and no trap sees that. It waits for
  # this lock before it looks, and this rank registers before it lets go.
  if ((reaper_alive == 0)); then start_reaper; fi
  # Then the job file: a --cleanup --job finds the directory by it.
  [[ -f ${job_dir}/job ]] || write_file "${job_dir}/job" "${job_key}"
  # The first rank of the job (again): an earlier run's failure is not this one's, nor are the
  # lines its daemons logged (a daemon may live on from an earlier job step).
  if ((live == 0)); then
    rm -f -- "${job_dir}/failure-reported" "${job_dir}/failure-written"
    record_log_sizes
  fi
  if ((live == 0 && reaper_alive == 0)); then
    for inst in "${job_dir}"/g*-*; do
      if [[ -d ${inst} ]]; then
        warn "stopping a stale MPS daemon left in ${job_dir} by an earlier job with the same id"
        stop_job "${job_dir}" keep
        break
      fi
    done
  fi
  if [[ ! -d ${job_dir}/ranks || ! -d ${job_dir}/run || ! -d ${job_dir}/no-mps ]]; then
    mkdir -m 700 -- "${job_dir}/ranks" "${job_dir}/run" "${job_dir}/no-mps" 2>/dev/null || true
  fi
  registered="${job_dir}/ranks/$$.wrapper"
  start_time_of $$ start
  # A new name (pids are unique among live processes); a dead rank's old record is replaced.
  create_new "${registered}" "$$ ${start}" || record_process "${registered}" $$
  release_locks
}

# ${job_dir}/log-start: "<GPU directory> <bytes>" for each MPS server log of the job's directory
# as this job starts; mps_fault_line reads its GPU's server log from there on.
record_log_sizes() {
  local inst size lines=""
  for inst in "${job_dir}"/g*-*; do
    if [[ -f ${inst}/log/server.log ]] && size=$(stat -c %s -- "${inst}/log/server.log"); then
      lines+="${inst##*/} ${size}"$'\n'
    fi
  done
  write_file "${job_dir}/log-start" "${lines}"
}
