#!/usr/bin/env bash
# tests/lint/clang_format.sh SOURCE_DIR: every C++ file of the tree (core, trainer, widgets, app,
# tests, bench) is formatted as .clang-format says. Fix a file with `clang-format -i FILE`.
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang_format.sh: needs clang-format (apt-get install clang-format)" >&2; exit 1; }
status=0 checked=0
while IFS= read -r file; do
  checked=$((checked + 1))
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
    echo "$file is not formatted: clang-format -i $file"
    status=1
  fi
done < <(find core trainer widgets app tests bench -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
echo "clang_format.sh: $checked files checked"
exit $status
