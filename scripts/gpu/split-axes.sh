#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# How the split of a small grid among ranks sharing one GPU changes their step (docs/halo.md):
# heat3d float 768x96x96 (STEPS steps, default 2000) through funnel-run with MPS at 8, 16, 32 ranks,
# split along x (the one-cell-wide faces), y, z and a few mixed splits, each against one rank
# in the same run; then 512^3 float on 8 ranks (200 steps) for the splits the cube allows.
# With "push" first: the split funnel chooses at 2, 4, 8, 16 and 32 ranks and 512^3 on 8, each
# with FUNNEL_HALO_PUSH=off (an exchange kernel, then the update) and on (the update kernel
# pushes the exchange), one rank as the baseline of both.
# With "overlap" first: the split funnel chooses at 2 to 32 ranks with the defaults (each field
# compared with one rank's, bitwise), then at 2 to 8 ranks with one step per launch and graphs
# not overlapped (--steps-per-launch 1 --halo-overlap off); 512^3 at 2, 4, 8.
# Usage: scripts/gpu/split-axes.sh [push|overlap] [ROUNDS]   (after scripts/gpu/run-all.sh
# build; ROUNDS of the whole table, default 1; one line per run: dims, microseconds per step,
# fraction of one rank; summaries and logs under $OUT/split)
set -u
[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '4,16p' "$0" | sed 's/^# //'; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
b=${BUILD_DIR:-build-gpu}
out=${OUT:-/tmp}/split
steps=${STEPS:-2000}
mode=dims
if [[ ${1:-} == push || ${1:-} == overlap ]]; then
  mode=$1
  shift
fi
rounds=${1:-1}
mkdir -p "${out}"

# run NAME RANKS STEPS DIMS ARGS...: prints "NAME DIMS us/step" and leaves the time in $us.
run() {
  local name=$1 n=$2 s=$3 dims=$4
  shift 4
  local extra=()
  [[ ${dims} == auto ]] || extra=(--dims "${dims}")
  [[ -z ${DUMP:-} ]] || extra+=(--field-dump "${out}/${name}.bin")
  local more=()
  read -ra more <<<"${EXTRA:-}"
  extra+=("${more[@]}")
  us=""
  timeout 120 mpirun --bind-to none -np "${n}" "${b}/bin/funnel-run" --mps on -- \
    "${b}/bin/funnel-stencil" --backend cuda --quiet --dtype float --steps "${s}" \
    --summary "${out}/${name}.json" "${extra[@]}" "$@" >"${out}/${name}.log" 2>&1
  us=$(python3 -c "import json,sys;j=json.load(open(sys.argv[1]));print('%.2f' % (j['time_s']/int(sys.argv[2])*1e6))" \
    "${out}/${name}.json" "${s}" 2>/dev/null) || us=""
}

# table GRID STEPS "RANKS:DIMS ..."
table() {
  local grid=$1 s=$2 round=$3
  shift 3
  run "one-${grid}-${round}" 1 "${s}" auto --n "${grid}"
  local one=${us}
  printf '%-12s %3s ranks %-8s %9s us/step\n' "${grid}" 1 - "${one:-FAIL}"
  for spec in "$@"; do
    local n=${spec%%:*} dims=${spec#*:}
    run "r${n}-${dims//,/x}-${grid}-${round}" "${n}" "${s}" "${dims}" --n "${grid}"
    if [[ -n ${us} && -n ${one} ]]; then
      printf '%-12s %3s ranks %-8s %9s us/step  %.3f of one rank\n' "${grid}" "${n}" "${dims}" \
        "${us}" "$(python3 -c "print(${one}/${us})")"
    else
      printf '%-12s %3s ranks %-8s FAIL (%s)\n' "${grid}" "${n}" "${dims}" \
        "$(tail -1 "${out}/r${n}-${dims//,/x}-${grid}-${round}.log")"
    fi
  done
}

for ((round = 1; round <= rounds; round++)); do
  [[ ${mode} == push ]] || break
  for push in off on; do
    echo "FUNNEL_HALO_PUSH=${push}"
    FUNNEL_HALO_PUSH=${push} table 768,96,96 "${steps}" "${push}${round}" \
      2:auto 4:auto 8:auto 16:auto 32:auto
    FUNNEL_HALO_PUSH=${push} table 512,512,512 200 "${push}${round}" 8:auto
  done
done
for ((round = 1; round <= rounds; round++)); do
  [[ ${mode} == overlap ]] || break
  echo "the defaults (auto): each field compared with one rank's, bitwise"
  DUMP=1 table 768,96,96 "${steps}" "a${round}" 2:auto 3:auto 4:auto 5:auto 6:auto 8:auto \
    16:auto 32:auto
  for n in 2 3 4 5 6 8 16 32; do
    if cmp -s "${out}/one-768,96,96-a${round}.bin" "${out}/r${n}-auto-768,96,96-a${round}.bin"; then
      echo "${n} ranks: field bitwise equal to one rank"
    else
      echo "${n} ranks: FIELD DIFFERS from one rank (or missing)"
    fi
  done
  echo "one step per launch, graphs not overlapped"
  EXTRA="--steps-per-launch 1 --halo-overlap off" table 768,96,96 "${steps}" "off${round}" \
    2:auto 3:auto 4:auto 5:auto 6:auto 8:auto
  echo "512^3 (two steps per launch, the exchange without the arrival handshake)"
  table 512,512,512 200 "a${round}" 2:auto 4:auto 8:auto
done
for ((round = 1; round <= rounds; round++)); do
  [[ ${mode} == dims ]] || break
  table 768,96,96 "${steps}" "${round}" \
    8:8,1,1 8:1,8,1 8:1,1,8 8:1,2,4 8:2,2,2 8:auto \
    16:16,1,1 16:1,16,1 16:1,1,16 16:1,4,4 16:2,2,4 16:auto \
    32:32,1,1 32:1,32,1 32:1,1,32 32:1,4,8 32:2,4,4 32:auto
  table 512,512,512 200 "${round}" 8:1,2,4 8:1,1,8 8:2,2,2 8:8,1,1
done
# funnel-run's reaper stops each job's daemon; never leave one behind.
sleep 3
if pgrep -a -f 'nvidia-cuda-mps-(control|server)'; then echo "an MPS process is still running"; fi
