#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Where a resident step of many ranks sharing one GPU goes (docs/halo.md): heat3d float, 2000
# steps through funnel-run with MPS, 96^3 boxes split along x (faces strided in memory) and
# along z (faces contiguous), on 1, 8, 16 and 32 ranks, then tests/halo/step_probe.cu's
# graph-spin mode for the same counts (the floor of a kernel-signalled graph step).
# Usage: scripts/gpu/step-experiments.sh   (after scripts/gpu/run-all.sh build; summaries and
# logs under $OUT; one line per run: microseconds per step)
set -u
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '4,9p' "$0" | sed 's/^# //'; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
b=${BUILD_DIR:-build-gpu}
out=${OUT:-/tmp}
run() {
  local name=$1 n=$2
  shift 2
  timeout 90 mpirun --bind-to none -np "$n" "$b/bin/funnel-run" --mps on --max-connections 2 -- \
    "$b/bin/funnel-stencil" --backend cuda --quiet --dtype float --steps 2000 \
    --summary "$out/$name.json" "$@" >"$out/$name.log" 2>&1
  python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print('%-10s %8.2f us/step  graphs %s' % (sys.argv[2], j['time_s']/2000*1e6, j['steps_per_graph']))" "$out/$name.json" "$name" || echo "$name FAIL"
}
run one-x 1 --n 768,96,96
run one-z 1 --n 96,96,768
run x8 8 --n 768,96,96 --dims 8,1,1
run z8 8 --n 96,96,768 --dims 1,1,8
run x16 16 --n 768,96,96 --dims 16,1,1
run x32 32 --n 768,96,96 --dims 32,1,1
run z32 32 --n 96,96,768 --dims 1,1,32
STEP_PROBE_MODES="graph-spin" scripts/gpu/step-probe.sh 8 16 32 2>&1 | tail -3
