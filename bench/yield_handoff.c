/* SPDX-License-Identifier: BSD-3-Clause */
/* yield_handoff: what it costs one core to go from one process to another, the price every
 * collective pays per rank and call when there are more ranks than cores. No MPI: two
 * processes (fork) pinned to one CPU take turns through a word in a shared mapping; each, on
 * its turn, advances the word and yields, and polls it (yielding) until its next turn. The
 * figure is the time per turn: one sched_yield, one switch between processes, one load of a
 * line the other wrote. With p ranks on c cores, each core runs p / c ranks at least once per
 * collective (a rank cannot leave a call before its core-mates have entered it), so a call
 * costs at least p / c of these per core on top of its copies: the least an oversubscribed
 * exchange between processes can add to the memory-copy bound (bench/coll_compare prints it).
 * Same options and JSON line as the other no-MPI programs (options.h), "system":"sched",
 * "bytes":0, "ranks":2; the sizes are ignored. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"

int main(int argc, char** argv) {
  struct bench_options o;
  const int parsed = bench_parse_options(argc, argv, 100000, 1, &o);
  if (parsed != 0) return parsed < 0 ? 0 : 2;
  _Atomic long* turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  if (turn == MAP_FAILED || !per) {
    fprintf(stderr, "yield_handoff: out of memory\n");
    return 3;
  }
  /* Both on the first CPU this process may use: the handoff is within one core. */
  if (bench_pin_cpu(0) != 0) perror("yield_handoff: sched_setaffinity");
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    perror("yield_handoff: fork");
    return 3;
  }
  const long me = child == 0 ? 1 : 0;
  long next = me;                        /* the next value of the word that is my turn */
  for (int b = -1; b < o.repeats; ++b) { /* batch -1: warm-up */
    const int n = b < 0 ? o.warmup : o.iters;
    const double t0 = bench_now();
    for (int i = 0; i < n; ++i, next += 2) {
      while (atomic_load_explicit(turn, memory_order_acquire) != next) sched_yield();
      atomic_store_explicit(turn, next + 1, memory_order_release);
      sched_yield();
    }
    /* n turns of mine and n of the peer's in this batch. */
    if (b >= 0) per[b] = (bench_now() - t0) / (2.0 * n);
  }
  if (me == 1) return 0;
  double p50, min;
  bench_batch_stats(per, o.repeats, &p50, &min);
  bench_print_json("yield_handoff", "sched", "-", 0, 2, o.iters, o.repeats, p50, min, 0);
  int status = 0;
  waitpid(child, &status, 0);
  free(per);
  return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}
