/* SPDX-License-Identifier: BSD-3-Clause */
/* acc_latency: per iteration rank 0 issues one MPI_Accumulate (MPI_SUM of N / 8 doubles) to rank 1,
 * then every rank fences, or (--sync flush) rank 0 flushes (OSU osu_acc_latency).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"acc_latency", BENCH_ACC, 1, 100};
  return bench_main(argc, argv, &spec);
}
