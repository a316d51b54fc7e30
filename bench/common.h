/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared harness of the RMA benchmarks. Written against the standard <mpi.h> only, so the
 * same source builds with onesided's mpicc and with any other MPI (mpicc.openmpi). */
#ifndef ONESIDED_BENCH_COMMON_H
#define ONESIDED_BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>

/* What one timed iteration does: `ops` operations of `bytes` by rank 0 to rank 1 (put or get,
 * or none), then MPI_Win_fence on every rank. */
enum bench_op { BENCH_NONE, BENCH_PUT, BENCH_GET };

struct bench_spec {
  const char* name;  /* JSON "bench" */
  enum bench_op op;
  int ops_per_iter;  /* 1 for latency, a window of operations for bandwidth */
  int report_bw;     /* print MB/s as the main figure */
};

/* Parses the options, runs every message size, prints one JSON line per size on rank 0.
 * Returns the process exit code (non-zero when --verify found wrong data). */
int bench_main(int argc, char** argv, const struct bench_spec* spec);

#endif
