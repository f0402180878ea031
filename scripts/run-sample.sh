#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The run command of the README: installs the dependencies, builds funnel, and runs the stencil
# sample through funnel-run under mpirun — on the GPU(s) when there is one (ranks share each GPU
# through MPS), on the host backend otherwise.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/run-sample.sh [--ranks N] [--build-dir DIR] [--no-install-deps] [--help] [-- APP-ARGS...]
  --ranks N           MPI ranks (default: 4 per GPU when there is one, else 2)
  --build-dir DIR     build directory (default: build)
  --no-install-deps   do not call scripts/install-deps.sh
  APP-ARGS            passed to funnel-stencil (see funnel-stencil --help), e.g. -- --n 256,256,256
Results: out/summary.json (the run's JSON summary) and the lines printed by rank 0.
USAGE
}

die() { echo "run-sample.sh: $*" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="build"
ranks=""
install_deps=1
app_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ranks) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--ranks needs a positive integer, got '${2:-}'"
      ranks=$2; shift ;;
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a value"; build=$2; shift ;;
    --no-install-deps) install_deps=0 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; app_args=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
cd "${root}"

if [[ ${install_deps} -eq 1 ]]; then scripts/install-deps.sh; fi

cmake -S . -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNNEL_BUILD_TESTS=OFF >/dev/null
cmake --build "${build}" -j "$(nproc)" --target funnel-stencil  # funnel-run is copied at configure time

gpus=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L | grep -c '^GPU ')
fi
if [[ -z ${ranks} ]]; then
  if [[ ${gpus} -gt 0 ]]; then ranks=$((4 * gpus)); else ranks=2; fi
fi
backend=host
if [[ ${gpus} -gt 0 ]] && grep -q 'FUNNEL_HAS_CUDA 1' "${build}/framework/include/funnel/config.hpp"; then
  backend=cuda
fi

mpi_flags=(--oversubscribe)
if [[ $(id -u) -eq 0 ]]; then mpi_flags+=(--allow-run-as-root); fi
mkdir -p out
echo "run-sample.sh: ${ranks} ranks, ${gpus} GPU(s), backend ${backend}"
mpirun "${mpi_flags[@]}" -np "${ranks}" "${build}/bin/funnel-run" -- \
  "${build}/bin/funnel-stencil" --backend "${backend}" --summary out/summary.json "${app_args[@]}"
echo "run-sample.sh: summary written to out/summary.json"
