#!/usr/bin/env bash
# expect_exit.sh CODE [--stdout ERE] [--stderr ERE] [--no-stdout] [--stdin FILE] -- COMMAND [ARGS...]
# Runs COMMAND and fails unless it exits with CODE and its output matches every pattern given
# (grep -E over the whole stream; each pattern may be given more than once).
set -u
expected=$1; shift
out_patterns=(); err_patterns=(); no_stdout=0; stdin_file=/dev/null
while [ $# -gt 0 ]; do
  case "$1" in
    --stdout) out_patterns+=("$2"); shift 2 ;;
    --stderr) err_patterns+=("$2"); shift 2 ;;
    --no-stdout) no_stdout=1; shift ;;
    --stdin) stdin_file=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_exit.sh: unknown option $1" >&2; exit 64 ;;
  esac
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$@" <"$stdin_file" >"$tmp/out" 2>"$tmp/err"
code=$?
fail=0
if [ "$code" != "$expected" ]; then echo "exit code $code, expected $expected"; fail=1; fi
for p in "${out_patterns[@]+"${out_patterns[@]}"}"; do
  grep -Eq -- "$p" "$tmp/out" || { echo "stdout does not match: $p"; fail=1; }
done
for p in "${err_patterns[@]+"${err_patterns[@]}"}"; do
  grep -Eq -- "$p" "$tmp/err" || { echo "stderr does not match: $p"; fail=1; }
done
if [ "$no_stdout" = 1 ] && [ -s "$tmp/out" ]; then echo "stdout is not empty"; fail=1; fi
if [ "$fail" != 0 ]; then
  echo "--- command: $*"; echo "--- stdout:"; head -c 4000 "$tmp/out"; echo "--- stderr:"; head -c 4000 "$tmp/err"
fi
exit $fail
