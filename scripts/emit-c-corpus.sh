#!/usr/bin/env bash
# Writes the C that `tessel compile --emit c` gives for every def of examples/*.tc,
# bench/programs/*.tc and the TC documentation corpus (tests/tc_docs), under the default
# options and under each fusion strategy, one file per (program, def, strategy), into OUTDIR.
# A refactoring that must not change any kernel is checked by running this before and after
# and comparing the folders: diff -r BEFORE AFTER.
# Usage: scripts/emit-c-corpus.sh TESSEL OUTDIR [JOBS]
set -euo pipefail
tessel=$(realpath "$1")
out=$2
jobs=${3:-$(nproc)}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for file in examples/*.tc bench/programs/*.tc tests/tc_docs/*.tc; do
  for def in $(sed -n 's/^[[:space:]]*def[[:space:]]\+\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$file"); do
    for fusion in default none min smart max basteln; do
      echo "$file $def $fusion"
    done
  done
done | xargs -P "$jobs" -L 1 bash -c '
  file=$0 def=$1 fusion=$2
  name=$(echo "$file" | tr / _)-$def-$fusion
  args=(compile "$file" --entry "$def" --emit c)
  [ "$fusion" = default ] || args+=(--fusion "$fusion")
  if ! "'"$tessel"'" "${args[@]}" >"'"$out"'/$name.c" 2>"'"$out"'/$name.err"; then
    echo "exit $?" >>"'"$out"'/$name.err"
  fi'
echo "$(ls "$out"/*.c | wc -l) programs written to $out"
