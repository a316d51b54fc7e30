#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds one MPI test program twice, with onesided's mpicc and with Debian's Open MPI
# (mpicc.openmpi), runs each under its own launcher with NP ranks, and diffs the sorted stdout:
# the programs print only lines that any correct MPI produces identically.
# Usage: compare_openmpi.sh OUR_BIN_DIR SOURCE.c NP [PROGRAM ARGS...]
#   OUR_BIN_DIR holds onesided's mpicc and onesided-run (build/bin).
# Exit: 0 same output and both succeeded, or Open MPI is not installed (prints "skipped: Open MPI
# not installed"); 1 a difference or a failure. When COMPARE_SKIP_CODE is set (ctest sets 77 and
# SKIP_RETURN_CODE 77), a skip exits with that code instead, so ctest reports the test skipped.
# Open MPI options can be added through its usual environment, e.g. OMPI_MCA_osc=ucx. At 1 rank
# Debian's Open MPI 4.1 picks an osc component that fails MPI_Win_create with MPI_ERR_WIN, so
# the script then selects osc/ucx unless OMPI_MCA_osc is already set.
set -u
if [ "$#" -lt 3 ]; then
  echo "usage: $0 OUR_BIN_DIR SOURCE.c NP [PROGRAM ARGS...]" >&2
  exit 2
fi
bindir="$1"
src="$2"
np="$3"
shift 3
if ! command -v mpicc.openmpi >/dev/null 2>&1 || ! command -v mpirun.openmpi >/dev/null 2>&1; then
  echo "skipped: Open MPI not installed"
  exit "${COMPARE_SKIP_CODE:-0}"
fi
limit="${COMPARE_TIMEOUT:-240}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
name="$(basename "$src" .c)"
cflags=(-std=c11 -O2 -Wall -Wextra)

"$bindir/mpicc" "${cflags[@]}" -o "$tmp/$name.onesided" "$src" || { echo "FAIL: onesided mpicc"; exit 1; }
mpicc.openmpi "${cflags[@]}" -o "$tmp/$name.openmpi" "$src" || { echo "FAIL: mpicc.openmpi"; exit 1; }

timeout -k 5 $((limit + 30)) "$bindir/onesided-run" -n "$np" --timeout "$limit" \
  "$tmp/$name.onesided" "$@" >"$tmp/onesided.out" 2>"$tmp/onesided.err"
ours=$?
if [ "$np" -eq 1 ] && [ -z "${OMPI_MCA_osc:-}" ]; then
  export OMPI_MCA_osc=ucx
fi
timeout -k 5 "$limit" mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
  "$tmp/$name.openmpi" "$@" >"$tmp/openmpi.out" 2>"$tmp/openmpi.err"
theirs=$?

status=0
if [ "$ours" -ne 0 ]; then
  echo "FAIL: onesided-run -n $np $name exited $ours; stderr:"
  cat "$tmp/onesided.err"
  status=1
fi
if [ "$theirs" -ne 0 ]; then
  echo "FAIL: mpirun.openmpi -np $np $name exited $theirs; stderr:"
  cat "$tmp/openmpi.err"
  status=1
fi
sort "$tmp/onesided.out" >"$tmp/onesided.sorted"
sort "$tmp/openmpi.out" >"$tmp/openmpi.sorted"
if ! diff -u --label "onesided (sorted stdout)" --label "Open MPI (sorted stdout)" \
  "$tmp/onesided.sorted" "$tmp/openmpi.sorted"; then
  echo "FAIL: $name at $np ranks: the outputs differ"
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "same output from onesided and Open MPI: $name at $np ranks ($(wc -l <"$tmp/onesided.out") lines)"
fi
exit "$status"
