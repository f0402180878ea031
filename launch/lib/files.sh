# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# What funnel-run keeps on a node, and how it reads it back: process records, locks, private
# directories. Everything here may meet what another user, or the job's own user, planted (see
# docs/security.md): nothing is written or opened through a link, and only regular files of this
# user's are read, at most 256 bytes of each.
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# start_time_of PID VAR: sets VAR to the start time (clock ticks since boot) of live, non-zombie
# process PID; fails when there is none.
start_time_of() {
  local stat
  local -n start_out=$2
  [[ $1 =~ ^[0-9]{1,9}$ ]] || return 1
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  local -a f
  read -ra f <<<"${stat}"
  [[ ${f[0]} != Z && ${f[0]} != X ]] || return 1
  # shellcheck disable=SC2034 # a nameref: the caller's variable
  start_out=${f[19]}
}

# read_head NAME...: read's word splitting of at most the first 256 bytes of standard input, up to
# a NUL (a sparse file planted as a record or key must not keep a cleanup reading a terabyte of
# zeros, which read -n would, since it does not count them). Fails at end of input; the names
# are set all the same.
read_head() { read -r -d '' -n 256 "$@"; }

# read_record FILE PID_VAR START_VAR: the "pid starttime" record FILE into the two variables.
# Only a regular file is read: a FIFO or a link planted in its place is not a record.
read_record() {
  local -n pid_out=$2 start_out_=$3
  pid_out=""
  start_out_=""
  [[ ! -L $1 && -f $1 ]] || return 1
  { read_head pid_out start_out_ _ <"$1"; } 2>/dev/null || true
  [[ ${pid_out} =~ ^[0-9]{1,9}$ && ${start_out_} =~ ^[0-9]{1,20}$ ]]
}

# recorded_alive FILE [PID_VAR]: true when the process recorded in FILE is still the one recorded
# (same pid, same start); PID_VAR, when given, gets its pid.
recorded_alive() {
  local rec_pid rec_start rec_now
  read_record "$1" rec_pid rec_start || return 1
  start_time_of "${rec_pid}" rec_now || return 1
  [[ ${rec_now} == "${rec_start}" ]] || return 1
  if [[ -n ${2:-} ]]; then printf -v "$2" '%s' "${rec_pid}"; fi
}

# True when process $1 runs as uid $2 (real and effective) and its executable is an MPS control
# daemon or server: what funnel-run may stop. A command line is never evidence.
is_mps_process() {
  local pid=$1 want=$2 key="" real="" eff="" exe
  [[ ${pid} =~ ^[0-9]{1,9}$ ]] || return 1
  while read -r key real eff _; do
    [[ ${key} != Uid: ]] || break
  done 2>/dev/null <"/proc/${pid}/status" || return 1
  [[ ${key} == Uid: && ${real} == "${want}" && ${eff} == "${want}" ]] || return 1
  exe=$(readlink "/proc/${pid}/exe" 2>/dev/null) || return 1
  exe=${exe% (deleted)}
  [[ ${exe##*/} == nvidia-cuda-mps-control || ${exe##*/} == nvidia-cuda-mps-server ]]
}

# create_new FILE [LINE]: makes FILE (holding LINE) only when nothing, not even a link, is there
# yet (noclobber: O_EXCL); false otherwise.
create_new() {
  local rc=0
  set -o noclobber
  if [[ $# -ge 2 ]]; then
    { printf '%s\n' "$2" >"$1"; } 2>/dev/null || rc=1
  else
    { : >"$1"; } 2>/dev/null || rc=1
  fi
  set +o noclobber
  return "${rc}"
}

# write_file FILE LINE: LINE goes into a new file that is then renamed over FILE (a rename
# replaces a link, never follows it).
write_file() {
  local tmp="$1.tmp.${BASHPID}.${RANDOM}${RANDOM}"
  create_new "${tmp}" "$2" || die "cannot create '${tmp}'"
  mv -fT -- "${tmp}" "$1"
}

# record_process FILE PID: "pid starttime" of the process, for recorded_alive.
record_process() {
  local start=0
  start_time_of "$2" start || start=0
  write_file "$1" "$2 ${start}"
}

# True when $1 is a directory (not a link) of this user's with mode 0700 (a set-group-id bit it
# took from a group directory above it aside).
is_private_dir() {
  local mode
  [[ ! -L $1 && -d $1 && -O $1 ]] && mode=$(stat -c %a -- "$1" 2>/dev/null) &&
    (((8#${mode} & 8#5777) == 8#700))
}

# Creates directory $1 (mode 0700) or checks that the existing one is a private directory of
# ours: a link, a directory somebody else owns, or one others can enter, is never used.
ensure_private_dir() {
  local dir=$1 info _
  # A directory removed (by a reaper) between the mkdir and the look is made again.
  for _ in 1 2 3 4 5; do
    if mkdir -m 700 -- "${dir}" 2>/dev/null; then return 0; fi
    if [[ -L ${dir} || (-e ${dir} && ! -d ${dir}) ]]; then
      die "refusing to use '${dir}': it is not a directory (remove it or choose another --tmpdir)"
    fi
    if is_private_dir "${dir}"; then return 0; fi
    info=$(stat -c '%u %a' -- "${dir}" 2>/dev/null) || continue
    # Renamed away by a reaper and made again by another rank between the two looks: once more.
    if [[ ${info% *} == "${uid}" ]] && (((8#${info#* } & 8#5777) == 8#700)); then continue; fi
    die "refusing to use '${dir}': owned by uid ${info% *} with mode ${info#* }, but it must" \
      "be owned by uid ${uid} with mode 700 (remove it or choose another --tmpdir)"
  done
  die "cannot make '${dir}': it keeps disappearing"
}

# take_lock VAR DIR SECONDS [create]: takes the lock DIR/lock (creating DIR when $4 = create) and
# puts its descriptor in VAR (a name of the caller's, not one of take_lock's own locals). Waits in
# short steps (so a signal is handled promptly) for at most SECONDS. A lock file removed or replaced
# while we waited is not a lock any more: then it starts over. The lock file is created exclusively
# and opened read-only, and only when it is a regular file of ours: nothing is ever opened through a
# link. Works in a subshell too (the descriptor is looked up in the process that holds it, BASHPID).
take_lock() {
  local -n fd_out=$1
  local dir=$2 deadline=$((SECONDS + $3)) create=${4:-existing} taken_fd_
  while ((SECONDS <= deadline)); do
    if [[ ${create} == create ]]; then
      ensure_private_dir "${dir}"
    elif [[ -L ${dir} || ! -d ${dir} ]]; then
      return 1
    fi
    if [[ ! -L ${dir}/lock && ! -e ${dir}/lock ]]; then create_new "${dir}/lock" || true; fi
    # Anything but a regular file there was not made by funnel-run: it will never be a lock.
    if [[ -L ${dir}/lock || (-e ${dir}/lock && ! -f ${dir}/lock) ]]; then return 1; fi
    if { exec {taken_fd_}<"${dir}/lock"; } 2>/dev/null; then
      while ((SECONDS <= deadline)); do
        if flock -w 1 "${taken_fd_}"; then
          # The file held and the file now at the path: the same (device and inode; false when
          # the path is gone), and ours. Tests of the shell's own: the ranks of a dense job pass
          # here one after the other, and a fork each would add up.
          if [[ /proc/${BASHPID}/fd/${taken_fd_} -ef ${dir}/lock && -O ${dir}/lock ]]; then
            # shellcheck disable=SC2034 # a nameref: the caller's variable
            fd_out=${taken_fd_}
            return 0
          fi
          break
        fi
      done
      exec {taken_fd_}<&-
    fi
    sleep 0.1
  done
  return 1
}

release_lock() {
  local fd=$1
  if [[ -n ${fd} ]]; then exec {fd}<&-; fi
  return 0
}

release_locks() {
  release_lock "${job_lock_fd}"
  release_lock "${inst_lock_fd}"
  job_lock_fd=""
  inst_lock_fd=""
}

# Closes every descriptor above 2 of the subshell it runs in, before that subshell starts a
# process that outlives the rank or runs as another user: not only the locks release_locks knows,
# but one take_lock had opened when a signal came, and the launcher's pipes. (Only in a subshell:
# bash reads its script through one of them.)
close_descriptors() {
  local fd
  for fd in /proc/"${BASHPID}"/fd/*; do
    fd=${fd##*/}
    # (The glob's own descriptor is closed once it is read.)
    if ((fd > 2)) && [[ -L /proc/${BASHPID}/fd/${fd} ]]; then exec {fd}>&-; fi
  done
}

# Removes this user's directory tree $1, also where an app left directories in it that rm
# cannot empty (read-only, or mode 0 inside mode 0): each is opened up before find enters it,
# from / (find goes back to its starting directory, which the caller's may not allow). What
# cannot be removed is reported and the status is 1, never fatal: a reaper or a cleanup goes on
# with the rest.
remove_tree() {
  rm -rf -- "$1" 2>/dev/null && return 0
  (cd / && find "$1" -type d ! -perm -u=rwx -exec chmod u+rwx -- {} \;) 2>/dev/null || true
  rm -rf -- "$1" 2>/dev/null && return 0
  warn "could not remove all of $(printable "$1")"
  return 1
}

# wait_while COMMAND...: polls COMMAND every 0.1 s while it holds, for at most quit_wait s.
wait_while() { wait_while_for "${quit_wait}" "$@"; }

# wait_while_for SECONDS COMMAND...: the same for at most SECONDS s.
wait_while_for() {
  local limit=$(($1 * 10)) waited=0
  shift
  while "$@" && ((waited < limit)); do
    sleep 0.1
    waited=$((waited + 1))
  done
}
