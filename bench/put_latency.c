/* SPDX-License-Identifier: BSD-3-Clause */
/* put_latency: per iteration rank 0 issues one MPI_Put of N bytes to rank 1, then every rank calls
 * MPI_Win_fence: a fence epoch around one put (OSU osu_put_latency -s fence).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"put_latency", BENCH_PUT, 1, 100};
  return bench_main(argc, argv, &spec);
}
