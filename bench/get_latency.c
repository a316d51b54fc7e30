/* SPDX-License-Identifier: BSD-3-Clause */
/* get_latency: per iteration rank 0 issues 1 x MPI_Get of N bytes to rank 1, then every rank calls
 * MPI_Win_fence. Prints one JSON line per message size. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"get_latency", BENCH_GET, 1, 0};
  return bench_main(argc, argv, &spec);
}
