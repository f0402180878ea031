#!/usr/bin/env bash
# Diagnoses long signal waits on the GPU-ordered halo path (temporary, see docs/gpu-validation):
# the halo unit test of a delayed rank and the app's stopped-rank test, without MPS and under
# funnel-run's MPS, each under a hard time limit; then the small-grid split measurement.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-${root}/build-gpu}
cd "${root}" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1
t0=${SECONDS}
cmake -S . -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNNEL_BUILD_TESTS=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DFUNNEL_BUILD_BENCHMARKS=OFF >/dev/null 2>&1
cmake --build "${build}" -j "$(nproc)" --target funnel-stencil halo_gpu >/dev/null 2>&1 || echo "build FAILED"
echo "== built in $((SECONDS - t0)) s"
filter=--gtest_filter='HaloExchangeStall*'
echo "== halo stall test, no MPS"
timeout 40 mpirun -np 4 "${build}/bin/halo_gpu" "${filter}" 2>&1 | grep -aE "OK|FAILED|stalled" | sort | uniq -c
echo "== halo stall test, MPS"
timeout 40 mpirun -np 4 "${build}/bin/funnel-run" --mps on -- "${build}/bin/halo_gpu" "${filter}" 2>&1 | grep -aE "OK|FAILED|stalled" | sort | uniq -c
sleep 2; pgrep -a nvidia-cuda-mps
app=(python3 tests/apps/resident_steps_test.py --app "${build}/bin/funnel-stencil" --mpiexec mpirun)
# shellcheck disable=SC2054 # commas are values
args=(stall -- 3 --backend cuda --n 64,64,96 --steps 10000000 --dims 1,1,3)
echo "== stopped rank, MPS"
FUNNEL_HALO_TIMEOUT=2 timeout 150 "${app[@]}" --preflags="${build}/bin/funnel-run --mps on --" "${args[@]}" 2>&1 | tail -30
sleep 2; pgrep -a nvidia-cuda-mps
echo "== stopped rank, no MPS"
FUNNEL_HALO_TIMEOUT=2 timeout 150 "${app[@]}" "${args[@]}" 2>&1 | tail -30
pkill -9 -f funnel-stencil; pkill -9 -f halo_gpu
echo "== small grid (768x96x96 float, 500 steps, split along x), through funnel-run"
for r in 1 2 4 8 16 32; do
  conn=(); ((r < 16)) || conn=(--max-connections 2)
  timeout 60 mpirun -np "${r}" "${build}/bin/funnel-run" "${conn[@]}" -- "${build}/bin/funnel-stencil" \
    --backend cuda --quiet --n 768,96,96 --dtype float --steps 500 --dims "${r},1,1" \
    --summary /tmp/s.json >/tmp/s.log 2>&1 && python3 -c "import json; d=json.load(open('/tmp/s.json')); print(${r}, 'ranks', d['time_s'], 'halo share', round(d['halo_time_share'],2))" || { echo "${r} ranks FAIL"; tail -3 /tmp/s.log; }
done
sleep 2; pgrep -a nvidia-cuda-mps || echo "no MPS left"
