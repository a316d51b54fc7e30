/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared harness of the point-to-point benchmarks (p2p_latency, p2p_bw, p2p_rate,
 * p2p_mt_rate). Written against the standard <mpi.h> only (C11), so the same sources build with
 * onesided and with Debian's Open MPI and MPICH (bench/openmpi/, bench/mpich/).
 *
 * Options: those of the RMA programs (options.h: --iters, --repeats, --warmup-iters,
 * --min-bytes, --max-bytes, --sizes, --label, --verify / --no-verify), except that sizes may be
 * 0 and the sweep is 0, 1, then x8 up to 4 KiB and x4 above (0, 1, 8, 64, 512, 4K, 16K, 64K,
 * 256K, 1M, 4M), plus:
 *   --window N        messages in flight per iteration (p2p_bw, p2p_rate, p2p_mt_rate; 64)
 *   --bidir           p2p_bw: both ranks send and receive a window at once (osu_bibw)
 *   --pairs N         p2p_rate: N sending ranks 0..N-1, each to rank i + N (needs 2N ranks)
 *   --threads T       p2p_mt_rate: T threads per rank (default 4)
 *   --per-thread comm|tag  p2p_mt_rate: each thread's messages on its own MPI_Comm_dup of
 *                     MPI_COMM_WORLD (default) or on MPI_COMM_WORLD with its own tag
 *   --alloc-mem       buffers from MPI_Alloc_mem (JSON "flavor":"alloc_mem"); default
 *                     page-aligned posix_memalign memory, as the OSU benchmarks use ("malloc")
 *
 * Output: one JSON line per size on rank 0, the same fields as the RMA programs ("bench",
 * "system" (--label), "flavor", "bytes", "ranks", "iters", "batches", "p50_us", "min_us",
 * "mbps") plus "window", "msgs_per_iter" and "mmsgs" (millions of messages per second at the
 * median batch). Timing is rank 0's clock; the median of --repeats batches is reported.
 *
 * --verify (default): every sender fills its buffer with a size-dependent pattern before each
 * size; after the timed loop every receiver checks all bytes of its receive buffer and the
 * count and source of its last receive. A mismatch prints a message and the program exits 1. */
#ifndef ONESIDED_BENCH_P2P_COMMON_H
#define ONESIDED_BENCH_P2P_COMMON_H

#include <mpi.h>
#include <stddef.h>

#include "options.h"

struct p2p_options {
  struct bench_options b; /* sizes, iterations, repeats, label, verify */
  int window;             /* --window */
  int bidir;              /* --bidir */
  int pairs;              /* --pairs */
  int threads;            /* --threads */
  int per_thread_tag;     /* --per-thread tag */
  int alloc_mem;          /* --alloc-mem */
};

/* Every MPI call is checked (MPI_COMM_WORLD returns errors); a failure names the call, the line
 * and the error, and aborts. */
#define P2P_CHECK(call)                                                       \
  do {                                                                        \
    int p2p_rc_ = (call);                                                     \
    if (p2p_rc_ != MPI_SUCCESS) p2p_fail(#call, p2p_rc_, __FILE__, __LINE__); \
  } while (0)
void p2p_fail(const char* what, int rc, const char* file, int line);

/* MPI_Init_thread(thread_level) (MPI_Init for MPI_THREAD_SINGLE), MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD, the options (default sizes: the sweep from def_min to def_max), the header
 * line on stderr. Returns -1 to run on, else the exit code to return after it finalized MPI
 * (0 after --help, 2 for bad options or fewer than min_ranks ranks). *provided gets the thread
 * level MPI_Init_thread gave. */
int p2p_setup(int argc, char** argv, const char* name, int default_iters, size_t def_min,
              size_t def_max, int thread_level, int min_ranks, struct p2p_options* o, int* rank,
              int* size, int* provided);

/* Buffers of at least bytes (at least 1), page-aligned or from MPI_Alloc_mem (--alloc-mem). */
char* p2p_alloc(const struct p2p_options* o, size_t bytes);
void p2p_free(const struct p2p_options* o, char* p);

/* The sender's data for one size; salt tells the threads' (or ranks') messages apart. */
void p2p_fill(char* buf, size_t bytes, int salt);

/* The receiver's check after the timed loop: every byte of buf and the last receive's status
 * (count == bytes, source == want_source). Returns 1 with a message on stderr on a mismatch. */
int p2p_check(const char* name, int rank, const char* buf, size_t bytes, int salt,
              const MPI_Status* last, int want_source);

/* The JSON line for one size: per holds the seconds per iteration of each batch (sorted here);
 * bytes_per_iter and msgs_per_iter give "mbps" and "mmsgs" at the median batch. */
void p2p_report(const char* bench, const struct p2p_options* o, size_t bytes, int ranks, int iters,
                double* per, double bytes_per_iter, double msgs_per_iter);

#endif
