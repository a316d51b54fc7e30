#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the last lines of output of every test the last ctest run in BUILD_DIR saw fail, each
# line prefixed with PREFIX: run_all.sh and rxe/suite.sh put them in the summary that ends a CI
# log, because that end is often all of the log a reader gets to see.
# Usage: tests/failed_tails.sh BUILD_DIR [LINES] [PREFIX]
set -uo pipefail
dir="${1:?usage: failed_tails.sh BUILD_DIR [LINES] [PREFIX]}"
lines="${2:-20}"
prefix="${3:-    }"
failed="$dir/Testing/Temporary/LastTestsFailed.log"
log="$dir/Testing/Temporary/LastTest.log"
[ -s "$failed" ] && [ -s "$log" ] || exit 0
cut -d: -f2- "$failed" | while IFS= read -r name; do
  [ -n "$name" ] || continue
  echo "${prefix}--- $name, last $lines lines of its output:"
  # A test's output runs from the line after its "Output:" rule to "<end of output>".
  awk -v name="$name" '
    $0 ~ "^[0-9]+/[0-9]+ Test: " && $3 == name { on = 1; next }
    on && /^Output:$/ { getline; body = 1; next }
    on && body && /^<end of output>$/ { exit }
    on && body { print }
  ' "$log" | tail -n "$lines" | cut -c1-300 | sed "s/^/${prefix}  /"
done
