/* SPDX-License-Identifier: BSD-3-Clause */
/* cas_latency: per iteration rank 0 issues one MPI_Compare_and_swap of an int64 at rank 1,
 * then every rank fences, or (--sync flush) rank 0 flushes (OSU osu_cas_latency).
 * Options and output: common.h. */
#include "common.h"

int main(int argc, char** argv) {
  static const struct bench_spec spec = {"cas_latency", BENCH_CAS, 1, 100};
  return bench_main(argc, argv, &spec);
}
