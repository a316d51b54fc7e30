#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Launcher behaviour that expect_fail.sh cannot drive: Ctrl-C / SIGTERM forwarded to the ranks,
# a program that does not exist, non-MPI programs, -np, 8 ranks at once, binding, options.
# Usage: signals.sh ONESIDED_RUN MODES_PROGRAM
set -u
run="$1"
prog="$2"
fail=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then echo "ok $1"; else echo "FAIL $1"; fail=1; fi
}
# Ranks get a marker argument unique to this run (this script's own arguments do not contain
# it), so other jobs running the same program do not count.
marker="signals-test-$$-$RANDOM"
leftover() { sleep 0.3; pgrep -f -- "$marker" >/dev/null && return 1 || return 0; }
# "Promptly, not hung": a generous bound, scaled like expect_fail.sh's on slow machines (the
# soft-RoCE VM under TCG sets ONESIDED_TEST_TIME_SCALE=4). Timing is not what this tests.
limit_ms=$((5000 * ${ONESIDED_TEST_TIME_SCALE:-1}))

for sig in INT TERM HUP; do
  "$run" -n 3 "$prog" hang "$marker" 2>"/tmp/onesided-signals.$$" &
  pid=$!
  sleep 1
  start=$(date +%s%N)
  kill -"$sig" "$pid"
  wait "$pid"
  status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  num=$(kill -l "$sig")
  [ "$status" -eq $((128 + num)) ] && [ "$ms" -lt "$limit_ms" ]
  check "SIG$sig forwarded: exit $status after $ms ms" $?
  grep -q "stopping 3 ranks" "/tmp/onesided-signals.$$"
  check "SIG$sig reported" $?
  leftover
  check "SIG$sig: no process left" $?
done
rm -f "/tmp/onesided-signals.$$"

"$run" -n 2 /nonexistent/program 2>/dev/null
check "missing program exits 127" $(( $? == 127 ? 0 : 1 ))
out=$("$run" -np 2 echo hello)
check "non-MPI program, -np spelling" $(( $? == 0 ? 0 : 1 ))
[ "$(echo "$out" | grep -c hello)" -eq 2 ]
check "output of both ranks forwarded" $?
out=$("$run" -n 8 "$prog" ok)
check "8 ranks complete" $(( $? == 0 ? 0 : 1 ))
echo "$out" | grep -q "modes: ok done"
check "8 ranks output" $?
"$run" -n 2 --timeout 1 "$prog" hang "$marker" 2>/dev/null
check "timeout exits 124" $(( $? == 124 ? 0 : 1 ))
leftover
check "timeout: no process left" $?
# Binding: with --bind-to core, ranks that fit on the launcher's cores get one core each
# (distinct CPU lists), more ranks than cores keep the launcher's own affinity; by default and
# with --bind-to none nothing is bound; a bad value is refused.
mask() { "$run" "$@" sh -c 'taskset -cp $$ | sed "s/.*: //"' | sort; }
own=$(taskset -cp $$ | sed "s/.*: //")
cores=$(python3 -c '
import os
t = "/sys/devices/system/cpu/cpu{}/topology/{}"
def core(c):
    try: return tuple(open(t.format(c, f)).read() for f in ("physical_package_id", "core_id"))
    except OSError: return c
print(len({core(c) for c in os.sched_getaffinity(0)}))')
if [ "$cores" -ge 1 ]; then
  bound=$(mask --bind-to core -n "$cores")
  [ "$(echo "$bound" | sort -u | wc -l)" -eq "$cores" ] &&
    { [ "$cores" -eq 1 ] || ! echo "$bound" | grep -qx "$own"; }
  check "bound: $cores ranks on $cores cores, one each ($(echo $bound))" $?
fi
[ "$(mask --bind-to core -n $((cores + 1)) | sort -u)" = "$own" ]
check "more ranks than cores: unbound" $?
[ "$(mask -n 2 | sort -u)" = "$own" ] && [ "$(mask --bind-to none -n 2 | sort -u)" = "$own" ]
check "unbound by default and with --bind-to none" $?
"$run" --bind-to socket -n 1 true 2>/dev/null
check "--bind-to socket refused" $(( $? != 0 ? 0 : 1 ))
# Options: one the launcher does not know is an error naming it, with the usage line, never
# taken as the program; --help lists every option; "--" ends the options.
err=$("$run" --hang-timeout-typo 5 -n 2 true 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q "unknown option --hang-timeout-typo" &&
  echo "$err" | grep -q "^usage: onesided-run -n N"
check "unknown option refused with a usage line" $?
err=$("$run" -n 2 --no-such-option=1 true 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q "unknown option --no-such-option=1"
check "unknown option after -n refused" $?
help=$("$run" --help)
missing=$?
for o in --help --np --timeout --hang-timeout --bind-to; do echo "$help" | grep -q -- "$o" || missing=1; done
check "--help lists every option" "$missing"
[ "$("$run" -n 1 -- echo --timeout 3)" = "--timeout 3" ]
check "-- ends the options, the program's own are passed through" $?
exit "$fail"
