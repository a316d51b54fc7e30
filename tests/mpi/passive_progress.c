/* SPDX-License-Identifier: BSD-3-Clause */
/* Passive-target progress: rank 0 "computes" (makes no MPI call at all) while every other rank
 * locks its window, runs atomics, accumulates, puts and gets against it, and unlocks. They must
 * finish while rank 0 is still away: with UCX over tcp or rc_verbs without device atomics, UCX
 * runs atomics and RMA in software at the target, and only a progress thread serves them then.
 * Rank 0 computes until the origins' "done" count (a word of its window that each origin raises
 * with MPI_Fetch_and_op as its last act) reaches p - 1, reading it with plain atomic loads, or
 * until a deadline; then it checks every result.
 * Usage: passive_progress [rounds]  (default 20). PASSIVE_PROGRESS_CREATE=1: the window is the
 * program's own memory (MPI_Win_create), which no peer maps, so everything goes through the
 * transport also on one node. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpitest.h"

enum { kCounter, kMutex, kFetch, kDone, kPut, kDoubles };
#define DOUBLES 8

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  const int p = mt_size;
  const int me = mt_rank;
  /* int64 slots as the enum says, then p put slots, then DOUBLES doubles. */
  const int slots = kDoubles + p + DOUBLES;
  MPI_Win win;
  int own = 0;
  int64_t* base = mt_win_int64(slots, "PASSIVE_PROGRESS_CREATE", &own, &win);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  if (me == 0) {
    /* Away from MPI: a deadline well inside the launcher's limit. */
    const double start = now_s();
    const double deadline = start + 60.0;
    int64_t done = 0;
    while ((done = __atomic_load_n(&base[kDone], __ATOMIC_ACQUIRE)) < p - 1 && now_s() < deadline) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    MT_EXPECT(done == p - 1, "only %lld of %d origins finished while rank 0 computed for %.0f s",
              (long long)done, p - 1, now_s() - start);
    if (done == p - 1) printf("all %d origins finished while rank 0 computed\n", p - 1);
  } else {
    const int64_t one = 1;
    const double dv[DOUBLES] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int r = 0; r < rounds; ++r) {
      /* A read-modify-write under the exclusive lock: exact only if the lock excludes. */
      MT_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      int64_t c = -1;
      MT_CHECK(MPI_Get(&c, 1, MPI_INT64_T, 0, kCounter, 1, MPI_INT64_T, win));
      MT_CHECK(MPI_Win_flush(0, win));
      ++c;
      MT_CHECK(MPI_Put(&c, 1, MPI_INT64_T, 0, kCounter, 1, MPI_INT64_T, win));
      MT_CHECK(MPI_Win_unlock(0, win));

      /* A mutex by compare-and-swap, spinning under a shared lock. */
      MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
      const int64_t free_ = 0;
      const int64_t mine = me;
      int64_t seen = -1;
      do {
        MT_CHECK(MPI_Compare_and_swap(&mine, &free_, &seen, MPI_INT64_T, 0, kMutex, win));
        MT_CHECK(MPI_Win_flush(0, win));
      } while (seen != 0);
      MT_CHECK(MPI_Compare_and_swap(&free_, &mine, &seen, MPI_INT64_T, 0, kMutex, win));
      MT_CHECK(MPI_Win_flush(0, win));
      MT_EXPECT(seen == me, "mutex held by %lld while rank %d released it", (long long)seen, me);

      /* Atomics and accumulates (doubles: the software path where there is one). */
      int64_t got = -1;
      MT_CHECK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, kFetch, MPI_SUM, win));
      MT_CHECK(MPI_Accumulate(dv, DOUBLES, MPI_DOUBLE, 0, kDoubles + p, DOUBLES, MPI_DOUBLE,
                              MPI_SUM, win));
      const int64_t mark = (int64_t)me * 1000 + r;
      MT_CHECK(MPI_Put(&mark, 1, MPI_INT64_T, 0, kPut + me, 1, MPI_INT64_T, win));
      MT_CHECK(MPI_Win_flush(0, win));
      int64_t back = -1;
      MT_CHECK(MPI_Get(&back, 1, MPI_INT64_T, 0, kPut + me, 1, MPI_INT64_T, win));
      MT_CHECK(MPI_Win_unlock(0, win));
      MT_EXPECT(back == mark, "read back %lld, put %lld", (long long)back, (long long)mark);
      MT_EXPECT(got >= 0 && got < (int64_t)(p - 1) * rounds, "fetched %lld", (long long)got);
    }
    MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    int64_t ignored = 0;
    MT_CHECK(MPI_Fetch_and_op(&one, &ignored, MPI_INT64_T, 0, kDone, MPI_SUM, win));
    MT_CHECK(MPI_Win_unlock(0, win));
  }

  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    const int64_t total = (int64_t)(p - 1) * rounds;
    MT_EXPECT(base[kCounter] == total, "counter %lld, expected %lld", (long long)base[kCounter],
              (long long)total);
    MT_EXPECT(base[kFetch] == total, "fetch-and-op sum %lld, expected %lld",
              (long long)base[kFetch], (long long)total);
    MT_EXPECT(base[kMutex] == 0, "mutex left held by %lld", (long long)base[kMutex]);
    const double* d = (const double*)&base[kDoubles + p];
    for (int i = 0; i < DOUBLES; ++i) {
      MT_EXPECT(d[i] == (double)total * (i + 1), "double %d: %g, expected %g", i, d[i],
                (double)total * (i + 1));
    }
    for (int r = 1; r < p; ++r) {
      MT_EXPECT(base[kPut + r] == (int64_t)r * 1000 + rounds - 1, "put slot %d: %lld", r,
                (long long)base[kPut + r]);
    }
    MT_CHECK(MPI_Win_unlock(0, win));
  }
  MT_CHECK(MPI_Win_free(&win));
  if (own) free(base);
  return mt_finish();
}
