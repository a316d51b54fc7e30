/* SPDX-License-Identifier: BSD-3-Clause */
/* get_bw: per iteration rank 0 issues 64 x MPI_Get of N bytes to rank 1, then every rank calls
 * MPI_Win_fence. Prints one JSON line per message size. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"get_bw", BENCH_GET, 64, 1};
  return bench_main(argc, argv, &spec);
}
