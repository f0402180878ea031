#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The launch tests of funnel-run: one case per CTest test (see CMakeLists.txt beside this file).
# Each case runs the real script, under real mpirun where ranks are involved, with the stand-ins
# in fake-bin/ first on PATH, in a private temporary directory, and checks what the ranks saw
# (fake-app's records), what the stand-ins were asked (FAKE_NVIDIA_LOG), and that no daemon,
# reaper or directory is left behind.
# Usage: launch-tests.sh CASE    (FUNNEL_RUN names the funnel-run to test, FUNNEL_EPILOG the
#                                 funnel-epilog (default: beside it); MPIEXEC the mpirun)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FUNNEL_RUN=${FUNNEL_RUN:-${here}/../../launch/funnel-run}
FUNNEL_EPILOG=${FUNNEL_EPILOG:-$(dirname "${FUNNEL_RUN}")/funnel-epilog}
# funnel-run's sources: the script and its parts (what --help must document).
launch_sources=("${here}/../../launch/funnel-run" "${here}/../../launch/lib/"*.sh)
MPIEXEC=${MPIEXEC:-mpirun}
FAKE_APP=${here}/fake-app
uid=$(id -u)
passed=0
failed=0
spawned=() # processes of other uids a case started, killed by finish

# ---- checks -----------------------------------------------------------------------------------
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
}
# expect DESCRIPTION COMMAND...: passes when the command succeeds.
expect() {
  local what=$1
  shift
  if "$@"; then pass; else fail "${what}"; fi
}
expect_eq() { # expect_eq DESCRIPTION EXPECTED ACTUAL
  if [[ $2 == "$3" ]]; then pass; else fail "$1: expected '$2', got '$3'"; fi
}
expect_contains() { # expect_contains DESCRIPTION NEEDLE HAYSTACK
  if [[ $3 == *"$2"* ]]; then pass; else fail "$1: '$2' not in: $3"; fi
}

# ---- the case's private world -------------------------------------------------------------------
setup() {
  work=$(mktemp -d /tmp/flt.XXXXXX)
  # Like a node's /tmp: others may pass through the case's directory and write into t/ (sticky).
  chmod 711 "${work}"
  mkdir -p "${work}/t" "${work}/app" "${work}/home" "${work}/exe"
  chmod 1777 "${work}/t"
  # The fake daemon's executable: a copy of bash with the real daemon's name (see fake-bin/).
  cp "$(command -v bash)" "${work}/exe/nvidia-cuda-mps-control"
  chmod 755 "${work}/exe" "${work}/exe/nvidia-cuda-mps-control"
  export HOME=${work}/home FAKE_MPS_DAEMON_EXE=${work}/exe/nvidia-cuda-mps-control
  export FUNNEL_TMPDIR=${work}/t FAKE_NVIDIA_LOG=${work}/nvidia.log FAKE_APP_DIR=${work}/app
  export FUNNEL_REAPER_INTERVAL=0.2 FUNNEL_MPS_QUIT_WAIT=5 FUNNEL_JOB_ID=job$$ FUNNEL_STEP_ID=0
  export PATH=${here}/fake-bin:${PATH}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  unset CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  touch "${FAKE_NVIDIA_LOG}"
  trap finish EXIT
}

# Processes this case started that must not outlive it: they all name its private directory.
case_processes() { pgrep -f -- "${work}" || true; }
# What the trap kills: case_processes, and the processes that only inherited ${work} in their
# environment (FAKE_NVIDIA_LOG, FUNNEL_TMPDIR): a reaper's MPS client is one, and left alive it
# writes into ${work} while the trap removes it. This script and the subshell are skipped.
leftover_processes() {
  local environ pid
  case_processes
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    [[ ${pid} != "$$" && ${pid} != "${BASHPID}" ]] || continue
    if grep -qsF -- "${work}" "${environ}"; then echo "${pid}"; fi
  done
}

finish() {
  local rc=$? pid
  for pid in $(leftover_processes) "${spawned[@]}"; do kill -KILL "${pid}" 2>/dev/null || true; done
  if ((failed > 0)) || ((rc != 0)); then
    echo "--- fake nvidia log" >&2
    tail -n 40 "${FAKE_NVIDIA_LOG}" >&2 || true
  fi
  rm -rf "${work}"
  echo "${passed} passed, ${failed} failed"
  if ((failed > 0 && rc == 0)); then exit 1; fi
  exit "${rc}"
}

mpi() { # mpi NP ARGS...: funnel-run under real mpirun
  local np=$1
  shift
  "${MPIEXEC}" --oversubscribe -np "${np}" "${FUNNEL_RUN}" "$@"
}

# mpi_bg NP ARGS...: the same in the background; launcher= its pid (mpirun's own, to signal it)
launcher=""
mpi_bg() {
  local np=$1
  shift
  "${MPIEXEC}" --oversubscribe -np "${np}" "${FUNNEL_RUN}" "$@" >/dev/null 2>&1 &
  launcher=$!
}

# The GPU part of funnel-run's instance directory names.
gpu_tag() { echo "g$1-$(uuid_of "$1" | cut -c5-12)"; }

uuid_of() { printf 'GPU-%08x-fa4e-4b1d-8c2a-%012x' $((0x5eed0000 + $1)) $(($1 + 1)); }

daemon_starts() { grep -c -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}" || true; }
# count_procs PATTERN: the processes whose command line holds PATTERN, less those whose parent
# holds it too. Each 'sleep' or '$(...)' of the fake daemon (and of the reaper) is a fork that
# shows its parent's command line until it execs; on a loaded node pgrep sees one now and then,
# and a single daemon counted as two.
count_procs() {
  local -a pids
  local pid ppid stat n=0
  mapfile -t pids < <(pgrep -f -- "$1" || true)
  for pid in "${pids[@]}"; do
    { read -r stat <"/proc/${pid}/stat"; } 2>/dev/null || continue # ended meanwhile
    stat=${stat##*) } # after the name, which may hold spaces: state, then the parent's pid
    ppid=${stat#* }
    ppid=${ppid%% *}
    [[ " ${pids[*]} " == *" ${ppid} "* ]] || n=$((n + 1))
  done
  echo "${n}"
}
live_daemons() { count_procs "--fake-daemon ${work}"; }
live_reapers() { count_procs "--internal-reap ${work}"; }
# Anything a job left in the tmpdir (funnel-run must leave nothing once the ranks are gone).
leftovers() { find "${FUNNEL_TMPDIR}" -mindepth 1 2>/dev/null | wc -l; }

# True once no daemon, no reaper and no instance directory of this case is left (10 s at most).
torn_down() {
  local deadline=$((SECONDS + ${1:-10}))
  while ((SECONDS < deadline)); do
    if (($(live_daemons) == 0 && $(live_reapers) == 0 && $(leftovers) == 0)); then return 0; fi
    sleep 0.2
  done
  echo "left behind: daemons=$(live_daemons) reapers=$(live_reapers) left=$(leftovers)" >&2
  find "${FUNNEL_TMPDIR}" >&2 || true
  return 1
}

# Waits until N app records exist (the apps started); 20 s at most.
wait_apps() {
  local n=$1 deadline=$((SECONDS + 20))
  while ((SECONDS < deadline)); do
    (($(app_files | wc -l) >= n)) && return 0
    sleep 0.1
  done
  return 1
}
app_files() { find "${FAKE_APP_DIR}" -name 'rank.*' ! -name '*.tmp' | sort; }
# app_value FILE KEY: the value of KEY= in an app record
app_value() { sed -n "s/^$2=//p" "$1" | head -n 1; }
app_file_of_rank() { find "${FAKE_APP_DIR}" -name "rank.$1.*" ! -name '*.tmp' | head -n 1; }
# True when this case's app with pid $1 has ended (pids are reused quickly on a busy machine).
app_gone() { ! tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qx "FAKE_APP_DIR=${FAKE_APP_DIR}"; }
# A rank without MPS: its pipe variable names the job's empty no-mps directory, no daemon answers.
expect_no_mps() {
  local f=$1 name
  name=$(basename "$1")
  expect_eq "MPS off in ${name}" off "$(app_value "${f}" FUNNEL_MPS)"
  expect_eq "no FUNNEL_MPS_PIPE in ${name}" "" "$(app_value "${f}" FUNNEL_MPS_PIPE)"
  expect_eq "private empty pipe directory in ${name}" "$(app_value "${f}" FUNNEL_RUN_DIR | sed 's|/run$|/no-mps|')" \
    "$(app_value "${f}" CUDA_MPS_PIPE_DIRECTORY)"
  expect_eq "no daemon answered ${name}" 0 "$(app_value "${f}" mps_answered)"
}

# ---- cases ------------------------------------------------------------------------------------
case_help_version() {
  local help opt var
  help=$("${FUNNEL_RUN}" --help)
  # Every option the parser accepts and every FUNNEL_* variable the script reads is documented.
  # shellcheck disable=SC2013 # option names have no spaces
  for opt in $(cat "${launch_sources[@]}" | grep -oE '^ +--[a-z-]+( \| -h)?\)' | grep -oE -- '--[a-z-]+'); do
    expect_contains "--help documents ${opt}" "${opt}" "${help}"
  done
  # shellcheck disable=SC2013 # variable names have no spaces
  for var in $(cat "${launch_sources[@]}" | grep -oE '\$\{FUNNEL_[A-Z_]+' | sort -u | cut -c3-); do
    expect_contains "--help documents ${var}" "${var}" "${help}"
  done
  expect "--help names at least 15 options" \
    test "$(cat "${launch_sources[@]}" | grep -cE '^ +--[a-z-]+( \| -h)?\)')" -ge 15
  local version
  version=$("${FUNNEL_RUN}" --version)
  expect "--version names the program" test "${version%% *}" = funnel-run
  expect "--version names a version" test "${version#* }" != ""
  # The part that runs as root stays short enough to audit.
  local epilog_help
  epilog_help=$("${FUNNEL_EPILOG}" --help)
  expect_contains "funnel-epilog --help" "Usage: funnel-epilog" "${epilog_help}"
  expect "funnel-epilog is at most 150 lines" test "$(wc -l <"${FUNNEL_EPILOG}")" -le 150
}

case_bad_values() {
  local args out rc
  local -a cases=(
    "--policy bogus|bogus" "--mps maybe|maybe" "--mps-thread-percentage 0|0"
    "--mps-thread-percentage 101|101" "--mps-thread-percentage lots|lots"
    "--max-connections 33|33" "--max-connections 0|0" "--streams 0|0" "--streams -3|-3"
    "--mps-wait 0|0" "--mps-wait soon|soon" "--gpus 1,,2|1,,2" "--gpus first|first"
    "--mps-pinned-mem-limit 8X|8X" "--mps-max-clients 0|0" "--mps-client-devices index|index"
    "--tmpdir relative/dir|relative/dir" "--tmpdir /no/such/dir|/no/such/dir"
    "--bogus-option|--bogus-option" "--policy=packed,numa|packed,numa"
    "--mps-off-pipe shared|shared" "--mps-connection-budget 0|0" "--mps-connection-budget many|many"
    "--mps-connection-budget 1025|1025" "--mps-max-clients 99999999999|99999999999"
    "--tmpdir ${work}/loose|${work}/loose")
  # A directory others may write that is not sticky: they could rename a job's directory.
  mkdir -m 777 "${work}/loose"
  chmod 777 "${work}/loose"
  for entry in "${cases[@]}"; do
    args=${entry%|*}
    rc=0
    # shellcheck disable=SC2086 # the arguments are meant to be split
    out=$("${FUNNEL_RUN}" ${args} -- true 2>&1) || rc=$?
    expect_eq "exit status of '${args}'" 2 "${rc}"
    expect_eq "one line for '${args}'" 1 "$(wc -l <<<"${out}")"
    expect_contains "message of '${args}' names the value" "'${entry#*|}'" "${out}"
  done
  rc=0
  out=$("${FUNNEL_RUN}" --policy 2>&1) || rc=$?
  expect_eq "missing option value" 2 "${rc}"
  rc=0
  out=$(FUNNEL_POLICY=sideways "${FUNNEL_RUN}" -- true 2>&1) || rc=$?
  expect_eq "bad FUNNEL_POLICY" 2 "${rc}"
  expect_contains "FUNNEL_POLICY message" "sideways" "${out}"
  rc=0
  out=$(FUNNEL_DRY_RUN=yes "${FUNNEL_RUN}" -- true 2>&1) || rc=$?
  expect_eq "bad FUNNEL_DRY_RUN" 2 "${rc}"
  rc=0
  out=$("${FUNNEL_RUN}" 2>&1) || rc=$?
  expect_eq "no app" 2 "${rc}"
  # A private directory inside one every user may write (not sticky): they could rename it.
  mkdir -m 700 "${work}/loose/mine"
  rc=0
  out=$("${FUNNEL_RUN}" --tmpdir "${work}/loose/mine" -- true 2>&1) || rc=$?
  expect_eq "a private --tmpdir inside a loose directory" 2 "${rc}"
  expect_contains "names the loose directory" "('${work}/loose' has mode 777: every user may write it" "${out}"
  # The same through a link in the loose directory (anyone could point it elsewhere).
  mkdir -m 700 "${work}/private"
  ln -s "${work}/private" "${work}/loose/link"
  rc=0
  out=$("${FUNNEL_RUN}" --tmpdir "${work}/loose/link/" -- true 2>&1) || rc=$?
  expect_eq "a --tmpdir reached through a link in a loose directory" 2 "${rc}"
  expect_contains "names the loose directory" "('${work}/loose' has mode 777: every user may write it" "${out}"
  # A directory shared with the user's group (a project's, or under user-private groups) is fine.
  mkdir -m 2775 "${work}/group"
  chmod 2775 "${work}/group"
  rc=0
  out=$("${FUNNEL_RUN}" --dry-run --tmpdir "${work}/group" -- true 2>&1) || rc=$?
  expect_eq "a group-writable --tmpdir" 0 "${rc}"
}

# The reaper takes the two settings it uses from its rank; the rest of the environment (here a
# FUNNEL_TMPDIR and FUNNEL_POLICY the rank's command line overrode) does not stop it. Before, it
# died at once on them and left the daemon and the directory.
case_reaper_env() {
  export FAKE_GPU_COUNT=1
  mkdir -m 777 "${work}/loose"
  chmod 777 "${work}/loose"
  local rc=0 tmpdir=${FUNNEL_TMPDIR}
  FUNNEL_TMPDIR=${work}/loose FUNNEL_POLICY=bogus "${FUNNEL_RUN}" --tmpdir "${tmpdir}" \
    --policy packed --mps on -- "${FAKE_APP}" || rc=$?
  expect_eq "the job runs" 0 "${rc}"
  expect "its reaper stops the daemon and removes the directory" torn_down
  # A group's directory (set-group-id: the job directory made in it is mode 2700) as the tmpdir,
  # two ranks: before, the second rank refused the directory and the reaper left it.
  mkdir -m 2775 "${work}/group"
  chmod 2775 "${work}/group"
  rc=0
  FAKE_APP_SLEEP=1 mpi 2 --tmpdir "${work}/group" --mps on -- "${FAKE_APP}" >/dev/null 2>&1 || rc=$?
  expect_eq "a job in a set-group-id group directory" 0 "${rc}"
  local deadline=$((SECONDS + 10))
  while [[ -n $(find "${work}/group" -mindepth 1 -print -quit) || $(live_daemons) -gt 0 ]] &&
    ((SECONDS < deadline)); do sleep 0.2; done
  expect_eq "its reaper removes the directory" "" "$(find "${work}/group" -mindepth 1)"
  expect_eq "and stops the daemon" 0 "$(live_daemons)"
  # A left job directory in a tmpdir whose name holds glob characters, with a link the app made
  # in run/: --cleanup --job removes it (before, the link was taken for one of funnel-run's own).
  local odd="${work}/t[1]" left
  mkdir -m 1777 "${odd}"
  chmod 1777 "${odd}"
  left=${odd}/funnel-run-${uid}-left
  mkdir -m 700 "${left}" "${left}/run"
  echo "odd$$.0" >"${left}/job"
  ln -s /etc/hostname "${left}/run/applink"
  "${FUNNEL_RUN}" --cleanup --job "odd$$" --tmpdir "${odd}" >"${work}/cleanup.out" 2>&1 || true
  expect "a job directory in '${odd}' with a link in run/ goes" test ! -e "${left}"
}

# Numbers with leading zeros are the decimal numbers they spell: bash arithmetic would read "08"
# as a bad octal number (the reaper died on FUNNEL_MPS_QUIT_WAIT=08 and left the daemon) and
# "010" as 8.
case_number_forms() {
  export FAKE_GPU_COUNT=1
  local out rc=0
  out=$(CUDA_DEVICE_MAX_CONNECTIONS=010 "${FUNNEL_RUN}" --dry-run --mps on --mps-max-clients 08 \
    --mps-connection-budget 096 --mps-thread-percentage 050 --mps-wait 010 -- true 2>&1) || rc=$?
  expect_eq "a dry run with zero-led numbers" 0 "${rc}"
  expect_eq "connections as given" 10 "$(field connections "${out}")"
  rc=0
  out=$("${FUNNEL_RUN}" --dry-run --mps on --max-connections 09 --streams 08 -- true 2>&1) || rc=$?
  expect_eq "--max-connections 09" 0 "${rc}"
  expect_eq "connections 9" 9 "$(field connections "${out}")"
  rc=0
  FUNNEL_MPS_QUIT_WAIT=08 "${FUNNEL_RUN}" --mps on --mps-wait 09 -- "${FAKE_APP}" 2>"${work}/err" ||
    rc=$?
  expect_eq "a job with FUNNEL_MPS_QUIT_WAIT=08" 0 "${rc}"
  expect "its reaper stops the daemon and removes the directory" torn_down
  expect_eq "no arithmetic error" "" "$(grep -r 'value too great' "${work}/err" "${FUNNEL_TMPDIR}" 2>/dev/null)"
}

# The locks that order a job's ranks (files.sh's take_lock), driven directly: a lock file that was
# replaced while a rank waited for it is not held (the rank starts over and takes the new one),
# and one that another user owns is never held. The caller's variable is report_if_last's, fd:
# take_lock used to have a local of that name, which its nameref then set instead, so that rank
# never gave the job's lock back.
case_lock_identity() {
  local lib=${here}/../../launch/lib dir=${work}/lockdir fifo=${work}/release holder waiter
  # lock_in DIR SECONDS: take_lock in a shell of its own; holds what it got for 2 s and says so.
  lock_in() {
    (
      set +e
      # shellcheck source=/dev/null # funnel-run's parts, checked on their own
      source "${lib}/state.sh" && source "${lib}/messages.sh" && source "${lib}/files.sh"
      # The name report_if_last uses; it used to be one of take_lock's own, which hid the caller's.
      local fd=""
      if take_lock fd "$1" "$2" create; then
        echo "held $(stat -L -c %i "/proc/${BASHPID}/fd/${fd}")"
        sleep 2
      else
        echo "refused"
      fi
    )
  }
  # How many descriptors of all processes have the lock file open; whether someone holds it.
  # (find fails on processes that end while it looks.)
  openers() { { find /proc/[0-9]*/fd -lname "${dir}/lock" 2>/dev/null || true; } | wc -l; }
  # shellcheck disable=SC2317 # called through until_true
  held_elsewhere() { ! flock -n "${dir}/lock" true; }
  local before=0
  # shellcheck disable=SC2317 # called through until_true
  waiter_opened() { (($(openers) > before)); }
  # until_true SECONDS COMMAND...: polls COMMAND; fails the case when it never holds.
  until_true() {
    local tries=$(($1 * 20))
    shift
    until "$@"; do
      ((--tries > 0)) || { fail "never true: $*"; return 1; }
      sleep 0.05
    done
  }
  mkdir -m 700 "${dir}"
  : >"${dir}/lock"
  mkfifo "${fifo}"
  # The holder keeps the lock until the fifo is written; the waiter opens the lock file and waits.
  flock "${dir}/lock" cat "${fifo}" >/dev/null &
  holder=$!
  until_true 30 held_elsewhere || return 0
  before=$(openers)
  lock_in "${dir}" 30 >"${work}/waiter.out" &
  waiter=$!
  until_true 30 waiter_opened || return 0
  # Now the file it waits on is replaced, and only then let go.
  mv "${dir}/lock" "${dir}/old-lock"
  : >"${dir}/lock"
  local new_inode
  new_inode=$(stat -c %i "${dir}/lock")
  : >"${fifo}"
  wait "${holder}" || true
  wait "${waiter}" || true
  expect_eq "a waiter on a lock replaced meanwhile holds the new one" "held ${new_inode}" \
    "$(cat "${work}/waiter.out")"
  # Taking the file away from this uid needs root (chown).
  if [[ ${uid} == 0 ]]; then
    chown 4242 "${dir}/lock"
    expect_eq "a lock file of another uid is never held" refused "$(lock_in "${dir}" 1)"
  fi
}

# The GPU listing a launch's ranks share (gpu_listing): one nvidia-smi -L per launch and node;
# a planted or foreign listing is never read; a signal while it is made, or a job refused after
# it, leaves nothing.
case_gpu_listing() {
  export FAKE_GPU_COUNT=2 FAKE_MPS_START_DELAY=0
  local lib=${here}/../../launch/lib f rc out
  FAKE_APP_SLEEP=3 FAKE_NVIDIA_LIST_DELAY=0.3 mpi 8 -- "${FAKE_APP}"
  expect_eq "8 ranks: one listing" 1 "$(grep -c 'nvidia-smi -L' "${FAKE_NVIDIA_LOG}")"
  expect_eq "8 ranks: every app ran" 8 "$(app_files | wc -l)"
  for f in $(app_files); do
    expect_eq "$(basename "${f}"): its GPU by round-robin" \
      "$(uuid_of $(($(app_value "${f}" FUNNEL_LOCAL_RANK) % 2)))" "$(app_value "${f}" FUNNEL_GPU_UUID)"
  done
  expect "8 ranks: nothing left" torn_down

  # The functions themselves, on listings planted in a job directory; each call in a shell of its
  # own says "STATUS CALLS FIRST-LINE" (CALLS: the nvidia-smi -L it ran). Registering in the job
  # (setup_job, tested by the cases above) is only the directory here.
  local dir=${work}/listing-job
  listing() {
    (
      set +e
      # shellcheck source=/dev/null # funnel-run's parts, checked on their own
      source "${lib}/state.sh" && source "${lib}/messages.sh" && source "${lib}/files.sh" &&
        source "${lib}/jobdir.sh"
      # shellcheck disable=SC2317 # called by gpu_listing
      begin_setup() { :; }
      # shellcheck disable=SC2317
      setup_job() { [[ -d ${job_dir} ]] || mkdir -m 700 "${job_dir}"; }
      # shellcheck disable=SC2034 # read by the functions sourced above
      local_size=2 job_dir=${dir} job_dir_private=${private:-1}
      local before status text
      before=$(grep -c 'nvidia-smi -L' "${FAKE_NVIDIA_LOG}")
      gpu_listing status text
      echo "${status} $(($(grep -c 'nvidia-smi -L' "${FAKE_NVIDIA_LOG}") - before)) ${text%%$'\n'*}"
    )
  }
  fresh() { rm -rf "${dir}" && mkdir -m 700 "${dir}"; }
  # Waits (30 s at most) until a rank of the launch runs nvidia-smi -L.
  listing_started() {
    local deadline=$((SECONDS + 30))
    until grep -q 'nvidia-smi -L' "${FAKE_NVIDIA_LOG}" || ((SECONDS > deadline)); do sleep 0.05; done
  }
  # The name gpu_listing uses in such a shell (its launcher: this script's parent, the PPID of
  # every subshell), the control group line it writes, and a claim of a live rank (this script).
  local start name cgroup live_claim sum
  cgroup=$(tr '\n' ';' <"/proc/self/cgroup")
  cgroup=${cgroup%;}
  sum=$(cksum <<<"${cgroup}")
  read -r -a start <<<"$(cut -d ')' -f 2- "/proc/${PPID}/stat")"
  name=${dir}/gpus.${PPID}.${start[19]}.${sum%% *}
  read -r -a start <<<"$(cut -d ')' -f 2- "/proc/$$/stat")"
  live_claim="$$ ${start[19]}"
  local fake0 planted="GPU 0: planted (UUID: GPU-00000000-0000-0000-0000-000000000bad)"
  fake0="GPU 0: NVIDIA H100 80GB HBM3 (fake) (UUID: $(uuid_of 0))"
  rm -rf "${dir}"
  expect_eq "no listing yet: this rank makes it" "0 1 ${fake0}" "$(listing)"
  expect "and leaves it for the launch's other ranks" test -f "${name}"
  expect_eq "the next rank reads it" "0 0 ${fake0}" "$(listing)"
  fresh
  printf '%s\n0\n%s\n' "${cgroup}" "${planted}" >"${name}"
  expect_eq "a listing of ours in our control group is read" "0 0 ${planted}" "$(listing)"
  fresh
  printf '%s\n0\n%s\n' "0::/another/group" "${planted}" >"${name}"
  expect_eq "a listing made in another control group is not" "0 1 ${fake0}" "$(listing)"
  fresh
  printf '%s\n0\n%s\n' "${cgroup}" "${planted}" >"${work}/elsewhere"
  ln -s "${work}/elsewhere" "${name}"
  expect_eq "a link is not a listing" "0 1 ${fake0}" "$(listing)"
  fresh
  cp "${work}/elsewhere" "${name}"
  chmod 755 "${dir}"
  expect_eq "nor one in a job directory others may enter" "0 1 ${fake0}" "$(listing)"
  if [[ ${uid} == 0 ]]; then
    fresh
    cp "${work}/elsewhere" "${name}"
    chown 4242 "${name}"
    expect_eq "nor one of another uid" "0 1 ${fake0}" "$(listing)"
  fi
  # A predictable job directory name (no usable $HOME): nothing is shared.
  rm -rf "${dir}"
  expect_eq "a predictable name: the rank lists alone" "0 1 ${fake0}" "$(private=0 listing)"
  expect "and writes nothing" test ! -e "${dir}"
  # Claimed by a live rank: its answer, when it comes. By a rank that is gone: list at once.
  fresh
  printf '%s\n' "${live_claim}" >"${name}.claim"
  (sleep 0.5 && printf '%s\n0\n%s\n' "${cgroup}" "${planted}" >"${name}.tmp" &&
    mv "${name}.tmp" "${name}") &
  expect_eq "claimed by a live rank: its answer, when it comes" "0 0 ${planted}" "$(listing)"
  wait
  fresh
  printf '999999999 1\n' >"${name}.claim"
  SECONDS=0
  expect_eq "claimed by a rank that is gone: the rank lists alone" "0 1 ${fake0}" "$(listing)"
  expect "without waiting for it (< 4 s of the 5 s)" test "${SECONDS}" -lt 4
  # Claimed by a live rank of another control group whose checksum is the same: its answer is
  # not read, nor waited for.
  fresh
  printf '%s\n' "${live_claim}" >"${name}.claim"
  printf '%s\n0\n%s\n' "0::/another/group" "${planted}" >"${name}"
  SECONDS=0
  expect_eq "another control group's answer: the rank lists alone" "0 1 ${fake0}" "$(listing)"
  expect "without waiting for the claim (< 4 s of the 5 s)" test "${SECONDS}" -lt 4
  # A failing nvidia-smi: its status and line are shared as they are.
  rm -rf "${dir}"
  expect_eq "a failed listing is shared as it failed" "6 1 No devices were found" \
    "$(FAKE_GPU_COUNT=0 listing)"
  expect_eq "by every rank" "6 0 No devices were found" "$(listing)"
  rm -rf "${dir}"

  # A job refused after the listing: the one line, and nothing left (the reaper of the rank that
  # registered to make the listing removes it).
  rc=0
  out=$(timeout 100 "${MPIEXEC}" --oversubscribe -np 6 "${FUNNEL_RUN}" --gpus 7 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "refused: mpirun ends non-zero" test "${rc}" -ne 0 -a "${rc}" -ne 124
  expect_eq "refused: one line" 1 "$(grep -c 'GPU index 7 does not exist' <<<"${out}")"
  expect "refused: nothing left" torn_down

  # SIGKILL of the whole launch while the listing is made, as Open MPI ends ranks it is still
  # starting: no trap runs; the reaper of the registered rank that claimed it removes it.
  : >"${FAKE_NVIDIA_LOG}"
  FAKE_NVIDIA_LIST_DELAY=3 FUNNEL_JOB_ID=listkill$$ mpi_bg 4 -- sleep 6
  listing_started
  expect "a rank claimed the listing" test -n "$(find "${FUNNEL_TMPDIR}" -name 'gpus.*.claim')"
  kill -KILL "${launcher}" $(pgrep -f -- "${FUNNEL_RUN} -- sleep 6") 2>/dev/null || true
  wait "${launcher}" 2>/dev/null || true
  expect "SIGKILLed while listing: nothing left" torn_down 30

  # SIGTERM to the listing rank alone while NVML hangs: the rank ends at once (its trap runs in
  # the wait), not when nvidia-smi is done.
  : >"${FAKE_NVIDIA_LOG}"
  FAKE_NVIDIA_LIST_DELAY=20 FUNNEL_JOB_ID=listterm$$ mpi_bg 4 -- sleep 6
  listing_started
  local claimer="" waited=0
  read -r claimer _ <"$(find "${FUNNEL_TMPDIR}" -name 'gpus.*.claim' | head -n 1)" || true
  expect "the listing rank is known" test -n "${claimer}"
  if [[ -n ${claimer} ]]; then
    kill -TERM "${claimer}"
    while kill -0 "${claimer}" 2>/dev/null && ((waited < 50)); do sleep 0.1; waited=$((waited + 1)); done
    expect "SIGTERM while NVML hangs: the listing rank ends within 5 s, not 20" \
      test "${waited}" -lt 50
  fi
  kill -KILL "${launcher}" $(pgrep -f -- "${FUNNEL_RUN} -- sleep 6") 2>/dev/null || true
  wait "${launcher}" 2>/dev/null || true
  pkill -KILL -f -- "${here}/fake-bin/nvidia-smi -L" 2>/dev/null || true
  expect "and nothing is left" torn_down 30

  # mpirun signalled while the listing is made (NVML slow), while the others wait, or after.
  local delay
  for delay in 050 150 300 500 700 900; do
    FAKE_NVIDIA_LIST_DELAY=0.6 FUNNEL_JOB_ID=listing$$.${delay} timeout -s TERM "0.${delay}" \
      "${MPIEXEC}" --oversubscribe -np 4 "${FUNNEL_RUN}" -- sleep 3 >/dev/null 2>&1 || true
  done
  expect "signalled while listing: nothing left" torn_down 30
}

# Signals at every moment of start-up (a launcher's whole process group, as timeout sends them):
# whatever the rank reached, no job directory, daemon or reaper is left. Before, a signal between
# the directory's creation and its reaper's start (or one that reached the reaper before setsid)
# left directories that only the user's own --cleanup would remove.
case_startup_signals() {
  export FAKE_GPU_COUNT=1 FAKE_MPS_START_DELAY=0
  local n delay
  for ((n = 0; n < 40; n++)); do
    delay=$((5 + (n * 37) % 90))
    FUNNEL_JOB_ID=sig$$.${n} timeout -s TERM "0.$(printf '%03d' "${delay}")" \
      "${FUNNEL_RUN}" --mps "$( ((n % 2)) && echo on || echo off)" -- sleep 2 >/dev/null 2>&1 || true
  done
  expect "nothing is left" torn_down 30
}

case_app_status() {
  local rc out
  rc=0
  "${FUNNEL_RUN}" --mps on -- "${work}/no-such-app" 2>/dev/null || rc=$?
  expect_eq "missing app path" 127 "${rc}"
  rc=0
  "${FUNNEL_RUN}" -- no-such-command-funnel 2>/dev/null || rc=$?
  expect_eq "missing command" 127 "${rc}"
  printf '#!/bin/sh\nexit 0\n' >"${work}/not-executable"
  chmod 644 "${work}/not-executable"
  rc=0
  "${FUNNEL_RUN}" --mps on -- "${work}/not-executable" 2>/dev/null || rc=$?
  expect_eq "not executable" 126 "${rc}"
  rc=0
  "${FUNNEL_RUN}" -- "${work}" 2>/dev/null || rc=$?
  expect_eq "a directory" 126 "${rc}"
  expect_eq "no daemon for an app that cannot run" 0 "$(daemon_starts)"

  rc=0
  FAKE_APP_EXIT=3 "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" || rc=$?
  expect_eq "app's exit status" 3 "${rc}"
  rc=0
  "${FUNNEL_RUN}" -- bash -c 'kill -KILL $$' 2>/dev/null || rc=$?
  expect_eq "app killed by SIGKILL" 137 "${rc}"
  rc=0
  "${FUNNEL_RUN}" "${FAKE_APP}" || rc=$?
  expect_eq "app without --" 0 "${rc}"
  expect "teardown after the runs" torn_down

  # Signals reach the app; the wrapper ends with the app's status.
  rm -f "${FAKE_APP_DIR}"/rank.*
  FAKE_APP_SLEEP=30 "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" &
  local wrapper=$!
  expect "app started" wait_apps 1
  local file
  file=$(app_files)
  kill -USR1 "${wrapper}"
  sleep 0.5
  kill -TERM "${wrapper}"
  rc=0
  wait "${wrapper}" || rc=$?
  expect_eq "wrapper status after SIGTERM" 143 "${rc}"
  expect "SIGUSR1 forwarded" grep -qx signal=USR1 "${file}"
  expect "SIGTERM forwarded" grep -qx signal=TERM "${file}"
  expect "teardown after SIGTERM" torn_down
}

# binding KEY ARGS... (environment from the caller): the KEY= value of a dry run's binding line
plan() {
  local out
  out=$("${FUNNEL_RUN}" --dry-run "$@" -- true 2>&1) || return $?
  sed -n 's/.*binding //p' <<<"${out}"
}
plan_raw() { "${FUNNEL_RUN}" --dry-run "$@" -- true 2>&1; }
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# placement VAR=VALUE...: "launcher local_rank local_size" of a dry run in that environment
placement() {
  local line
  line=$(env "$@" "${FUNNEL_RUN}" --dry-run -- true 2>&1 | sed -n 's/.*binding //p')
  echo "$(field launcher "${line}") $(field local_rank "${line}") $(field local_size "${line}")"
}

# refused VAR=VALUE...: the exit status of a dry run in that environment
refused() {
  local rc=0
  env "$@" "${FUNNEL_RUN}" --dry-run -- true >/dev/null 2>&1 || rc=$?
  echo "${rc}"
}

case_local_rank() {
  expect_eq "openmpi" "openmpi 3 8" \
    "$(placement OMPI_COMM_WORLD_LOCAL_RANK=3 OMPI_COMM_WORLD_LOCAL_SIZE=8)"
  expect_eq "slurm, third node" "slurm 1 3" \
    "$(placement SLURM_LOCALID=1 SLURM_STEP_TASKS_PER_NODE='4(x2),3' SLURM_NODEID=2)"
  expect_eq "slurm, job tasks" "slurm 2 4" "$(placement SLURM_LOCALID=2 SLURM_TASKS_PER_NODE=4)"
  expect_eq "hydra" "hydra 1 2" "$(placement MPI_LOCALRANKID=1 MPI_LOCALNRANKS=2)"
  expect_eq "mvapich2" "mvapich2 5 6" \
    "$(placement MV2_COMM_WORLD_LOCAL_RANK=5 MV2_COMM_WORLD_LOCAL_SIZE=6)"
  expect_eq "pmi" "pmi 0 4" "$(placement PMI_LOCAL_RANK=0 PMI_LOCAL_SIZE=4)"
  expect_eq "pals" "pals 3 4" "$(placement PALS_LOCAL_RANKID=3 PALS_LOCAL_SIZE=4)"
  expect_eq "mpirun inside an allocation" "openmpi 1 2" \
    "$(placement OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 SLURM_LOCALID=0 \
      SLURM_TASKS_PER_NODE=1)"
  expect_eq "one rank, no launcher" "none 0 1" "$(placement SLURM_NTASKS=1)"
  expect_eq "several ranks implied, no local rank" 2 "$(refused PMI_SIZE=4)"
  expect_eq "local rank out of range" 2 \
    "$(refused OMPI_COMM_WORLD_LOCAL_RANK=8 OMPI_COMM_WORLD_LOCAL_SIZE=8)"
  expect_eq "SLURM_LOCALID without tasks per node" 2 "$(refused SLURM_LOCALID=0)"
  expect_eq "bad Slurm task list" 2 "$(refused SLURM_LOCALID=0 SLURM_TASKS_PER_NODE='2(x)')"
}

# gpus_of SIZE ARGS...: the nvidia-smi index of each local rank's GPU, space-separated
gpus_of() {
  local size=$1 r out=()
  shift
  for ((r = 0; r < size; r++)); do
    out+=("$(field gpu "$(OMPI_COMM_WORLD_LOCAL_RANK=${r} OMPI_COMM_WORLD_LOCAL_SIZE=${size} plan "$@")")")
  done
  echo "${out[*]}"
}

case_binding_tables() {
  export FAKE_GPU_COUNT=4
  expect_eq "round-robin 8 on 4" "0 1 2 3 0 1 2 3" "$(gpus_of 8)"
  expect_eq "packed 8 on 4" "0 0 1 1 2 2 3 3" "$(gpus_of 8 --policy packed)"
  expect_eq "packed 6 on 4" "0 0 1 1 2 2" "$(gpus_of 6 --policy packed)"
  expect_eq "packed 3 on 4" "0 1 2" "$(gpus_of 3 --policy packed)"
  expect_eq "explicit slot list" "0 0 1 1 0 0 1 1" "$(gpus_of 8 --gpus 0,0,1,1)"
  expect_eq "by UUID" "2 2 2" "$(gpus_of 3 --gpus "$(uuid_of 2)")"
  expect_eq "CUDA_VISIBLE_DEVICES indices" "2 3 2 3" "$(CUDA_VISIBLE_DEVICES=2,3 gpus_of 4)"
  expect_eq "CUDA_VISIBLE_DEVICES + --gpus" "3 3" "$(CUDA_VISIBLE_DEVICES=2,3 gpus_of 2 --gpus 1)"
  expect_eq "CUDA_VISIBLE_DEVICES UUID" "1 1" "$(CUDA_VISIBLE_DEVICES=$(uuid_of 1) gpus_of 2)"
  expect_eq "CUDA_VISIBLE_DEVICES stops at a bad entry" "1 1" "$(CUDA_VISIBLE_DEVICES=1,7,2 gpus_of 2 2>/dev/null)"
  expect_eq "CUDA_VISIBLE_DEVICES empty" "- -" "$(CUDA_VISIBLE_DEVICES='' gpus_of 2)"
  expect_eq "no GPU at all" "-" "$(FAKE_GPU_COUNT=0 gpus_of 1 2>/dev/null)"

  local line rc out
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=5 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan --print-binding)
  expect_eq "uuid of rank 5" "$(uuid_of 1)" "$(field uuid "${line}")"
  expect_eq "ranks on GPU" 2 "$(field ranks_on_gpu "${line}")"
  expect_eq "auto: MPS when shared" on "$(field mps "${line}")"
  expect "pipe: the user's private job directory, then the GPU" \
    grep -qE "^${FUNNEL_TMPDIR}/funnel-run-${uid}-[0-9a-f]{16}/$(gpu_tag 1)/pipe\$" <<<"$(field pipe "${line}")"
  local other
  other=$(FUNNEL_JOB_ID=other$$ OMPI_COMM_WORLD_LOCAL_RANK=5 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan)
  expect "another job, another directory" test "$(field pipe "${other}")" != "$(field pipe "${line}")"
  other=$(HOME=/nonexistent OMPI_COMM_WORLD_LOCAL_RANK=5 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan)
  expect_eq "without a usable HOME the job key names it" \
    "${FUNNEL_TMPDIR}/funnel-run-${uid}-job$$.0/$(gpu_tag 1)/pipe" "$(field pipe "${other}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=4 plan)
  expect_eq "auto: no MPS when not shared" off "$(field mps "${line}")"
  expect_eq "no pipe without MPS" - "$(field pipe "${line}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=4 plan --mps on)
  expect_eq "--mps on" on "$(field mps "${line}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan --mps off)
  expect_eq "--mps off" off "$(field mps "${line}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=8 FUNNEL_MPS=off plan)
  expect_eq "FUNNEL_MPS=off" off "$(field mps "${line}")"

  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan --mps-thread-percentage auto)
  expect_eq "thread percentage auto, 2 per GPU" 50 "$(field threads "${line}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=3 plan --gpus 0 --mps-thread-percentage auto)
  expect_eq "thread percentage auto, 3 per GPU" 33 "$(field threads "${line}")"
  line=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan --mps-thread-percentage 40)
  expect_eq "thread percentage given" 40 "$(field threads "${line}")"
  line=$(plan)
  expect_eq "default connections: CUDA's own" - "$(field connections "${line}")"
  line=$(plan --streams 4)
  expect_eq "connections from streams" 4 "$(field connections "${line}")"
  line=$(plan --streams 100)
  expect_eq "connections capped" 32 "$(field connections "${line}")"
  line=$(FUNNEL_MAX_CONNECTIONS=16 plan --streams 4)
  expect_eq "connections given" 16 "$(field connections "${line}")"

  rc=0
  out=$(plan_raw --gpus 4) || rc=$?
  expect_eq "GPU index that does not exist" 2 "${rc}"
  expect_contains "message names the index and the range" "GPU index 4 does not exist (visible GPUs: 0-3)" "${out}"
  rc=0
  out=$(plan_raw --gpus GPU-deadbeef) || rc=$?
  expect_eq "GPU UUID that does not exist" 2 "${rc}"
  expect_contains "message names the UUID" "GPU-deadbeef" "${out}"
  rc=0
  out=$(CUDA_VISIBLE_DEVICES=0,1 plan_raw --gpus "$(uuid_of 3)") || rc=$?
  expect_eq "GPU hidden by CUDA_VISIBLE_DEVICES" 2 "${rc}"
  rc=0
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=49 plan_raw --gpus 0) || rc=$?
  expect_eq "49 ranks on one GPU under MPS" 2 "${rc}"
  expect_contains "message names the limit" "49 ranks on one GPU is more than MPS allows (48" "${out}"
  rc=0
  OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=49 plan --gpus 0 --mps off >/dev/null || rc=$?
  expect_eq "49 ranks on one GPU without MPS" 0 "${rc}"
  rc=0
  OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=96 plan >/dev/null || rc=$?
  expect_eq "96 ranks on 4 GPUs (24 each)" 0 "${rc}"
  rc=0
  OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=5 plan --gpus 0 --mps-max-clients 4 >/dev/null 2>&1 || rc=$?
  expect_eq "--mps-max-clients" 2 "${rc}"

  # numa: the GPU whose CPU affinity holds the rank's cores.
  if (($(nproc) >= 2)) && command -v taskset >/dev/null; then
    export FAKE_GPU_COUNT=2 FAKE_GPU_CPU_AFFINITY="0;1"
    expect_eq "numa, core 1" 1 "$(field gpu "$(taskset -c 1 "${FUNNEL_RUN}" --dry-run --policy numa -- true 2>&1 | sed -n 's/.*binding //p')")"
    expect_eq "numa, core 0" 0 "$(field gpu "$(taskset -c 0 "${FUNNEL_RUN}" --dry-run --policy numa -- true 2>&1 | sed -n 's/.*binding //p')")"
    export FAKE_GPU_CPU_AFFINITY="0-1;0-1"
    expect_eq "numa without locality falls back to round-robin" "0 1" "$(gpus_of 2 --policy numa)"
  else
    echo "numa checks skipped: fewer than 2 CPUs or no taskset"
  fi
  expect_eq "dry runs start nothing" 0 "$(daemon_starts)"
  expect_eq "dry runs create nothing" 0 "$(find "${FUNNEL_TMPDIR}" -mindepth 1 | wc -l)"
}

case_mpirun_mps() {
  export FAKE_GPU_COUNT=2
  local out rc=0 f r gpu
  out=$(FAKE_APP_SLEEP=1 mpi 8 --print-binding --mps-thread-percentage auto \
    --mps-pinned-mem-limit 2G --streams 4 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "mpirun status" 0 "${rc}"
  expect_eq "one binding line per rank" 8 "$(grep -c 'funnel-run: binding' <<<"${out}")"
  expect_eq "8 apps ran" 8 "$(app_files | wc -l)"
  expect_eq "one daemon per GPU" 2 "$(daemon_starts)"
  expect_eq "daemons on distinct pipes" 2 "$(grep -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}" | grep -oE 'pipe=[^ ]+' | sort -u | wc -l)"
  for gpu in 0 1; do
    expect_eq "daemon of GPU ${gpu} sees only it" 1 "$(grep -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}" | grep -c "cvd=$(uuid_of "${gpu}")$")"
  done
  for ((r = 0; r < 8; r++)); do
    f=$(app_file_of_rank "${r}")
    [[ -n ${f} ]] || {
      fail "no record of local rank ${r}"
      continue
    }
    gpu=$((r % 2))
    expect_eq "rank ${r} local size" 8 "$(app_value "${f}" FUNNEL_LOCAL_SIZE)"
    expect_eq "rank ${r} launcher" funnel-run "$(app_value "${f}" FUNNEL_LAUNCHER)"
    expect_eq "rank ${r} GPU index" "${gpu}" "$(app_value "${f}" FUNNEL_GPU_INDEX)"
    expect_eq "rank ${r} GPU UUID" "$(uuid_of "${gpu}")" "$(app_value "${f}" FUNNEL_GPU_UUID)"
    expect_eq "rank ${r} CUDA_VISIBLE_DEVICES" "$(uuid_of "${gpu}")" "$(app_value "${f}" CUDA_VISIBLE_DEVICES)"
    expect_eq "rank ${r} ranks on GPU" 4 "$(app_value "${f}" FUNNEL_RANKS_ON_GPU)"
    expect_eq "rank ${r} MPS" on "$(app_value "${f}" FUNNEL_MPS)"
    expect_eq "rank ${r} pipe" "$(app_value "${f}" CUDA_MPS_PIPE_DIRECTORY)" "$(app_value "${f}" FUNNEL_MPS_PIPE)"
    expect_contains "rank ${r} pipe is its GPU's" "/$(gpu_tag "${gpu}")/pipe" "$(app_value "${f}" FUNNEL_MPS_PIPE)"
    expect_eq "rank ${r} job directory" "$(dirname "$(dirname "$(app_value "${f}" FUNNEL_MPS_PIPE)")")/run" \
      "$(app_value "${f}" FUNNEL_RUN_DIR)"
    expect_eq "rank ${r} pipe private" "700:${uid}" "$(app_value "${f}" pipe_mode)"
    expect_eq "rank ${r} daemon answered" 1 "$(app_value "${f}" mps_answered)"
    expect_eq "rank ${r} daemon still up at its exit" 1 "$(app_value "${f}" mps_answered_at_exit)"
    expect_eq "rank ${r} thread percentage" 25 "$(app_value "${f}" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)"
    expect_eq "rank ${r} pinned limit" 0=2G "$(app_value "${f}" CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)"
    expect_eq "rank ${r} connections" 4 "$(app_value "${f}" CUDA_DEVICE_MAX_CONNECTIONS)"
  done
  expect_eq "local ranks 0-7 once each" "0 1 2 3 4 5 6 7" \
    "$(for f in $(app_files); do app_value "${f}" FUNNEL_LOCAL_RANK; done | sort -n | tr '\n' ' ' | sed 's/ $//')"
  expect "teardown after normal exit" torn_down
  expect_eq "both daemons quit (not killed)" 2 "$(grep -c 'daemon-exit .*reason=quit' "${FAKE_NVIDIA_LOG}")"

  # One rank per GPU: no MPS under auto.
  rm -f "${FAKE_APP_DIR}"/rank.* && : >"${FAKE_NVIDIA_LOG}"
  rc=0
  FAKE_GPU_COUNT=4 mpi 4 -- "${FAKE_APP}" || rc=$?
  expect_eq "4 ranks on 4 GPUs" 0 "${rc}"
  expect_eq "no daemon when no GPU is shared" 0 "$(daemon_starts)"
  for f in $(app_files); do
    expect_no_mps "${f}"
  done
  expect "teardown without MPS" torn_down

  # The client-side choice: --mps-client-devices unset leaves the daemon to pick the GPU.
  rm -f "${FAKE_APP_DIR}"/rank.* && : >"${FAKE_NVIDIA_LOG}"
  rc=0
  FAKE_GPU_COUNT=1 CUDA_VISIBLE_DEVICES=0 mpi 2 --mps-client-devices unset -- "${FAKE_APP}" || rc=$?
  expect_eq "client devices unset" 0 "${rc}"
  expect_eq "daemon still started on the GPU's UUID" 1 "$(grep -c "mps-control -d .*cvd=$(uuid_of 0)$" "${FAKE_NVIDIA_LOG}")"
  for f in $(app_files); do
    expect_eq "no CUDA_VISIBLE_DEVICES in $(basename "${f}")" "" "$(app_value "${f}" CUDA_VISIBLE_DEVICES)"
    expect_eq "MPS on in $(basename "${f}")" on "$(app_value "${f}" FUNNEL_MPS)"
  done
  expect "teardown" torn_down
}

case_kill_rank() {
  export FAKE_GPU_COUNT=1
  FAKE_APP_SLEEP=60 mpi_bg 4 -- "${FAKE_APP}"
  local rc=0
  expect "4 apps started" wait_apps 4
  expect_eq "one daemon while running" 1 "$(live_daemons)"
  kill -KILL "$(app_value "$(app_file_of_rank 2)" pid)"
  wait "${launcher}" || rc=$?
  expect "mpirun reports the failure" test "${rc}" -ne 0
  expect "teardown after kill -9 of a rank" torn_down
}

case_kill_wrapper() {
  export FAKE_GPU_COUNT=1
  # Two ranks of one job, started by hand so that their wrappers can be killed one by one.
  OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 FAKE_APP_SLEEP=60 \
    "${FUNNEL_RUN}" -- "${FAKE_APP}" &
  local wrapper0=$!
  OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 FAKE_APP_SLEEP=60 \
    "${FUNNEL_RUN}" -- "${FAKE_APP}" &
  local wrapper1=$!
  expect "2 apps started" wait_apps 2
  local app0 app1
  app0=$(app_value "$(app_file_of_rank 0)" pid)
  app1=$(app_value "$(app_file_of_rank 1)" pid)
  expect_eq "one daemon" 1 "$(live_daemons)"
  kill -KILL "${wrapper0}"
  wait "${wrapper0}" 2>/dev/null || true
  sleep 1.5
  expect_eq "daemon stays while the orphaned app of the killed wrapper runs" 1 "$(live_daemons)"
  kill -KILL "${wrapper1}" "${app1}"
  wait "${wrapper1}" 2>/dev/null || true
  sleep 1.5
  expect_eq "daemon stays while one app runs" 1 "$(live_daemons)"
  kill -KILL "${app0}"
  expect "teardown after kill -9 of the wrappers and their apps" torn_down
  expect_eq "the daemon was asked to quit" 1 "$(grep -c 'daemon-exit .*reason=quit' "${FAKE_NVIDIA_LOG}")"
}

case_sigterm() {
  export FAKE_GPU_COUNT=1
  FAKE_APP_SLEEP=60 mpi_bg 4 -- "${FAKE_APP}"
  local rc=0 f
  expect "4 apps started" wait_apps 4
  # What scancel does to the apps: SIGTERM (the wrappers get it too; see the slurm tests).
  local -a pids=()
  for f in $(app_files); do pids+=("$(app_value "${f}" pid)"); done
  # All at once: once one rank ends, mpirun ends the others its own way.
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${launcher}" || rc=$?
  expect "mpirun reports the terminated ranks" test "${rc}" -ne 0
  for f in $(app_files); do expect "$(basename "${f}") got SIGTERM" grep -qx signal=TERM "${f}"; done
  expect "teardown after SIGTERM" torn_down

  # SIGTERM to mpirun itself: it terminates the wrappers, which forward to the apps.
  rm -f "${FAKE_APP_DIR}"/rank.*
  FAKE_APP_SLEEP=60 mpi_bg 4 -- "${FAKE_APP}"
  expect "4 apps started again" wait_apps 4
  kill -TERM "${launcher}"
  rc=0
  wait "${launcher}" || rc=$?
  expect "mpirun ends non-zero" test "${rc}" -ne 0
  # mpirun may follow its SIGTERM with SIGKILL before every app has said so: one is proof enough.
  expect "SIGTERM reached the apps through mpirun and funnel-run" \
    test "$(app_files | xargs grep -lx signal=TERM | wc -l)" -ge 1
  expect "teardown after SIGTERM to mpirun" torn_down
}

# A signal while the rank waits for its daemon: exit 143, one line, no app, nothing left. The
# daemon answers 4 s after it starts (FAKE_MPS_START_DELAY), far longer than the signal takes to
# come, so that the rank is still starting when it does. The line went missing (exit 143 and
# nothing said) when the signal's trap ran inside a '{ ...; } 2>/dev/null' of funnel-run's:
# where strace works, the rank's own reads are slowed (as on a loaded node) so that most signals
# land there.
case_sigterm_startup() {
  export FAKE_GPU_COUNT=1 FAKE_MPS_START_DELAY=4
  local n runs=1 rc wrapper tracer="" deadline
  local -a slow=()
  if strace -o /dev/null -e trace=read -e inject=read:delay_exit=5000 true 2>/dev/null; then
    slow=(strace -o /dev/null -e trace=read -e inject=read:delay_exit=5000)
    runs=8
  fi
  for ((n = 0; n < runs; n++)); do
    : >"${FAKE_NVIDIA_LOG}"
    FUNNEL_JOB_ID=start$$.${n} "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>"${work}/err" &
    wrapper=$!
    deadline=$((SECONDS + 60))
    until grep -q -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}" || ((SECONDS > deadline)); do sleep 0.05; done
    if ! grep -q -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}"; then
      fail "run ${n}: the rank did not start its daemon within 60 s"
      kill -KILL "${wrapper}" 2>/dev/null || true
      continue
    fi
    if ((${#slow[@]} > 0)); then
      "${slow[@]}" -p "${wrapper}" 2>/dev/null &
      tracer=$!
    fi
    sleep "0.$((n * 37 % 10))"
    kill -TERM "${wrapper}"
    rc=0
    wait "${wrapper}" || rc=$?
    if [[ -n ${tracer} ]]; then wait "${tracer}" 2>/dev/null || true; fi
    expect_eq "run ${n}: status after SIGTERM during start-up" 143 "${rc}"
    expect "run ${n}: the message says so" grep -q 'SIGTERM during start-up' "${work}/err"
  done
  expect_eq "the app never ran" 0 "$(app_files | wc -l)"
  expect "teardown of the half-started daemons" torn_down 30
}

case_mps_failures() {
  export FAKE_GPU_COUNT=1
  local rc=0 err
  err=$(FAKE_MPS_START_FAIL=1 mpi 2 --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "a daemon that cannot start fails the ranks" test "${rc}" -ne 0
  expect_contains "the message names the failure" "nvidia-cuda-mps-control -d failed" "${err}"
  expect_eq "no app ran (no rank without MPS)" 0 "$(app_files | wc -l)"
  expect "nothing left" torn_down
  rc=0
  err=$(FAKE_MPS_START_DELAY=5 "${FUNNEL_RUN}" --mps on --mps-wait 1 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "a daemon that does not answer in time" 1 "${rc}"
  expect_contains "the message names the wait" "did not answer within 1 s" "${err}"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  expect "the late daemon is stopped too" torn_down 15
}

case_mps_missing() {
  export FAKE_GPU_COUNT=1
  mkdir -p "${work}/bin"
  ln -s "${here}/fake-bin/nvidia-smi" "${work}/bin/nvidia-smi"
  local rc=0 err f
  PATH="${work}/bin:/usr/local/bin:/usr/bin:/bin" mpi 4 -- "${FAKE_APP}" 2>"${work}/err" || rc=$?
  err=$(cat "${work}/err")
  expect_eq "runs without MPS" 0 "${rc}"
  expect_eq "one warning per node" 1 "$(grep -c 'nvidia-cuda-mps-control not found' <<<"${err}")"
  expect_eq "4 apps" 4 "$(app_files | wc -l)"
  for f in $(app_files); do expect_no_mps "${f}"; done
  rc=0
  PATH="${work}/bin:/usr/local/bin:/usr/bin:/bin" "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>/dev/null || rc=$?
  expect_eq "--mps on falls back too" 0 "${rc}"
  expect_eq "nothing started" 0 "$(daemon_starts)"
}

# The job directory a real run of this case's job would use (from a dry run's pipe).
job_dir_of() { dirname "$(dirname "$(field pipe "$(plan --mps on)")")"; }

case_insecure_dirs() {
  export FAKE_GPU_COUNT=1
  local dir rc err
  dir=$(job_dir_of)
  try_run() {
    rc=0
    err=$("${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  }
  mkdir -m 755 "${dir}"
  try_run
  expect_eq "loose job directory refused" 1 "${rc}"
  expect_contains "message names it and its mode" "refusing to use '${dir}': owned by uid ${uid} with mode 755" "${err}"
  rmdir "${dir}"
  expect_eq "no daemon was started" 0 "$(daemon_starts)"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  # A name another user holds, or a link, is never used: the job takes the key's next name.
  local planted
  for planted in other-user link; do
    if [[ ${planted} == other-user ]]; then
      ((uid == 0)) || continue
      mkdir -m 700 "${dir}"
      chown 65534 "${dir}"
    else
      ln -s /tmp "${dir}"
    fi
    rm -f "${FAKE_APP_DIR}"/rank.*
    try_run
    expect_eq "${planted} at the job directory's name: the job runs" 0 "${rc}"
    expect_contains "${planted}: saying so" "'${dir}' was taken by another user: using the job key's next free name" "${err}"
    expect "${planted}: elsewhere" test "$(dirname "$(app_value "$(app_files)" FUNNEL_RUN_DIR)")" != "${dir}"
    expect "${planted}: left alone" test -L "${dir}" -o "$(stat -c %u "${dir}")" == 65534
    local deadline=$((SECONDS + 10))
    while (($(live_reapers) > 0)) && ((SECONDS < deadline)); do sleep 0.2; done
    rm -rf "${dir}"
  done
  try_run
  expect_eq "runs once the directory is sound" 0 "${rc}"
  expect "teardown" torn_down
}

case_stale_daemon() {
  export FAKE_GPU_COUNT=1
  local dir inst rc=0 err old
  dir=$(job_dir_of)
  inst=${dir}/$(gpu_tag 0)
  mkdir -m 700 "${dir}" "${inst}" "${inst}/pipe" "${inst}/log"
  # An earlier job with the same id left its daemon: no reaper, no rank.
  CUDA_MPS_PIPE_DIRECTORY=${inst}/pipe CUDA_MPS_LOG_DIRECTORY=${inst}/log nvidia-cuda-mps-control -d
  sleep 0.3
  old=$(cat "${inst}/pipe/nvidia-cuda-mps-control.pid")
  err=$(FAKE_APP_SLEEP=1 mpi 2 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "runs" 0 "${rc}"
  expect_contains "warns" "stale MPS daemon" "${err}"
  expect "the stale daemon was stopped" grep -q "daemon-exit pid=${old} reason=quit" "${FAKE_NVIDIA_LOG}"
  expect_eq "one fresh daemon started" 2 "$(daemon_starts)"
  local f
  for f in $(app_files); do expect_eq "$(basename "${f}") answered" 1 "$(app_value "${f}" mps_answered)"; done
  expect "teardown" torn_down
}

case_two_jobs() {
  export FAKE_GPU_COUNT=1
  mkdir -p "${work}/appA" "${work}/appB"
  FUNNEL_JOB_ID=long$$ FAKE_APP_DIR=${work}/appA FAKE_APP_SLEEP=5 mpi_bg 2 --mps on -- "${FAKE_APP}"
  local long_job=${launcher} rc=0 f
  sleep 0.5
  FUNNEL_JOB_ID=short$$ FAKE_APP_DIR=${work}/appB FAKE_APP_SLEEP=1 mpi 2 --mps on -- "${FAKE_APP}" || rc=$?
  expect_eq "first job" 0 "${rc}"
  local deadline=$((SECONDS + 8))
  while (($(live_daemons) > 1)) && ((SECONDS < deadline)); do sleep 0.1; done
  expect_eq "first job's daemon gone, second's running" 1 "$(live_daemons)"
  rc=0
  wait "${long_job}" || rc=$?
  expect_eq "second job" 0 "${rc}"
  expect_eq "two daemons in all" 2 "$(daemon_starts)"
  expect_eq "on two pipes" 2 "$(grep -- 'mps-control -d ' "${FAKE_NVIDIA_LOG}" | grep -oE 'pipe=[^ ]+' | sort -u | wc -l)"
  for f in "${work}"/appA/rank.*; do
    expect_eq "second job's daemon outlived the first job ($(basename "${f}"))" 1 "$(app_value "${f}" mps_answered_at_exit)"
  done
  expect "teardown of both" torn_down
}

case_site_mps() {
  export FAKE_GPU_COUNT=1
  mkdir -m 700 "${work}/site" "${work}/site/pipe" "${work}/site/log"
  CUDA_MPS_PIPE_DIRECTORY=${work}/site/pipe CUDA_MPS_LOG_DIRECTORY=${work}/site/log nvidia-cuda-mps-control -d
  sleep 0.3
  local rc=0 f
  CUDA_MPS_PIPE_DIRECTORY=${work}/site/pipe CUDA_MPS_LOG_DIRECTORY=${work}/site/log \
    mpi 2 -- "${FAKE_APP}" || rc=$?
  expect_eq "runs" 0 "${rc}"
  expect_eq "no daemon of its own" 1 "$(daemon_starts)"
  for f in $(app_files); do
    expect_eq "$(basename "${f}") uses the site's daemon" "${work}/site/pipe" "$(app_value "${f}" FUNNEL_MPS_PIPE)"
    expect_eq "$(basename "${f}") answered" 1 "$(app_value "${f}" mps_answered)"
  done
  sleep 1
  expect_eq "the site's daemon is left running" 1 "$(live_daemons)"
  expect_eq "nobody asked it to quit" 0 "$(grep -c 'cmd=quit' "${FAKE_NVIDIA_LOG}")"
  CUDA_MPS_PIPE_DIRECTORY=${work}/site/pipe nvidia-cuda-mps-control <<<quit
}

case_cleanup() {
  export FAKE_GPU_COUNT=1
  FAKE_APP_SLEEP=60 "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" &
  local wrapper=$!
  expect "app started" wait_apps 1
  local app
  app=$(app_value "$(app_files)" pid)
  "${FUNNEL_RUN}" --cleanup
  expect_eq "--cleanup leaves a live job's daemon" 1 "$(live_daemons)"
  # Everything but the daemon dies at once (as under a cgroup kill that missed the daemon).
  local reaper deadline=$((SECONDS + 5))
  for reaper in $(pgrep -f -- "--internal-reap ${work}"); do kill -KILL "${reaper}"; done
  while (($(live_reapers) > 0)) && ((SECONDS < deadline)); do sleep 0.1; done
  expect_eq "reaper killed" 0 "$(live_reapers)"
  kill -KILL "${wrapper}" "${app}"
  wait "${wrapper}" 2>/dev/null || true
  sleep 0.5
  expect_eq "the daemon is stranded" 1 "$(live_daemons)"
  local out
  out=$("${FUNNEL_RUN}" --cleanup)
  expect_contains "--cleanup reports it" "removed the directory of job job$$.0 (1 MPS daemon(s) stopped)" "${out}"
  expect "--cleanup stops a stranded daemon" torn_down

  # --cleanup --job stops a job's daemon even while ranks still run (an epilog).
  rm -f "${FAKE_APP_DIR}"/rank.*
  FAKE_APP_SLEEP=60 "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" &
  wrapper=$!
  expect "app started again" wait_apps 1
  "${FUNNEL_RUN}" --cleanup --job other-job
  expect_eq "--cleanup --job leaves other jobs alone" 1 "$(live_daemons)"
  "${FUNNEL_RUN}" --cleanup --job "job$$" >/dev/null
  expect_eq "--cleanup --job stops its job's daemon" 0 "$(live_daemons)"
  kill -TERM "${wrapper}"
  wait "${wrapper}" 2>/dev/null || true
  expect "and nothing is left" torn_down
}

# ---- dense sharing (#22) --------------------------------------------------------------------
# conn_of SIZE ARGS...: CUDA_DEVICE_MAX_CONNECTIONS of local rank 0 of SIZE ranks on GPU 0
conn_of() {
  local size=$1
  shift
  field connections "$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=${size} plan --gpus 0 "$@")"
}

case_per_client() {
  export FAKE_GPU_COUNT=1
  # Nothing requested: the variable stays unset (CUDA's 8, MPS's 2) while MPS's 2 a rank fits the
  # budget (96 per GPU by default); past it the rank's share of the budget.
  expect_eq "1 rank" - "$(conn_of 1)"
  expect_eq "1 rank, --mps on" - "$(conn_of 1 --mps on)"
  expect_eq "8 ranks on one GPU" - "$(conn_of 8)"
  expect_eq "16 ranks on one GPU" - "$(conn_of 16)"
  expect_eq "48 ranks on one GPU" - "$(conn_of 48)"
  expect_eq "48 ranks without MPS: no shared pool" - "$(conn_of 48 --mps off)"
  expect_eq "48 ranks, budget 48: the share" 1 "$(conn_of 48 --mps-connection-budget 48)"
  expect_eq "48 ranks, FUNNEL_MPS_CONNECTION_BUDGET=72: the share" 1 \
    "$(FUNNEL_MPS_CONNECTION_BUDGET=72 conn_of 48)"
  expect_eq "24 ranks, budget 48: MPS's 2 fits" - "$(conn_of 24 --mps-connection-budget 48)"
  # A prime count at the edge: 47 x 2 = 94 fits 96 but not 93 (93 / 47 = 1).
  expect_eq "47 ranks: MPS's 2 fits" - "$(conn_of 47)"
  expect_eq "47 ranks, budget 93: the share" 1 "$(conn_of 47 --mps-connection-budget 93)"
  # A request: granted up to the rank's share of the budget.
  expect_eq "16 ranks ask 8, budget 128" 8 "$(conn_of 16 --max-connections 8 --mps-connection-budget 128)"
  expect_eq "48 ranks ask 4, FUNNEL_MPS_CONNECTION_BUDGET=144" 3 \
    "$(FUNNEL_MPS_CONNECTION_BUDGET=144 conn_of 48 --max-connections 4 2>/dev/null)"
  expect_eq "48 ranks ask 8 without MPS" 8 "$(conn_of 48 --mps off --max-connections 8)"
  expect_eq "thread percentage auto, 48 ranks" 2 \
    "$(field threads "$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=48 plan --gpus 0 --mps-thread-percentage auto)")"
  expect_eq "16 ranks over 2 GPUs (8 each), asking 16: 12" 12 \
    "$(field connections "$(FAKE_GPU_COUNT=2 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=16 plan --max-connections 16 2>/dev/null)")"

  # A request the budget cannot give every rank: lowered, and local rank 0 warns once.
  local out
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=16 plan_raw --gpus 0 --max-connections 8)
  expect_eq "--max-connections 8 for 16 ranks" 6 "$(field connections "$(sed -n 's/.*binding //p' <<<"${out}")")"
  expect_contains "the warning names the budget" \
    "--max-connections 8 for 16 ranks on one GPU is more than the MPS connection budget of 96 per GPU allows: each rank gets 6" "${out}"
  expect_eq "one warning line" 1 "$(grep -c 'connection budget' <<<"${out}")"
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=3 OMPI_COMM_WORLD_LOCAL_SIZE=16 plan_raw --gpus 0 --max-connections 8)
  expect_eq "other ranks do not repeat it" 0 "$(grep -c 'connection budget' <<<"${out}")"
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=8 plan_raw --gpus 0 --max-connections 8)
  expect_eq "no warning when it fits" 0 "$(grep -c 'connection budget' <<<"${out}")"
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=48 plan_raw --gpus 0 --streams 4)
  expect_contains "--streams too" "--streams 4 for 48 ranks on one GPU is more than" "${out}"
  out=$(CUDA_DEVICE_MAX_CONNECTIONS=4 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=48 plan_raw --gpus 0)
  expect_contains "and the environment's request" "CUDA_DEVICE_MAX_CONNECTIONS=4 for 48 ranks" "${out}"
  expect_eq "the environment's request without MPS" 4 "$(CUDA_DEVICE_MAX_CONNECTIONS=4 conn_of 1)"
  out=$(OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=48 plan_raw --gpus 0 \
    --mps-connection-budget 48)
  expect_eq "no request: lowered silently" 0 "$(grep -c 'connection budget' <<<"${out}")"

  # What the apps of 16 ranks (nothing requested: unset) and 48 ranks asking 4 connections (the
  # budget's share, 2) on one GPU get under real mpirun.
  local n f ask want
  for n in 16 48; do
    rm -f "${FAKE_APP_DIR}"/rank.* && : >"${FAKE_NVIDIA_LOG}"
    local rc=0
    ask=(); want=""
    ((n < 48)) || { ask=(--max-connections 4); want=$((96 / n)); }
    FAKE_APP_SLEEP=1 mpi "${n}" --mps-thread-percentage auto "${ask[@]}" -- "${FAKE_APP}" 2>/dev/null || rc=$?
    expect_eq "${n} ranks: mpirun status" 0 "${rc}"
    expect_eq "${n} ranks: apps" "${n}" "$(app_files | wc -l)"
    expect_eq "${n} ranks: one daemon" 1 "$(daemon_starts)"
    expect_eq "${n} ranks: connections of every rank" "${want}" \
      "$(for f in $(app_files); do app_value "${f}" CUDA_DEVICE_MAX_CONNECTIONS; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "${n} ranks: thread percentage of every rank" "$((100 / n))" \
      "$(for f in $(app_files); do app_value "${f}" CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "${n} ranks: every rank's daemon answered" 1 \
      "$(for f in $(app_files); do app_value "${f}" mps_answered; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
    expect "${n} ranks: teardown" torn_down 20
  done
}

# 60 ranks on one GPU: refused by local rank 0 in one line before anything starts, and mpirun
# ends (its abort used to hang when 60 ranks exited at once while it was still starting them).
case_refuse_mpirun() {
  export FAKE_GPU_COUNT=1
  local out rc=0
  out=$(timeout 100 "${MPIEXEC}" --oversubscribe -np 60 "${FUNNEL_RUN}" -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "mpirun ended by itself (124: it hung)" test "${rc}" -ne 124
  expect "mpirun reports the refusal" test "${rc}" -ne 0
  expect_eq "one line" 1 "$(grep -c 'more than MPS allows' <<<"${out}")"
  expect_contains "the line names the limit" \
    "funnel-run: error: 60 ranks on one GPU is more than MPS allows (48 clients per GPU, --mps-max-clients)" "${out}"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  expect_eq "no daemon" 0 "$(daemon_starts)"
  expect "nothing left" torn_down
  rc=0
  out=$(timeout 100 "${MPIEXEC}" --oversubscribe -np 6 "${FUNNEL_RUN}" --mps-max-clients 4 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "a lower limit: refused" test "${rc}" -ne 0 -a "${rc}" -ne 124
  expect_eq "a lower limit: one line" 1 "$(grep -c '6 ranks on one GPU is more than MPS allows (4 clients' <<<"${out}")"
}

# A start-up that fails on one of 4 ranks: the job ends non-zero and leaves nothing behind.
case_startup_failure() {
  export FAKE_GPU_COUNT=1
  local rc=0 out f
  # The app is missing for one rank (an MPMD launch).
  out=$(FAKE_APP_SLEEP=5 timeout 100 "${MPIEXEC}" --oversubscribe -np 3 "${FUNNEL_RUN}" -- "${FAKE_APP}" : \
    -np 1 "${FUNNEL_RUN}" -- "${work}/no-such-app" 2>&1) || rc=$?
  expect "app missing on one rank: mpirun ends non-zero" test "${rc}" -ne 0 -a "${rc}" -ne 124
  expect "app missing on one rank: nothing left" torn_down 20
  for f in $(app_files); do
    expect "app missing on one rank: $(basename "${f}") ended" app_gone "$(app_value "${f}" pid)"
  done
  # A fatal GPU fault under MPS (local rank 2): the server ends every client's work, so all 4
  # ranks fail. The one line names the faulting rank with the server's words, whichever rank's
  # failure comes first: the faulting one (delay 0), or another, echoing it (delay 2), also when
  # the server's line comes 0.5 s after the others failed (late; seen once on an H200).
  local delay late
  for delay in 0 2 2-late; do
    rm -f "${FAKE_APP_DIR}"/rank.* "${FAKE_APP_DIR}/fault-now" && : >"${FAKE_NVIDIA_LOG}"
    late=""
    [[ ${delay} != *-late ]] || late=0.5
    rc=0
    out=$(FAKE_APP_SLEEP=30 FAKE_APP_FAULT_RANK=2 FAKE_APP_FAULT_DELAY=${delay%-late} \
      FAKE_APP_FAULT_LOG_DELAY=${late} timeout 100 \
      "${MPIEXEC}" --oversubscribe -np 4 "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
    expect "a fault (delay ${delay}): mpirun ends non-zero" test "${rc}" -ne 0 -a "${rc}" -ne 124
    expect "a fault (delay ${delay}): at most one line" \
      test "$(grep -c 'funnel-run: rank .*: the app (pid' <<<"${out}")" -le 1
    expect_contains "a fault (delay ${delay}): the line names the faulting rank" \
      "funnel-run: rank 2 (local rank 2) on GPU 0 ($(uuid_of 0)): the app (pid $(app_value "$(app_file_of_rank 2)" pid)) caused a fatal GPU fault" \
      "${out}"
    expect_contains "a fault (delay ${delay}): with the server's words" \
      "(MPS server: Client {PID: $(app_value "$(app_file_of_rank 2)" pid), Context: 1} encountered a fatal GPU error.)" \
      "${out}"
  done
  expect "a failing rank: nothing left" torn_down 20
  expect_eq "a failing rank: no process of the job left" "" "$(case_processes | tr '\n' ' ')"
}

# The job directory goes after a normal end (checked by every torn_down) and after kill -9 of
# every rank, wrappers and apps together: only the reaper is left to remove it.
case_kill_all() {
  export FAKE_GPU_COUNT=1
  FAKE_APP_SLEEP=60 mpi_bg 4 -- "${FAKE_APP}"
  expect "4 apps started" wait_apps 4
  expect_eq "the apps left something in FUNNEL_RUN_DIR" 4 "$(find "${FUNNEL_TMPDIR}" -path '*/run/app-*' | wc -l)"
  local f run
  run=$(app_value "$(app_file_of_rank 0)" FUNNEL_RUN_DIR)
  expect_eq "FUNNEL_RUN_DIR is private" "700:${uid}" "$(app_value "$(app_file_of_rank 0)" run_dir_mode)"
  local -a pids=()
  for f in $(app_files); do pids+=("$(app_value "${f}" pid)"); done
  # The wrappers: mpirun's children (only this case's, whatever else runs on the machine).
  mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "${launcher}")
  kill -KILL "${pids[@]}"
  wait "${launcher}" 2>/dev/null || true
  expect "teardown after kill -9 of every wrapper and app" torn_down 15
  expect "the run directory is gone" test ! -e "${run}"
}

# A rank whose app fails by itself (a signal nobody sent through funnel-run, or a status of its
# own) is named in one line.
# kill -9 of every rank of a job on 4 GPUs whose daemons take 4 s each to quit (as real ones do
# while their servers end the dead clients' contexts): the reaper stops the 4 at once, so all are
# gone well before 4 x 4 s (before, one GPU after the other: 16 s and more).
case_kill_gpus() {
  export FAKE_GPU_COUNT=4 FAKE_MPS_QUIT_DELAY=4
  FAKE_APP_SLEEP=60 mpi_bg 8 -- "${FAKE_APP}"
  expect "8 apps started" wait_apps 8
  expect_eq "one daemon per GPU" 4 "$(live_daemons)"
  local f start
  local -a pids=()
  for f in $(app_files); do pids+=("$(app_value "${f}" pid)"); done
  mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "${launcher}")
  start=${SECONDS}
  kill -KILL "${pids[@]}"
  wait "${launcher}" 2>/dev/null || true
  expect "every daemon and the directory gone within 12 s" torn_down 12
  expect_eq "each daemon was asked to quit" 4 "$(grep -c 'daemon-exit .*reason=quit' "${FAKE_NVIDIA_LOG}")"
  echo "teardown took $((SECONDS - start)) s"
}

case_fault_report() {
  local rc=0 err
  err=$("${FUNNEL_RUN}" -- bash -c 'kill -SEGV $$' 2>&1) || rc=$?
  expect_eq "status of an app killed by SIGSEGV" 139 "${rc}"
  expect_eq "one line" 1 "$(grep -c 'the app (pid' <<<"${err}")"
  expect_contains "it names the rank" "funnel-run: rank ? (local rank 0) on GPU 0 ($(uuid_of 0)): the app (pid" "${err}"
  expect_contains "and the signal" "was killed by signal SIGSEGV" "${err}"
  rc=0
  err=$(FAKE_APP_EXIT=3 "${FUNNEL_RUN}" -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "an app's own exit status" 3 "${rc}"
  expect_contains "is named too" "the app (pid $(app_value "$(app_files)" pid)) exited with status 3" "${err}"
  expect "teardown" torn_down
  rm -f "${FAKE_APP_DIR}"/rank.*
  # All 4 ranks fail alike (a usage error): the node's first one is named, the rest are its echo.
  # (Not "exactly one": mpirun may drop the output of a rank that ends as it aborts the job.)
  rc=0
  err=$(FAKE_APP_EXIT=2 FAKE_APP_SLEEP=1 mpi 4 -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "4 ranks failing alike: at most one line" test "$(grep -c 'the app (pid' <<<"${err}")" -le 1
  expect "teardown" torn_down
  rm -f "${FAKE_APP_DIR}"/rank.*
  FAKE_APP_SLEEP=30 "${FUNNEL_RUN}" -- "${FAKE_APP}" 2>"${work}/err" &
  local wrapper=$!
  expect "app started" wait_apps 1
  kill -TERM "${wrapper}"
  wait "${wrapper}" 2>/dev/null || true
  expect_eq "a signal funnel-run forwarded is not reported" 0 "$(grep -c 'the app (pid' "${work}/err")"
  expect "teardown" torn_down
}

# Ranks without MPS: by default an empty private pipe directory, so no daemon serves them (not
# even one at /tmp/nvidia-mps); with --mps-off-pipe system CUDA looks where it would by itself.
case_mps_off_pipe() {
  export FAKE_GPU_COUNT=1
  local rc=0 f pipe
  "${FUNNEL_RUN}" --mps off -- "${FAKE_APP}" || rc=$?
  expect_eq "--mps off" 0 "${rc}"
  f=$(app_files)
  expect_no_mps "${f}"
  pipe=$(app_value "${f}" CUDA_MPS_PIPE_DIRECTORY)
  expect "teardown" torn_down
  expect "the pipe directory is gone with the job" test ! -e "${pipe}"
  rm -f "${FAKE_APP_DIR}"/rank.*
  "${FUNNEL_RUN}" --mps off --mps-off-pipe system -- "${FAKE_APP}" || rc=$?
  expect_eq "--mps-off-pipe system: no pipe variable" "" "$(app_value "$(app_files)" CUDA_MPS_PIPE_DIRECTORY)"
  rm -f "${FAKE_APP_DIR}"/rank.*
  FUNNEL_MPS_OFF_PIPE=system CUDA_MPS_PIPE_DIRECTORY=${work}/nobody "${FUNNEL_RUN}" -- "${FAKE_APP}" 2>/dev/null || rc=$?
  expect_eq "FUNNEL_MPS_OFF_PIPE=system: no pipe variable" "" "$(app_value "$(app_files)" CUDA_MPS_PIPE_DIRECTORY)"
  rm -f "${FAKE_APP_DIR}"/rank.*
  "${FUNNEL_RUN}" --mps-off-pipe private -- "${FAKE_APP}" || rc=$?
  expect_no_mps "$(app_files)"
  expect_eq "all ran" 0 "${rc}"
  expect "teardown" torn_down
}

# funnel-bench share: a point past the MPS client limit is reported as refused, not as failed.
case_bench_refused() {
  if [[ -z ${FUNNEL_BENCH:-} || ! -x ${FUNNEL_BENCH} ]] || ! command -v python3 >/dev/null; then
    echo "skipped: funnel-bench (FUNNEL_BENCH) or python3 missing"
    exit 77
  fi
  export FAKE_GPU_COUNT=1
  local json=${work}/share.json rc=0
  (cd "${work}" && FUNNEL_MPS_MAX_CLIENTS=2 FUNNEL_BENCH_LAUNCH_ON_HOST=1 \
    FUNNEL_BENCH_LAUNCHER=${FUNNEL_RUN} OMP_NUM_THREADS=1 timeout 250 "${FUNNEL_BENCH}" share \
    --quick --backend host --ranks 1,2,3 --workloads synthetic --json "${json}") \
    >"${work}/bench.out" 2>&1 || rc=$?
  expect_eq "share ends well" 0 "${rc}"
  local verdict
  verdict=$(python3 -c '
import json, sys
share = json.load(open(sys.argv[1]))["benchmarks"]["share"]
ranks = sorted(p["ranks"] for p in share["raw"]["points"]["synthetic"] if p["mps"])
print(share["status"], ranks, share["raw"]["refused"])' "${json}" 2>&1)
  expect_eq "N=3 refused, N=1 and 2 measured" \
    "ok [1, 2] [{'workload': 'synthetic', 'ranks': 3}]" "${verdict}"
  expect "the note says refused" grep -q 'synthetic N=3 funnel-run --mps on refused by funnel-run' \
    "${work}/bench.out"
  if ((failed > 0)); then grep -h 'note:' "${work}/bench.out" >&2 || true; fi
  expect "teardown" torn_down
}

# ---- a node shared with other users (#20) ----------------------------------------------------
# The job's user (the attacker) is uid 4242, the victim uid 4343; the cleanup runs as root, as a
# Slurm epilog would. Each case plants what the issue's row describes, in funnel-run's layout and
# in the one before it (<tmp>/funnel-<uid>/<job>.<step>.<gpu>), so that it fails on either.
readonly attacker=4242 victim=4343

need_root() {
  if ((uid != 0)) || ! command -v setpriv >/dev/null; then
    echo "skipped: needs root and setpriv (util-linux) to play other users"
    exit 77
  fi
}
as_uid() { # as_uid UID COMMAND...
  local who=$1
  shift
  setpriv --reuid "${who}" --regid "${who}" --clear-groups -- "$@"
}
write_as() { printf '%s\n' "$3" | as_uid "$1" tee -- "$2" >/dev/null; } # write_as UID FILE TEXT
# spawn_as UID COMMAND...: a process of that uid in the background (no pipe of ours held open);
# spawned_pid is its pid, which finish kills.
spawned_pid=""
spawn_as() {
  local who=$1
  shift
  # setpriv itself in the background (not as_uid, a function run by a forked shell), so that the
  # pid is the command's own: setpriv executes it in its place.
  setpriv --reuid "${who}" --regid "${who}" --clear-groups -- "$@" </dev/null >/dev/null 2>&1 &
  spawned_pid=$!
  disown "${spawned_pid}"
  spawned+=("${spawned_pid}")
  sleep 0.3
}
start_of() { awk '{ print $22 }' "/proc/$1/stat"; }

attacker_instances() {
  echo "${FUNNEL_TMPDIR}/funnel-${attacker}/attack$$.0.$(gpu_tag 0)"
  echo "${FUNNEL_TMPDIR}/funnel-run-${attacker}-planted/$(gpu_tag 0)"
}

# The attacker's job directories for job attack$$ in both layouts, 0700 and the attacker's.
plant_roots() {
  as_uid "${attacker}" mkdir -m 700 "${FUNNEL_TMPDIR}/funnel-${attacker}" \
    "${FUNNEL_TMPDIR}/funnel-run-${attacker}-planted"
  write_as "${attacker}" "${FUNNEL_TMPDIR}/funnel-run-${attacker}-planted/job" "attack$$.0"
}

# The attacker's tree for job attack$$: both layouts, every directory 0700 and the attacker's.
plant() {
  local inst
  plant_roots
  for inst in $(attacker_instances); do
    as_uid "${attacker}" mkdir -m 700 "${inst}" "${inst}/pipe" "${inst}/log"
  done
}

# What Slurm runs after job attack$$: funnel-epilog as root, with the job's id, uid and gid, from
# directory $1 (default: the case's); its output in cleanup.out, its status in epilog_rc.
epilog_rc=0
epilog_cleanup() {
  epilog_rc=0
  (cd "${1:-.}" && SLURM_JOB_ID=attack$$ SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} \
    FUNNEL_MPS_QUIT_WAIT=1 timeout 100 "${FUNNEL_EPILOG}") >"${work}/cleanup.out" 2>&1 || epilog_rc=$?
}

# Row 1: the job's daemon record names another user's process.
case_shared_kill() {
  need_root
  export FAKE_GPU_COUNT=1
  spawn_as "${victim}" sleep 600
  local vpid=${spawned_pid} inst
  plant
  for inst in $(attacker_instances); do write_as "${attacker}" "${inst}/daemon" "${vpid} $(start_of "${vpid}")"; done
  epilog_cleanup
  expect "another user's process survives the root cleanup" kill -0 "${vpid}"
}

# Row 2: the lock and the record's temporary file are links to another user's files.
case_shared_links() {
  need_root
  export FAKE_GPU_COUNT=1
  local vdir=${work}/victim inst n=0
  mkdir -m 755 "${vdir}"
  chown "${victim}:${victim}" "${vdir}"
  write_as "${victim}" "${vdir}/secret" "precious $$"
  chmod 600 "${vdir}/secret"
  # A process of the job's user whose command line mentions the daemon (the old adoption test).
  spawn_as "${attacker}" bash -c 'exec -a nvidia-cuda-mps-control sleep 600'
  local apid=${spawned_pid}
  plant
  as_uid "${attacker}" ln -s "${vdir}/nologin-job" "${FUNNEL_TMPDIR}/funnel-run-${attacker}-planted/lock"
  for inst in $(attacker_instances); do
    n=$((n + 1))
    as_uid "${attacker}" ln -s "${vdir}/nologin-${n}" "${inst}/lock"
    as_uid "${attacker}" ln -s "${vdir}/secret" "${inst}/daemon.tmp"
    write_as "${attacker}" "${inst}/pipe/nvidia-cuda-mps-control.pid" "${apid}"
  done
  epilog_cleanup
  expect_eq "another user's file is not overwritten" "precious $$" "$(cat "${vdir}/secret")"
  expect_eq "and still theirs" "${victim} 600" "$(stat -c '%u %a' "${vdir}/secret")"
  expect_eq "no file appears where a lock link points" "" "$(find "${vdir}" -name 'nologin-*' | tr '\n' ' ')"
}

# Row 3: the job's instance directory is a link into another user's running job.
case_shared_dirlink() {
  need_root
  export FAKE_GPU_COUNT=1
  local vroot=${FUNNEL_TMPDIR}/funnel-run-${victim}-theirs vinst
  vinst=${vroot}/$(gpu_tag 0)
  as_uid "${victim}" mkdir -m 700 "${vroot}" "${vinst}" "${vinst}/pipe" "${vinst}/log"
  as_uid "${victim}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${vinst}/pipe" \
    CUDA_MPS_LOG_DIRECTORY="${vinst}/log" "${here}/fake-bin/nvidia-cuda-mps-control" -d
  sleep 0.3
  expect_eq "the victim's daemon runs" 1 "$(count_procs "--fake-daemon ${vinst}/pipe")"
  plant_roots
  as_uid "${attacker}" ln -s "${vinst}" "${FUNNEL_TMPDIR}/funnel-${attacker}/attack$$.0.$(gpu_tag 0)"
  as_uid "${attacker}" ln -s "${vinst}" "${FUNNEL_TMPDIR}/funnel-run-${attacker}-planted/$(gpu_tag 0)"
  as_uid "${attacker}" ln -s "${vroot}" "${FUNNEL_TMPDIR}/funnel-run-${attacker}-linked"
  epilog_cleanup
  expect_eq "the other user's daemon survives the root cleanup" 1 "$(count_procs "--fake-daemon ${vinst}/pipe")"
  expect_eq "nobody asked it to quit" "" "$(find "${vinst}/pipe" -name .quit)"
  as_uid "${victim}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${vinst}/pipe" \
    "${here}/fake-bin/nvidia-cuda-mps-control" <<<quit
  local deadline=$((SECONDS + 10))
  while pgrep -f -- "--fake-daemon ${vinst}/pipe" >/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
}

# Row 5: another user took the predictable names first; the job runs all the same.
case_shared_squat() {
  need_root
  export FAKE_GPU_COUNT=1
  local squats=("${FUNNEL_TMPDIR}/funnel-${uid}" "${FUNNEL_TMPDIR}/funnel-run-${uid}-job$$.0") rc=0 out f
  as_uid "${attacker}" mkdir -m 777 "${squats[@]}"
  out=$(FAKE_APP_SLEEP=1 mpi 2 --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "the job runs" 0 "${rc}"
  expect_eq "both ranks ran" 2 "$(app_files | wc -l)"
  for f in $(app_files); do expect_eq "$(basename "${f}") answered" 1 "$(app_value "${f}" mps_answered)"; done
  local deadline=$((SECONDS + 10))
  while (($(live_reapers) > 0)) && ((SECONDS < deadline)); do sleep 0.2; done
  expect_eq "only the squats are left" "${#squats[@]}" "$(leftovers)"
  # Without a $HOME for the secret the name is the predictable one: then the job stops, saying why.
  rc=0
  out=$(HOME=/nonexistent "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "without a usable HOME, a squatted name stops the job" 1 "${rc}"
  expect_contains "saying who took it and what to do" \
    "'${squats[1]}' belongs to uid ${attacker}: another user took this predictable name" "${out}"
  # The same for the ranks of a launch, which share one GPU listing only in a private directory:
  # a listing planted in the squat is never read, and each rank stops.
  as_uid "${attacker}" touch "${squats[1]}/gpus.planted" "${squats[1]}/gpus.planted.claim"
  rm -f "${FAKE_APP_DIR}"/rank.*
  rc=0
  out=$(HOME=/nonexistent mpi 2 --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "2 ranks, without a usable HOME, a squatted name: the job stops" test "${rc}" -ne 0
  expect_contains "saying who took it" "belongs to uid ${attacker}" "${out}"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  expect_eq "the squat holds only what its owner planted" "gpus.planted gpus.planted.claim" \
    "$(find "${squats[1]}" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ' | sed 's/ $//')"
  rm -f "${squats[1]}"/gpus.planted*
  rmdir "${squats[@]}"
  expect "teardown" torn_down

  # A private name is visible once a job made it. Another user who saw it takes it once the job
  # is gone; a later job with the same key (here FUNNEL_STEP_ID is fixed) passes over it.
  rm -f "${FAKE_APP_DIR}"/rank.*
  "${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>/dev/null
  local seen
  seen=$(app_value "$(app_files)" FUNNEL_RUN_DIR)
  seen=${seen%/run}
  expect "the first job's directory goes" torn_down
  as_uid "${attacker}" mkdir -m 700 "${seen}"
  rm -f "${FAKE_APP_DIR}"/rank.*
  rc=0
  out=$(FAKE_APP_SLEEP=1 mpi 2 --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "a name seen and taken since: the job runs" 0 "${rc}"
  expect_eq "once saying so" 1 "$(grep -c "'${seen}' was taken by another user: using the job key's next free name" <<<"${out}")"
  local dirs
  dirs=$(for f in $(app_files); do app_value "${f}" FUNNEL_RUN_DIR; done | sort -u)
  expect_eq "both ranks in one directory" 1 "$(wc -l <<<"${dirs}")"
  expect "which is not the taken one" test "${dirs%/run}" != "${seen}"
  expect_eq "both answered by their daemon" "1" \
    "$(for f in $(app_files); do app_value "${f}" mps_answered; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
  deadline=$((SECONDS + 10))
  while (($(live_reapers) > 0)) || [[ -e ${dirs%/run} ]]; do
    ((SECONDS < deadline)) || break
    sleep 0.2
  done
  # Every name of the key taken: one line saying what to do, and nothing runs.
  local secret n
  secret=$(cat "${HOME}/.funnel/secret")
  for ((n = 1; n < 16; n++)); do
    as_uid "${attacker}" mkdir -m 700 \
      "${FUNNEL_TMPDIR}/funnel-run-${uid}-$(printf '%s:%s\n' "${secret}" "job$$.0#${n}" | sha256sum | cut -c1-16)"
  done
  rm -f "${FAKE_APP_DIR}"/rank.*
  rc=0
  out=$("${FUNNEL_RUN}" --mps on -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "every name taken: refused" 1 "${rc}"
  expect_contains "in one line" "the 16 job directory names of job key job$$.0 in ${FUNNEL_TMPDIR} are all taken by other users: choose a private --tmpdir" "${out}"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  find "${FUNNEL_TMPDIR}" -mindepth 1 -maxdepth 1 -user "${attacker}" -exec rmdir {} +
  expect "teardown" torn_down
}

# Row 1, the job's own user: what the user leaves (a read-only directory, sparse job and daemon
# record files of a terabyte, a directory left half removed) neither stops the epilog half way nor makes it fail
# (Slurm drains a node whose epilog fails), and the reaper still removes a job directory whose
# app left a read-only directory in FUNNEL_RUN_DIR.
case_shared_epilog() {
  need_root
  export FAKE_GPU_COUNT=1
  local inst rc=0 t=${FUNNEL_TMPDIR}
  # The reaper, as the job's user (root could remove anything).
  # shellcheck disable=SC2016 # expanded by the app's shell
  # The app also leaves a directory of mode 0 inside one of mode 0 (rm cannot enter either; a
  # chmod of both at once could not reach the inner one).
  as_uid "${attacker}" env FAKE_NVIDIA_LOG= "${FUNNEL_RUN}" --mps on -- bash -c \
    'cd "${FUNNEL_RUN_DIR}" && mkdir -p ro z/z && touch ro/x z/z/x && chmod 555 ro && chmod 0 z/z z' ||
    rc=$?
  expect_eq "a job whose app leaves a read-only directory" 0 "${rc}"
  expect "the reaper removes all of it" torn_down
  # The epilog of job attack$$: its directory with a read-only directory in it, another job's
  # directory whose job file is a sparse terabyte, and a directory left half removed.
  plant
  for inst in $(attacker_instances); do
    as_uid "${attacker}" truncate -s 1T "${inst}/daemon"
    as_uid "${attacker}" mkdir -m 700 "${inst}/ro"
    as_uid "${attacker}" touch "${inst}/ro/x"
    as_uid "${attacker}" chmod 555 "${inst}/ro"
  done
  as_uid "${attacker}" mkdir -m 700 "${t}/funnel-run-${attacker}-huge" "${t}/funnel-run-${attacker}-x.gone.AbC123" \
    "${t}/funnel-run-${attacker}-x.gone.AbC123/ro"
  # Another job's key, then a terabyte of zeros.
  write_as "${attacker}" "${t}/funnel-run-${attacker}-huge/job" "other$$.0"
  as_uid "${attacker}" truncate -s 1T "${t}/funnel-run-${attacker}-huge/job"
  as_uid "${attacker}" touch "${t}/funnel-run-${attacker}-x.gone.AbC123/ro/x"
  as_uid "${attacker}" chmod 555 "${t}/funnel-run-${attacker}-x.gone.AbC123/ro"
  # A job file whose key goes on with a forged line and a terminal escape, and a directory a rank
  # left before it wrote its job file (a signal during start-up): no rank, no reaper.
  as_uid "${attacker}" mkdir -m 700 "${t}/funnel-run-${attacker}-forged" "${t}/funnel-run-${attacker}-nokey"
  printf 'attack%s.0 (0 MPS daemon(s) stopped)\nslurmd: error: FORGED\033[31m red\n' "$$" |
    as_uid "${attacker}" tee "${t}/funnel-run-${attacker}-forged/job" >/dev/null
  as_uid "${attacker}" touch "${t}/funnel-run-${attacker}-nokey/lock"
  # The epilog runs from a directory the user cannot enter (find used to fail going back there).
  mkdir -m 700 "${work}/rootonly"
  epilog_cleanup "${work}/rootonly"
  expect_eq "the epilog succeeds (124: it read the sparse file)" 0 "${epilog_rc}"
  expect_eq "and says nothing went wrong" "" "$(grep -E 'warning|cannot remove|not all gone' "${work}/cleanup.out")"
  expect "the job's directory and its read-only directory go" \
    test ! -e "${t}/funnel-run-${attacker}-planted"
  expect "the directory left half removed goes" test ! -e "${t}/funnel-run-${attacker}-x.gone.AbC123"
  expect "another job's directory stays" test -e "${t}/funnel-run-${attacker}-huge/job"
  expect "a directory without a job file and without ranks goes" test ! -e "${t}/funnel-run-${attacker}-nokey"
  expect "the forged job's directory goes" test ! -e "${t}/funnel-run-${attacker}-forged"
  expect_eq "no terminal escape reaches the epilog's output" 0 "$(grep -c $'\033' "${work}/cleanup.out")"
  expect_eq "no line of the user's making" 0 "$(grep -c '^slurmd' "${work}/cleanup.out")"
  expect_eq "the user's part is marked as such" "" \
    "$(grep -v "^funnel-epilog: (as uid ${attacker}) " "${work}/cleanup.out")"
  # The user's own --cleanup takes it (no live rank): the sparse file is not read.
  rc=0
  as_uid "${attacker}" env FUNNEL_MPS_QUIT_WAIT=1 timeout 100 "${FUNNEL_RUN}" --cleanup >/dev/null 2>&1 || rc=$?
  expect_eq "the user's cleanup" 0 "${rc}"
  expect "takes the rest" test ! -e "${t}/funnel-run-${attacker}-huge"
  rm -rf "${t}/funnel-${attacker}"
  # Nothing of the user's part stops the epilog: a failure there is a warning, and exit 0.
  as_uid "${attacker}" mkdir -m 700 "${t}/funnel-run-${attacker}-locked"
  write_as "${attacker}" "${t}/funnel-run-${attacker}-locked/job" "attack$$.0"
  as_uid "${attacker}" touch "${t}/funnel-run-${attacker}-locked/lock"
  # shellcheck disable=SC2016 # expanded by that shell
  spawn_as "${attacker}" bash -c 'exec 9<"$1" && flock 9 && exec sleep 600' _ \
    "${t}/funnel-run-${attacker}-locked/lock"
  epilog_cleanup
  expect_eq "a lock held by the user: the epilog still succeeds" 0 "${epilog_rc}"
  expect_contains "saying what it skipped" "could not lock ${t}/funnel-run-${attacker}-locked: skipped" \
    "$(cat "${work}/cleanup.out")"
  kill "${spawned_pid}" 2>/dev/null || true
  sleep 0.3
  rm -rf "${t}/funnel-run-${attacker}-locked"
  expect "teardown" torn_down
}

# Row 1, the hand-over: the process of the user's part runs as the user, who may read its
# /proc entries and take its descriptors (ptrace). It must hold nothing of root's: not root's
# environment, open files, working directory, nor the epilog's output pipe (held open by the
# user, it kept the epilog from ending).
case_shared_handoff() {
  need_root
  export FAKE_GPU_COUNT=1
  local t=${FUNNEL_TMPDIR} dir secret=${work}/rootonly/secret pid="" p deadline
  dir=${t}/funnel-run-${attacker}-held
  mkdir -m 700 "${work}/rootonly"
  echo "root's $$" >"${secret}"
  chmod 600 "${secret}"
  as_uid "${attacker}" mkdir -m 700 "${dir}"
  write_as "${attacker}" "${dir}/job" "attack$$.0"
  as_uid "${attacker}" touch "${dir}/lock"
  # The user holds the job's lock for a while: the cleanup waits for it, and can be looked at.
  # shellcheck disable=SC2016 # expanded by that shell
  spawn_as "${attacker}" bash -c 'exec 9<"$1" && flock 9 && exec sleep 6' _ "${dir}/lock"
  (
    cd "${work}/rootonly" || exit 1
    exec 7<"${secret}"
    SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} FUNNEL_MPS_QUIT_WAIT=1 \
      FUNNEL_TEST_ROOT_SECRET=xyzzy$$ timeout 100 "${FUNNEL_RUN}" --cleanup --job "attack$$" 2>&1 |
      cat >"${work}/cleanup.out"
  ) &
  local epilog=$!
  deadline=$((SECONDS + 10))
  while [[ -z ${pid} ]] && ((SECONDS < deadline)); do
    # The user's bash itself (its parent is root's timeout), not one of its subshells, nor
    # setpriv before it runs bash (already the user's, but not readable by the user until then).
    for p in $(pgrep -u "${attacker}" -f -- "--cleanup --tmpdir ${t}" || true); do
      if [[ $(stat -c %u "/proc/$(awk '{ print $4 }' "/proc/${p}/stat" 2>/dev/null)" 2>/dev/null) == 0 &&
        $(cat "/proc/${p}/comm" 2>/dev/null) == bash ]]; then
        pid=${p}
      fi
    done
    sleep 0.05
  done
  expect "the user's part runs (as uid ${attacker})" test -n "${pid}"
  if [[ -n ${pid} ]]; then
    expect_eq "no variable of root's in its environment" 0 \
      "$(tr '\0' '\n' <"/proc/${pid}/environ" | grep -c FUNNEL_TEST_ROOT_SECRET || true)"
    expect_eq "its working directory is /" / "$(readlink "/proc/${pid}/cwd")"
    expect_eq "no descriptor but 0, 1 and 2 (and bash's own)" "" \
      "$(find "/proc/${pid}/fd" -mindepth 1 -printf '%f %l\n' | grep -E "rootonly|^[3-9] pipe:" || true)"
    expect "its output is not the epilog's pipe" \
      test "$(readlink "/proc/${pid}/fd/1")" != "$(readlink "/proc/${epilog}/fd/1" 2>/dev/null || echo none)"
    expect_eq "nor any pipe" "" "$(readlink "/proc/${pid}/fd/1" "/proc/${pid}/fd/2" | grep pipe || true)"
  fi
  wait "${epilog}" || true
  expect "the job's directory goes once the user lets go of its lock" test ! -e "${dir}"
  expect_contains "the epilog relays the user's part" "(as uid ${attacker}) cleanup: removed the directory of job attack$$.0" \
    "$(cat "${work}/cleanup.out")"
  # Root's $TMPDIR unusable (a user may fill a shared /tmp): the epilog still succeeds.
  as_uid "${attacker}" mkdir -m 700 "${dir}"
  write_as "${attacker}" "${dir}/job" "attack$$.0"
  TMPDIR=/nonexistent epilog_cleanup
  expect_eq "the epilog without a usable TMPDIR" 0 "${epilog_rc}"
  expect "removes the directory" test ! -e "${dir}"
  expect "teardown" torn_down
}

# A file system mounted at a job directory's name (FUSE, which a user may mount, can make any
# access to it wait for ever, past the epilog's time limit): the cleanup never enters it.
case_shared_mount() {
  need_root
  export FAKE_GPU_COUNT=1
  local dir=${FUNNEL_TMPDIR}/funnel-run-${attacker}-mounted
  mkdir -m 700 "${dir}"
  if ! mount -t tmpfs -o mode=700,uid=${attacker},gid=${attacker} funnel-test "${dir}" 2>/dev/null; then
    rmdir "${dir}"
    echo "skipped: cannot mount a tmpfs here"
    exit 77
  fi
  write_as "${attacker}" "${dir}/job" "attack$$.0"
  write_as "${attacker}" "${dir}/kept" "kept"
  as_uid "${attacker}" mkdir -m 700 "${dir}/g0-x"
  # Links into the mount from elsewhere: a job directory's name, and entries funnel-run reads in a
  # real job directory (the links are followed by any test of what they are).
  local t=${FUNNEL_TMPDIR} real=${FUNNEL_TMPDIR}/funnel-run-${attacker}-linking
  as_uid "${attacker}" ln -s "${dir}" "${t}/funnel-run-${attacker}-evil"
  as_uid "${attacker}" mkdir -m 700 "${real}"
  as_uid "${attacker}" ln -s "${dir}/job" "${real}/job"
  as_uid "${attacker}" ln -s "${dir}/g0-x" "${real}/g0-abc"
  epilog_cleanup
  expect_eq "nothing inside it was touched" kept "$(cat "${dir}/kept" 2>/dev/null)"
  expect_contains "the epilog says why" "is or holds a mount point: skipped" "$(cat "${work}/cleanup.out")"
  expect_contains "a job directory holding links is skipped" \
    "${real} holds a symbolic link where funnel-run keeps its own files: skipped" "$(cat "${work}/cleanup.out")"
  expect "and left as it was" test -L "${real}/g0-abc"
  expect "the mount's directory is still there" test -d "${dir}/g0-x"
  umount "${dir}"
  rm -rf "${dir}" "${real}" "${t}/funnel-run-${attacker}-evil"
  expect "teardown" torn_down
}

# A reaper acts only in a private directory of its user's (mode 0700): one started on a
# directory another user made (a predictable name, a signal before the rank checked it) exits.
case_shared_reaper_dir() {
  need_root
  export FAKE_GPU_COUNT=1
  # A process of the victim's that is an MPS executable (what a reaper may stop).
  spawn_as "${victim}" "${FAKE_MPS_DAEMON_EXE}" -c 'while :; do sleep 1; done'
  local vpid=${spawned_pid} dir=${FUNNEL_TMPDIR}/funnel-run-${victim}-planted
  as_uid "${attacker}" mkdir -m 777 "${dir}" "${dir}/g0-x"
  as_uid "${attacker}" chmod 777 "${dir}" "${dir}/g0-x"
  write_as "${attacker}" "${dir}/g0-x/daemon" "${vpid} $(start_of "${vpid}")"
  # The victim's reaper, recorded as the directory's reaper as a rank would record it.
  # shellcheck disable=SC2016 # expanded by that shell
  as_uid "${victim}" env FUNNEL_MPS_QUIT_WAIT=1 FUNNEL_REAPER_INTERVAL=0.1 timeout 20 bash -c \
    'echo "$$ $(cut -d" " -f22 /proc/$$/stat)" >"$2/reaper" && exec "$1" --internal-reap "$2"' _ \
    "${FUNNEL_RUN}" "${dir}" >/dev/null 2>&1 || true
  expect "the victim's process lives" kill -0 "${vpid}"
  expect "the planted directory is left alone" test -e "${dir}/g0-x/daemon"
  rm -rf "${dir}"
}

# Row 8's neighbour: a CUDA_MPS_PIPE_DIRECTORY in the environment is used only when root or the
# user owns it; a daemon answering in another user's directory would run the user's kernels.
case_shared_site_mps() {
  need_root
  export FAKE_GPU_COUNT=1
  local site=${work}/othersite out rc=0
  mkdir -m 755 "${site}"
  mkdir -m 700 "${site}/pipe"
  chown "${attacker}:${attacker}" "${site}/pipe"
  as_uid "${attacker}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${site}/pipe" \
    CUDA_MPS_LOG_DIRECTORY="${site}/pipe" "${here}/fake-bin/nvidia-cuda-mps-control" -d
  sleep 0.3
  # The directory now another user's, its daemon still answering the user (the fakes answer
  # only their own user, so the daemon is the user's; a real one would be the other user's).
  chown "${victim}:${victim}" "${site}/pipe"
  chmod 755 "${site}/pipe"
  out=$(as_uid "${attacker}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${site}/pipe" HOME=/nonexistent \
    "${FUNNEL_RUN}" --dry-run --mps on -- true 2>&1) || rc=$?
  expect_eq "the job can still run" 0 "${rc}"
  expect "not on the daemon in another user's directory" test "$(field pipe "${out}")" != "${site}/pipe"
  expect_contains "saying why" "belongs to uid ${victim}, neither root nor this user: ignoring it" "${out}"
  chown "${attacker}:${attacker}" "${site}/pipe"
  # The user's own directory, named through a link another user made.
  as_uid "${victim}" ln -s "${site}/pipe" "${FUNNEL_TMPDIR}/their-link"
  rc=0
  out=$(as_uid "${attacker}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${FUNNEL_TMPDIR}/their-link" \
    HOME=/nonexistent "${FUNNEL_RUN}" --dry-run --mps on -- true 2>&1) || rc=$?
  expect_eq "through another user's link: the job can still run" 0 "${rc}"
  expect "not on the daemon that link names" test "$(field pipe "${out}")" != "${FUNNEL_TMPDIR}/their-link"
  expect_contains "saying why" "belongs to uid ${victim}, neither root nor this user: ignoring it" "${out}"
  rc=0
  out=$(as_uid "${attacker}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${FUNNEL_TMPDIR}/their-link//" \
    HOME=/nonexistent "${FUNNEL_RUN}" --dry-run --mps on -- true 2>&1) || rc=$?
  expect_contains "a trailing slash changes nothing" "belongs to uid ${victim}, neither root nor this user: ignoring it" "${out}"
  rm -f "${FUNNEL_TMPDIR}/their-link"
  # Another user's directory without a control pipe (it may come and go): refused all the same,
  # and never asked.
  mkdir -m 700 "${work}/nocontrol"
  chown "${attacker}:${attacker}" "${work}/nocontrol"
  local calls
  calls=$(grep -c "pipe=${work}/nocontrol " "${FAKE_NVIDIA_LOG}" || true)
  out=$(CUDA_MPS_PIPE_DIRECTORY="${work}/nocontrol" "${FUNNEL_RUN}" --dry-run --mps on -- true 2>&1) || true
  expect_contains "root: another user's directory" "belongs to uid ${attacker}, neither root nor this user: ignoring it" "${out}"
  expect_eq "nobody asked there" "${calls}" "$(grep -c "pipe=${work}/nocontrol " "${FAKE_NVIDIA_LOG}" || true)"
  as_uid "${attacker}" env FAKE_NVIDIA_LOG= CUDA_MPS_PIPE_DIRECTORY="${site}/pipe" \
    "${here}/fake-bin/nvidia-cuda-mps-control" <<<quit >/dev/null 2>&1 || true
  expect "teardown" torn_down
}

# Row 6: a stale pid file names the user's own editor, whose command line mentions the daemon.
case_shared_adopt() {
  need_root
  export FAKE_GPU_COUNT=1
  spawn_as "${attacker}" bash -c 'exec -a "vim nvidia-cuda-mps-control.pid" sleep 600'
  local epid=${spawned_pid} inst
  plant
  for inst in $(attacker_instances); do
    write_as "${attacker}" "${inst}/pipe/nvidia-cuda-mps-control.pid" "${epid}"
  done
  epilog_cleanup
  expect "the editor survives the root cleanup" kill -0 "${epid}"
  as_uid "${attacker}" env FUNNEL_MPS_QUIT_WAIT=1 timeout 100 "${FUNNEL_RUN}" --cleanup >/dev/null 2>&1 || true
  expect "and the user's own cleanup" kill -0 "${epid}"
}

# funnel-epilog, all that runs as root: the values it refuses, an installation another user could
# change, and `funnel-run --cleanup` as root handed to it before funnel-run reads its options.
case_shared_epilog_root() {
  need_root
  export FAKE_GPU_COUNT=1
  local rc out bad t=${FUNNEL_TMPDIR}
  run_epilog() { # run_epilog ENV...: the epilog as Slurm would run it; out and rc
    rc=0
    out=$(env SLURM_JOB_ID=attack$$ "$@" timeout 100 "${FUNNEL_EPILOG}" 2>&1) || rc=$?
  }
  # Left by the attacker's job: it must stay wherever the epilog refuses to run.
  as_uid "${attacker}" mkdir -m 700 "${t}/funnel-run-${attacker}-kept"
  write_as "${attacker}" "${t}/funnel-run-${attacker}-kept/job" "attack$$.0"
  run_epilog SLURM_JOB_UID=0 SLURM_JOB_GID=0
  expect_eq "a job of uid 0: the epilog succeeds" 0 "${rc}"
  expect_eq "without cleaning anything as root" "funnel-epilog: job of uid 0: nothing is cleaned as root" "${out}"
  for bad in 4294967295 0042 99999999999 -1 "" " 4242" "4242;id"; do
    run_epilog SLURM_JOB_UID="${bad}" SLURM_JOB_GID="${attacker}"
    expect_eq "SLURM_JOB_UID '${bad}' refused" 2 "${rc}"
    expect_eq "in one line for '${bad}'" 1 "$(wc -l <<<"${out}")"
    run_epilog SLURM_JOB_UID="${attacker}" SLURM_JOB_GID="${bad}"
    expect_eq "SLURM_JOB_GID '${bad}' refused" 2 "${rc}"
  done
  run_epilog SLURM_JOB_UID="${attacker}" SLURM_JOB_GID=0
  expect_eq "root's group refused" 1 "${rc}"
  expect_contains "saying so" "the group of uid ${attacker} is 0 (root's)" "${out}"
  rc=0
  out=$(env -u SLURM_JOB_UID SLURM_JOB_ID=attack$$ "${FUNNEL_EPILOG}" 2>&1) || rc=$?
  expect_eq "no SLURM_JOB_UID" 2 "${rc}"
  run_epilog SLURM_JOB_ID='1;id' SLURM_JOB_UID="${attacker}" SLURM_JOB_GID="${attacker}"
  expect_eq "a job id that is not one" 2 "${rc}"
  rc=0
  out=$(as_uid "${attacker}" env SLURM_JOB_UID="${attacker}" "${FUNNEL_EPILOG}" 2>&1) || rc=$?
  expect_eq "not run as root" 1 "${rc}"
  # A copy of the installation where one part may be written by a group: refused, nothing run.
  local bin=${work}/inst/bin lib_rel=../share/funnel/launch
  [[ -d $(dirname "${FUNNEL_EPILOG}")/${lib_rel} ]] || lib_rel=lib
  mkdir -p "${bin}/${lib_rel}"
  cp "${FUNNEL_EPILOG}" "${FUNNEL_RUN}" "${bin}/"
  cp "$(dirname "${FUNNEL_EPILOG}")/${lib_rel}/"*.sh "${bin}/${lib_rel}/"
  # The copy's epilog for the attacker's job, as root: sets rc and out.
  copy_epilog() {
    rc=0
    out=$(SLURM_JOB_ID=attack$$ SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} \
      "${bin}/funnel-epilog" 2>&1) || rc=$?
  }
  chmod g+w "${bin}/${lib_rel}/mps.sh"
  copy_epilog
  expect_eq "an installation a group may change" 1 "${rc}"
  expect_contains "names the file" "mps.sh must be root's, writable by root alone" "${out}"
  # A directory above them that a group may write (it could replace what is in it).
  chmod g-w "${bin}/${lib_rel}/mps.sh"
  chmod g+w "${work}/inst"
  copy_epilog
  expect_eq "a directory above them a group may change" 1 "${rc}"
  expect_contains "names it" "${work}/inst must be root's, writable by root alone" "${out}"
  expect "the user's directory is still there" test -e "${t}/funnel-run-${attacker}-kept/job"
  # funnel-run --cleanup as root with SLURM_JOB_UID: handed over before funnel-run parses a word
  # (its parser would name '--bogus' as an unknown option of funnel-run's).
  rc=0
  out=$(SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} "${FUNNEL_RUN}" --cleanup --bogus 2>&1) || rc=$?
  expect_eq "handed to funnel-epilog" "funnel-epilog: error: unknown argument '--bogus' (see --help)" "${out}"
  rc=0
  out=$(SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} "${FUNNEL_RUN}" --job "attack$$" --cleanup 2>&1) ||
    rc=$?
  expect_eq "--cleanup not first: refused" 2 "${rc}"
  expect_contains "pointing to funnel-epilog" "the cleanup is funnel-epilog's" "${out}"
  expect "the user's directory is still there" test -e "${t}/funnel-run-${attacker}-kept/job"
  # The handed-over form does the epilog's work.
  rc=0
  out=$(SLURM_JOB_UID=${attacker} SLURM_JOB_GID=${attacker} FUNNEL_MPS_QUIT_WAIT=1 timeout 100 \
    "${FUNNEL_RUN}" --cleanup --job "attack$$" 2>&1) || rc=$?
  expect_eq "funnel-run --cleanup --job as root" 0 "${rc}"
  expect_contains "as the job's user" "funnel-epilog: (as uid ${attacker}) cleanup: removed the directory of job attack$$.0" "${out}"
  expect "the user's directory goes" test ! -e "${t}/funnel-run-${attacker}-kept"
  expect "teardown" torn_down
}

# Row 7: numbers from the environment go into arithmetic only once they are numbers.
case_shared_env() {
  local pwned=${work}/pwned rc out
  # PPID is set, so bash would evaluate the subscript (and run the command) in arithmetic.
  local inject="PPID[\$(touch ${pwned})]"
  local -a cases=(
    "SLURM_NODEID|SLURM_NODEID=${inject}|SLURM_LOCALID=0|SLURM_TASKS_PER_NODE=1"
    "SLURM_LOCALID|SLURM_LOCALID=${inject}|SLURM_TASKS_PER_NODE=1"
    "Slurm tasks per node|SLURM_LOCALID=0|SLURM_TASKS_PER_NODE=${inject}"
    "OMPI_COMM_WORLD_LOCAL_SIZE|OMPI_COMM_WORLD_LOCAL_RANK=0|OMPI_COMM_WORLD_LOCAL_SIZE=${inject}"
    "OMPI_COMM_WORLD_SIZE|OMPI_COMM_WORLD_SIZE=${inject}"
    "CUDA_DEVICE_MAX_CONNECTIONS|CUDA_DEVICE_MAX_CONNECTIONS=${inject}")
  local entry var
  local -a env_args
  for entry in "${cases[@]}"; do
    IFS='|' read -ra env_args <<<"${entry}"
    var=${env_args[0]}
    env_args=("${env_args[@]:1}")
    rm -f "${pwned}"
    rc=0
    out=$(env "${env_args[@]}" "${FUNNEL_RUN}" --dry-run -- true 2>&1) || rc=$?
    expect_eq "exit status for ${var}" 2 "${rc}"
    expect_eq "one line for ${var}" 1 "$(wc -l <<<"${out}")"
    expect_contains "the line names ${var}" "${var} '" "${out}"
    expect "nothing ran for ${var}" test ! -e "${pwned}"
  done
  if ((uid == 0)); then
    rc=0
    out=$(SLURM_JOB_UID="${inject}" "${FUNNEL_RUN}" --cleanup 2>&1) || rc=$?
    expect_eq "SLURM_JOB_UID of the cleanup" 2 "${rc}"
    expect_contains "the line names it" "SLURM_JOB_UID 'PPID?" "${out}"
    rc=0
    out=$(SLURM_JOB_UID=${attacker} SLURM_JOB_GID="${inject}" "${FUNNEL_RUN}" --cleanup 2>&1) || rc=$?
    expect_eq "SLURM_JOB_GID of the cleanup" 2 "${rc}"
    expect "nothing ran for the cleanup's variables" test ! -e "${pwned}"
    if ! getent passwd "${attacker}" >/dev/null; then
      rc=0
      out=$(env -u SLURM_JOB_GID SLURM_JOB_UID=${attacker} "${FUNNEL_RUN}" --cleanup 2>&1) || rc=$?
      expect_eq "a uid without an account and no SLURM_JOB_GID" 1 "${rc}"
      expect_eq "in one line saying so" "funnel-epilog: error: cannot find the group of uid ${attacker} (set SLURM_JOB_GID)" "${out}"
    fi
  fi
}

# ---- under a real single-node Slurm (run through slurm-harness.sh, which sets SLURM_CONF) -------
need_slurm() {
  if [[ -z ${SLURM_CONF:-} ]] || ! command -v srun >/dev/null; then
    echo "skipped: run this case through slurm-harness.sh"
    exit 77
  fi
  # The job and step ids come from Slurm here.
  unset FUNNEL_JOB_ID FUNNEL_STEP_ID
}

case_slurm_srun() {
  need_slurm
  export FAKE_GPU_COUNT=2
  local out rc=0 f r
  out=$(FAKE_APP_SLEEP=1 srun -N 1 -n 8 --overcommit "${FUNNEL_RUN}" --print-binding -- "${FAKE_APP}" 2>&1) || rc=$?
  expect_eq "srun status" 0 "${rc}"
  expect_eq "one binding line per rank" 8 "$(grep -c 'binding .*launcher=slurm' <<<"${out}")"
  expect_eq "8 apps ran" 8 "$(app_files | wc -l)"
  expect_eq "one daemon per GPU" 2 "$(daemon_starts)"
  for ((r = 0; r < 8; r++)); do
    f=$(app_file_of_rank "${r}")
    [[ -n ${f} ]] || {
      fail "no record of local rank ${r}"
      continue
    }
    expect_eq "rank ${r} local size" 8 "$(app_value "${f}" FUNNEL_LOCAL_SIZE)"
    expect_eq "rank ${r} GPU" "$(uuid_of $((r % 2)))" "$(app_value "${f}" CUDA_VISIBLE_DEVICES)"
    expect_eq "rank ${r} daemon answered" 1 "$(app_value "${f}" mps_answered)"
    expect "rank ${r} pipe in a private job directory" \
      grep -qE "^FUNNEL_MPS_PIPE=${FUNNEL_TMPDIR}/funnel-run-${uid}-[0-9a-f]{16}/g[0-9]+-[0-9a-f]{8}/pipe$" "${f}"
    expect "rank ${r} job is the Slurm job and step" grep -qE '^job_key=[0-9]+\.[0-9]+$' "${f}"
  done
  expect "teardown after the step" torn_down
}

case_slurm_scancel() {
  need_slurm
  export FAKE_GPU_COUNT=1
  FAKE_APP_SLEEP=60 srun -N 1 -n 4 --overcommit "${FUNNEL_RUN}" -- "${FAKE_APP}" >/dev/null 2>&1 &
  local srun_pid=$! rc=0 job f
  expect "4 apps started" wait_apps 4
  expect_eq "one daemon while running" 1 "$(live_daemons)"
  job=$(squeue -h -o %i | head -n 1)
  expect "a job is queued" test -n "${job}"
  scancel "${job}"
  wait "${srun_pid}" || rc=$?
  expect "srun reports the cancelled job" test "${rc}" -ne 0
  for f in $(app_files); do expect "$(basename "${f}") got SIGTERM" grep -qx signal=TERM "${f}"; done
  expect "teardown after scancel" torn_down 15
}

case_slurm_refuse() {
  need_slurm
  export FAKE_GPU_COUNT=1
  local out rc=0
  out=$(timeout 120 srun -N 1 -n 60 --overcommit "${FUNNEL_RUN}" -- "${FAKE_APP}" 2>&1) || rc=$?
  expect "srun ended by itself (124: it hung)" test "${rc}" -ne 124
  expect "srun reports the refusal" test "${rc}" -ne 0
  expect_eq "one line from funnel-run" 1 "$(grep -c 'more than MPS allows' <<<"${out}")"
  expect_eq "no app ran" 0 "$(app_files | wc -l)"
  expect "nothing left" torn_down
}

main() {
  local name=${1:?usage: launch-tests.sh CASE}
  declare -F "case_${name}" >/dev/null || {
    echo "launch-tests.sh: unknown case '${name}'" >&2
    exit 2
  }
  command -v "${MPIEXEC}" >/dev/null || {
    echo "skipped: ${MPIEXEC} not found"
    exit 77
  }
  setup
  "case_${name}"
}

main "$@"
