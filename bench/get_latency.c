/* SPDX-License-Identifier: BSD-3-Clause */
/* get_latency: per iteration rank 0 issues one MPI_Get of N bytes from rank 1, then every rank
 * calls MPI_Win_fence: a fence epoch around one get (OSU osu_get_latency -s fence). Options and
 * output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"get_latency", BENCH_GET, 1, 100};
  return bench_main(argc, argv, &spec);
}
