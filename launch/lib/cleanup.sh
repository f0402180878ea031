# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# funnel-run --cleanup: stops the daemons and removes the job directories of this user that a
# reaper could not (it was killed with the ranks), or of one job (--job, as funnel-epilog asks
# after a Slurm job). It runs with this user's power only: root's epilog is funnel-epilog, which
# runs this as the job's user. Everything it reads may have been prepared by that user, so each
# directory is looked at without following links, and what one directory does never stops the
# others (docs/security.md row 1).
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# True when a file system is mounted at directory $1 or below it (a name in tmpdir_real), read
# from the mount table, without touching $1: a user's FUSE file system there could make any
# access wait for ever, past every time limit.
holds_mount() {
  local want=$1 target _id _parent _dev _root _rest
  # The mount table's spelling of the path: space, tab, newline and backslash as octal escapes.
  want=${want//\\/\\134}
  want=${want// /\\040}
  want=${want//$'\t'/\\011}
  want=${want//$'\n'/\\012}
  while read -r _id _parent _dev _root target _rest; do
    if [[ ${target} == "${want}" || ${target} == "${want}"/* ]]; then return 0; fi
  done </proc/self/mountinfo
  return 1
}

# True when job directory $1 holds a symbolic link among the entries funnel-run reads (all but
# what is inside the app's run/ and the daemons' log/), found without following any: funnel-run
# makes none, and one could lead the cleanup into a file system that never answers.
has_own_link() {
  [[ -n $(cd -- "$1" 2>/dev/null && find -P . -mindepth 1 -maxdepth 3 \( -type l -print -quit \) \
    -o \( -path ./run -o -path './g*/log' \) -prune 2>/dev/null) ]]
}

cleanup_jobs() {
  if ((uid == 0)) && [[ -n ${SLURM_JOB_UID+set} && ! ${SLURM_JOB_UID} =~ ^0+$ ]]; then
    usage_error "as root in an epilog the cleanup is funnel-epilog's (docs/security.md): run" \
      "funnel-epilog, or '${PROG} --cleanup ...' with --cleanup first, which is handed to it"
  fi
  local dir key lock_fd stopped=0 daemons=0 prefix gone
  prefix="$(sanitize "${opt_job}")."
  for dir in "${opt_tmpdir%/}/funnel-run-${uid}-"*; do
    if holds_mount "${tmpdir_real%/}/${dir##*/}"; then
      warn "$(printable "${dir}") is or holds a mount point: skipped (a job directory never does)"
      continue
    fi
    # Only our own directories, never through a link.
    [[ ! -L ${dir} && -d ${dir} && -O ${dir} ]] || continue
    if has_own_link "${dir}"; then
      warn "$(printable "${dir}") holds a symbolic link where funnel-run keeps its own files:" \
        "skipped (funnel-run makes none)"
      continue
    fi
    # A .gone directory was being removed (no live rank) when its remover was stopped: it goes
    # whichever job it was, even when its job file went first.
    gone=0
    [[ ${dir##*/} != *.gone.* ]] || gone=1
    key=""
    if [[ ! -L ${dir}/job && -f ${dir}/job ]]; then
      { read_head key <"${dir}/job"; } 2>/dev/null || true
    fi
    if ((opt_job_given && !gone)) && [[ -n ${key} && ${key} != "${prefix}"* ]]; then continue; fi
    if ! take_lock lock_fd "${dir}" 10; then
      warn "could not lock $(printable "${dir}"): skipped"
      continue
    fi
    # Without --job, or without a job file (a rank stopped before it wrote one): only once no
    # rank and no reaper of it lives.
    if { ((!opt_job_given)) || [[ -z ${key} ]]; } && ((!gone)) &&
      { recorded_alive "${dir}/reaper" || any_live_rank "${dir}"; }; then
      release_lock "${lock_fd}"
      continue
    fi
    key=$(printable "${key:-?}")
    if stop_job "${dir}" all daemons; then
      echo "${PROG}: cleanup: removed the directory of job ${key}" \
        "(${daemons} MPS daemon(s) stopped)"
      stopped=$((stopped + 1))
    else
      echo "${PROG}: cleanup: job ${key}: ${daemons} MPS daemon(s) stopped, but its" \
        "directory is not all gone (see the warning)"
    fi
    release_lock "${lock_fd}"
  done
  note "cleanup: ${stopped} job director(ies) removed"
}
