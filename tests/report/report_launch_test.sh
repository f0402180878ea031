#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel-run --report end to end, under real mpirun with the fake nvidia tools of the launch
# tests (no GPU): each rank's app writes its record where funnel-run said (FUNNEL_REPORT_RECORD,
# with the record writer funnel's apps use), and the node's last rank merges them.
# Usage: report_launch_test.sh CASE   (env: FUNNEL_RUN, MAKE_RECORDS, MPIEXEC, INJECT_LIBRARY:
#        the library funnel-run must give the apps, unset when none was built)
#   dir          3 ranks, --report=DIR: one block and one path line, report.json with 3 ranks
#                (read back by python3's json module), CUDA_INJECTION64_PATH given to the app
#   default      --report alone: ./funnel-report-<job>/report.json
#   env          FUNNEL_REPORT=DIR does the same as --report=DIR
#   unwritable   a report directory that cannot be written: one line, the app's status (3)
#   taken        CUDA_INJECTION64_PATH already set (a profiler): one warning, no report
#   bad          --report= (empty) and a file as DIR: one line each, exit 2, the app not run
#   second_identity  uid 4242 (setpriv, no account) plants a link and a squatted directory at
#                the default name in a sticky shared cwd, links as report.json/report.txt and a
#                record in its own directory, a link on the way to DIR; each job (root's) says
#                one line, keeps the app's status 3, writes nothing there nor through the links;
#                a directory of root's that every user may write, or becomes so while the app
#                runs, is refused too; root's own directory in the shared cwd gets the report.
#                Skips (77) unless root with setpriv.
# Every case: the job directory gone afterwards (its reaper done).
# Exit 77 when funnel was built without the injection library (no CUDA or CUPTI).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case_name=${1:?usage: report_launch_test.sh CASE}
: "${FUNNEL_RUN:?FUNNEL_RUN must name funnel-run}" "${MAKE_RECORDS:?MAKE_RECORDS must be set}"
MPIEXEC=${MPIEXEC:-mpirun}
inject=${INJECT_LIBRARY:-}
if [[ -z ${inject} ]]; then
  echo "skipped: funnel was built without the injection library (no CUDA or CUPTI)"
  exit 77
fi

failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }

work=$(mktemp -d /tmp/frt.XXXXXX)
trap 'pkill -KILL -f -- "${work}" 2>/dev/null || true; rm -rf "${work}"' EXIT
mkdir -p "${work}/t" "${work}/home" "${work}/exe" "${work}/cwd"
cp "$(command -v bash)" "${work}/exe/nvidia-cuda-mps-control"
export HOME=${work}/home FAKE_MPS_DAEMON_EXE=${work}/exe/nvidia-cuda-mps-control
export FUNNEL_TMPDIR=${work}/t FAKE_NVIDIA_LOG=${work}/nvidia.log FUNNEL_REAPER_INTERVAL=0.2
export FUNNEL_MPS_QUIT_WAIT=5 FUNNEL_JOB_ID=rep$$ FUNNEL_STEP_ID=0
export PATH=${here}/../launch/fake-bin:${PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
unset CUDA_VISIBLE_DEVICES CUDA_MPS_PIPE_DIRECTORY CUDA_INJECTION64_PATH FUNNEL_REPORT
touch "${FAKE_NVIDIA_LOG}"

# The app: its record, what it was given, then STATUS.
cat >"${work}/app.sh" <<'APP'
#!/usr/bin/env bash
printf '%s\n' "${CUDA_INJECTION64_PATH:-none}" >"${APP_SEEN}.${OMPI_COMM_WORLD_RANK}"
if [[ -n ${APP_THEN:-} ]]; then eval "${APP_THEN}"; fi
if [[ -n ${FUNNEL_REPORT_RECORD:-} ]]; then "${MAKE_RECORDS}" rank "${FUNNEL_REPORT_RECORD}"; fi
exit "${APP_STATUS:-0}"
APP
chmod 755 "${work}/app.sh"
export APP_SEEN=${work}/seen MAKE_RECORDS

# job RANKS [funnel-run options...]: runs the app; stderr in ${work}/err, status in rc.
job() {
  local n=$1
  shift
  rc=0
  (cd "${JOB_CWD:-${work}/cwd}" && timeout 120 "${MPIEXEC}" -np "${n}" "${FUNNEL_RUN}" --gpus 0 "$@" -- \
    "${work}/app.sh") >"${work}/out" 2>"${work}/err" || rc=$?
}

count() { grep -c -- "$1" "${work}/err" || true; }

ranks_in_json() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(sum(len(g["ranks"]) for g in r["gpus"]))' "$1" 2>&1
}

# No job directory left: the reaper removes it once the last rank is gone.
torn_down() {
  local t=0
  while [[ -n $(find "${FUNNEL_TMPDIR}" -mindepth 1 -maxdepth 1 -print -quit) ]]; do
    ((t++ < 50)) || { fail "a job directory is left: $(ls "${FUNNEL_TMPDIR}")"; return; }
    sleep 0.2
  done
}

case ${case_name} in
  dir)
    job 3 --report="${work}/rep"
    [[ ${rc} == 0 ]] || fail "status ${rc}: $(cat "${work}/err")"
    [[ $(count "funnel-report: node ") == 1 ]] || fail "not one report block: $(cat "${work}/err")"
    [[ $(count "funnel-run: sharing report: ${work}/rep/report.json") == 1 ]] ||
      fail "not one path line: $(cat "${work}/err")"
    [[ $(ranks_in_json "${work}/rep/report.json") == 3 ]] ||
      fail "report.json: $(ranks_in_json "${work}/rep/report.json")"
    grep -q "3 records" "${work}/err" || fail "the block does not count 3 records"
    [[ $(readlink -f "$(cat "${work}/seen.1")") == "$(readlink -f "${inject}")" ]] ||
      fail "the app got CUDA_INJECTION64_PATH=$(cat "${work}/seen.1"), not ${inject}"
    ;;
  default)
    job 2 --report
    [[ -f ${work}/cwd/funnel-report-rep$$.0/report.json ]] ||
      fail "no ./funnel-report-rep$$.0/report.json: $(ls "${work}/cwd") $(cat "${work}/err")"
    ;;
  env)
    FUNNEL_REPORT=${work}/rep-env job 2
    [[ $(ranks_in_json "${work}/rep-env/report.json") == 2 ]] ||
      fail "FUNNEL_REPORT: $(cat "${work}/err")"
    ;;
  unwritable)
    mkdir -m 500 "${work}/ro"
    APP_STATUS=3 job 2 --report="${work}/ro/sub"
    if [[ $(id -u) == 0 ]]; then
      echo "note: root writes anywhere; the directory is a file's child instead"
      touch "${work}/file"
      APP_STATUS=3 job 2 --report="${work}/file/sub"
    fi
    [[ ${rc} == 3 ]] || fail "status ${rc}, not the app's 3"
    [[ $(count "cannot write the report") == 1 ]] || fail "not one line: $(cat "${work}/err")"
    [[ $(count "sharing report:") == 0 ]] || fail "a path line for a report not written"
    ;;
  taken)
    CUDA_INJECTION64_PATH=/opt/profiler/inject.so job 2 --report="${work}/rep"
    [[ ${rc} == 0 ]] || fail "status ${rc}"
    [[ $(count "CUDA_INJECTION64_PATH is already set") == 1 ]] || fail "not one warning: $(cat "${work}/err")"
    [[ ! -e ${work}/rep ]] || fail "a report was written"
    [[ $(cat "${work}/seen.0") == /opt/profiler/inject.so ]] || fail "the profiler's path was changed"
    ;;
  bad)
    job 1 --report=
    [[ ${rc} == 2 && $(count "^funnel-run: ") -ge 1 ]] || fail "--report=: status ${rc}: $(cat "${work}/err")"
    touch "${work}/afile"
    job 1 --report="${work}/afile"
    [[ ${rc} == 2 ]] || fail "a file as DIR: status ${rc}"
    grep -q "is not a directory" "${work}/err" || fail "a file as DIR: $(cat "${work}/err")"
    [[ ! -e ${work}/seen.0 ]] || fail "the app ran"
    ;;
  second_identity)
    if [[ $(id -u) != 0 ]] || ! command -v setpriv >/dev/null; then
      echo "skipped: needs root and setpriv (util-linux) to play another user"
      exit 77
    fi
    attacker=4242
    as_attacker() { setpriv --reuid "${attacker}" --regid "${attacker}" --clear-groups -- "$@"; }
    chmod 711 "${work}"
    # The victim's (root's) own files, which no planted link may lead funnel-run to.
    mkdir -m 755 "${work}/victim" "${work}/victim/dir"
    echo "precious $$" >"${work}/victim/precious"
    pub=${work}/pub # a shared cwd like /tmp
    mkdir -m 1777 "${pub}"
    export JOB_CWD=${pub}
    name=funnel-report-rep$$.0
    # refused MESSAGE WHAT [STATUS]: the job said MESSAGE once, kept the app's status (3),
    # reported nothing.
    refused() {
      [[ ${rc} == "${3:-3}" ]] || fail "$2: status ${rc}, not the app's ${3:-3}"
      [[ $(count "$1") == 1 ]] || fail "$2: not one line with '$1': $(cat "${work}/err")"
      [[ $(count "sharing report:") == 0 ]] || fail "$2: a report was written: $(cat "${work}/err")"
      torn_down
    }
    untouched() {
      [[ $(cat "${work}/victim/precious") == "precious $$" ]] ||
        fail "$1: the victim's file changed"
      [[ -z $(ls -A "${work}/victim/dir") ]] ||
        fail "$1: written through a link: $(ls "${work}/victim/dir")"
    }

    # A link at the default name, to a directory of the victim's.
    as_attacker ln -s "${work}/victim/dir" "${pub}/${name}"
    APP_STATUS=3 job 2 --report
    refused "is a symbolic link" "a link at ./${name}"
    untouched "a link at ./${name}"

    # The default name squatted: the attacker's directory, report.json and report.txt links in it.
    as_attacker rm "${pub}/${name}"
    as_attacker mkdir -m 777 "${pub}/${name}"
    as_attacker ln -s "${work}/victim/precious" "${pub}/${name}/report.json"
    as_attacker ln -s "${work}/victim/precious" "${pub}/${name}/report.txt"
    APP_STATUS=3 job 2 --report
    refused "belongs to uid ${attacker}" "a squatted ./${name}"
    untouched "a squatted ./${name}"
    [[ -L ${pub}/${name}/report.json && $(find "${pub}/${name}" -mindepth 1 | wc -l) == 2 ]] ||
      fail "written into the attacker's directory: $(ls -lA "${pub}/${name}")"

    # FUNNEL_REPORT names the attacker's directory, a record of the attacker's in it; and a
    # directory to be made in there.
    as_attacker mkdir -m 755 "${pub}/att"
    as_attacker "${MAKE_RECORDS}" rank "${pub}/att/rank-9.record"
    FUNNEL_REPORT=${pub}/att APP_STATUS=3 job 2
    refused "belongs to uid ${attacker}" "FUNNEL_REPORT in the attacker's directory"
    APP_STATUS=3 job 2 --report="${pub}/att/sub"
    refused "is in '${pub}/att', a directory of uid ${attacker}" "a directory in the attacker's"
    [[ $(ls -A "${pub}/att") == rank-9.record ]] ||
      fail "written into the attacker's directory: $(ls -lA "${pub}/att")"

    # A link of the attacker's on the way to DIR.
    as_attacker ln -s "${work}/victim/dir" "${pub}/lnk"
    APP_STATUS=3 job 2 --report="${pub}/lnk/rep"
    refused "'${pub}/lnk' on its way, a link of uid ${attacker}" "a link on the way"
    untouched "a link on the way"

    # The victim's own directories that every user may write: one from the start, where the
    # attacker left a record, and one the app opens up while it runs (the merge looks again).
    mkdir -m 777 "${pub}/open" "${work}/open"
    as_attacker "${MAKE_RECORDS}" rank "${pub}/open/rank-9.record"
    APP_STATUS=3 job 2 --report="${pub}/open"
    refused "may be written by every user" "a directory every user may write"
    APP_STATUS=3 job 2 --report="${work}/open/rep"
    refused "on its way, which every user may write" "in a directory every user may write"
    [[ ! -e ${pub}/open/report.json && ! -e ${work}/open/rep ]] ||
      fail "a report in an open directory"
    # (Once both ranks' apps run: a rank that starts later sees it and records nothing.)
    both_run="until [[ -e ${work}/seen.0 && -e ${work}/seen.1 ]]; do sleep 0.05; done"
    rm -f "${work}"/seen.*
    APP_THEN="${both_run}; chmod 777 ${pub}/mine" job 2 --report="${pub}/mine"
    refused "may be written by every user" "a directory opened while the app ran" 0
    # The same where rank 1's wrapper is killed, so that the reaper merges, and the attacker
    # plants report.txt (the reaper's block) as a link meanwhile.
    chmod 755 "${pub}/mine"
    rm -f "${work}"/seen.*
    APP_THEN="${both_run}; chmod 777 ${pub}/mine
      setpriv --reuid ${attacker} --regid ${attacker} --clear-groups -- \
        ln -sf ${work}/victim/precious ${pub}/mine/report.txt
      if [[ \${OMPI_COMM_WORLD_RANK} == 1 ]]; then kill -KILL \${PPID}; fi" \
      job 2 --report="${pub}/mine"
    torn_down
    untouched "the reaper's report.txt"
    [[ -L ${pub}/mine/report.txt ]] || fail "the reaper wrote report.txt in an open directory"
    rm -f "${pub}/mine/report.txt"
    rmdir "${pub}/mine" ||
      fail "a report in a directory opened while the app ran: $(ls "${pub}/mine")"

    # The victim's own directory in the shared cwd: the report, with the job's ranks only.
    APP_STATUS=3 job 2 --report="${pub}/mine"
    [[ ${rc} == 3 ]] || fail "own directory: status ${rc}"
    [[ $(ranks_in_json "${pub}/mine/report.json") == 2 ]] ||
      fail "own directory: $(ranks_in_json "${pub}/mine/report.json") $(cat "${work}/err")"
    [[ $(stat -c %u "${pub}/mine") == 0 && $(( 8#$(stat -c %a "${pub}/mine") & 8#002 )) == 0 ]] ||
      fail "own directory: made $(stat -c '%u %a' "${pub}/mine")"
    torn_down
    ;;
  *) echo "report_launch_test.sh: unknown case '${case_name}'" >&2; exit 2 ;;
esac
# Every case: the job's reaper stops its daemon and removes its directory once mpirun is done.
# Waiting for that is also what lets the EXIT trap remove ${work}: a reaper still at work runs
# MPS clients (the fake nvidia-cuda-mps-control) whose command lines do not name ${work}, so
# pkill misses them and their log line recreates nvidia.log under rm -rf.
torn_down
if ((failed)); then exit 1; fi
echo "ok: ${case_name}"
