#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The test command of the README (and of CI): installs the dependencies, builds funnel with its
# tests, runs them (GPU tests report "skipped" without a GPU), checks the serial-HDF5 variant,
# installs funnel, builds the downstream examples against it and runs them (examples/advect and,
# when funnel has Kokkos, examples/kokkos under mpirun through funnel-run), and checks the
# formatting.
# The last line is "tests: N passed, N failed, N skipped".
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/test.sh [--build-dir DIR] [--jobs N] [--no-install-deps] [--help]
  --build-dir DIR     build directory (default: build-test)
  --jobs N            parallel build/test jobs (default: number of cores)
  --no-install-deps   do not call scripts/install-deps.sh
USAGE
}

die() { echo "test.sh: $*" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="build-test"
jobs=$(nproc)
install_deps=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a value"; build=$2; shift ;;
    --jobs) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "--jobs needs a positive integer, got '${2:-}'"
      jobs=$2; shift ;;
    --no-install-deps) install_deps=0 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
cd "${root}"
[[ ${build} = /* ]] || build=${root}/${build}

step() { printf '\n=== %s\n' "$*"; }

if [[ ${install_deps} -eq 1 ]]; then
  step "dependencies"
  scripts/install-deps.sh --tests
fi

step "formatting (clang-format)"
mapfile -t sources < <(git ls-files '*.hpp' '*.cpp' '*.cu' '*.cuh' '*.h')
if command -v clang-format >/dev/null; then
  clang-format --dry-run -Werror "${sources[@]}"
  echo "clang-format: ${#sources[@]} files clean"
fi

step "license (SPDX lines, LICENSE)"
scripts/check-license.sh

step "configure + build (${build})"
cmake -S . -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNNEL_BUILD_TESTS=ON \
  -DCMAKE_INSTALL_PREFIX="${build}/install"
cmake --build "${build}" -j "${jobs}"

step "serial-HDF5 variant (one file per rank + virtual dataset)"
serial=${build}-serial-hdf5
# The configure log stays inside the build directory: nothing of a test run is left in the tree.
mkdir -p "${serial}"
serial_log=${serial}/configure.log
cmake -S . -B "${serial}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNNEL_BUILD_TESTS=ON \
  -DFUNNEL_ENABLE_CUDA=OFF -DFUNNEL_ENABLE_KOKKOS=OFF -DHDF5_PREFER_PARALLEL=OFF \
  -DFUNNEL_BUILD_BENCHMARKS=OFF >"${serial_log}" 2>&1 || { cat "${serial_log}"; exit 1; }
grep -q "parallel=0" "${serial_log}" || { echo "serial HDF5 was not selected"; cat "${serial_log}"; exit 1; }
serial_targets=$(cmake --build "${serial}" --target help | sed -n 's/^\(io_[A-Za-z0-9_]*\):.*/\1/p' | sort -u)
if [[ -n ${serial_targets} ]]; then
  # shellcheck disable=SC2086 # one target name per word
  cmake --build "${serial}" -j "${jobs}" --target funnel-stencil ${serial_targets}
fi

step "install + downstream example (find_package(Funnel))"
cmake --install "${build}" >/dev/null
# The consumer's own CUDA code (when funnel has CUDA) for Ampere only, not funnel's default set:
# the installed device headers must serve any architecture.
cuda_compiler=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "${build}/CMakeCache.txt")
cmake -S examples/consumer -B "${build}/consumer" -G Ninja -DCMAKE_PREFIX_PATH="${build}/install" \
  -DCMAKE_CUDA_ARCHITECTURES=80 ${cuda_compiler:+-DCMAKE_CUDA_COMPILER="${cuda_compiler}"}
cmake --build "${build}/consumer"
"${build}/consumer/funnel-consumer"

# run_example EXE RANKS ARGS...: an example built against the install, on the host backend under
# mpirun and the installed funnel-run, as a user's job would run it.
run_example() {
  local exe=$1 ranks=$2
  shift 2
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe \
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=1 \
    mpirun -np "${ranks}" "${build}/install/bin/funnel-run" -- "${exe}" --backend host "$@"
}

# check_example NAME PROGRAM: builds examples/NAME against the install; each run checks that the
# mass is conserved, the 3-rank run also that its field's norm is the one rank's. The checks can
# fail: a wrong expected norm must end the job with status 1, bad input with 2.
check_example() {
  local name=$1 exe=${build}/$1/$2 one norm status=0
  cmake -S "examples/${name}" -B "${build}/${name}" -G Ninja -DCMAKE_PREFIX_PATH="${build}/install"
  cmake --build "${build}/${name}"
  one=$(run_example "${exe}" 1)
  echo "${one}"
  norm=$(sed -n 's/.*L2 norm \([^ ]*\)$/\1/p' <<<"${one}")
  [[ -n ${norm} ]] || { echo "test.sh: $2 printed no L2 norm"; exit 1; }
  run_example "${exe}" 3 --expect-norm "${norm}"
  run_example "${exe}" 3 --expect-norm 1 >/dev/null 2>&1 || status=$?
  [[ ${status} -eq 1 ]] || { echo "test.sh: $2 accepted a wrong norm (status ${status})"; exit 1; }
  status=0
  "${exe}" --cells 0,8,8 >/dev/null 2>&1 || status=$?
  [[ ${status} -eq 2 ]] || { echo "test.sh: $2 --cells 0,8,8 gave status ${status}, not 2"; exit 1; }
}

# check_padded NAME PROGRAM: 3 ranks on rows padded to 16 bytes (the kernel's strides, or the
# views', over the padding) give one unpadded rank's norm, and say that their rows are padded.
# An odd x extent makes rows of an odd count of doubles, which --row-align 16 pads. --row-align 8
# is bad input (status 2).
check_padded() {
  local exe=${build}/$1/$2 norm padded status=0
  norm=$(run_example "${exe}" 1 --cells 33,20,12 | sed -n 's/.*L2 norm \([^ ]*\)$/\1/p')
  padded=$(run_example "${exe}" 3 --cells 33,20,12 --row-align 16 --expect-norm "${norm}")
  echo "${padded}"
  grep -q "rows padded" <<<"${padded}" || { echo "test.sh: $2 --row-align 16 did not pad"; exit 1; }
  "${exe}" --row-align 8 >/dev/null 2>&1 || status=$?
  [[ ${status} -eq 2 ]] || { echo "test.sh: $2 --row-align 8 gave status ${status}, not 2"; exit 1; }
}

step "downstream example: examples/advect under mpirun + the installed funnel-run"
check_example advect funnel-advect
run_example "${build}/advect/funnel-advect" 3 --cells 40,24,1 # a prime split, one cell thick
check_padded advect funnel-advect

step "downstream example: examples/kokkos under mpirun + the installed funnel-run"
if grep -q '^#define FUNNEL_HAS_KOKKOS 1' "${build}/install/include/funnel/config.hpp"; then
  check_example kokkos funnel-kokkos-heat
  check_padded kokkos funnel-kokkos-heat
else
  echo "skipped: the installed funnel was built without Kokkos (FUNNEL_HAS_KOKKOS 0)"
fi

step "tests (serial-HDF5 io tests)"
ctest --test-dir "${serial}" -L io --output-on-failure -j "${jobs}" \
  --output-junit "${serial}/junit.xml" || true

step "tests"
ctest --test-dir "${build}" --output-on-failure -j "${jobs}" --output-junit "${build}/junit.xml" || true

# One closing line over both runs; non-zero exit on any failure.
python3 - "${build}/junit.xml" "${serial}/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET, os
passed = failed = skipped = 0
for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            failed += 1
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
PY
