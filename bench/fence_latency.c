/* SPDX-License-Identifier: BSD-3-Clause */
/* fence_latency: an empty fence epoch: every rank calls MPI_Win_fence, no operation. One JSON line
 * with "bytes":0 (the size options are ignored).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"fence_latency", BENCH_NONE, 1, 100};
  return bench_main(argc, argv, &spec);
}
