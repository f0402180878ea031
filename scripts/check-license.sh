#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Checks that every source, script and CMake file of the repository names its license in its
# first lines (SPDX-License-Identifier: Apache-2.0, the LICENSE file) and its copyright holder.
# Usage: scripts/check-license.sh [--help]   Exit status 1 lists the files that do not.
set -euo pipefail

case "${1:-}" in
  -h | --help)
    sed -n '4,5p' "$0" | sed 's/^# //'
    exit 0
    ;;
  "") ;;
  *) echo "check-license.sh: unknown option '$1' (allowed: --help)" >&2; exit 2 ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -f LICENSE ]] || { echo "check-license.sh: LICENSE is missing" >&2; exit 1; }

# Sources, scripts and CMake files: by name, and files without a suffix that start with #!.
list_files() {
  local f
  git ls-files '*.hpp' '*.cpp' '*.h' '*.cu' '*.cuh' '*.sh' '*.py' '*.cmake' '*.in' \
    'CMakeLists.txt' '*/CMakeLists.txt'
  while IFS= read -r f; do
    [[ ${f##*/} == *.* ]] && continue
    [[ -f ${f} ]] && head -c 2 "${f}" | grep -q '^#!' && echo "${f}"
  done < <(git ls-files)
}

missing=()
while IFS= read -r f; do
  [[ -f ${f} ]] || continue
  header=$(head -n 5 "${f}")
  if [[ ${header} != *"SPDX-License-Identifier: Apache-2.0"* ||
    ${header} != *"SPDX-FileCopyrightText: "* ]]; then
    missing+=("${f}")
  fi
done < <(list_files | sort -u)

if ((${#missing[@]} > 0)); then
  echo "check-license.sh: ${#missing[@]} file(s) without the SPDX license and copyright lines:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "check-license.sh: every source, script and CMake file names its license"
