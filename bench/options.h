/* SPDX-License-Identifier: BSD-3-Clause */
/* The parts of the benchmark harness that need no MPI: command-line options, the message-size
 * sweep, batch statistics and the JSON line. Shared by common.c (the RMA programs) and
 * memcpy_bw.c (the no-MPI bound), so the two measure and report in exactly the same way. */
#ifndef ONESIDED_BENCH_OPTIONS_H
#define ONESIDED_BENCH_OPTIONS_H

#include <stddef.h>

enum { BENCH_MAX_SIZES = 64 };
enum bench_sync {
  BENCH_SYNC_FENCE,
  BENCH_SYNC_FLUSH,
  BENCH_SYNC_LOCK,
  BENCH_SYNC_PSCW,
  BENCH_SYNC_LOCKALL
};

struct bench_options {
  int warmup;        /* --warmup-iters: untimed iterations per size (capped for big messages) */
  int iters;         /* --iters: iterations per timed batch (capped for big messages) */
  int repeats;       /* --repeats: timed batches per size; the median batch is reported */
  int verify;        /* --verify (default) / --no-verify */
  int create;        /* --flavor create: MPI_Win_create over memory of the program's own */
  size_t win_offset; /* --win-offset: create windows start this far after a page boundary */
  int sync;          /* --sync: BENCH_SYNC_FENCE (default), _FLUSH, _LOCK, _PSCW or _LOCKALL */
  int compute_us;    /* --compute-us: rank 0 computes this long between issuing and completing */
  size_t min_bytes;  /* --min-bytes */
  size_t max_bytes;  /* --max-bytes */
  const char* label;
  size_t sizes[BENCH_MAX_SIZES]; /* the sweep: --sizes, or min..max (x8 below 4 KiB, x16 above) */
  int nsizes;
};

/* Defaults, then argv. Returns 0; -1 for --help; 1 for a bad option. The usage goes to stdout
 * when print_help is set (one rank prints it). */
int bench_parse_options(int argc, char** argv, int default_iters, int print_help,
                        struct bench_options* o);

/* Iterations for one message size: at most `want`, and at most what moves 256 MiB (at least 1),
 * so the 1 MiB bandwidth rows take about as long as the small ones. */
int bench_scaled_iters(int want, size_t bytes, int ops_per_iter);

/* Seconds per iteration of each batch in; the median and the minimum out (sorts the array). */
void bench_batch_stats(double* per_iter, int n, double* p50, double* min);

/* One JSON line on stdout, flushed. */
void bench_print_json(const char* bench, const char* system, const char* flavor, size_t bytes,
                      int ranks, int iters, int batches, double p50_s, double min_s, double mbps);

/* Seconds on the monotonic clock (the no-MPI programs' timer). */
double bench_now(void);

/* The byte expected at offset i of an n-byte transfer: differs between sizes, so stale data from
 * the previous size is caught too. */
unsigned char bench_pattern(size_t i, size_t n);

/* Pins the calling process to the (k mod n)-th of the n CPUs it may run on (the no-MPI programs
 * that share cores on purpose). 0, or -1 with errno set. */
int bench_pin_cpu(int k);

#endif
