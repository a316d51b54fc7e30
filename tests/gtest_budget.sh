#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a GoogleTest binary's tests within a time budget, many to a process: the sanitizer
# stages' unit suites. ctest starts one process per test, and under ASan that start (shadow
# memory, UCX's initialisation) costs more than most tests: the ASan unit suites took 1315 s as
# 2183 ctest processes on 2 cores at stop 48, and 329 s as one gtest process. Here chunks of
# ONESIDED_GTEST_CHUNK tests (default 48) run as one process each, JOBS at a time, in the order
# ctest_budget.sh uses (budget_common.sh) (every test's variants spread over the run, in a fixed pseudo-random
# order), none started once the budget is spent; what is left out for time is named. A chunk
# that fails (a failed assertion, a sanitizer's report, a crash) names its failed tests, or the
# test that was running when it died, with the end of its output; a chunk that runs longer than
# ONESIDED_GTEST_CHUNK_TIMEOUT seconds (default 900) is a hang, and fails the same way.
# Usage: tests/gtest_budget.sh BINARY SECONDS NAME JOBS [gtest filter]
#   The filter is gtest's (positive patterns, then "-" and negative ones).
# Exit status: 1 when a test failed, 0 otherwise (tests left out for time do not fail the run;
# ONESIDED_LEFT_OUT_FILE, when set, gets a line naming them). ONESIDED_FAILED_FILE, when set,
# gets one line per failed test, and ONESIDED_FAILED_TAILS_FILE the end of each failed chunk's
# output, for the summary that ends a CI log.
set -uo pipefail
# shellcheck source=tests/budget_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/budget_common.sh"
bin="${1:?usage: gtest_budget.sh BINARY SECONDS NAME JOBS [gtest filter]}"
budget="${2:?}"
name="${3:?}"
jobs="${4:?}"
filter="${5:-*}"
chunk="${ONESIDED_GTEST_CHUNK:-48}"
chunk_timeout="${ONESIDED_GTEST_CHUNK_TIMEOUT:-900}"
start=$SECONDS
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

# --gtest_list_tests: "Suite." lines, then "  name" lines (a parameterised one goes on with
# "  # GetParam() = ...").
if ! listed="$("$bin" --gtest_list_tests --gtest_filter="$filter" 2>"$logs/list.err")"; then
  echo "== $name: $bin could not list its tests:"
  tail -n 20 "$logs/list.err"
  [ -n "${ONESIDED_FAILED_FILE:-}" ] && echo "$name: listing the tests failed" >>"$ONESIDED_FAILED_FILE"
  exit 1
fi
names="$(awk '
  /^[^ ]/ { suite = $1; next }
  /^  [^ ]/ { print suite $1 }' <<<"$listed")"
budget_tests "$names"
echo "== $name: $n tests in chunks of $chunk, $jobs at a time, budget $budget s"

status=0
ran=0
declare -A pids=()  # pid -> chunk number
# finish PID RC: reads a finished chunk's log.
finish() {
  local c rc="$2" log failed done
  c="${pids[$1]}"
  log="$logs/$c.log"
  unset "pids[$1]"
  done="$(grep -c '^\[ *\(OK\|FAILED\|SKIPPED\) *\] .* ([0-9]* ms)$' "$log")"
  ran=$((ran + ${done:-0}))
  [ "$rc" -eq 0 ] && return
  status=1
  # gtest's own verdicts, or the test that was running when the process died.
  failed="$(sed -n 's/^\[  FAILED  \] \([^ ,]*\.[^ ,]*\).*/\1/p' "$log" | sort -u)"
  if [ -z "$failed" ]; then
    failed="$(awk '/^\[ RUN      \]/ { t = $4 } /^\[ *(OK|FAILED|SKIPPED) *\]/ { t = "" }
                   END { print (t == "" ? "(between tests)" : t) }' "$log")"
    [ "$rc" -eq 124 ] && failed+=" (still running after ${chunk_timeout} s: a hang)"
    [ "$rc" -ne 124 ] && failed+=" (the process ended with status $rc)"
  fi
  echo "== $name: chunk $c failed: $(echo "$failed" | paste -sd' ')"
  echo "   its last 40 lines:"
  tail -n 40 "$log" | cut -c1-300 | sed 's/^/     /'
  if [ -n "${ONESIDED_FAILED_FILE:-}" ]; then
    echo "$failed" | sed "s/^/$name: /" >>"$ONESIDED_FAILED_FILE"
  fi
  if [ -n "${ONESIDED_FAILED_TAILS_FILE:-}" ]; then
    {
      echo "    --- $name, chunk $c ($(echo "$failed" | head -3 | paste -sd' ')), last 20 lines:"
      tail -n 20 "$log" | cut -c1-300 | sed 's/^/      /'
    } >>"$ONESIDED_FAILED_TAILS_FILE"
  fi
}
reap() {
  local pid rc
  wait -n -p pid "${!pids[@]}"
  rc=$?
  finish "$pid" "$rc"
}

i=0
c=0
while [ "$i" -lt "$n" ]; do
  if [ $((SECONDS - start)) -ge "$budget" ]; then break; fi
  f="$(printf '%s\n' "${tests[@]:i:chunk}" | paste -sd':')"
  timeout -k 10 "$chunk_timeout" "$bin" --gtest_color=no --gtest_filter="$f" >"$logs/$c.log" 2>&1 &
  pids[$!]=$c
  i=$((i + chunk))
  c=$((c + 1))
  while [ "${#pids[@]}" -ge "$jobs" ]; do reap; done
done
while [ "${#pids[@]}" -gt 0 ]; do reap; done

if [ "$i" -lt "$n" ]; then
  printf '%s\n' "${tests[@]:i}" | budget_left_out "$name" "$n" "$((SECONDS - start))" "$budget" "$names"
fi
echo "== $name: $ran tests ran in $c processes, took $((SECONDS - start)) s"
exit "$status"
