/* SPDX-License-Identifier: BSD-3-Clause */
/* exchange_floor: the floor of a one-copy alltoall between processes on this machine, as a
 * reference beside the memory-copy bound. No MPI: p processes (fork) whose send buffers lie in
 * one shared mapping, each with a private receive buffer. In iteration k every process shows
 * that its send buffer is ready (a word of its own, set to k), copies its own block, then
 * copies block `me` of every other process's send buffer as soon as that process shows k
 * (staggered: from me - 1, me - 2, ..., whichever is ready first), telling the owner after
 * each (a word per pair), and leaves once every reader of its own buffer has told it so (its
 * buffer may change after that). That is the least any alltoall that copies each byte once
 * must do: the copies of memcpy_bw's bound, but reading lines that other cores hold, with only
 * the waits a correct exchange needs (a block is read once its owner is in the call, and the
 * owner leaves once it is read), pairwise, with no barrier. With more processes than cores,
 * a wait that finds nothing to do yields the core (as onesided's do; with a core each they
 * spin), so the context switches those waits cost are in it. Nothing is registered, mapped,
 * looked up or checked.
 * (Until 2026-12-07 it waited at two barriers instead, at entry and at exit: onesided's
 * pipelined exchange beat that, by up to a quarter at 4 ranks on 2 cores.)
 *
 *   exchange_floor --ranks P [--sizes 65536,...] [--iters N] [--repeats N] [--no-verify]
 *
 * Same options, sizes, batches and JSON line as the RMA programs (options.h), "system":"memcpy",
 * "ranks":P; rank 0's time per iteration. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"

enum { LINE = 64 };

static _Atomic long* arrivals; /* barriers passed times p, on a line of its own */
static int yield_waits;        /* more processes than cores: give the core up while waiting */

static char* words; /* ready[p] then read[p][p], a line each, after `arrivals` */

/* A wait's poll that finds nothing: the core given up (more processes than cores), or a pause. */
static void idle(void) {
  if (yield_waits) {
    sched_yield();
  } else {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

/* Every process is here (between sizes: nothing is timed across it). */
static void barrier(long* gen, int p) {
  ++*gen;
  atomic_fetch_add_explicit(arrivals, 1, memory_order_acq_rel);
  while (atomic_load_explicit(arrivals, memory_order_acquire) < *gen * p) idle();
}

/* Process r's send buffer is ready for iteration *ready(r). */
static _Atomic long* ready(int r) { return (_Atomic long*)(words + (size_t)r * LINE); }
/* `reader` has copied its block of `owner`'s buffer in iteration *done(p, owner, reader). */
static _Atomic long* done(int p, int owner, int reader) {
  return (_Atomic long*)(words + (size_t)(p + owner * p + reader) * LINE);
}

/* One alltoall, iteration k: every block copied once, with the pairwise waits only. */
static void exchange(int p, int me, long k, const char* shm, size_t sendBytes, char* recv,
                     size_t n) {
  atomic_store_explicit(ready(me), k, memory_order_release);
  memcpy(recv + (size_t)me * n, shm + (size_t)me * sendBytes + (size_t)me * n, n);
  int left = p - 1;
  unsigned long long got = 0; /* bit `from`: copied */
  while (left > 0) {
    int moved = 0;
    for (int d = 1; d < p; ++d) {
      const int from = (me - d + p) % p;
      if ((got >> from & 1U) || atomic_load_explicit(ready(from), memory_order_acquire) < k) {
        continue;
      }
      memcpy(recv + (size_t)from * n, shm + (size_t)from * sendBytes + (size_t)me * n, n);
      atomic_store_explicit(done(p, from, me), k, memory_order_release);
      got |= 1ULL << from;
      --left;
      moved = 1;
    }
    if (!moved) idle();
  }
  for (int r = 0; r < p; ++r) {
    if (r == me) continue;
    while (atomic_load_explicit(done(p, me, r), memory_order_acquire) < k) idle();
  }
}

static unsigned char pat(int from, int to, size_t k) {
  return (unsigned char)(from * 31 + to * 7 + k);
}

int main(int argc, char** argv) {
  int p = 2;
  int kept = 1;
  for (int i = 1; i < argc; ++i) { /* --ranks is ours; the rest goes to the common parser */
    if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
      p = atoi(argv[++i]);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  struct bench_options o;
  const int parsed = bench_parse_options(argc, argv, 1000, 1, &o);
  if (parsed != 0) return parsed < 0 ? 0 : 2;
  if (p < 1 || p > 64) {
    fprintf(stderr, "exchange_floor: --ranks %d: expected 1 to 64\n", p);
    return 2;
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  yield_waits = cores > 0 && p > cores;
  const size_t slot = o.max_bytes;
  const size_t sendBytes = (size_t)p * slot; /* one process's send buffer */
  char* shm = mmap(NULL, (size_t)p * sendBytes + (size_t)(1 + p + p * p) * LINE,
                   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) {
    perror("exchange_floor: mmap");
    return 3;
  }
  arrivals = (_Atomic long*)(shm + (size_t)p * sendBytes);
  atomic_store(arrivals, 0);
  words = (char*)arrivals + LINE; /* zero, as the mapping is */
  fflush(stdout);
  int me = 0;
  for (int r = 1; r < p; ++r) {
    const pid_t c = fork();
    if (c < 0) {
      perror("exchange_floor: fork");
      return 3;
    }
    if (c == 0) {
      me = r;
      break;
    }
  }
  if (yield_waits) {
    /* Evenly over the CPUs, as onesided's waits balance them (left to itself the scheduler
     * sometimes splits 4 processes 3 + 1 over 2 cores for a whole run). */
    (void)bench_pin_cpu(me);
  }
  char* recv = aligned_alloc(4096, (sendBytes + 4095) / 4096 * 4096);
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  if (!recv || !per) {
    fprintf(stderr, "exchange_floor: out of memory\n");
    return 3;
  }
  char* mine = shm + (size_t)me * sendBytes;
  long gen = 0;
  long k = 0; /* exchanges so far */
  int failed = 0;
  for (int si = 0; si < o.nsizes; ++si) {
    const size_t n = o.sizes[si];
    const int iters = bench_scaled_iters(o.iters, n * (size_t)p, 1);
    const int warmup = bench_scaled_iters(o.warmup, n * (size_t)p, 1);
    barrier(&gen, p); /* every process is done with the previous size's buffers */
    for (int to = 0; to < p; ++to) {
      for (size_t k = 0; k < n; ++k) mine[(size_t)to * n + k] = (char)pat(me, to, k);
    }
    for (int b = -1; b < o.repeats; ++b) { /* batch -1: warm-up */
      const int its = b < 0 ? warmup : iters;
      const double t0 = bench_now();
      for (int i = 0; i < its; ++i) {
        exchange(p, me, ++k, shm, sendBytes, recv, n);
        __asm__ __volatile__("" : : "r"(recv) : "memory");
      }
      if (b >= 0) per[b] = (bench_now() - t0) / its;
    }
    if (o.verify) {
      for (int from = 0; from < p && !failed; ++from) {
        for (size_t k = 0; k < n && !failed; ++k) {
          failed = recv[(size_t)from * n + k] != (char)pat(from, me, k);
        }
      }
      if (failed) fprintf(stderr, "exchange_floor: rank %d: verify failed at %zu bytes\n", me, n);
    }
    double p50, min;
    bench_batch_stats(per, o.repeats, &p50, &min);
    if (me == 0) {
      bench_print_json("exchange_floor", "memcpy", "-", n, p, iters, o.repeats, p50, min,
                       (double)n * (double)p * (double)p / p50 / 1e6);
    }
  }
  free(recv);
  free(per);
  if (me != 0) return failed;
  for (int r = 1; r < p; ++r) {
    int status = 0;
    if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}
