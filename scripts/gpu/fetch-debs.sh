#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Run HERE (a machine with package access), before a GPU run: downloads the .debs of the
# header-only libraries funnel builds with (CLI11, nlohmann-json) into .deps/debs/ of the
# checkout. The folder is git-ignored: name it in the device call's `carry` (".deps"), and
# scripts/gpu/debs.sh unpacks them there (the GPU machine has no package access).
set -euo pipefail

readonly packages=(libcli11-dev nlohmann-json3-dev)

usage() {
  cat <<'USAGE'
Usage: scripts/gpu/fetch-debs.sh [--dir DIR] [--help]
  Downloads the .debs of libcli11-dev and nlohmann-json3-dev with apt-get download.
  --dir DIR   where to put them (default: .deps/debs in the checkout)
Then carry ".deps" to the GPU machine; its build finds them through scripts/gpu/debs.sh.
USAGE
}

main() {
  local root dir
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  dir=${root}/.deps/debs
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --dir)
        [[ $# -ge 2 && -n $2 ]] || { echo "fetch-debs.sh: --dir needs a folder" >&2; return 2; }
        dir=$2
        shift
        ;;
      -h | --help) usage; return 0 ;;
      *) echo "fetch-debs.sh: unknown option '$1' (allowed: --dir, --help)" >&2; return 2 ;;
    esac
    shift
  done
  mkdir -p "${dir}"
  rm -f "${dir}"/*.deb
  (cd "${dir}" && apt-get download "${packages[@]}")
  local deb
  for deb in "${dir}"/*.deb; do
    printf '%-60s %s\n' "$(basename "${deb}")" "$(du -h "${deb}" | cut -f1)"
  done
}

main "$@"
