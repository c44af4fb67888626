#!/usr/bin/env bash
# expect_exit.sh [checks...] CODE -- COMMAND [ARGS...]
#
# Runs COMMAND and fails unless it exits with exactly CODE and every check holds:
#   --stdout REGEX   stdout matches the extended regular expression REGEX
#   --stderr REGEX   stderr matches REGEX
#   --png FILE WxH   FILE (removed before the run) is a PNG of at least W x H pixels
#   --needs PROGRAM  skip (exit 77) with a message when PROGRAM is not on PATH
#   --no-stdout      stdout stays empty (diagnostics belong on stderr)
#   --stdin FILE     feed FILE on standard input (default: /dev/null)
set -u

stdout_re=() stderr_re=() png_file="" png_min="" needs=() no_stdout=0 stdin_file=/dev/null
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    --stdout) stdout_re+=("$2"); shift 2 ;;
    --stderr) stderr_re+=("$2"); shift 2 ;;
    --png) png_file=$2; png_min=$3; shift 3 ;;
    --needs) needs+=("$2"); shift 2 ;;
    --no-stdout) no_stdout=1; shift ;;
    --stdin) stdin_file=$2; shift 2 ;;
    *) expected=$1; shift ;;
  esac
done
if [[ $# -lt 2 || -z ${expected:-} ]]; then
  echo "usage: expect_exit.sh [--stdout RE] [--stderr RE] [--png FILE WxH] [--needs PROG] [--no-stdout] [--stdin FILE] CODE -- COMMAND..." >&2
  exit 2
fi
shift  # the --

for program in "${needs[@]+"${needs[@]}"}"; do
  if ! command -v "$program" >/dev/null 2>&1; then
    echo "skipping: $program is not installed"
    exit 77
  fi
done

workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
if [[ -n $png_file ]]; then rm -f "$png_file"; fi

"$@" <"$stdin_file" >"$workdir/out" 2>"$workdir/err"
actual=$?

failed=0
fail() { echo "FAIL: $*"; failed=1; }

[[ $actual -eq $expected ]] || fail "exit status $actual, expected $expected"
[[ $no_stdout -eq 0 || ! -s $workdir/out ]] || fail "stdout is not empty"
for re in "${stdout_re[@]+"${stdout_re[@]}"}"; do
  grep -Eq -- "$re" "$workdir/out" || fail "stdout does not match: $re"
done
for re in "${stderr_re[@]+"${stderr_re[@]}"}"; do
  grep -Eq -- "$re" "$workdir/err" || fail "stderr does not match: $re"
done
if [[ -n $png_file ]]; then
  if [[ ! -f $png_file ]]; then
    fail "no file written at $png_file"
  else
    # PNG signature, then the IHDR chunk: width and height as 32-bit big-endian at byte 16.
    signature=$(od -An -tx1 -N8 "$png_file" | tr -d ' \n')
    [[ $signature == 89504e470d0a1a0a ]] || fail "$png_file is not a PNG (starts $signature)"
    read -r w3 w2 w1 w0 h3 h2 h1 h0 < <(od -An -tu1 -j16 -N8 "$png_file")
    width=$(( (w3 << 24) | (w2 << 16) | (w1 << 8) | w0 ))
    height=$(( (h3 << 24) | (h2 << 16) | (h1 << 8) | h0 ))
    (( width >= ${png_min%x*} && height >= ${png_min#*x} )) ||
      fail "$png_file is ${width}x${height}, expected at least $png_min"
  fi
fi

if [[ $failed -ne 0 ]]; then
  echo "command: $*"
  echo "--- stdout ---"; cat "$workdir/out"
  echo "--- stderr ---"; cat "$workdir/err"
  exit 1
fi
echo "ok: exit $actual${png_file:+, $png_file ${width}x${height}}"
