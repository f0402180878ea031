# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# --report: did sharing pay? Each rank's app is recorded by the CUPTI injection library
# (CUDA_INJECTION64_PATH, no rebuild of the app) into the job's private directory; the node's
# last rank merges the records with funnel-report into one block on stderr, report.json and
# report.png in the report directory (docs/report.md). The reaper does it instead when no rank
# could (the last one was killed): its block goes to report.txt there.
# shellcheck source=SCRIPTDIR/state.sh
source "${BASH_SOURCE[0]%/*}/state.sh"

# Where the report's programs are, from funnel-run's own place: the build fills in the paths
# relative to bin/ (an install and the build tree alike); from the source tree, none.
report_inject_from_bin="@FUNNEL_REPORT_INJECT_FROM_BIN@"
report_tool_from_bin="@FUNNEL_REPORT_TOOL_FROM_BIN@"

# report_programs: sets report_inject and report_tool, or says in one line why --report cannot
# run (returns 1): the app then runs unrecorded.
report_programs() {
  local bin=${SELF%/*}
  if [[ ${report_inject_from_bin} == @* || ${report_tool_from_bin} == @* ]]; then
    warn_once "--report: this funnel-run is not from a build or an install of funnel (no" \
      "funnel-report beside it): no report"
    return 1
  fi
  report_inject=${bin}/${report_inject_from_bin}
  report_tool=${bin}/${report_tool_from_bin}
  if [[ ! -x ${report_tool} ]]; then
    warn_once "--report: '${report_tool}' is missing: no report"
    return 1
  fi
  if [[ ! -r ${report_inject} ]]; then
    warn_once "--report: '${report_inject}' is missing (funnel was built without CUDA or" \
      "CUPTI): no report"
    return 1
  fi
}

# The report directory of this node: the one given, or per host when the job spans nodes.
report_node_dir() {
  local world=${OMPI_COMM_WORLD_SIZE:-${SLURM_NTASKS:-${PMI_SIZE:-${local_size}}}}
  if [[ ${world} =~ ^[0-9]+$ ]] && ((world > local_size)); then
    printf '%s/%s\n' "${report_dir}" "$(hostname -s)"
  else
    printf '%s\n' "${report_dir}"
  fi
}

# The prefixes of absolute path $1, from its parent up to /, one a line.
path_prefixes() {
  local part=${1%/*}
  while [[ -n ${part} ]]; do
    printf '%s\n' "${part}"
    part=${part%/*}
  done
  printf '/\n'
}

# report_dir_refusal DIR: makes the report directory DIR (and those above it) unless another
# user could swap it for a link on its way; prints why the report may not go there, nothing when
# it may. It may go into a directory of this user's, not a link, that not every user may write,
# held by a directory of this user's or root's; no directory on its way (as given, or as it
# resolves) may be one every user may write unless it is sticky, and no link there another
# user's. Otherwise funnel-report and its plot would write report.json and report.png where
# another user chose, or into that user's directory.
report_dir_refusal() {
  local dir=$1 part owner mode type real base=""
  local -a parts=() infos=()
  local rule="the report directory must be a directory of this user's that no other user can"
  rule+=" write or replace"
  mapfile -t parts < <(path_prefixes "${dir}")
  mapfile -t infos < <(stat -c '%u %a %F' -- "${parts[@]}" 2>/dev/null)
  for part in "${parts[@]}"; do
    [[ -e ${part} || -L ${part} ]] || continue
    base=${base:-${part}}
    read -r owner mode type <<<"${infos[0]:-}"
    infos=("${infos[@]:1}")
    if [[ ! ${mode} =~ ^[0-7]{1,4}$ ]]; then
      echo "cannot write the report to '${dir}' ('${part}' on its way cannot be examined)"
      return 0
    fi
    if [[ ${type} == "symbolic link" ]]; then
      if [[ ${owner} != "${uid}" && ${owner} != 0 ]]; then
        echo "'${dir}' has '${part}' on its way, a link of uid ${owner} (${rule})"
        return 0
      fi
    elif ((8#${mode} & 8#002 && !(8#${mode} & 8#1000))); then
      echo "'${dir}' has '${part}' on its way, which every user may write (mode ${mode}, not" \
        "sticky; ${rule})"
      return 0
    fi
  done
  # Nothing is made in another user's directory.
  owner=$(stat -L -c %u -- "${base:-/}" 2>/dev/null) || owner=""
  if [[ ${owner} != "${uid}" && ${owner} != 0 ]]; then
    echo "'${dir}' is in '${base}', a directory of uid ${owner:-?} (${rule})"
    return 0
  fi
  (umask o-w && mkdir -p -- "${dir}") 2>/dev/null || true
  if [[ -L ${dir} ]]; then
    echo "'${dir}' is a symbolic link (${rule})"
    return 0
  fi
  if [[ ! -e ${dir} ]]; then
    echo "cannot write the report to '${dir}' (it cannot be made)"
    return 0
  fi
  if [[ ! -d ${dir} ]]; then
    echo "'${dir}' is not a directory (${rule})"
    return 0
  fi
  real=$(cd -P -- "${dir}" 2>/dev/null && pwd) || {
    echo "cannot write the report to '${dir}' (it cannot be entered)"
    return 0
  }
  mapfile -t parts < <(printf '%s\n' "${real}" && path_prefixes "${real}")
  mapfile -t infos < <(stat -c '%u %a' -- "${parts[@]}" 2>/dev/null)
  if ((${#infos[@]} != ${#parts[@]})); then
    echo "cannot write the report to '${dir}' (a directory on its way cannot be examined)"
    return 0
  fi
  read -r owner mode <<<"${infos[0]}"
  if [[ ${owner} != "${uid}" ]]; then
    echo "'${dir}' belongs to uid ${owner} (${rule})"
    return 0
  fi
  if ((8#${mode} & 8#002)); then
    echo "'${dir}' may be written by every user (mode ${mode}; ${rule})"
    return 0
  fi
  read -r owner mode <<<"${infos[1]}"
  if [[ ${owner} != "${uid}" && ${owner} != 0 ]]; then
    echo "'${dir}' is in '${parts[1]}', a directory of uid ${owner} (${rule})"
    return 0
  fi
  for part in "${!parts[@]}"; do
    read -r owner mode <<<"${infos[part]}"
    if ((8#${mode} & 8#002 && !(8#${mode} & 8#1000))); then
      echo "'${dir}' has '${parts[part]}' on its way, which every user may write (mode ${mode}," \
        "not sticky; ${rule})"
      return 0
    fi
  done
}

# Before the app starts: the rank's record goes to the job directory (made private by
# setup_job), under the wrapper's pid so that no two ranks' names can meet.
report_environment() {
  [[ -n ${opt_report} ]] || return 0
  report_dir=${opt_report}
  if [[ ${opt_report} == on ]]; then report_dir=${PWD}/funnel-report-${job_key}; fi
  while [[ ${report_dir} == */ ]]; do report_dir=${report_dir%/}; done
  if ! report_programs; then
    report_dir=""
    return 0
  fi
  if [[ -n ${CUDA_INJECTION64_PATH:-} && ${CUDA_INJECTION64_PATH} != "${report_inject}" ]]; then
    warn_once "--report: CUDA_INJECTION64_PATH is already set (${CUDA_INJECTION64_PATH}," \
      "a profiler?): it is left alone and this job is not recorded"
    report_dir=""
    return 0
  fi
  local node_dir refusal
  node_dir=$(report_node_dir)
  refusal=$(report_dir_refusal "${node_dir}")
  if [[ -n ${refusal} ]]; then
    warn_once "--report: ${refusal}: no report"
    report_dir=""
    return 0
  fi
  mkdir -m 700 -- "${job_dir}/report" 2>/dev/null || true
  is_private_dir "${job_dir}/report" || {
    warn_once "--report: '${job_dir}/report' is not a private directory of this user: no report"
    report_dir=""
    return 0
  }
  export CUDA_INJECTION64_PATH=${report_inject}
  export FUNNEL_REPORT_RECORD=${job_dir}/report/rank-$$.record
  # What the merge needs, also in the reaper: the node's report directory, the job's start (the
  # first rank's), the ranks of the node and two options for report.json.
  create_new "${job_dir}/report-dir" "${node_dir}"$'\n'"${started_us}"$'\n'"${local_size}"$'\n'"${opt_policy}"$'\n'"${opt_mps}"$'\n' ||
    true
}

# report_merge JOB_DIR: funnel-report over the job's records, as report-dir says, once the report
# directory passed report_dir_refusal again (the app may have run for hours since); then the
# records go, so that a later step of the same job starts afresh. Its status is never the job's.
report_merge() {
  local dir=$1 out start ranks policy mps refusal rc=0
  { read -r out && read -r start && read -r ranks && read -r policy && read -r mps; } \
    <"${dir}/report-dir" || return 0
  refusal=$(report_dir_refusal "${out}")
  if [[ -n ${refusal} ]]; then
    warn "--report: ${refusal}: no report"
    rm -rf -- "${dir}/report" "${dir}/report-dir" "${dir}/report-ended"
    return 0
  fi
  "${report_tool}" "${dir}/report" --out "${out}" --expect-ranks "${ranks}" \
    --job-start "${start:0:-6}.${start: -6}" --job-end "${EPOCHREALTIME}" \
    --option "policy=${policy}" --option "mps=${mps}" || rc=$?
  rm -rf -- "${dir}/report" "${dir}/report-dir" "${dir}/report-ended"
  if ((rc == 0)); then printf '%s: sharing report: %s/report.json\n' "${PROG}" "${out}" >&2; fi
  return 0
}

# After the app ended, before this rank deregisters: the last rank of the node reports. Under the
# job lock, so that of ranks ending together exactly one counts itself last; it stays registered
# while it reports, which keeps the reaper from removing the records.
report_if_last() {
  [[ -n ${report_dir} && -n ${job_dir} && -n ${registered} ]] || return 0
  local fd="" last=0
  take_lock fd "${job_dir}" 10 2>/dev/null || return 0
  # Last: every rank of the node has ended its app (a rank that has not even registered yet is
  # not seen by any_live_rank, so asking it is not enough). A rank that never gets here (killed)
  # leaves the report to the reaper.
  mkdir -m 700 -- "${job_dir}/report-ended" 2>/dev/null || true
  create_new "${job_dir}/report-ended/$$" || true
  local ended=("${job_dir}"/report-ended/*)
  if ((${#ended[@]} >= local_size)) && create_new "${job_dir}/report-taken"; then last=1; fi
  release_lock "${fd}"
  ((last)) || return 0
  report_merge "${job_dir}"
  rm -f -- "${job_dir}/report-taken"
}

# The reaper's share (no live rank, the job directory about to go): a report nobody wrote, its
# block into report.txt of the report directory: written in the job's directory, then copied
# into a new file there and renamed over report.txt (a rename replaces a link, never follows it).
report_in_reaper() {
  local dir=$1 out tmp
  [[ -f ${dir}/report-dir && ! -e ${dir}/report-taken ]] || return 0
  read -r out <"${dir}/report-dir" || return 0
  report_programs 2>/dev/null || return 0
  report_merge "${dir}" 2>"${dir}/report.txt"
  [[ -z $(report_dir_refusal "${out}") ]] || return 0
  tmp=${out}/.report.txt.${BASHPID}.${RANDOM}
  set -o noclobber
  { cat -- "${dir}/report.txt" >"${tmp}" && mv -fT -- "${tmp}" "${out}/report.txt"; } 2>/dev/null ||
    rm -f -- "${tmp}"
  set +o noclobber
}
