#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Installs what funnel needs from the platform's packages (Debian 12 / Ubuntu 24.04, as root):
# the toolchain, OpenMPI, HDF5, GoogleTest, CLI11 and nlohmann-json (header-only), Kokkos.
# Packages already present are left alone, so this is quick on a prepared machine and works
# offline there. The CUDA toolkit is not installed here: with nvcc on the machine (e.g.
# /usr/local/cuda) the CUDA backend is built, without it the host backend alone.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/install-deps.sh [--tests] [--help]
  Installs funnel's build dependencies with apt-get.
  --tests   also the test dependencies (Slurm + munge for the srun tests, h5py, shellcheck,
            clang-format, doxygen)
USAGE
}

main() {
  local with_tests=0
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --tests) with_tests=1 ;;
      -h | --help) usage; return 0 ;;
      *) echo "install-deps.sh: unknown option '$1' (allowed: --tests, --help)" >&2; return 2 ;;
    esac
    shift
  done

  local packages=(cmake ninja-build g++ make pkg-config openmpi-bin libopenmpi-dev
    libhdf5-openmpi-dev libhdf5-dev hdf5-tools libgtest-dev libgmock-dev
    libcli11-dev nlohmann-json3-dev python3 python3-numpy python3-matplotlib)
  # Kokkos: Debian ships it inside Trilinos (Kokkos 3.4, Serial backend).
  if apt-cache show libtrilinos-kokkos-dev >/dev/null 2>&1; then
    packages+=(libtrilinos-kokkos-dev)
  fi
  if [[ ${with_tests} -eq 1 ]]; then
    packages+=(python3-h5py shellcheck clang-format doxygen slurm-wlm slurmctld slurmd slurm-client munge)
  fi

  local missing=()
  local p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("${p}")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps.sh: all ${#packages[@]} packages already installed"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps.sh: missing packages (${missing[*]}); run as root or install them with apt-get" >&2
    return 1
  fi
  echo "install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Daemons (slurmctld, munge) must not start at install time: the tests start their own.
  local policy=/usr/sbin/policy-rc.d
  if [[ ! -e ${policy} ]]; then
    printf '#!/bin/sh\nexit 101\n' >"${policy}"
    chmod +x "${policy}"
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

main "$@"
