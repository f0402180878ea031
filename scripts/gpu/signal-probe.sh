#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Which memory two processes on one GPU can signal each other through with stream memory
# operations, and the GPU-only round trip: tests/halo/signal_probe.cu on 2 ranks, without MPS
# and under a hand-started MPS daemon (stopped before the script ends). Builds what it needs
# in build-gpu. Usage: scripts/gpu/signal-probe.sh   (output: one line per memory kind)
set -euo pipefail
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '4,7p' "$0" | sed 's/^# //'; exit 0; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-${root}/build-gpu}
cd "${root}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck source=scripts/gpu/debs.sh
source "${root}/scripts/gpu/debs.sh"
funnel_gpu_configure "${build}" >/dev/null
cmake --build "${build}" -j "$(nproc)" --target signal_probe >/dev/null
echo "== without MPS"
mpirun -np 2 "${build}/bin/signal_probe"
mps=$(mktemp -d /tmp/funnel-probe-mps.XXXXXX)
mkdir -m 700 "${mps}/pipe" "${mps}/log"
export CUDA_MPS_PIPE_DIRECTORY=${mps}/pipe CUDA_MPS_LOG_DIRECTORY=${mps}/log
nvidia-cuda-mps-control -d
trap 'echo quit | nvidia-cuda-mps-control; sleep 1; rm -rf "${mps}"' EXIT
echo "== under MPS"
mpirun -np 2 -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY "${build}/bin/signal_probe"
echo get_server_list | nvidia-cuda-mps-control
