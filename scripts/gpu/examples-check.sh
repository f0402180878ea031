#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# The bring-your-own-kernel examples on a GPU node, after
# `scripts/gpu/run-all.sh build`: installs BUILD_DIR, builds examples/advect (and examples/kokkos
# when the install has Kokkos) against the installed tree, and runs them on the cuda backend
# through the installed funnel-run with MPS:
#   answers  1, 4, 7 and 8 ranks on one GPU: each run's mass check passes and its L2 norm is one
#            rank's (--expect-norm, and the printed digits compared); each also on 4 ranks
#            with rows padded to 16 bytes (--row-align 16, on 33 x 20 x 12 cells: odd rows)
#   time     --cells 256,256,256 --steps 200 on 1 and 8 ranks: the step loop's time, and the
#            8-rank job's as a fraction of one rank's (t1 / t8; 1.0 = no cost of splitting)
# Usage: scripts/gpu/examples-check.sh [--help] BUILD_DIR   (details under $OUT or ./gpu-out;
# EXAMPLES_BACKEND=host EXAMPLES_MPS=off run the same without a GPU; EXAMPLES_TIME_ARGS replaces
# the timed run's size)
# A short table is printed last; the exit status is non-zero when any check failed.
set -euo pipefail

usage() { sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'; }
if [[ ${1:-} == -h || ${1:-} == --help ]]; then usage; exit 0; fi
[[ $# -eq 1 ]] || { usage >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "${here}/../.." && pwd)
build=$(cd "$1" && pwd)
out=${OUT:-$(pwd)/gpu-out}/examples
mkdir -p "${out}"
# shellcheck source=scripts/gpu/debs.sh
source "${here}/debs.sh"
funnel_use_debs >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
read -ra time_args <<<"${EXAMPLES_TIME_ARGS:---cells 256,256,256 --steps 200}"

table=()
status=0
record() { # record NAME ok|FAIL|info|skipped DETAIL
  table+=("$(printf '%-32s %-7s %s' "$1" "$2" "$3")")
  if [[ $2 == FAIL ]]; then status=1; fi
  return 0
}

work=$(mktemp -d "${TMPDIR:-/tmp}/funnel-examples.XXXXXX")
trap 'rm -rf "${work}"' EXIT
prefix=${work}/install
cmake --install "${build}" --prefix "${prefix}" >"${out}/install.log" 2>&1
runner=${prefix}/bin/funnel-run
# The installed funnel finds the Kokkos it was built with again: the build's Kokkos_DIR.
kokkos_hint=()
kokkos_dir=$(sed -n 's/^Kokkos_DIR:PATH=//p' "${build}/CMakeCache.txt" 2>/dev/null || true)
if [[ -n ${kokkos_dir} && ${kokkos_dir} != *NOTFOUND ]]; then kokkos_hint=(-DKokkos_DIR="${kokkos_dir}"); fi

# run LOG RANKS EXE ARGS...: the example under mpirun + funnel-run (MPS on), at most 300 s.
run() {
  local log=$1 ranks=$2 exe=$3 rc=0
  shift 3
  timeout -k 5 300 mpirun -np "${ranks}" "${runner}" --mps "${EXAMPLES_MPS:-on}" -- "${exe}" --backend "${EXAMPLES_BACKEND:-cuda}" "$@" \
    >"${log}" 2>&1 || rc=$?
  echo "${rc}"
}
field() { sed -n "s/.*$2 \\([^ ,]*\\).*/\\1/p" "$1" | tail -n 1; }

# example NAME PROGRAM [CASE OPTIONS]: build against the install, then the answers and the time;
# with CASE and OPTIONS, one rank on CASE (e.g. --cells ...) and then 4 ranks on CASE with
# OPTIONS must give the same norm.
example() {
  local name=$1 prog=$2 dir=${work}/$1 exe one n rc norm t1 t8 ref
  if ! cmake -S "${repo}/examples/${name}" -B "${dir}" -G Ninja "${kokkos_hint[@]}" \
    -DCMAKE_PREFIX_PATH="${prefix};${CMAKE_PREFIX_PATH:-}" >"${out}/${name}-configure.log" 2>&1 ||
    ! cmake --build "${dir}" >"${out}/${name}-build.log" 2>&1; then
    record "${name}: build" FAIL "see ${name}-configure.log / ${name}-build.log"
    return 0
  fi
  exe=${dir}/${prog}
  rc=$(run "${out}/${name}-1.log" 1 "${exe}")
  one=$(field "${out}/${name}-1.log" "L2 norm")
  if [[ ${rc} -ne 0 || -z ${one} ]]; then
    record "${name}: 1 rank" FAIL "exit ${rc}; see ${name}-1.log"
    return 0
  fi
  record "${name}: 1 rank" ok "L2 norm ${one}"
  for n in 4 7 8; do
    rc=$(run "${out}/${name}-${n}.log" "${n}" "${exe}" --expect-norm "${one}")
    norm=$(field "${out}/${name}-${n}.log" "L2 norm")
    if [[ ${rc} -eq 0 && ${norm} == "${one}" ]]; then
      record "${name}: ${n} ranks = 1 rank" ok "L2 norm ${norm} (all digits)"
    elif [[ ${rc} -eq 0 ]]; then
      record "${name}: ${n} ranks = 1 rank" ok "L2 norm ${norm} (within the tolerance)"
    else
      record "${name}: ${n} ranks = 1 rank" FAIL "exit ${rc}; see ${name}-${n}.log"
    fi
  done
  if [[ $# -ge 4 ]]; then
    # shellcheck disable=SC2086 # options and their values
    rc=$(run "${out}/${name}-case-1.log" 1 "${exe}" $3)
    ref=$(field "${out}/${name}-case-1.log" "L2 norm")
    # shellcheck disable=SC2086
    rc=$(($(run "${out}/${name}-case-4.log" 4 "${exe}" $3 $4 --expect-norm "${ref}") + rc))
    norm=$(field "${out}/${name}-case-4.log" "L2 norm")
    record "${name}: 4 ranks $3 $4 = 1 rank" \
      "$([[ ${rc} -eq 0 && -n ${ref} ]] && echo ok || echo FAIL)" \
      "L2 norm ${norm}$([[ ${norm} == "${ref}" ]] && echo ' (all digits)')$(grep -o ', rows padded[^,]*' "${out}/${name}-case-4.log" | head -1)"
  fi
  rc=$(run "${out}/${name}-time-1.log" 1 "${exe}" "${time_args[@]}")
  t1=$(field "${out}/${name}-time-1.log" "steps in")
  rc=$(($(run "${out}/${name}-time-8.log" 8 "${exe}" "${time_args[@]}") + rc))
  t8=$(field "${out}/${name}-time-8.log" "steps in")
  if [[ ${rc} -ne 0 || -z ${t1} || -z ${t8} ]]; then
    record "${name}: time ${time_args[*]}" FAIL "see ${name}-time-1.log / ${name}-time-8.log"
  else
    record "${name}: time ${time_args[*]}" info \
      "1 rank ${t1} s, 8 ranks ${t8} s: $(awk -v a="${t1}" -v b="${t8}" 'BEGIN { printf "%.3f", a / b }') of one rank"
  fi
}

example advect funnel-advect "--cells 33,20,12" "--row-align 16"
if grep -q '^#define FUNNEL_HAS_KOKKOS 1' "${prefix}/include/funnel/config.hpp"; then
  example kokkos funnel-kokkos-heat "--cells 33,20,12" "--row-align 16"
else
  record "kokkos" skipped "this build has no Kokkos (FUNNEL_HAS_KOKKOS 0)"
fi
# funnel-run's reaper removes a job's directory just after its last rank: give it 15 s.
left_behind() { find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'funnel-run-*' 2>/dev/null | wc -l; }
deadline=$((SECONDS + 15))
while (($(left_behind) > 0 && SECONDS < deadline)); do sleep 0.5; done
left=$(left_behind)
record "nothing left in \$TMPDIR" "$([[ ${left} -eq 0 ]] && echo ok || echo FAIL)" \
  "${left} funnel-run directories"

printf '%s\n' "${table[@]}" | tee "${out}/table.txt"
exit "${status}"
