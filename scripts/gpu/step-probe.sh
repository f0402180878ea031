#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# What one step costs when N ranks split one grid on one GPU, for each way of ordering steps
# (tests/halo/step_probe.cu), under a hand-started MPS daemon (stopped before the script ends).
# Usage: scripts/gpu/step-probe.sh [RANKS...]   (default 1 2 4 8 16 32 48)
set -euo pipefail
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '4,6p' "$0" | sed 's/^# //'; exit 0; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-${root}/build-gpu}
cd "${root}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# shellcheck source=scripts/gpu/debs.sh
source "${root}/scripts/gpu/debs.sh"
funnel_gpu_configure "${build}" >/dev/null
cmake --build "${build}" -j "$(nproc)" --target step_probe >/dev/null
mps=$(mktemp -d /tmp/funnel-probe-mps.XXXXXX)
mkdir -m 700 "${mps}/pipe" "${mps}/log"
export CUDA_MPS_PIPE_DIRECTORY=${mps}/pipe CUDA_MPS_LOG_DIRECTORY=${mps}/log
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-2}
control=nvidia-cuda-mps; control+=-control
"${control}" -d
trap 'echo quit | "${control}"; sleep 1; rm -rf "${mps}"' EXIT
ranks=("$@")
[[ ${#ranks[@]} -gt 0 ]] || ranks=(1 2 4 8 16 32 48)
for n in "${ranks[@]}"; do
  timeout 120 mpirun -np "${n}" --bind-to none -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY \
    -x CUDA_DEVICE_MAX_CONNECTIONS "${build}/bin/step_probe" "${STEP_PROBE_CELLS:-7077888}" \
    "${STEP_PROBE_STEPS:-800}" ${STEP_PROBE_MODES:+"${STEP_PROBE_MODES}"} || echo "ranks ${n}: failed ($?)"
done
