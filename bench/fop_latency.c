/* SPDX-License-Identifier: BSD-3-Clause */
/* fop_latency: per iteration rank 0 issues one MPI_Fetch_and_op (MPI_SUM of one int64) on rank 1,
 * then every rank fences, or (--sync flush) rank 0 flushes (OSU osu_fop_latency).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"fop_latency", BENCH_FOP, 1, 100};
  return bench_main(argc, argv, &spec);
}
