/* SPDX-License-Identifier: BSD-3-Clause */
/* Request-based RMA: MPI_Rput / MPI_Rget / MPI_Raccumulate / MPI_Rget_accumulate under lock_all
 * and lock, completed by every completion call (Wait, Waitall, Waitany, Waitsome, Test, Testall,
 * Testany, Testsome, Request_free), MPI_PROC_NULL targets, and bad input under
 * MPI_ERRORS_RETURN (operations outside a passive epoch, bad and stale handles, a bad handle in
 * an array leaving the others alive). An MPI_Rget's data is there when its request completes;
 * the puts are checked by their targets after a flush and a barrier.
 * Output: one line per part from rank 0, the same under any MPI. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

enum { kN = 64, kRounds = 20 };

static int value(int owner, int round, int i) { return owner * 100000 + round * 1000 + i; }

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int me = mt_rank;
  const int p = mt_size;
  const int next = (me + 1) % p;
  const int prev = (me + p - 1) % p;
  int* base = NULL;
  MPI_Win win;
  /* [0, kN): this rank's own values, read by others with MPI_Rget; [kN, 2kN): written by prev
   * with MPI_Rput; [2kN]: an accumulate counter. */
  MT_CHECK(MPI_Win_allocate((2 * kN + 1) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win));
  int src[kN];
  int got[kN];
  int mode = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kN; ++i) base[i] = value(me, round, i);
    if (round == 0) base[2 * kN] = 0;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < kN; ++i) src[i] = value(me, round, i) + 7;
    memset(got, 0, sizeof got);
    /* Eight requests: four puts of 16 ints, four gets of 16 ints. */
    MPI_Request reqs[8];
    for (int k = 0; k < 4; ++k) {
      MT_CHECK(MPI_Rput(src + 16 * k, 16, MPI_INT, next, kN + 16 * k, 16, MPI_INT, win, &reqs[k]));
      MT_CHECK(MPI_Rget(got + 16 * k, 16, MPI_INT, prev, 16 * k, 16, MPI_INT, win, &reqs[4 + k]));
    }
    MPI_Status statuses[8];
    int flag = 0;
    int index = -1;
    int outcount = 0;
    int indices[8];
    switch (mode++ % 6) {
      case 0:
        MT_CHECK(MPI_Waitall(8, reqs, statuses));
        break;
      case 1:
        for (int k = 0; k < 8; ++k) MT_CHECK(MPI_Wait(&reqs[k], MPI_STATUS_IGNORE));
        break;
      case 2:
        for (int k = 0; k < 8; ++k) {
          MT_CHECK(MPI_Waitany(8, reqs, &index, &statuses[0]));
          MT_EXPECT(index >= 0 && index < 8, "waitany index %d", index);
        }
        MT_CHECK(MPI_Waitany(8, reqs, &index, MPI_STATUS_IGNORE));
        MT_EXPECT(index == MPI_UNDEFINED, "waitany on no active request: index %d", index);
        break;
      case 3:
        for (int done = 0; done < 8; done += outcount) {
          MT_CHECK(MPI_Waitsome(8, reqs, &outcount, indices, statuses));
          MT_EXPECT(outcount > 0, "waitsome outcount %d", outcount);
        }
        MT_CHECK(MPI_Waitsome(8, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
        MT_EXPECT(outcount == MPI_UNDEFINED, "waitsome on no active request: %d", outcount);
        break;
      case 4:
        for (int k = 0; k < 8; ++k) {
          do {
            MT_CHECK(MPI_Test(&reqs[k], &flag, MPI_STATUS_IGNORE));
          } while (!flag);
        }
        do {
          MT_CHECK(MPI_Testany(8, reqs, &index, &flag, MPI_STATUS_IGNORE));
        } while (!flag);
        MT_EXPECT(index == MPI_UNDEFINED, "testany on no active request: index %d", index);
        break;
      default:
        do {
          MT_CHECK(MPI_Testall(8, reqs, &flag, MPI_STATUSES_IGNORE));
        } while (!flag);
        break;
    }
    for (int k = 0; k < 8; ++k) MT_EXPECT(reqs[k] == MPI_REQUEST_NULL, "request %d not null", k);
    /* Rget data is there once the request completed, before any flush. */
    int bad = 0;
    for (int i = 0; i < kN; ++i) bad += got[i] != value(prev, round, i);
    MT_EXPECT(bad == 0, "round %d: %d wrong values from rank %d's rget", round, bad, prev);
    /* Accumulates: counter at rank 0 (a request freed at once) and a fetch from next. */
    const int one = 1;
    int old = -1;
    MPI_Request acc;
    MT_CHECK(MPI_Raccumulate(&one, 1, MPI_INT, 0, 2 * kN, 1, MPI_INT, MPI_SUM, win, &acc));
    MT_CHECK(MPI_Request_free(&acc));
    MT_EXPECT(acc == MPI_REQUEST_NULL, "request_free sets MPI_REQUEST_NULL");
    MT_CHECK(MPI_Rget_accumulate(NULL, 0, MPI_INT, &old, 1, MPI_INT, next, 0, 1, MPI_INT, MPI_NO_OP,
                                 win, &acc));
    MT_CHECK(MPI_Wait(&acc, MPI_STATUS_IGNORE));
    MT_EXPECT(old == value(next, round, 0), "rget_accumulate no_op %d", old);
    /* MPI_PROC_NULL: a request that is complete at once. */
    MT_CHECK(MPI_Rput(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &acc));
    MT_CHECK(MPI_Test(&acc, &flag, MPI_STATUS_IGNORE));
    MT_EXPECT(flag == 1 && acc == MPI_REQUEST_NULL, "proc_null request");
    MT_CHECK(MPI_Win_unlock_all(win));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    bad = 0;
    for (int i = 0; i < kN; ++i) bad += base[kN + i] != value(prev, round, i) + 7;
    MT_EXPECT(bad == 0, "round %d: %d wrong values put by rank %d", round, bad, prev);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  if (me == 0) {
    MT_EXPECT(base[2 * kN] == kRounds * p, "counter %d, expected %d", base[2 * kN], kRounds * p);
    printf("lock_all requests ok\n");
  }

  /* Under MPI_Win_lock: requests to the locked target, completed after the unlock too. */
  MT_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
  MPI_Request r[2];
  int word = 4242 + me;
  int seen = -1;
  MT_CHECK(MPI_Rput(&word, 1, MPI_INT, next, kN, 1, MPI_INT, win, &r[0]));
  MT_CHECK(MPI_Rget(&seen, 1, MPI_INT, next, 0, 1, MPI_INT, win, &r[1]));
  MT_CHECK(MPI_Win_unlock(next, win));
  MT_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  MT_EXPECT(seen == value(next, kRounds - 1, 0), "rget under lock %d", seen);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_EXPECT(base[kN] == 4242 + prev, "rput under lock %d", base[kN]);
  if (me == 0) printf("lock requests ok\n");

#ifdef ONESIDED_MPI
  /* Bad input. */
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Request q = 777;
  MT_CHECK(MPI_Win_fence(0, win));
  mt_expect_class("MPI_Rput in a fence epoch",
                  MPI_Rput(&word, 1, MPI_INT, next, 0, 1, MPI_INT, win, &q), MPI_ERR_RMA_SYNC);
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  mt_expect_class("MPI_Rget with no epoch",
                  MPI_Rget(&seen, 1, MPI_INT, next, 0, 1, MPI_INT, win, &q), MPI_ERR_RMA_SYNC);
  MT_EXPECT(q == 777, "a failed MPI_Rget set the request to %d", q);
  MT_CHECK(MPI_Win_lock_all(0, win));
  mt_expect_class("MPI_Rput past the window",
                  MPI_Rput(&word, 1, MPI_INT, next, 2 * kN + 1, 1, MPI_INT, win, &q),
                  MPI_ERR_RMA_RANGE);
  MT_EXPECT(q == 777, "a failed MPI_Rput set the request to %d", q);
  mt_expect_class("MPI_Rput with a NULL request",
                  MPI_Rput(&word, 1, MPI_INT, next, 0, 1, MPI_INT, win, NULL), MPI_ERR_ARG);
  mt_expect_class("MPI_Raccumulate with MPI_OP_NULL",
                  MPI_Raccumulate(&word, 1, MPI_INT, next, 0, 1, MPI_INT, MPI_OP_NULL, win, &q),
                  MPI_ERR_OP);
  MT_CHECK(MPI_Rget(&seen, 1, MPI_INT, next, 0, 1, MPI_INT, win, &r[0]));
  MPI_Request stale = r[0];
  MT_CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  mt_expect_class("MPI_Wait on a completed handle", MPI_Wait(&stale, MPI_STATUS_IGNORE),
                  MPI_ERR_REQUEST);
  MPI_Request garbage = 123456789;
  mt_expect_class("MPI_Wait on a garbage handle", MPI_Wait(&garbage, MPI_STATUS_IGNORE),
                  MPI_ERR_REQUEST);
  MPI_Request three[3];
  MT_CHECK(MPI_Rget(&seen, 1, MPI_INT, next, 0, 1, MPI_INT, win, &three[0]));
  MT_CHECK(MPI_Rget(&word, 1, MPI_INT, prev, 0, 1, MPI_INT, win, &three[1]));
  three[2] = stale;
  mt_expect_class("MPI_Waitall with a stale handle at index 2",
                  MPI_Waitall(3, three, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
  MT_EXPECT(three[0] != MPI_REQUEST_NULL && three[1] != MPI_REQUEST_NULL,
            "the good requests were left alone");
  mt_expect_class("MPI_Waitall with a negative count", MPI_Waitall(-1, three, MPI_STATUSES_IGNORE),
                  MPI_ERR_COUNT);
  three[2] = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Waitall(3, three, MPI_STATUSES_IGNORE));
  MPI_Request null_req = MPI_REQUEST_NULL;
  mt_expect_class("MPI_Request_free of MPI_REQUEST_NULL", MPI_Request_free(&null_req),
                  MPI_ERR_REQUEST);
  MPI_Status st;
  st.MPI_TAG = 99;
  MT_CHECK(MPI_Wait(&null_req, &st));
  MT_EXPECT(st.MPI_TAG == MPI_ANY_TAG, "wait on MPI_REQUEST_NULL: empty status");
  MT_CHECK(MPI_Win_unlock_all(win));
#endif
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_free(&win));
  return mt_finish();
}
