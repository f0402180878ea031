# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# funnel-run's messages, and how a rank whose start-up fails exits (see startup_exit).
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# Before the options are read: which launcher started this rank, and is it local rank 0?
# Sets under_launcher, speaker and peeked_size.
peek_launcher() {
  local name var size
  for name in OMPI_COMM_WORLD_LOCAL_RANK:OMPI_COMM_WORLD_LOCAL_SIZE \
    MV2_COMM_WORLD_LOCAL_RANK:MV2_COMM_WORLD_LOCAL_SIZE MPI_LOCALRANKID:MPI_LOCALNRANKS \
    PALS_LOCAL_RANKID:PALS_LOCAL_SIZE PMI_LOCAL_RANK:PMI_LOCAL_SIZE SLURM_LOCALID:-; do
    var=${name%:*}
    size=${name#*:}
    if [[ -n ${!var:-} ]]; then
      under_launcher=1
      # A rank whose variable is no number cannot tell: it speaks, about that variable.
      if [[ ${!var} =~ ^[0-9]+$ && ! ${!var} =~ ^0+$ ]]; then speaker=0; fi
      if [[ ${size} != - && ${!size:-} =~ ^[0-9]{1,6}$ ]]; then peeked_size=$((10#${!size})); fi
      return 0
    fi
  done
}

warn() { printf '%s: warning: %s\n' "${PROG}" "$*" >&2; }
warn_once() { if ((speaker)); then warn "$@"; fi; }
note() {
  if [[ ${opt_verbose} == 1 ]]; then printf '%s: %s\n' "${PROG}" "$*" >&2; fi
  return 0
}

# A name or key read from a user's files, fit for one line of output: what is not a letter,
# digit or one of ._#:/+- shows as '?' (no line breaks or terminal escapes).
printable() { printf '%s' "${1//[^A-Za-z0-9._#:\/+-]/?}"; }

# True once the launcher's process on this node (our parent: mpirun or orted, slurmstepd) has
# started $1 processes (the node's ranks), or when that cannot be seen: no such list, or a
# parent with no other child LAUNCH_SETTLE_US after our start (then it is no launcher).
node_launched() {
  local want=$1 n=0 file
  local -a kids
  ((want > 1)) || return 0
  for file in "/proc/${PPID}/task/"*/children; do
    { read -ra kids <"${file}"; } 2>/dev/null || return 0
    n=$((n + ${#kids[@]}))
  done
  ((n >= want)) || ((n <= 1 && ${EPOCHREALTIME/./} - started_us > LAUNCH_SETTLE_US))
}

# Sleeps $1 microseconds; a signal ends the sleep and the rank at once.
settle_sleep() {
  (($1 > 0)) || return 0
  sleep "$(($1 / 1000000)).$(printf '%06d' $(($1 % 1000000)))" &
  settle_pid=$!
  trap 'kill "${settle_pid}" 2>/dev/null; exit 143' TERM
  trap 'kill "${settle_pid}" 2>/dev/null; exit 130' INT
  trap 'kill "${settle_pid}" 2>/dev/null; exit 129' HUP
  wait "${settle_pid}" || true
}

# Ends a rank whose start-up failed with status $1. Under a launcher the rank first waits for the
# launch of its node to be over (see LAUNCH_SETTLE_US); a signal ends that wait at once.
startup_exit() {
  local code=$1 now until size
  release_locks
  if ((under_launcher)); then
    size=$((local_size > 1 ? local_size : peeked_size))
    until node_launched "${size}" || ((${EPOCHREALTIME/./} - started_us > LAUNCH_WAIT_US)); do
      settle_sleep 100000
    done
    now=${EPOCHREALTIME/./}
    until=$((started_us + LAUNCH_SETTLE_US))
    ((until >= now + LAUNCH_MARGIN_US)) || until=$((now + LAUNCH_MARGIN_US))
    settle_sleep $((until - now))
  fi
  exit "${code}"
}

# A bad option, value or plan: every rank of the node sees the same, so local rank 0 says it.
usage_error() {
  if ((speaker)); then printf '%s: error: %s\n' "${PROG}" "$*" >&2; fi
  startup_exit 2
}

# Something this rank could not do safely.
die() {
  printf '%s: error: %s\n' "${PROG}" "$*" >&2
  startup_exit 1
}
