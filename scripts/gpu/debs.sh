#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Sourced THERE (the GPU machine, no package access) by the GPU scripts to configure:
#   source scripts/gpu/debs.sh && funnel_gpu_configure build-gpu
# unpacks the .debs scripts/gpu/fetch-debs.sh downloaded (carried in .deps/debs) into a prefix
# of its own with dpkg -x (never into /) and adds that prefix to CMAKE_PREFIX_PATH, which every
# later cmake call reads from the environment. Run directly, it does the same and prints the
# prefix (--help for usage).

# funnel_use_debs [DEBS_DIR]: unpack DEBS_DIR/*.deb (default: .deps/debs of the checkout) into
# DEBS_DIR/../prefix and export CMAKE_PREFIX_PATH=<prefix>/usr[:what it was]. Returns 1 with a
# message when there are no .debs and the libraries are not installed either.
funnel_use_debs() {
  local root debs prefix deb
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  debs=${1:-${root}/.deps/debs}
  prefix=$(cd "${debs}/.." 2>/dev/null && pwd)/prefix
  if ! compgen -G "${debs}/*.deb" >/dev/null; then
    if [[ -f /usr/include/CLI/CLI.hpp && -f /usr/include/nlohmann/json.hpp ]]; then
      echo "debs.sh: no .debs in ${debs}; CLI11 and nlohmann-json are installed, using them"
      return 0
    fi
    echo "debs.sh: no .debs in ${debs} and CLI11/nlohmann-json are not installed: run" \
      "scripts/gpu/fetch-debs.sh where apt works and carry .deps" >&2
    return 1
  fi
  mkdir -p "${prefix}"
  for deb in "${debs}"/*.deb; do
    dpkg -x "${deb}" "${prefix}"
  done
  export CMAKE_PREFIX_PATH="${prefix}/usr${CMAKE_PREFIX_PATH:+:${CMAKE_PREFIX_PATH}}"
  echo "debs.sh: $(find "${debs}" -name '*.deb' | wc -l) .debs unpacked into ${prefix};" \
    "CMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
}

# funnel_gpu_configure BUILD_DIR: configures the CUDA build the GPU scripts share (one CMake
# cache: every script configures it the same way, so none turns off what another needs), with
# the .debs above on CMAKE_PREFIX_PATH. Output goes to stdout/stderr; the caller redirects.
funnel_gpu_configure() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  funnel_use_debs || return 1
  cmake -S "${root}" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFUNNEL_BUILD_TESTS=ON \
    -DFUNNEL_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}"
}

if [[ ${BASH_SOURCE[0]} == "${0}" ]]; then
  set -euo pipefail
  case "${1:-}" in
    -h | --help)
      echo "Usage: scripts/gpu/debs.sh [DEBS_DIR]   (or: source it and call funnel_use_debs)"
      echo "  Unpacks DEBS_DIR/*.deb (default .deps/debs) into a prefix beside it and prints"
      echo "  the CMAKE_PREFIX_PATH to configure funnel with."
      exit 0
      ;;
  esac
  funnel_use_debs "$@"
fi
