#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's main command: installs the dependencies, builds, runs the examples under
# onesided-run (UCX over shared memory, the embedded default), then prints the put / get
# latency and bandwidth table next to Debian's Open MPI and MPICH, memcpy and ucx_perftest.
# Usage: tests/run_main.sh [build-dir]   (default: build)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"

if [ "${ONESIDED_SKIP_DEPS:-0}" != 1 ]; then
  "$here/tests/install_deps.sh"
fi
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONESIDED_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"

echo "== examples"
for ex in "$build"/examples/*; do
  [ -x "$ex" ] && [ -f "$ex" ] || continue
  for np in 1 4; do
    echo "-- onesided-run -n $np $(basename "$ex")"
    "$build/bin/onesided-run" -n "$np" --timeout 60 "$ex"
  done
done

echo "== benchmarks (2 ranks; medians; ratios against Debian's Open MPI and MPICH)"
"$here/bench/compare" --build "$build" --out "$build/bench-out" ${ONESIDED_BENCH_ARGS:-}
