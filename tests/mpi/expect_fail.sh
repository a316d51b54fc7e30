#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a launcher command that must FAIL, and checks how it fails:
#   1. the exit status is non-zero;
#   2. it ended within MAX_SECONDS (a hang until the launcher's --timeout is a failure too);
#   3. its stderr matches the extended regex STDERR_REGEX (the launcher's line naming the rank);
#   4. no process whose command line contains PROGRAM is left afterwards (pgrep -f).
# Usage: expect_fail.sh MAX_SECONDS STDERR_REGEX PROGRAM LAUNCHER [ARGS...]
#   e.g. expect_fail.sh 10 'MPI_ERR_RMA_RANGE' ./fatal_range build/bin/onesided-run -n 2 ./fatal_range
# EXPECT_FAIL_KILLED_OK=1: exit status 137 is the launcher's own (a rank was SIGKILLed).
# If EXPECT_FAIL_FORBID is set, output matching that extended regex is a failure too (e.g. the
# surviving ranks reporting that a fence completed without the dead rank).
# Exits 0 when all of this holds, 1 otherwise (printing why).
set -u
if [ "$#" -lt 4 ]; then
  echo "usage: $0 MAX_SECONDS STDERR_REGEX PROGRAM LAUNCHER [ARGS...]" >&2
  exit 2
fi
# ONESIDED_TEST_TIME_SCALE stretches the limit on slow machines (the TCG VM of tests/rxe: 4).
max_seconds="$(($1 * ${ONESIDED_TEST_TIME_SCALE:-1}))"
regex="$2"
program="$3"
shift 3
# The launcher's own --timeout N stretches by the same scale: otherwise on a slow machine the
# launcher would kill a job that is still inside the (scaled) limit checked below.
args=()
prev=""
for a in "$@"; do
  if [ "$prev" = "--timeout" ] && [[ "$a" =~ ^[0-9]+$ ]]; then
    a=$((a * ${ONESIDED_TEST_TIME_SCALE:-1}))
  fi
  args+=("$a")
  prev="$a"
done
set -- "${args[@]}"

out="$(mktemp)"
err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT

start=$(date +%s%N)
# A hard stop well past the limit, so a hung launcher cannot hang the test itself.
timeout -k 5 $((max_seconds * 3 + 10)) "$@" >"$out" 2>"$err"
status=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))

echo "== command: $*"
echo "== exit status $status after ${elapsed_ms} ms"
echo "== stdout"; cat "$out"
echo "== stderr"; cat "$err"

fail=0
if [ "$status" -eq 0 ]; then
  echo "FAIL: the job exited 0; it was expected to fail"
  fail=1
fi
# mpirun and srun themselves exit 137 when a rank was killed by SIGKILL: EXPECT_FAIL_KILLED_OK=1
# accepts that (a hang still fails on the time limit: the hard stop comes much later).
if [ "$status" -eq 124 ] || { [ "$status" -eq 137 ] && [ "${EXPECT_FAIL_KILLED_OK:-0}" != 1 ]; }; then
  echo "FAIL: the launcher did not end by itself (stopped by timeout, status $status)"
  fail=1
fi
if [ "$elapsed_ms" -gt $((max_seconds * 1000)) ]; then
  echo "FAIL: took ${elapsed_ms} ms, limit ${max_seconds} s"
  fail=1
fi
if ! grep -Eq -- "$regex" "$err"; then
  echo "FAIL: stderr does not match /$regex/"
  fail=1
fi
if [ -n "${EXPECT_FAIL_FORBID:-}" ] && cat "$out" "$err" | grep -Eq -- "$EXPECT_FAIL_FORBID"; then
  echo "FAIL: the output matches the forbidden /$EXPECT_FAIL_FORBID/"
  fail=1
fi

# Leftover processes: allow a short grace period for ranks being reaped, then look. The pattern
# is the program's path; this script's own command line contains it too, so skip our own pid.
leftover=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
  leftover=""
  while read -r pid; do
    [ -n "$pid" ] && [ "$pid" != "$$" ] && leftover="$leftover $pid"
  done < <(pgrep -f -- "$program")
  [ -z "$leftover" ] && break
  sleep 0.3
done
# The process-substitution subshell is a fork of this script with the same command line.
if [ -n "$leftover" ]; then
  real=""
  for pid in $leftover; do
    [ -r "/proc/$pid/cmdline" ] || continue
    cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
    case "$cmd" in *expect_fail.sh*) continue ;; esac
    real="$real $pid"
    echo "leftover process $pid: $cmd"
  done
  if [ -n "$real" ]; then
    echo "FAIL: processes of $program are still running:$real"
    kill -9 $real 2>/dev/null
    fail=1
  fi
fi

if [ "$fail" -eq 0 ]; then
  echo "PASS: failed as expected (status $status, ${elapsed_ms} ms, stderr matches /$regex/)"
fi
exit "$fail"
