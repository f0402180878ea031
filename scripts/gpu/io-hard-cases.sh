#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# A full file system and another run's checkpoints with funnel-stencil --backend cuda, 1 and 3
# ranks (serial HDF5 on a GPU node: per-rank block files + a virtual dataset):
#   full-fs   checkpoints on a 24 MiB tmpfs (private mount namespace): a first run checkpoints,
#             the file system is filled, a restart's next checkpoint (and a snapshot) must fail
#             within 120 s with "No space left on device", and the previous checkpoint still loads
#   foreign   a fresh run pointed at another run's checkpoint directory is refused (exit != 0,
#             "of another run"), `latest` unchanged; --restart continues the series there;
#             --checkpoint-start-over starts it over
# Usage: scripts/gpu/io-hard-cases.sh [--help] BUILD_DIR   (needs root for the tmpfs;
#        IO_BACKEND=host runs the same checks without a GPU)
# Details go to $OUT (or ./gpu-out)/io-hard-cases; a short table is printed last; the exit status
# is non-zero when any check failed.
set -euo pipefail

usage() { sed -n '4,16p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then usage; exit 0; fi
[[ $# -eq 1 || ${FUNNEL_IO_NAMESPACE:-} == 1 ]] || { usage >&2; exit 2; }
build=$(cd "$1" && pwd)
app=${build}/bin/funnel-stencil
[[ -x ${app} ]] || { echo "io-hard-cases.sh: no ${app}" >&2; exit 2; }
out=${OUT:-$(pwd)/gpu-out}/io-hard-cases
mkdir -p "${out}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
problem=(--backend "${IO_BACKEND:-cuda}" --problem heat3d --n "96,80,64" --quiet)
table=()
status=0

record() { # record NAME ok|FAIL DETAIL
  table+=("$(printf '%-22s %-5s %s' "$1" "$2" "$3")")
  if [[ $2 == FAIL ]]; then status=1; fi
  return 0
}

# stencil LOG RANKS ARGS...: funnel-stencil under mpirun, at most 120 s; prints the exit status.
stencil() {
  local log=$1 ranks=$2 rc=0
  shift 2
  timeout -k 5 120 mpirun -np "${ranks}" "${app}" "${problem[@]}" "$@" >"${log}" 2>&1 || rc=$?
  echo "${rc}"
}

latest_of() { cat "$1/latest" 2>/dev/null || echo none; }

# Case 1 inside a private mount namespace (re-entered by the script itself).
full_fs() {
  local ranks=$1 mnt rc
  mnt=$(mktemp -d /tmp/funnel-io-fullfs.XXXXXX)
  # The mount ends with this namespace; the directory under it must go too.
  # shellcheck disable=SC2064 # mnt is meant to be expanded now
  trap "umount '${mnt}' 2>/dev/null; rmdir '${mnt}' 2>/dev/null" EXIT
  mount -t tmpfs -o size=24m tmpfs "${mnt}"
  rc=$(stencil "${out}/fullfs-${ranks}-first.log" "${ranks}" --steps 4 --checkpoint-every 2 \
    --checkpoint-dir "${mnt}/ckpt")
  [[ ${rc} -eq 0 ]] || { echo "first run: exit ${rc}"; return 1; }
  dd if=/dev/zero of="${mnt}/filler" bs=1M >/dev/null 2>&1 || true
  truncate -s -1M "${mnt}/filler"  # about 1 MiB left: less than one 3.9 MB checkpoint
  rc=$(stencil "${out}/fullfs-${ranks}-full.log" "${ranks}" --steps 8 --checkpoint-every 2 \
    --checkpoint-dir "${mnt}/ckpt" --restart)
  if [[ ${rc} -eq 0 || ${rc} -eq 124 || ${rc} -eq 137 ]] ||
    ! grep -q "No space left on device" "${out}/fullfs-${ranks}-full.log"; then
    echo "checkpoint on the full file system: exit ${rc} (124/137: hung)"; return 1
  fi
  rc=$(stencil "${out}/fullfs-${ranks}-snapshot.log" "${ranks}" --steps 2 --output-every 1 \
    --output-dir "${mnt}/snap")
  if [[ ${rc} -eq 0 || ${rc} -eq 124 || ${rc} -eq 137 ]] ||
    ! grep -q "No space left on device" "${out}/fullfs-${ranks}-snapshot.log"; then
    echo "snapshot on the full file system: exit ${rc} (124/137: hung)"; return 1
  fi
  [[ $(latest_of "${mnt}/ckpt") == ckpt-00000004 ]] || { echo "latest moved"; return 1; }
  rm -f "${mnt}/filler"
  rc=$(stencil "${out}/fullfs-${ranks}-reload.log" "${ranks}" --steps 4 --restart "${mnt}/ckpt" \
    --checkpoint-dir "${mnt}/other")
  [[ ${rc} -eq 0 ]] || { echo "the previous checkpoint does not load: exit ${rc}"; return 1; }
  echo "failed cleanly (exit codes in ${out}); previous checkpoint loads"
}

if [[ ${FUNNEL_IO_NAMESPACE:-} == 1 ]]; then
  full_fs "$2"
  exit $?
fi

for ranks in 1 3; do
  if detail=$(FUNNEL_IO_NAMESPACE=1 unshare --mount --propagation private "$0" "${build}" "${ranks}" 2>&1); then
    record "full-fs ${ranks} rank(s)" ok "${detail}"
  else
    record "full-fs ${ranks} rank(s)" FAIL "${detail}"
  fi
done

work=$(mktemp -d /tmp/funnel-io-foreign.XXXXXX)
trap 'rm -rf "${work}"' EXIT
for ranks in 1 3; do
  dir=${work}/ckpt-${ranks}
  name="foreign ${ranks} rank(s)"
  rc=$(stencil "${out}/foreign-${ranks}-a.log" "${ranks}" --steps 6 --checkpoint-every 2 \
    --checkpoint-dir "${dir}")
  if [[ ${rc} -ne 0 ]]; then record "${name}" FAIL "first run: exit ${rc}"; continue; fi
  rc=$(stencil "${out}/foreign-${ranks}-b.log" "${ranks}" --steps 4 --checkpoint-every 2 \
    --checkpoint-dir "${dir}")
  if [[ ${rc} -eq 0 ]] || ! grep -q "of another run" "${out}/foreign-${ranks}-b.log" ||
    [[ $(latest_of "${dir}") != ckpt-00000006 ]]; then
    record "${name}" FAIL "fresh run: exit ${rc}, latest $(latest_of "${dir}")"
    continue
  fi
  rc=$(stencil "${out}/foreign-${ranks}-restart.log" "${ranks}" --steps 8 --checkpoint-every 2 \
    --checkpoint-dir "${dir}" --restart)
  if [[ ${rc} -ne 0 || $(latest_of "${dir}") != ckpt-00000008 ]]; then
    record "${name}" FAIL "--restart into its own series: exit ${rc}, latest $(latest_of "${dir}")"
    continue
  fi
  if ! "${app}" --help | grep -- --checkpoint-start-over >/dev/null; then  # no -q: SIGPIPE
    record "${name}" FAIL "refused, restart continues; no --checkpoint-start-over in the app yet"
    continue
  fi
  rc=$(stencil "${out}/foreign-${ranks}-over.log" "${ranks}" --steps 2 --checkpoint-every 2 \
    --checkpoint-dir "${dir}" --checkpoint-start-over)
  if [[ ${rc} -ne 0 || $(latest_of "${dir}") != ckpt-00000002 || -e ${dir}/ckpt-00000008 ]]; then
    record "${name}" FAIL "--checkpoint-start-over: exit ${rc}, latest $(latest_of "${dir}")"
    continue
  fi
  record "${name}" ok "refused; --restart continues; --checkpoint-start-over starts over"
done

printf '%s\n' "${table[@]}"
exit "${status}"
