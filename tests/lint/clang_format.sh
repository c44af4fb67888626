#!/usr/bin/env bash
# tests/lint/clang_format.sh SOURCE_DIR: every C++ file of the tree (core, trainer, widgets, app,
# tests, bench) is formatted as .clang-format says, except the files still listed in
# tests/lint/clang_format_pending.txt (formatted a directory at a time: each change of a shared
# header rebuilds everything); a listed file that is formatted now must leave the list, so the
# list only shrinks. Fix a file with `clang-format -i FILE`.
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang_format.sh: needs clang-format (apt-get install clang-format)" >&2; exit 1; }
pending=tests/lint/clang_format_pending.txt
status=0 checked=0
while IFS= read -r file; do
  checked=$((checked + 1))
  if clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
    if grep -qxF "$file" "$pending"; then
      echo "$file is formatted now: take it off $pending"
      status=1
    fi
  elif ! grep -qxF "$file" "$pending"; then
    echo "$file is not formatted: clang-format -i $file"
    status=1
  fi
done < <(find core trainer widgets app tests bench -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
while IFS= read -r file; do
  [[ -z $file || $file == \#* || -f $file ]] || { echo "$pending lists $file, which does not exist"; status=1; }
done <"$pending"
echo "clang_format.sh: $checked files checked, $(grep -cv '^#' "$pending") still pending"
exit $status
