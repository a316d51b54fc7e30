/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared harness of the RMA benchmarks. Written against the standard <mpi.h> only (C11), so
 * the same source builds with onesided (onesided_mpi_executable) and with any other MPI
 * (mpicc.openmpi). Options, statistics and the JSON line come from options.h.
 *
 * Every program runs on 2+ ranks; rank 0 is the origin, rank 1 the target, other ranks only fence.
 * One timed iteration: rank 0 issues `ops_per_iter` operations of `bytes` to rank 1 (put, get or
 * none), then every rank calls MPI_Win_fence -- one fence epoch, as in OSU's osu_put_latency -w
 * create/allocate -s fence. Iterations run in batches; rank 0 reports the median batch, divided by
 * its iterations, from its own clock (no reductions).
 *
 * Flavors: "allocate" = window from MPI_Win_allocate and origin buffer from MPI_Alloc_mem (all
 * memory from MPI); "create" = MPI_Win_create over malloc'ed memory and a malloc'ed origin buffer
 * (all user memory).
 *
 * --sync flush: instead of fences, rank 0 opens one MPI_Win_lock_all epoch around the loop and
 * completes each iteration with MPI_Win_flush(1) (OSU's -s flush); the JSON "bench" gets a
 * "_flush" suffix. --sync lock: rank 0 locks rank 1 exclusively around each iteration's
 * operations (OSU's -s lock; suffix "_lock"). --sync pscw: each iteration is one PSCW epoch,
 * rank 1 posting to rank 0 and waiting, rank 0 starting, issuing and completing (OSU's -s pscw;
 * suffix "_pscw").
 *
 * --verify (default on): before each size, the origin buffer (put) or the target window (get) is
 * filled with a size-dependent pattern; after the timed loop the target window (put) or the origin
 * buffer (get) must hold it. A mismatch prints a message and the program exits non-zero. */
#ifndef ONESIDED_BENCH_COMMON_H
#define ONESIDED_BENCH_COMMON_H

#include <mpi.h>

#include "options.h"

/* BENCH_FOP: MPI_Fetch_and_op (MPI_SUM of one int64); BENCH_ACC: MPI_Accumulate (MPI_SUM of
 * bytes / 8 doubles); BENCH_CAS: MPI_Compare_and_swap of one int64; BENCH_GACC:
 * MPI_Get_accumulate (MPI_SUM of bytes / 8 doubles). None is verified (the target's values
 * change every iteration). */
enum bench_op { BENCH_NONE, BENCH_PUT, BENCH_GET, BENCH_FOP, BENCH_ACC, BENCH_CAS, BENCH_GACC };

struct bench_spec {
  const char* name; /* JSON "bench" */
  enum bench_op op;
  int ops_per_iter;  /* 1 for latency, a window of operations for bandwidth */
  int default_iters; /* iterations per batch when --iters is not given */
};

/* Initialises MPI, parses the options, runs every message size, prints one JSON line per size on
 * rank 0, finalises. Returns the process exit code (non-zero when --verify found wrong data). */
int bench_main(int argc, char** argv, const struct bench_spec* spec);

#endif
