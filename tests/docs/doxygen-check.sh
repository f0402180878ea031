#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Runs doxygen with the check configuration (docs/Doxyfile.in as tests/docs/CMakeLists.txt fills
# it in) and fails, listing every warning, when there is any; skips (77) without doxygen.
# Usage: doxygen-check.sh DOXYFILE WARNINGS_LOG [DOXYGEN]
set -euo pipefail

main() {
  local doxyfile=${1:?usage: doxygen-check.sh DOXYFILE WARNINGS_LOG [DOXYGEN]}
  local log=${2:?usage: doxygen-check.sh DOXYFILE WARNINGS_LOG [DOXYGEN]}
  local doxygen=${3:-}
  # The path CMake found may be gone, or doxygen may have been installed since configuring.
  if [[ -z ${doxygen} || ! -x ${doxygen} ]]; then
    doxygen=$(command -v doxygen || true)
  fi
  if [[ -z ${doxygen} ]]; then
    echo "skipped: doxygen is not installed (scripts/install-deps.sh --tests installs it)"
    return 77
  fi

  rm -f "${log}"
  local status=0
  "${doxygen}" "${doxyfile}" || status=$?
  # The log is the verdict: a doxygen without FAIL_ON_WARNINGS exits 0 after warnings.
  if [[ -s ${log} ]]; then
    echo "$(grep -c '' "${log}") doxygen warning line(s) in the public headers ($("${doxygen}" --version)):"
    cat "${log}"
    return 1
  fi
  if ((status != 0)); then
    echo "doxygen failed (exit status ${status}) without a warning in ${log}" >&2
    return 1
  fi
  echo "doxygen $("${doxygen}" --version): every public name is documented"
}

main "$@"
