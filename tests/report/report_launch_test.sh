#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# funnel-run --report end to end, under real mpirun with the fake nvidia tools of the launch
# tests (no GPU): each rank's app writes its record where funnel-run said (FUNNEL_REPORT_RECORD,
# with the record writer funnel's apps use), and the node's last rank merges them.
# Usage: report_launch_test.sh CASE   (env: FUNNEL_RUN, MAKE_RECORDS, MPIEXEC, INJECT_LIBRARY:
#        the library funnel-run must give the apps, unset when none was built)
#   dir          3 ranks, --report=DIR: one block and one path line, report.json with 3 ranks
#                (read back by python3's json module), CUDA_INJECTION64_PATH given to the app,
#                the job directory gone afterwards
#   default      --report alone: ./funnel-report-<job>/report.json
#   env          FUNNEL_REPORT=DIR does the same as --report=DIR
#   unwritable   a report directory that cannot be written: one line, the app's status (3)
#   taken        CUDA_INJECTION64_PATH already set (a profiler): one warning, no report
#   bad          --report= (empty) and a file as DIR: one line each, exit 2, the app not run
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
  (cd "${work}/cwd" && timeout 120 "${MPIEXEC}" -np "${n}" "${FUNNEL_RUN}" --gpus 0 "$@" -- \
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
    torn_down
    ;;
  default)
    job 2 --report
    [[ -f ${work}/cwd/funnel-report-rep$$.0/report.json ]] ||
      fail "no ./funnel-report-rep$$.0/report.json: $(ls "${work}/cwd") $(cat "${work}/err")"
    torn_down
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
    torn_down
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
  *) echo "report_launch_test.sh: unknown case '${case_name}'" >&2; exit 2 ;;
esac
if ((failed)); then exit 1; fi
echo "ok: ${case_name}"
