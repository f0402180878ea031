#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # stage_* functions are called indirectly
# The sharing report (issue 41, docs/report.md) on a machine with a GPU: the CUPTI injection
# library and funnel-report on jobs whose answer is known. Builds nothing. Stages:
#   share     funnel-bench's synthetic share workload (2 ms kernels of 4 blocks), 8 ranks on
#             GPU 0 through funnel-run, MPS on and off: about 8 ranks' kernels at once with
#             MPS; without MPS 1 at once and about 8 in flight (docs/report.md); the verdicts
#   stencil   funnel-stencil heat3d 512^3 float, 8000 steps, at 1, 8 and 48 ranks (MPS as
#             funnel-run chooses): every rank recorded, none ended early
#   thirdparty  a third-party MPI + CUDA program given by --third-party (NVIDIA's simpleMPI),
#             unchanged, at 16 ranks: it passes and every rank is in the report
#   overhead  with and without the injection library, twice each, alternating: the ratio of
#             the app's timed steps, goal <= 1.02: heat3d 512^3 float on 8 ranks of GPU 0 and
#             heat3d 768x96x96 float on 16 ranks (short kernels, many of them); shown beside
#             it, the same with each CUDA graph launch one span (FUNNEL_REPORT_GRAPHS=whole);
#             a run more than 2 % slower must have the report's "tracing:" line (its own cost)
#   launcher  funnel-run --report=DIR itself, 8 ranks of funnel-stencil: one block on stderr,
#             report.json with 8 ranks
#   Every job of share and stencil also samples nvidia-smi's utilization.gpu every 100 ms; the
#   busy share it gives over the report's window (integrated up to a second past it, as its
#   figure trails the GPU) must be within 5 points of the report's kernel busy % (a job of
#   fewer than 20 samples is shown only: nvidia-smi averages over up to a second).
# The other stages set what --report does through a per-rank wrapper after funnel-run
# (CUDA_INJECTION64_PATH and FUNNEL_REPORT_RECORD for the app only), so that they can also merge
# with a forced --mps and compare runs without the library.
# Usage: scripts/gpu/report-check.sh --build-dir DIR [--out DIR] [--stages LIST]
#                                     [--funnel-run PATH] [--third-party PROGRAM] [--help]
#   DIR holds bin/{funnel-bench,funnel-stencil,funnel-run,funnel-report} and
#   lib/libfunnel-report-inject.so (a CUDA build). Writes summary.txt, each job's report
#   (report.json, report.png, the stderr block) and logs.tar.gz to --out (default $OUT, else
#   ./gpu-out/report-check); the table is printed last. About 2 minutes on an H200 (measured
#   there: docs/report.md).
set -euo pipefail

usage() { sed -n '5,34p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "report-check.sh: $*" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=""
out=${OUT:-${root}/gpu-out/report-check}
stages=share,stencil,thirdparty,overhead,launcher
launcher=""
third_party=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a value"; build=$2; shift ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; out=$2; shift ;;
    --stages) [[ $# -ge 2 ]] || die "--stages needs a value"; stages=$2; shift ;;
    --funnel-run) [[ $# -ge 2 ]] || die "--funnel-run needs a value"; launcher=$2; shift ;;
    --third-party) [[ $# -ge 2 ]] || die "--third-party needs a value"; third_party=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ -n ${build} ]] || die "--build-dir is required (see --help)"
build=$(cd "${build}" && pwd)
bin=${build}/bin
inject=${build}/lib/libfunnel-report-inject.so
launcher=${launcher:-${bin}/funnel-run}
for f in "${bin}/funnel-bench" "${bin}/funnel-stencil" "${bin}/funnel-report" "${launcher}"; do
  [[ -x ${f} ]] || die "${f} is missing: build funnel-bench funnel-stencil funnel-report first"
done
[[ -f ${inject} ]] || die "${inject} is missing: a CUDA build with CUPTI builds it"
mkdir -p "${out}"
out=$(cd "${out}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/funnel-report-check.XXXXXX")
smi_pid=""
cleanup() {
  if [[ -n ${smi_pid} ]]; then kill "${smi_pid}" 2>/dev/null || true; fi
  rm -rf "${work}"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none OMP_NUM_THREADS=2

# What funnel-run --report will do per rank: the app alone gets the injection library.
wrapper=${work}/with-report
cat >"${wrapper}" <<EOF
#!/usr/bin/env bash
set -euo pipefail
records=\$1
shift
export CUDA_INJECTION64_PATH='${inject}' FUNNEL_REPORT_RECORD="\${records}/rank-%r.record"
exec "\$@"
EOF
chmod +x "${wrapper}"

table=()
record() { table+=("$(printf '%-9s %-46s %-5s %s' "$1" "$2" "$3" "$4")"); }
mps_left() { pgrep -c -f 'nvidia-cuda-mps-(control|server)' || true; }

# figure TAG EXPRESSION: a python expression over report.json's `r` (and g = r["gpus"][0]).
figure() {
  python3 - "${out}/$1/report.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["gpus"][0] if r["gpus"] else {}
v = eval(sys.argv[2])
print(f"{v:.3f}" if isinstance(v, float) else v)
EOF
}

# smi_busy_share TAG: nvidia-smi's utilization.gpu as a busy share of the report's window. Its
# value at time t is the busy share of the sample period before t (up to a second), so its curve
# trails the GPU by up to that period: a mean over the window's samples misses the tail of the
# job's work. Its busy time is therefore integrated over the window and the second after it (the
# GPU is idle once the job has ended) and divided by the window. Prints the percentage and the
# samples used.
smi_busy_share() {
  python3 - "${out}/$1/report.json" "${out}/$1.smi.csv" <<'EOF'
import csv, datetime, json, sys
r = json.load(open(sys.argv[1]))
start = r["job"]["start_realtime_s"]
wall = r["job"]["wall_s"]
samples = []
for row in csv.reader(open(sys.argv[2])):
    try:
        t = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((t, float(row[1])))
    except (ValueError, IndexError):
        continue
samples.sort()
busy_s, used = 0.0, 0
for (before, _), (t, u) in zip(samples, samples[1:]):
    if start <= t <= start + wall + 1.0:
        busy_s += u / 100 * min(t - before, 0.2)  # a stalled sampler's gap counts 0.2 s at most
        used += 1
print(f"{100 * busy_s / wall:.1f} {used}" if used and wall > 0 else "nan 0")
EOF
}

# job TAG RANKS MPS -- APP ARGS...: one job on GPU 0 through funnel-run, recorded, sampled by
# nvidia-smi, then merged by funnel-report into ${out}/TAG/.
job() {
  local tag=$1 ranks=$2 mps=$3 rc=0
  shift 4
  local records=${work}/records-${tag}
  mkdir -p "${records}"
  nvidia-smi --id=0 --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits \
    -lms 100 >"${out}/${tag}.smi.csv" 2>/dev/null &
  smi_pid=$!
  (cd "${work}" && timeout 300 mpirun -np "${ranks}" "${launcher}" --gpus 0 --mps "${mps}" -- \
    "${wrapper}" "${records}" "$@") >"${out}/${tag}.log" 2>&1 || rc=$?
  kill "${smi_pid}" 2>/dev/null || true
  wait "${smi_pid}" 2>/dev/null || true
  smi_pid=""
  local -a mps_arg=()
  [[ ${mps} == auto ]] || mps_arg=(--mps "${mps}")
  "${bin}/funnel-report" "${records}" --out "${out}/${tag}" "${mps_arg[@]}" \
    --expect-ranks "${ranks}" --option "mps=${mps}" --option "ranks=${ranks}" \
    2>"${out}/${tag}.report.txt" || true
  cat "${out}/${tag}.report.txt"
  return "${rc}"
}

# check_smi TAG: the report's kernel busy % against nvidia-smi's, within 5 points.
check_smi() {
  local tag=$1 report smi samples verdict
  report=$(figure "${tag}" "100 * g['kernel_busy_fraction']")
  read -r smi samples < <(smi_busy_share "${tag}")
  verdict=$(python3 -c "print('info' if ${samples} < 20 else 'ok' if abs(${report} - ${smi}) <= 5 else 'FAIL')" \
    2>/dev/null || echo FAIL)
  record smi "${tag}: report ${report} % vs nvidia-smi" "${verdict}" "${smi} % (${samples} samples)"
}

stage_share() {
  local iterations tag mps at_once in_flight rule want
  mpirun -np 1 "${bin}/funnel-bench" share-worker --backend cuda --blocks 4 --iterations 0 \
    --kernel-ms 2 --result "${work}/calibrate.json" >"${out}/share-calibrate.log" 2>&1
  iterations=$(python3 -c "import json; print(int(json.load(open('${work}/calibrate.json'))['iterations']))")
  for mps in on off; do
    tag=share-mps-${mps}
    if ! job "${tag}" 8 "${mps}" -- "${bin}/funnel-bench" share-worker --backend cuda --blocks 4 \
      --iterations "${iterations}" --launches 1000 --result "${work}/${tag}.json"; then
      record share "${tag}: the job" FAIL "see ${tag}.log"
      continue
    fi
    at_once=$(figure "${tag}" "g['kernel_ranks_at_once']")
    in_flight=$(figure "${tag}" "g['kernel_ranks_in_flight']")
    if [[ ${mps} == on ]]; then
      record share "MPS on: ~8 ranks' kernels at once" \
        "$(python3 -c "print('ok' if ${at_once} >= 6 else 'FAIL')")" \
        "${at_once} at once, busy $(figure "${tag}" "round(100 * g['busy_fraction'])") %"
    else
      # One context runs at a time; the overlap of spans says how many ranks waited for it.
      record share "MPS off: 1 at once, ~8 in flight" \
        "$(python3 -c "print('ok' if ${at_once} <= 1.0 and ${in_flight} >= 6 else 'FAIL')")" \
        "${at_once} at once, ${in_flight} in flight, busy $(figure "${tag}" "round(100 * g['busy_fraction'])") %"
    fi
    rule=$(figure "${tag}" "g['verdict']['rule']")
    want=time_sliced_ # _idle or _busy
    [[ ${mps} == on ]] && want=mps_concurrent
    record share "${tag}: verdict rule ${want}*" "$([[ ${rule} == "${want}"* ]] && echo ok || echo FAIL)" \
      "${rule}"
    record share "${tag}: verdict" info "$(figure "${tag}" "g['verdict']['text']" | cut -c1-70)"
    check_smi "${tag}"
  done
}

stage_stencil() {
  local ranks tag
  for ranks in 1 8 48; do
    tag=stencil-${ranks}
    if ! job "${tag}" "${ranks}" auto -- "${bin}/funnel-stencil" --problem heat3d \
      --n "512,512,512" --steps 8000 --dtype float; then
      record stencil "${tag}: the job" FAIL "see ${tag}.log"
      continue
    fi
    record stencil "${ranks} rank(s): records, missing, ended early" \
      "$(python3 -c "print('ok' if $(figure "${tag}" "len(r['ranks']) == ${ranks} and not r['missing'] and not any(x['ended_early'] for x in r['ranks'])") else 'FAIL')")" \
      "busy $(figure "${tag}" "round(100 * g['busy_fraction'])") %, $(figure "${tag}" "g['kernel_ranks_at_once']") at once"
    record stencil "${tag}: verdict" info "$(figure "${tag}" "g['verdict']['text']" | cut -c1-70)"
    check_smi "${tag}"
  done
}

# overhead_case TAG RANKS LABEL -- APP...: APP on RANKS ranks of GPU 0 with and without the injection
# library, twice each, alternating; the ratio of the best timed steps (the app's --summary).
overhead_case() {
  local tag=$1 ranks=$2 label=$3 round kind with without whole
  shift 4
  for round in 1 2; do
    for kind in plain report whole; do
      local -a pre=()
      if [[ ${kind} == report ]]; then
        mkdir -p "${work}/records-${tag}-${round}"
        pre=("${wrapper}" "${work}/records-${tag}-${round}")
      elif [[ ${kind} == whole ]]; then  # each launch of the app's CUDA graphs one span
        mkdir -p "${work}/records-${tag}-whole-${round}"
        pre=(env FUNNEL_REPORT_GRAPHS=whole "${wrapper}" "${work}/records-${tag}-whole-${round}")
      fi
      (cd "${work}" && timeout 300 mpirun -np "${ranks}" "${launcher}" --gpus 0 -- "${pre[@]}" \
        "$@" --summary "${out}/${tag}-${kind}-${round}.json") >"${out}/${tag}-${kind}-${round}.log" 2>&1 ||
        record overhead "${tag}: ${kind} run ${round}" FAIL "see ${tag}-${kind}-${round}.log"
    done
  done
  if [[ -d ${work}/records-${tag}-1 ]]; then
    "${bin}/funnel-report" "${work}/records-${tag}-1" --out "${out}/${tag}" \
      --expect-ranks "${ranks}" 2>"${out}/${tag}.report.txt" || true
  fi
  read -r with without whole < <(python3 - "${out}" "${tag}" <<'EOF2'
import json, sys
def best(kind):
    times = []
    for r in (1, 2):
        try:
            times.append(json.load(open(f"{sys.argv[1]}/{sys.argv[2]}-{kind}-{r}.json"))["time_s"])
        except (OSError, ValueError, KeyError):
            pass
    return min(times) if times else float("nan")
print(best("report"), best("plain"), best("whole"))
EOF2
  )
  record overhead "${label}, ${ranks} ranks: with / without" \
    "$(python3 -c "print('ok' if ${with} / ${without} <= 1.02 else 'FAIL')" 2>/dev/null || echo FAIL)" \
    "$(python3 -c "print(f'{${with} / ${without}:.4f} ({${with}:.3f} s / {${without}:.3f} s)')" 2>/dev/null || echo "n/a")"
  record overhead "${label}: graphs whole / without" info \
    "$(python3 -c "print(f'{${whole} / ${without}:.4f} ({${whole}:.3f} s)')" 2>/dev/null || echo "n/a")"
  # The report states its own cost when it is large: a run more than 2 % slower must have the
  # block's "tracing:" line, one under 0.5 % must not (in between either is right).
  local said=no
  grep -q '  tracing: ' "${out}/${tag}.report.txt" 2>/dev/null && said=yes
  record overhead "${label}: the report states its cost" "$(python3 -c "
r = ${with} / ${without}
print('ok' if (r <= 1.02 or '${said}' == 'yes') and (r >= 1.005 or '${said}' == 'no') else 'FAIL')
" 2>/dev/null || echo FAIL)" "tracing line: ${said}; $(grep -o 'about [0-9.]* [mu]*s ([0-9]* %)' \
    "${out}/${tag}.report.txt" 2>/dev/null | head -1)"
}

stage_overhead() {
  overhead_case overhead 8 "heat3d 512^3 float" -- "${bin}/funnel-stencil" --problem heat3d --n "512,512,512" \
    --dtype float --steps 6000
  overhead_case overhead-small 16 "heat3d 768x96x96 float" -- "${bin}/funnel-stencil" --problem heat3d --n "768,96,96" \
    --dtype float --steps 20000
}

# A third-party MPI + CUDA program, unchanged (NVIDIA's simpleMPI: scatter, one kernel a rank,
# reduce), at 16 ranks of GPU 0: it passes and the report holds all 16 ranks.
stage_thirdparty() {
  if [[ -z ${third_party} ]]; then
    record thirdparty "--third-party not given" info "skipped"
    return 0
  fi
  local tag=thirdparty-16 rc=0
  job "${tag}" 16 auto -- "${third_party}" || rc=$?
  record thirdparty "$(basename "${third_party}"), 16 ranks: passes, 16 ranks reported" \
    "$(python3 -c "print('ok' if ${rc} == 0 and $(figure "${tag}" "len(r['ranks']) == 16 and not r['missing']")  else 'FAIL')" 2>/dev/null || echo FAIL)" \
    "status ${rc}, $(figure "${tag}" "len(r['ranks'])" 2>/dev/null || echo none) ranks, busy $(figure "${tag}" "round(100 * g['busy_fraction'], 1)" 2>/dev/null) %"
  record thirdparty "${tag}: verdict" info "$(figure "${tag}" "g['verdict']['text']" 2>/dev/null | cut -c1-70)"
}

# funnel-run --report itself (no wrapper): 8 ranks of funnel-stencil on GPU 0 under MPS, the
# block once on the job's stderr, report.json with 8 ranks, nothing left of the job.
stage_launcher() {
  local rc=0 dir=${out}/launcher
  (cd "${work}" && timeout 300 mpirun -np 8 "${launcher}" --gpus 0 --report="${dir}" -- \
    "${bin}/funnel-stencil" --problem heat3d --n "512,512,512" --dtype float --steps 3000 \
    --quiet) >"${out}/launcher.log" 2>&1 || rc=$?
  local blocks ranks
  blocks=$(grep -c 'funnel-report: node ' "${out}/launcher.log" || true)
  ranks=$(python3 -c 'import json, sys
print(sum(len(g["ranks"]) for g in json.load(open(sys.argv[1]))["gpus"]))' "${dir}/report.json" \
    2>/dev/null || echo none)
  record launcher "funnel-run --report, 8 ranks: one block" \
    "$([[ ${rc} == 0 && ${blocks} == 1 && ${ranks} == 8 ]] && echo ok || echo FAIL)" \
    "status ${rc}, ${blocks} block(s), ${ranks} ranks in report.json; $(grep -m1 'verdict' \
      "${out}/launcher.log" | sed 's/.*verdict: //')"
}

IFS=, read -ra wanted <<<"${stages}"
for stage in "${wanted[@]}"; do
  declare -F "stage_${stage}" >/dev/null || die "unknown stage '${stage}' (share, stencil, thirdparty, overhead, launcher)"
done
{
  echo "report-check.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader -i 0 2>/dev/null || true
  git -C "${root}" rev-parse --short HEAD 2>/dev/null || true
} >"${out}/machine.txt"
for stage in "${wanted[@]}"; do
  t0=${SECONDS}
  "stage_${stage}" || record "${stage}" "the stage" FAIL "status $?"
  echo "report-check.sh: stage ${stage} took $((SECONDS - t0)) s" >&2
done
sleep 2  # funnel-run's reaper stops the daemons after the last rank is gone
record mps "MPS daemons left after the jobs" "$([[ $(mps_left) -eq 0 ]] && echo ok || echo FAIL)" ""
{
  cat "${out}/machine.txt"
  printf '%s\n' "${table[@]}"
} >"${out}/summary.txt"
(cd "${out}" && tar -czf logs.tar.gz --exclude=logs.tar.gz -- *.log *.txt *.csv ./*/report.* \
  2>/dev/null) || true
cat "${out}/summary.txt"
if printf '%s\n' "${table[@]}" | grep -q ' FAIL '; then exit 1; fi
