/* SPDX-License-Identifier: BSD-3-Clause */
/* fence_latency: an empty access epoch (MPI_Win_fence with no operation) on every rank.
 * Run with --max-bytes 8: the message size does not matter. Prints one JSON line. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"fence_latency", BENCH_NONE, 1, 0};
  return bench_main(argc, argv, &spec);
}
