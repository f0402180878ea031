#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The sample app's checks that need a GPU, after `scripts/gpu/run-all.sh build`:
#   deps     the build found CLI11 and nlohmann-json (from the carried .debs, or installed)
#   choices  every GPU choice funnel-stencil and funnel-bench advertise runs (--backend cuda,
#            --kernel cuda, funnel-bench's cuda and scaling)
#   trace    a --trace that cannot be opened (exit 2) or written (/dev/full, exit 1) on the cuda
#            backend, 1 and 3 ranks: one line, no hang
#   kokkos   only with --kokkos-root DIR (a Kokkos install with its CUDA backend): configures and
#            builds build-gpu-kokkos against it and runs --kernel kokkos against --kernel cuda
# Details go to $OUT (or ./gpu-out); a short table is printed last.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/gpu/apps-check.sh [--build-dir DIR] [--kokkos-root DIR] [--help]
  --build-dir DIR     the configured and built tree (default: build-gpu, as run-all.sh makes it)
  --kokkos-root DIR   also build against this Kokkos (CUDA backend) and run the Kokkos checks
USAGE
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-${root}/gpu-out}
build=${root}/build-gpu
kokkos_root=""
table=()

record() { table+=("$(printf '%-9s %-8s %s' "$1" "$2" "$3")"); }

# run_check NAME LOG COMMAND...: runs COMMAND into $out/LOG; ok, skipped (77) or FAIL.
run_check() {
  local name=$1 log=$2 rc=0
  shift 2
  "$@" >"${out}/${log}" 2>&1 || rc=$?
  case ${rc} in
    0) record "${name}" ok "$(grep -m1 -E 'tests passed|checks passed' "${out}/${log}" || echo "see ${log}")" ;;
    77) record "${name}" skipped "$(grep -m1 -i skipped "${out}/${log}" || true)" ;;
    *) record "${name}" FAIL "exit ${rc}, see ${log}"; tail -20 "${out}/${log}" ;;
  esac
}

check_deps() {
  local cache=${build}/CMakeCache.txt
  if [[ ! -f ${cache} ]]; then
    record deps FAIL "${build} is not configured (run scripts/gpu/run-all.sh build first)"
    return
  fi
  grep -E '^(CLI11|nlohmann_json)_DIR' "${cache}" >"${out}/deps.txt" || true
  if [[ $(wc -l <"${out}/deps.txt") -eq 2 ]]; then
    record deps ok "$(cut -d= -f2 "${out}/deps.txt" | tr '\n' ' ')"
  else
    record deps FAIL "CLI11/nlohmann-json not found by CMake (carry .deps, see fetch-debs.sh)"
  fi
}

check_choices() {
  run_check choices choices.log ctest --test-dir "${build}" --output-on-failure \
    -R 'advertised_choices_gpu' --timeout 300
}

check_trace() {
  local ranks
  for ranks in 1 3; do
    run_check "trace-${ranks}" "trace-${ranks}.log" python3 "${root}/tests/apps/hard_cases.py" \
      --app "${build}/bin/funnel-stencil" --mpiexec mpirun --backend cuda trace "${ranks}"
  done
}

check_kokkos() {
  local kbuild=${root}/build-gpu-kokkos
  if ! cmake -S "${root}" -B "${kbuild}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFUNNEL_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
    -DFUNNEL_ENABLE_CUDA=ON -DFUNNEL_ENABLE_KOKKOS=ON -DKokkos_ROOT="${kokkos_root}" \
    >"${out}/kokkos-configure.log" 2>&1 ||
    ! cmake --build "${kbuild}" -j "$(nproc)" >"${out}/kokkos-build.log" 2>&1; then
    record kokkos FAIL "configure/build against ${kokkos_root}, see kokkos-*.log"
    return
  fi
  run_check kokkos kokkos.log ctest --test-dir "${kbuild}" --output-on-failure \
    -R 'kokkos' --timeout 300
}

main() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --build-dir)
        [[ $# -ge 2 ]] || { echo "apps-check.sh: --build-dir needs a folder" >&2; return 2; }
        build=$2
        shift
        ;;
      --kokkos-root)
        [[ $# -ge 2 && -d $2 ]] || { echo "apps-check.sh: --kokkos-root needs an existing folder" >&2; return 2; }
        kokkos_root=$2
        shift
        ;;
      -h | --help) usage; return 0 ;;
      *) echo "apps-check.sh: unknown option '$1' (see --help)" >&2; return 2 ;;
    esac
    shift
  done
  mkdir -p "${out}"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
  # shellcheck source=scripts/gpu/debs.sh
  source "${root}/scripts/gpu/debs.sh"
  funnel_use_debs >"${out}/debs.log" 2>&1 || true
  check_deps
  check_choices
  check_trace
  if [[ -n ${kokkos_root} ]]; then check_kokkos; else record kokkos skipped "no --kokkos-root"; fi
  printf '\n%-9s %-8s %s\n' check result detail
  printf '%s\n' "${table[@]}"
  ! printf '%s\n' "${table[@]}" | grep -q ' FAIL '
}

main "$@"
