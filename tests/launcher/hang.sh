#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The hang report (issue 63): erroneous programs (hang.c) run under onesided-run --hang-timeout 3
# (or get SIGQUIT), and the report checked to name, for each rank, the call it waits in and what
# for; the job ends non-zero with no process left. A normal job with a large --hang-timeout is
# unaffected; the default (stdout not a terminal) is announced.
# Usage: hang.sh ONESIDED_RUN HANG_PROGRAM CASE
set -u
run="$1"
prog="$2"
case="$3"
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then echo "ok $1"; else echo "FAIL $1"; fail=1; fi
}
marker="hang-test-$$-$RANDOM"
err="$(mktemp)"
trap 'rm -f "$err"' EXIT
scale=${ONESIDED_TEST_TIME_SCALE:-1}
has() {  # has REGEX: the launcher's stderr has a line matching it
  if grep -Eq -- "$1" "$err"; then return 0; fi
  echo "no line matching: $1"
  return 1
}
expect_report() {  # expect_report STATUS REGEX...: the job ended with STATUS, its report has each
  local want="$1" ok=0
  shift
  [ "$status" -eq "$want" ] || { echo "exit status $status, expected $want"; ok=1; }
  has "onesided-run: hang report:" || ok=1
  for re in "$@"; do has "$re" || ok=1; done
  sleep 0.3
  if pgrep -f -- "$marker" >/dev/null; then echo "processes left"; ok=1; fi
  [ "$ok" -eq 0 ] || { echo "--- stderr:"; cat "$err"; }
  return "$ok"
}
hang() {  # hang NP MODE: the program under --hang-timeout 3
  "$run" --hang-timeout $((3 * scale)) -n "$1" "$prog" "$2" "$marker" >/dev/null 2>"$err"
  status=$?
}
for_s='for [0-9]+\.[0-9] s'
case "$case" in
  fence_barrier)
    hang 2 fence_barrier
    expect_report 124 "onesided-run: warning: the job has run $((3 * scale)) s" \
      "onesided-run: rank 0: in MPI_Win_fence \(window [0-9]+\) $for_s, waiting for rank 1\$" \
      "onesided-run: rank 1: in MPI_Barrier \(communicator MPI_COMM_WORLD\) $for_s, waiting for rank 0\$"
    check "fence on rank 0, barrier on rank 1: the report names both" $?
    ;;
  pscw)
    hang 3 pscw
    expect_report 124 \
      "rank 0: in MPI_Win_start \(window [0-9]+\) $for_s, waiting for MPI_Win_post from its start group \(2: ranks 1, 2\)" \
      "rank 1: in MPI_Win_wait \(window [0-9]+\) $for_s, waiting for MPI_Win_complete from its post group \(1: rank 0\)" \
      "rank 2: in MPI_Win_wait \(window [0-9]+\) $for_s, waiting for MPI_Win_complete from its post group \(1: rank 1\)"
    check "mismatched PSCW groups: start and the waits named" $?
    ;;
  recv)
    hang 2 recv
    expect_report 124 \
      "rank 0: in MPI_Recv \(communicator MPI_COMM_WORLD\) $for_s, waiting for a message from rank 1 with tag 7\$" \
      "rank 1: in MPI_Barrier \(communicator MPI_COMM_WORLD\) $for_s"
    check "a receive with no sender: its source and tag named" $?
    ;;
  compute)
    hang 2 compute
    expect_report 124 "rank 0: in MPI_Barrier \(communicator MPI_COMM_WORLD\) $for_s" \
      "rank 1: computing \(not in MPI\); its last MPI call was MPI_[A-Za-z_]+"
    check "a rank outside MPI: said so" $?
    ;;
  sigquit)
    "$run" --hang-timeout 0 -n 2 "$prog" fence_barrier "$marker" >/dev/null 2>"$err" &
    pid=$!
    sleep $((2 * scale))
    kill -QUIT "$pid"
    wait "$pid"
    status=$?
    expect_report 131 "onesided-run: received SIGQUIT" "rank 0: in MPI_Win_fence" \
      "rank 1: in MPI_Barrier"
    check "SIGQUIT to the launcher: the report, then the end" $?
    ;;
  normal)
    out=$("$run" --hang-timeout 100 -n 2 "$prog" ok "$marker" 2>"$err")
    status=$?
    [ "$status" -eq 0 ] && [ "$out" = "done" ] && ! grep -q "hang report\|onesided-run: warning" "$err"
    check "a normal job with --hang-timeout 100: unaffected" $?
    out=$("$run" -n 2 "$prog" ok "$marker" 2>"$err")
    status=$?
    [ "$status" -eq 0 ] && [ "$out" = "done" ] &&
      has "onesided-run: warning: stdout is not a terminal: .* after 600 s gets a hang report"
    check "the default when stdout is not a terminal: 600 s, announced" $?
    ;;
  *)
    echo "unknown case $case"
    exit 2
    ;;
esac
exit "$fail"
