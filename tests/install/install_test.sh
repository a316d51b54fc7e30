#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build into a temporary prefix and builds against it the three ways users do:
# find_package(onesided), pkg-config, and the installed mpicc wrapper (then runs the results
# under the installed onesided-run and its mpirun alias).
# Usage: install_test.sh <build-dir> <source-dir>
set -euo pipefail
build="$1"
src="$2"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/onesided-run bin/onesided-info bin/mpirun bin/mpiexec bin/mpicc bin/mpicxx include/mpi.h \
         include/onesided/onesided.hpp lib/libonesided.so lib/libmpi.so \
         lib/pkgconfig/onesided.pc lib/cmake/onesided/onesidedConfig.cmake; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
# The installed onesided-info finds the installed library (its rpath) and reports.
"$prefix/bin/onesided-info" --settings | grep -q ONESIDED_TRANSPORT
# find_package
cmake -S "$src/tests/install/consumer" -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$prefix/consumer/consumer"
# pkg-config
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" c++ -std=c++20 "$src/tests/install/consumer/main.cpp" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs onesided) \
  -Wl,-rpath,"$prefix/lib" -o "$prefix/consumer-pc"
"$prefix/consumer-pc"
# the installed wrapper and launcher
cat > "$prefix/ring.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank, size, *buf;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  int ok = *buf == (rank + size - 1) % size;
  MPI_Win_free(&win);
  MPI_Finalize();
  return ok ? 0 : 1;
}
C
"$prefix/bin/mpicc" "$prefix/ring.c" -o "$prefix/ring"
"$prefix/bin/mpicc" -c "$prefix/ring.c" -o "$prefix/ring.o"
"$prefix/bin/mpicc" "$prefix/ring.o" -o "$prefix/ring2"
"$prefix/bin/onesided-run" -n 3 --timeout 60 "$prefix/ring"
"$prefix/bin/mpirun" -n 2 --timeout 60 "$prefix/ring2"
echo "install test: ok"
