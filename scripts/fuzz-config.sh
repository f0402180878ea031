#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Fresh random seeds for funnel-stencil's --config mutations (tests/apps/hard_cases.py): each
# mutated file must end in one clean line or a run that did what the file says. Run on purpose,
# not in CI; a seed that fails goes into tests/apps/CMakeLists.txt as a fixed regression case.
# Usage: scripts/fuzz-config.sh [--build-dir DIR] [--seeds N] [--count M] [--help]
set -euo pipefail

build="build-test"
seeds=5
count=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --seeds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "fuzz-config.sh: --seeds needs a positive integer, got '${2:-}'" >&2; exit 2; }
      seeds=$2; shift ;;
    --count) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "fuzz-config.sh: --count needs a positive integer, got '${2:-}'" >&2; exit 2; }
      count=$2; shift ;;
    -h | --help) sed -n '4,7p' "$0" | sed 's/^# //'; exit 0 ;;
    *) echo "fuzz-config.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ ${build} = /* ]] || build=${root}/${build}
app=${build}/bin/funnel-stencil
[[ -x ${app} ]] || { echo "fuzz-config.sh: ${app} not built (scripts/test.sh builds it)" >&2; exit 2; }
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_rmaps_base_oversubscribe=1
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
failed=0
for _ in $(seq "${seeds}"); do
  python3 "${root}/tests/apps/hard_cases.py" --app "${app}" --mpiexec "$(command -v mpirun)" \
    --docs "${root}/docs/stencil.md" mutations random "${count}" || failed=$((failed + 1))
done
echo "fuzz-config.sh: ${seeds} fresh seed(s), ${failed} found a defect (their seeds are printed above)"
[[ ${failed} -eq 0 ]]
