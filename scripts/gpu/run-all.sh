#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2317 # stage_* functions are called indirectly
# Everything funnel checks and measures on a GPU machine, in stages that each fit one device call:
#   build     configure + build build-gpu (CUDA arch 90 unless CUDA_ARCH is set)
#   test      ctest -L gpu (and the app's GPU tests)
#   sanitize  every gpu test under compute-sanitizer memcheck, racecheck, synccheck
#   launch    scripts/gpu/launch-check.sh: funnel-run + real MPS (8 ranks on one GPU, teardown)
#   sample    scripts/run-sample.sh: the README's run command (funnel-stencil via funnel-run)
#   snapshots HDF5 snapshot cost: heat3d 256^3 double, 3000 steps, a snapshot every 700 steps,
#             inline (--output-overlap off) and behind the steps (on) vs no output; 1 and 4
#             ranks, bound to a core or not
#   bench     funnel-bench (all benchmarks), JSON + plots under $OUT
# Usage: scripts/gpu/run-all.sh STAGE[,STAGE...]   (default: build,test)
# Logs go to $OUT (or ./gpu-out); a short table is printed last.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-${root}/gpu-out}
build=${BUILD_DIR:-${root}/build-gpu}
stages=${1:-build,test}
mkdir -p "${out}"
cd "${root}"
# CLI11 and nlohmann-json come as .debs (scripts/gpu/fetch-debs.sh, run where apt works; the
# call carries ".deps"): funnel_gpu_configure unpacks them into a prefix cmake finds.
# shellcheck source=scripts/gpu/debs.sh
source "${root}/scripts/gpu/debs.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCL_NVLS_ENABLE=0
table=()

record() { table+=("$(printf '%-10s %-8s %s' "$1" "$2" "$3")"); }

stage_build() {
  {
    nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode --format=csv
    nvcc --version | tail -1; cmake --version | head -1; mpirun --version | head -1; date -u
    df -h /dev/shm; nproc; free -g | head -2
  } >"${out}/machine.txt" 2>&1 || true
  local t0=${SECONDS}
  if funnel_gpu_configure "${build}" >"${out}/configure.log" 2>&1 &&
    cmake --build "${build}" -j "$(nproc)" -- -k 0 >"${out}/build.log" 2>&1; then
    record build ok "$((SECONDS - t0)) s"
  else
    grep -E -A3 "FAILED|error" "${out}/build.log" | head -60 || tail -40 "${out}/configure.log"
    record build FAIL "see build.log (targets that built are still tested)"
  fi
}

stage_test() {
  local t0=${SECONDS} rc=0
  ctest --test-dir "${build}" -L gpu --output-on-failure --timeout 300 >"${out}/ctest-gpu.log" 2>&1 || rc=$?
  grep -E "tests passed|Passed|Failed|Skipped|\*\*\*" "${out}/ctest-gpu.log" | tail -40
  record test "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" \
    "$(grep -E 'tests passed' "${out}/ctest-gpu.log" | tail -1) ($((SECONDS - t0)) s)"
}

stage_sanitize() {
  local rc=0
  mkdir -p "${out}/sanitizer"
  python3 scripts/gpu/sanitize-gpu-tests.py "${build}" --log "${out}/sanitizer" >"${out}/sanitizer.log" 2>&1 || rc=$?
  cat "${out}/sanitizer.log"
  tar czf "${out}/sanitizer-logs.tgz" -C "${out}" sanitizer && rm -rf "${out}/sanitizer"
  record sanitize "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "$(tail -1 "${out}/sanitizer.log")"
}

stage_launch() {
  local rc=0
  if [[ -x scripts/gpu/launch-check.sh ]]; then
    scripts/gpu/launch-check.sh "${build}" >"${out}/launch-check.log" 2>&1 || rc=$?
    tail -30 "${out}/launch-check.log"
    record launch "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "see launch-check.log"
  else
    record launch missing "scripts/gpu/launch-check.sh not found"
  fi
  # Never leave an MPS daemon behind, whatever the check did.
  pgrep -a nvidia-cuda-mps || true
}

stage_sample() {
  # The README's run command, as a user runs it on a GPU machine (4 ranks per GPU through MPS).
  local rc=0
  scripts/run-sample.sh --no-install-deps --build-dir "${build}-sample" -- --n 256,256,256 \
    >"${out}/sample.log" 2>&1 || rc=$?
  tail -12 "${out}/sample.log"
  cp out/summary.json "${out}/sample-summary.json" 2>/dev/null || true
  # funnel-run's reaper stops the job's MPS daemon once the last rank is gone: give it 15 s.
  local waited=0
  while pgrep -f 'nvidia-cuda-mps-(control|server)' >/dev/null && [[ ${waited} -lt 15 ]]; do
    sleep 1
    waited=$((waited + 1))
  done
  if pgrep -a -f 'nvidia-cuda-mps-(control|server)'; then
    record sample FAIL "MPS still running ${waited} s after the job"
  else
    record sample "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "MPS gone ${waited} s after the job; see sample.log"
  fi
}

stage_snapshots() {
  # heat3d 256^3 double, 3000 steps, a snapshot (134 MB) every 700 steps: without output, inline
  # (--output-overlap off) and behind the steps (on); 1 and 4 ranks, ranks bound to one core
  # (OpenMPI's default for 2 or fewer ranks) or not bound; the best of 2 runs.
  local app=${build}/bin/funnel-stencil rc=0 tmp
  tmp=$(mktemp -d)
  for bind in core none; do
    for ranks in 1 4; do
      for rep in 1 2; do
        for overlap in none off on; do
          local extra=()
          if [[ ${overlap} != none ]]; then
            extra=(--output-every 700 --output-dir "${tmp}/out" --output-overlap "${overlap}")
          fi
          mpirun -np "${ranks}" --bind-to "${bind}" "${app}" --backend cuda --problem heat3d \
            --n 256,256,256 --dtype double --steps 3000 --quiet \
            --summary "${out}/snapshots-${bind}-${ranks}-${overlap}-${rep}.json" "${extra[@]}" \
            >>"${out}/snapshots.log" 2>&1 || rc=1
          rm -rf "${tmp:?}/out"
        done
      done
    done
  done
  rm -rf "${tmp}"
  python3 - "${out}" <<'PY' | tee -a "${out}/snapshots.log"
import glob, json, os, sys
out = sys.argv[1]
runs = {}
for path in glob.glob(os.path.join(out, "snapshots-*.json")):
    bind, ranks, overlap, _ = os.path.basename(path)[len("snapshots-"):-len(".json")].split("-")
    with open(path) as f:
        s = json.load(f)
    best = runs.get((bind, ranks, overlap))
    if best is None or s["time_s"] < best["time_s"]:
        runs[(bind, ranks, overlap)] = s
print("bind  ranks  output   loop s  vs none  snapshots  in loop s  behind steps s")
for bind in ("core", "none"):
    for ranks in ("1", "4"):
        none = runs.get((bind, ranks, "none"))
        for overlap in ("none", "off", "on"):
            s = runs.get((bind, ranks, overlap))
            if not s or not none:
                continue
            print(f"{bind:5s} {ranks:>5}  {overlap:6s} {s['time_s']:8.3f} {s['time_s'] / none['time_s']:8.2f} "
                  f"{s['outputs']:10d} {s['output_time_s']:10.3f} {s['output_background_time_s']:15.3f}")
PY
  record snapshots "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "see snapshots.log"
}

stage_bench() {
  local rc=0
  if [[ -x "${build}/bin/funnel-bench" ]]; then
    "${build}/bin/funnel-bench" all --json "${out}/bench.json" --plot "${out}" \
      >"${out}/bench.log" 2>&1 || rc=$?
    tail -40 "${out}/bench.log"
    # Fewer files to copy back from the node: pack the per-run logs into one.
    if [[ -d "${out}/bench-runs" ]]; then
      tar czf "${out}/bench-runs.tgz" -C "${out}" bench-runs && rm -rf "${out}/bench-runs"
    fi
    record bench "$([[ ${rc} -eq 0 ]] && echo ok || echo FAIL)" "see bench.log / bench.json"
  else
    record bench missing "funnel-bench not built"
  fi
}

IFS=, read -ra wanted <<<"${stages}"
status=0
for s in "${wanted[@]}"; do
  case "${s}" in
    build | test | sanitize | launch | sample | snapshots | bench) "stage_${s}" || status=1 ;;
    *) echo "run-all.sh: unknown stage '${s}' (allowed: build, test, sanitize, launch, sample, snapshots, bench)" >&2; exit 2 ;;
  esac
done
{
  printf '\n%-10s %-8s %s\n' stage result detail
  printf '%s\n' "${table[@]}"
} | tee "${out}/summary.txt"
# Everything goes into one archive (fewer files to copy back from the node), and the few files
# read most often stay beside it.
tar czf /tmp/gpu-logs.tgz -C "${out}" . && mv /tmp/gpu-logs.tgz "${out}/"
(cd "${out}" &&
  find . -maxdepth 1 -type f ! -name gpu-logs.tgz ! -name summary.txt ! -name bench.json \
    ! -name ctest-gpu.log ! -name sanitizer.log ! -name launch-check.log ! -name sample.log \
    ! -name snapshots.log \
    -delete && rm -rf ./*/)
exit "${status}"
