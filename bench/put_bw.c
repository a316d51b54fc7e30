/* SPDX-License-Identifier: BSD-3-Clause */
/* put_bw: per iteration rank 0 issues 64 MPI_Puts of N bytes to rank 1, then every rank calls
 * MPI_Win_fence once; "mbps" = 64 N / time per iteration (OSU osu_put_bw -s fence).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"put_bw", BENCH_PUT, 64, 10};
  return bench_main(argc, argv, &spec);
}
