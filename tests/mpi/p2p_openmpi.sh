#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds every tests/mpi/p2p_*.c with Debian's Open MPI (mpicc.openmpi) and runs it under
# mpirun.openmpi at the rank counts that CMakeLists.txt registers for onesided. For the record
# (the programs are checked against another MPI before onesided runs them); not a ctest test.
# Usage: p2p_openmpi.sh [PROGRAM...]     e.g. p2p_openmpi.sh p2p_basic p2p_order
# Environment: P2P_OUT (default a temporary directory) keeps binaries and logs; P2P_TIMEOUT
# (default 300) bounds each run in seconds; P2P_SKIP_LARGE=1 leaves p2p_large out.
# Exit: 0 if every run exited 0, else 1; one line per run: "ok|FAIL prog npN (seconds)".
set -u
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v mpicc.openmpi >/dev/null 2>&1 || ! command -v mpirun.openmpi >/dev/null 2>&1; then
  echo "skipped: Open MPI not installed"
  exit 0
fi
out="${P2P_OUT:-$(mktemp -d)}"
mkdir -p "$out"
limit="${P2P_TIMEOUT:-300}"
# In containers the default single-copy mechanism (CMA) is often not permitted.
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"

ranks_of() {
  case "$1" in
    p2p_basic) echo 1 2 3 4 8 ;;
    p2p_types) echo 2 3 ;;
    p2p_order) echo 2 3 4 8 ;;
    p2p_persistent) echo 1 2 4 ;;
    p2p_cancel) echo 2 3 ;;
    p2p_truncate) echo 2 ;;
    p2p_bad) echo 1 2 ;;
    p2p_threads) echo 2 4 ;;
    p2p_large) echo 2 ;;
    *) echo 2 ;;
  esac
}

if [ "$#" -gt 0 ]; then
  progs=("$@")
else
  progs=()
  for f in "$here"/p2p_*.c; do progs+=("$(basename "$f" .c)"); done
fi
status=0
for prog in "${progs[@]}"; do
  if [ "$prog" = p2p_large ] && [ "${P2P_SKIP_LARGE:-0}" = 1 ]; then
    echo "skip $prog (P2P_SKIP_LARGE=1)"
    continue
  fi
  extra=()
  [ "$prog" = p2p_threads ] && extra=(-pthread)
  if ! mpicc.openmpi -std=c11 -Wall -Wextra -O2 "${extra[@]}" -I "$here" "$here/$prog.c" \
      -o "$out/$prog" 2>"$out/$prog.build.log"; then
    echo "FAIL $prog (build, see $out/$prog.build.log)"
    cat "$out/$prog.build.log"
    status=1
    continue
  fi
  for np in $(ranks_of "$prog"); do
    start=$(date +%s)
    timeout -k 5 "$limit" mpirun.openmpi --oversubscribe --allow-run-as-root -np "$np" \
      "$out/$prog" >"$out/$prog.np$np.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    if [ "$rc" -eq 0 ]; then
      echo "ok $prog np$np (${secs}s)"
    else
      echo "FAIL $prog np$np (exit $rc, ${secs}s, log $out/$prog.np$np.log)"
      tail -n 20 "$out/$prog.np$np.log"
      status=1
    fi
  done
done
exit "$status"
