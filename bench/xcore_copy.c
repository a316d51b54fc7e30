/* SPDX-License-Identifier: BSD-3-Clause */
/* xcore_copy: what a copy costs when the bytes were just written on another core, the case of
 * every collective between processes. No MPI: two processes (fork) share one mapping. In each
 * iteration both write N fresh bytes into their own slot (a hot copy from a private buffer: the
 * "application" producing its send data), raise a flag, wait for the peer's flag and copy the
 * peer's slot out into a private buffer. Only that copy out is timed: it reads N bytes whose
 * lines sit modified in the other core's cache. memcpy_bw's hot copy is the bound for bytes that
 * stay in one core's cache; this one is the bound for bytes that cross cores.
 * Same options, sizes, batches and JSON line as the RMA programs (options.h), "system":"memcpy",
 * "ranks":2; rank 0's figures. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"

enum { LINE = 64, WORDS = LINE / sizeof(long) };

/* flags[me * 2 * WORDS]: iterations whose slot I have written; flags[(me * 2 + 1) * WORDS]:
 * iterations of the peer's slot I have copied out. Each on a line of its own. */
static _Atomic long* flags;

static void wait_for(int who, int which, long v) {
  while (atomic_load_explicit(&flags[(who * 2 + which) * WORDS], memory_order_acquire) < v) {
  }
}

static void set_flag(int who, int which, long v) {
  atomic_store_explicit(&flags[(who * 2 + which) * WORDS], v, memory_order_release);
}

int main(int argc, char** argv) {
  struct bench_options o;
  const int parsed = bench_parse_options(argc, argv, 1000, 1, &o);
  if (parsed != 0) return parsed < 0 ? 0 : 2;
  const size_t slot = (o.max_bytes + 4095) / 4096 * 4096;
  char* shm =
      mmap(NULL, 2 * slot + 4 * LINE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  /* Page-aligned like the slots: no copy here falls into glibc's slow case (a destination 1-15
   * bytes after its source modulo 4 KiB, src/copy.hpp), which would measure that instead. */
  char* src = aligned_alloc(4096, slot);
  char* dst = aligned_alloc(4096, slot);
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  if (shm == MAP_FAILED || !src || !dst || !per) {
    fprintf(stderr, "xcore_copy: out of memory\n");
    return 3;
  }
  flags = (_Atomic long*)(shm + 2 * slot);
  memset(shm, 0, 2 * slot + 4 * LINE);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    perror("xcore_copy: fork");
    return 3;
  }
  const int me = child == 0 ? 1 : 0;
  char* mine = shm + (size_t)me * slot;
  const char* peers = shm + (size_t)(1 - me) * slot;
  long round = 0;
  int failed = 0;
  for (int si = 0; si < o.nsizes; ++si) {
    const size_t bytes = o.sizes[si];
    const int iters = bench_scaled_iters(o.iters, bytes, 1);
    const int warmup = bench_scaled_iters(o.warmup, bytes, 1);
    for (size_t i = 0; i < bytes; ++i) src[i] = (char)(bench_pattern(i, bytes) + me);
    for (int b = -1; b < o.repeats; ++b) { /* batch -1: warm-up */
      const int n = b < 0 ? warmup : iters;
      double copying = 0;
      for (int i = 0; i < n; ++i) {
        ++round;
        wait_for(1 - me, 1, round - 1); /* the peer has copied my previous round out */
        memcpy(mine, src, bytes);
        set_flag(me, 0, round);
        wait_for(1 - me, 0, round);
        const double t = bench_now();
        memcpy(dst, peers, bytes);
        __asm__ __volatile__("" : : "r"(dst) : "memory");
        copying += bench_now() - t;
        set_flag(me, 1, round);
      }
      if (b >= 0) per[b] = copying / n;
    }
    for (size_t i = 0; i < bytes && !failed; ++i) {
      failed = dst[i] != (char)(bench_pattern(i, bytes) + (1 - me));
    }
    if (failed) fprintf(stderr, "xcore_copy: verify failed after %zu-byte copies\n", bytes);
    double p50, min;
    bench_batch_stats(per, o.repeats, &p50, &min);
    if (me == 0) {
      bench_print_json("xcore_copy", "memcpy", "-", bytes, 2, iters, o.repeats, p50, min,
                       (double)bytes / p50 / 1e6);
    }
  }
  if (me == 1) return failed;
  int status = 0;
  waitpid(child, &status, 0);
  free(src);
  free(dst);
  free(per);
  return failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
