#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The funnel authors
# SPDX-License-Identifier: Apache-2.0
# Lints every shell script of the repository with shellcheck (skips, 77, where it is missing).
# Usage: shellcheck-all.sh SOURCE_DIR
set -euo pipefail

root=${1:?usage: shellcheck-all.sh SOURCE_DIR}
if ! command -v shellcheck >/dev/null; then
  echo "skipped: shellcheck not installed"
  exit 77
fi
cd "${root}"
scripts=()
while IFS= read -r -d '' file; do
  # Scripts are the *.sh files and the extension-less files that start with a bash shebang.
  if [[ ${file} == *.sh ]] || head -n 1 "${file}" | grep -qE '^#!.*\bbash\b'; then
    scripts+=("${file}")
  fi
done < <(find launch tests/launch scripts -type f ! -name '*.txt' ! -name '*.cu' ! -name '*.cpp' \
  ! -name '*.py' ! -name '*.md' -print0 2>/dev/null)
((${#scripts[@]} > 0)) || { echo "no script found under ${root}" >&2; exit 1; }
status=0
# -x: funnel-run's parts source state.sh (see its "shellcheck source=" lines).
shellcheck -x --severity=style "${scripts[@]}" || status=$?
echo "${#scripts[@]} scripts checked"
if ((status == 0)); then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit "${status}"
