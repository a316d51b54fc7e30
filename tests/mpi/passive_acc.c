/* SPDX-License-Identifier: BSD-3-Clause */
/* Passive-target RMA as PGAS libraries use it (ARMCI-MPI, OpenSHMEM over MPI): a shared counter
 * with MPI_Fetch_and_op under MPI_Win_lock_all, a mutex with MPI_Compare_and_swap, an exclusive
 * lock around a get / put read-modify-write, MPI_Accumulate of doubles and MPI_Get_accumulate,
 * each checked against the serial result. Then the error classes of bad calls, with
 * MPI_ERRORS_RETURN on the window. Prints only lines any correct MPI prints identically.
 * Usage: passive_acc [rounds [noerrors]]   (default 50; noerrors skips the error checks, for
 * comparing with an MPI that does not report those errors) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define expect_class(rc, want, what) mt_expect_class(what, rc, want)

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 50;
  const int check_errors = !(argc > 2 && strcmp(argv[2], "noerrors") == 0);
  const int p = mt_size;
  const int me = mt_rank;

  /* Window layout (int64 slots): 0 counter, 1 mutex, 2-3 pair updated under an exclusive lock,
   * 4.. p doubles accumulated by everybody. */
  const int slots = 4 + p;
  MPI_Win win;
  int own = 0;
  /* PASSIVE_ACC_CREATE=1: the window is the program's own memory (MPI_Win_create), which no
   * peer maps, so every lock word and atomic goes through the transport, also on one node (with
   * UCX over tcp or rc_verbs, atomics the target's worker runs for the origin). */
  int64_t* base = mt_win_int64(slots, "PASSIVE_ACC_CREATE", &own, &win);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* 1. Counter: every fetched value is new, the total is exact. */
  MT_CHECK(MPI_Win_lock_all(0, win));
  int64_t last = -1;
  for (int i = 0; i < rounds; ++i) {
    const int64_t one = 1;
    int64_t got = -1;
    MT_CHECK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win));
    MT_CHECK(MPI_Win_flush(0, win));
    MT_EXPECT(got > last && got < (int64_t)p * rounds, "fetched %lld after %lld", (long long)got,
              (long long)last);
    last = got;
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    MT_EXPECT(base[0] == (int64_t)p * rounds, "counter %lld", (long long)base[0]);
    printf("counter %lld\n", (long long)base[0]);
  }

  /* 2. A mutex on rank p-1 by compare-and-swap, guarding a non-atomic increment of slot 2/3. */
  const int home = p - 1;
  for (int i = 0; i < rounds / 5 + 1; ++i) {
    MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    const int64_t mine = me + 1;
    const int64_t free_ = 0;
    int64_t old = -1;
    do {
      MT_CHECK(MPI_Compare_and_swap(&mine, &free_, &old, MPI_INT64_T, home, 1, win));
      MT_CHECK(MPI_Win_flush(home, win));
    } while (old != 0);
    int64_t pair[2];
    MT_CHECK(MPI_Get(pair, 2, MPI_INT64_T, home, 2, 2, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_flush(home, win));
    MT_EXPECT(pair[0] == pair[1], "torn pair %lld %lld", (long long)pair[0], (long long)pair[1]);
    pair[0] += 1;
    pair[1] += 1;
    MT_CHECK(MPI_Put(pair, 2, MPI_INT64_T, home, 2, 2, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_flush(home, win));
    int64_t back = -1;
    MT_CHECK(MPI_Compare_and_swap(&free_, &mine, &back, MPI_INT64_T, home, 1, win));
    MT_CHECK(MPI_Win_unlock(home, win));
    MT_EXPECT(back == mine, "mutex held by %lld, not by me", (long long)back);
  }
  /* 3. The same with an exclusive lock instead of the mutex, each word by its own put; and
   *    read-only epochs whose two gets complete only at the unlock: the lock's release must
   *    wait for them (and for the puts), or a writer's epoch would tear the pair they read. */
  for (int i = 0; i < rounds / 5 + 1; ++i) {
    MT_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    int64_t pair[2];
    MT_CHECK(MPI_Get(pair, 2, MPI_INT64_T, 0, 2, 2, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_flush(0, win));
    pair[0] += 1;
    pair[1] += 1;
    MT_CHECK(MPI_Put(&pair[0], 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, win));
    MT_CHECK(MPI_Put(&pair[1], 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_unlock(0, win));
    int64_t seen[2] = {-1, -2};
    MT_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MT_CHECK(MPI_Get(&seen[0], 1, MPI_INT64_T, 0, 2, 1, MPI_INT64_T, win));
    MT_CHECK(MPI_Get(&seen[1], 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_unlock(0, win));
    MT_EXPECT(seen[0] == seen[1], "exclusive epoch read a torn pair %lld %lld", (long long)seen[0],
              (long long)seen[1]);
  }
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  {
    const int64_t per = rounds / 5 + 1;
    const int64_t want = home == 0 ? 2 * per * p : per * p;
    if (me == home)
      MT_EXPECT(base[2] == want && base[3] == want, "pair %lld %lld, want %lld", (long long)base[2],
                (long long)base[3], (long long)want);
    if (me == 0 && home != 0) MT_EXPECT(base[2] == per * p, "pair %lld", (long long)base[2]);
    if (me == 0) printf("mutex and exclusive lock ok\n");
  }

  /* 4. Accumulate doubles into every rank: slot 4 + r of rank t gets r + t from rank r, plus
   *    MAX of a double, with Get_accumulate reading the old values. */
  MT_CHECK(MPI_Win_lock_all(0, win));
  for (int t = 0; t < p; ++t) {
    double v[1] = {(double)(me + t)};
    MT_CHECK(MPI_Accumulate(v, 1, MPI_DOUBLE, t, 4 + me, 1, MPI_DOUBLE, MPI_SUM, win));
    MT_CHECK(MPI_Accumulate(v, 1, MPI_DOUBLE, t, 4 + me, 1, MPI_DOUBLE, MPI_SUM, win));
  }
  MT_CHECK(MPI_Win_flush_all(win));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int r = 0; r < p; ++r) {
    double d;
    memcpy(&d, &base[4 + r], sizeof d);
    MT_EXPECT(d == 2.0 * (r + me), "slot %d holds %g, want %g", 4 + r, d, 2.0 * (r + me));
  }
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, (me + 1) % p, 0, win));
  {
    double seen[1] = {-1};
    double dummy[1] = {0};
    MT_CHECK(MPI_Get_accumulate(dummy, 1, MPI_DOUBLE, seen, 1, MPI_DOUBLE, (me + 1) % p, 4 + me, 1,
                                MPI_DOUBLE, MPI_NO_OP, win));
    MT_CHECK(MPI_Win_unlock((me + 1) % p, win));
    MT_EXPECT(seen[0] == 2.0 * (me + (me + 1) % p), "get_accumulate NO_OP read %g", seen[0]);
  }
  if (me == 0) printf("accumulate ok\n");

  /* 5. Errors come back with their class (MPI_ERRORS_RETURN) and change nothing. */
  if (!check_errors) {
    if (me == 0) printf("errors ok\n");
    MT_CHECK(MPI_Win_free(&win));
    if (own) free(base);
    return mt_finish();
  }
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  expect_class(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC, "unlock without lock");
  expect_class(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC, "flush outside an epoch");
  expect_class(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE, "bad lock type");
  expect_class(MPI_Win_lock(MPI_LOCK_SHARED, p, 0, win), MPI_ERR_RANK, "lock rank p");
  MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  expect_class(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC, "lock twice");
  {
    double d = 1;
    int64_t r = 0;
    const int64_t one = 1;
    expect_class(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, 4, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP,
                 "BAND on double");
    expect_class(MPI_Fetch_and_op(&one, &r, MPI_INT64_T, 0, slots, MPI_SUM, win), MPI_ERR_RMA_RANGE,
                 "fetch_and_op past the end");
    expect_class(MPI_Compare_and_swap(&d, &d, &r, MPI_DOUBLE, 0, 4, win), MPI_ERR_TYPE,
                 "compare_and_swap on double");
  }
  MT_CHECK(MPI_Win_unlock(0, win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    MT_EXPECT(base[0] == (int64_t)p * rounds, "counter changed to %lld", (long long)base[0]);
    printf("errors ok\n");
  }
  MT_CHECK(MPI_Win_free(&win));
  if (own) free(base);
  return mt_finish();
}
