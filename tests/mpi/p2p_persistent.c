/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent point-to-point requests (MPI-3.1 §3.9): MPI_Send_init, MPI_Ssend_init,
 * MPI_Bsend_init, MPI_Rsend_init and MPI_Recv_init in a ring (right neighbour, left neighbour;
 * the rank itself at 1 rank), each pair started 100 times (MPI_Start and MPI_Startall) with new
 * contents every time, small and large (beyond eager limits). An inactive persistent request:
 * MPI_Wait, MPI_Test and MPI_Request_get_status return at once with an empty status and keep
 * the handle; the Waitany / Testany / Waitsome / Testsome families treat it like
 * MPI_REQUEST_NULL; MPI_Request_free of it sets MPI_REQUEST_NULL. Also MPI_PROC_NULL and
 * wildcard persistent receives. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kReps = 100 };

static int left, right;

static int val(int src, int rep, int tag, int k) {
  return src * 1000003 + rep * 7919 + tag * 31 + k;
}

static void fill(int* b, int n, int src, int rep, int tag) {
  for (int k = 0; k < n; ++k) b[k] = val(src, rep, tag, k);
}

static int bad_elems(const int* b, int n, int src, int rep, int tag) {
  int bad = 0;
  for (int k = 0; k < n; ++k) bad += b[k] != val(src, rep, tag, k);
  return bad;
}

static void check_status(const char* what, int rep, const MPI_Status* st, int src, int tag,
                         int count) {
  int n = -1;
  MT_CHECK(MPI_Get_count(st, MPI_INT, &n));
  MT_EXPECT(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == count,
            "%s rep %d: status source %d tag %d count %d, expected %d %d %d", what, rep,
            st->MPI_SOURCE, st->MPI_TAG, n, src, tag, count);
}

/* Empty status (§3.7.3); the error field is not looked at (single-status calls, §3.2.5). */
static void check_empty(const char* what, const MPI_Status* st) {
  int n = -1, c = -1;
  MT_CHECK(MPI_Get_count(st, MPI_INT, &n));
  MT_CHECK(MPI_Test_cancelled(st, &c));
  MT_EXPECT(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0 && c == 0,
            "%s: not an empty status (source %d tag %d count %d cancelled %d)", what,
            st->MPI_SOURCE, st->MPI_TAG, n, c);
}

/* Inactive requests: before the first start and after a completion. */
static void check_inactive(const char* what, MPI_Request* rq) {
  char w[128];
  const MPI_Request before = *rq;
  MPI_Status st;
  int flag = -1;
  snprintf(w, sizeof w, "Wait on inactive %s", what);
  MT_CHECK(MPI_Wait(rq, &st));
  check_empty(w, &st);
  MT_EXPECT(*rq == before, "%s changed the handle", w);
  snprintf(w, sizeof w, "Test on inactive %s", what);
  MT_CHECK(MPI_Test(rq, &flag, &st));
  MT_EXPECT(flag == 1, "%s: flag %d", w, flag);
  check_empty(w, &st);
  MT_EXPECT(*rq == before, "%s changed the handle", w);
  snprintf(w, sizeof w, "Request_get_status on inactive %s", what);
  MT_CHECK(MPI_Request_get_status(*rq, &flag, &st));
  MT_EXPECT(flag == 1, "%s: flag %d", w, flag);
  check_empty(w, &st);
  int idx = -2;
  snprintf(w, sizeof w, "Waitany on inactive %s", what);
  MT_CHECK(MPI_Waitany(1, rq, &idx, &st));
  MT_EXPECT(idx == MPI_UNDEFINED, "%s: index %d", w, idx);
  check_empty(w, &st);
  MT_CHECK(MPI_Testany(1, rq, &idx, &flag, &st));
  MT_EXPECT(flag == 1 && idx == MPI_UNDEFINED, "Testany on inactive %s: flag %d index %d", what,
            flag, idx);
  int out = -2, ids[1];
  MT_CHECK(MPI_Waitsome(1, rq, &out, ids, MPI_STATUSES_IGNORE));
  MT_EXPECT(out == MPI_UNDEFINED, "Waitsome on inactive %s: %d", what, out);
  MT_CHECK(MPI_Testsome(1, rq, &out, ids, MPI_STATUSES_IGNORE));
  MT_EXPECT(out == MPI_UNDEFINED, "Testsome on inactive %s: %d", what, out);
  MPI_Status sts[1];
  MT_CHECK(MPI_Waitall(1, rq, sts));
  snprintf(w, sizeof w, "Waitall on inactive %s", what);
  check_empty(w, &sts[0]);
  MT_EXPECT(*rq == before, "%s changed the handle", w);
}

/* One persistent send mode against a persistent receive, kReps starts. */
enum { kStandard, kSync, kBuffered, kReady, kModes };
static const char* const kModeName[kModes] = {"Send_init", "Ssend_init", "Bsend_init",
                                              "Rsend_init"};

static void run_mode(int mode, int n) {
  const int tag = 10 + mode + (n > 1000 ? 100 : 0);
  int* s = malloc((size_t)n * sizeof(int));
  int* r = malloc((size_t)n * sizeof(int));
  MPI_Request q[2]; /* receive, send */
  char what[64];
  snprintf(what, sizeof what, "%s (%d ints)", kModeName[mode], n);
  MT_CHECK(MPI_Recv_init(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &q[0]));
  switch (mode) {
    case kStandard:
      MT_CHECK(MPI_Send_init(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &q[1]));
      break;
    case kSync:
      MT_CHECK(MPI_Ssend_init(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &q[1]));
      break;
    case kBuffered:
      MT_CHECK(MPI_Bsend_init(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &q[1]));
      break;
    default:
      MT_CHECK(MPI_Rsend_init(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &q[1]));
      break;
  }
  MT_EXPECT(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL, "%s: null handles", what);
  check_inactive("receive before its first start", &q[0]);
  check_inactive("send before its first start", &q[1]);
  MPI_Status sts[2];
  int reps = kReps;
#ifdef OPEN_MPI
  /* Open MPI up to 4.1.x (Debian's 4.1.4 here) sends stale or zero data when a persistent
   * buffered send beyond the eager limit is started again (its convertor is reset instead of
   * packing the application buffer anew: open-mpi/ompi#12797, backported to v4.1.x in #14366).
   * Only the first start is checked there. */
  if (mode == kBuffered && n > 1000) {
    reps = 1;
    if (mt_rank == 0) printf("skip %s restarts: Open MPI bug (ompi#12797)\n", what);
  }
#endif
  for (int rep = 0; rep < reps; ++rep) {
    fill(s, n, mt_rank, rep, tag);
    memset(r, 0, (size_t)n * sizeof(int));
    if (mode == kReady) {
      MT_CHECK(MPI_Start(&q[0]));
      MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive is posted */
      MT_CHECK(MPI_Start(&q[1]));
      MT_CHECK(MPI_Waitall(2, q, sts));
    } else if (rep % 3 == 0) {
      MT_CHECK(MPI_Startall(2, q));
      MT_CHECK(MPI_Waitall(2, q, sts));
    } else if (rep % 3 == 1) {
      /* Send first (the buffered one completes locally), receive second. */
      MT_CHECK(MPI_Start(&q[1]));
      MT_CHECK(MPI_Start(&q[0]));
      MT_CHECK(MPI_Wait(&q[0], &sts[0]));
      MT_CHECK(MPI_Wait(&q[1], &sts[1]));
    } else {
      MT_CHECK(MPI_Start(&q[0]));
      MT_CHECK(MPI_Start(&q[1]));
      int flag = 0;
      while (!flag) MT_CHECK(MPI_Testall(2, q, &flag, sts));
    }
    MT_EXPECT(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL,
              "%s rep %d: completion freed a persistent request", what, rep);
    check_status(what, rep, &sts[0], left, tag, n);
    const int bad = bad_elems(r, n, left, rep, tag);
    MT_EXPECT(bad == 0, "%s rep %d: %d ints wrong (first: %d, expected %d; rep 0's: %d)", what, rep,
              bad, r[0], val(left, rep, tag, 0), val(left, 0, tag, 0));
  }
  check_inactive("receive after completion", &q[0]);
  check_inactive("send after completion", &q[1]);
  MT_CHECK(MPI_Request_free(&q[0]));
  MT_CHECK(MPI_Request_free(&q[1]));
  MT_EXPECT(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL,
            "%s: Request_free of inactive requests left the handles", what);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  free(s);
  free(r);
}

/* All four modes at once in one Startall, 100 times: the receives are started first (the ready
 * send's among them), then a barrier, then every send. Each receive matches exactly one message:
 * (left, tag) or (MPI_ANY_SOURCE, tag) on MPI_COMM_WORLD, and (MPI_ANY_SOURCE, MPI_ANY_TAG) on a
 * dup that carries one message. Plus a send to and a receive from MPI_PROC_NULL. */
static void startall_mixed(void) {
  enum { n = 40, kR = kModes + 1, kAll = 2 * kR + 2 };
  int s[kR][n], r[kR][n];
  MPI_Request q[kAll]; /* receives [0, kR), sends [kR, 2 kR), MPI_PROC_NULL ones after */
  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  for (int m = 0; m < kModes; ++m)
    MT_CHECK(MPI_Recv_init(r[m], n, MPI_INT, m % 2 ? MPI_ANY_SOURCE : left, 50 + m, MPI_COMM_WORLD,
                           &q[m]));
  MT_CHECK(MPI_Recv_init(r[kModes], n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &q[kModes]));
  MT_CHECK(MPI_Send_init(s[0], n, MPI_INT, right, 50, MPI_COMM_WORLD, &q[kR + 0]));
  MT_CHECK(MPI_Ssend_init(s[1], n, MPI_INT, right, 51, MPI_COMM_WORLD, &q[kR + 1]));
  MT_CHECK(MPI_Bsend_init(s[2], n, MPI_INT, right, 52, MPI_COMM_WORLD, &q[kR + 2]));
  MT_CHECK(MPI_Rsend_init(s[3], n, MPI_INT, right, 53, MPI_COMM_WORLD, &q[kR + 3]));
  MT_CHECK(MPI_Send_init(s[kModes], n, MPI_INT, right, 54, dup, &q[kR + kModes]));
  int pn[4] = {1, 2, 3, 4};
  MT_CHECK(MPI_Send_init(pn, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q[2 * kR]));
  MT_CHECK(MPI_Recv_init(pn, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q[2 * kR + 1]));
  MPI_Status sts[kAll];
  for (int rep = 0; rep < kReps; ++rep) {
    for (int m = 0; m < kR; ++m) {
      fill(s[m], n, mt_rank, rep, 50 + m);
      memset(r[m], 0, sizeof r[m]);
    }
    MT_CHECK(MPI_Startall(kR, q));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* the ready send's receive is posted */
    MT_CHECK(MPI_Startall(kAll - kR, q + kR));
    MT_CHECK(MPI_Waitall(kAll, q, sts));
    for (int m = 0; m < kR; ++m) {
      char what[64];
      snprintf(what, sizeof what, "Startall mixed, %s", m < kModes ? kModeName[m] : "dup");
      check_status(what, rep, &sts[m], left, 50 + m, n);
      MT_EXPECT(bad_elems(r[m], n, left, rep, 50 + m) == 0, "%s rep %d: data", what, rep);
    }
    const MPI_Status* pst = &sts[2 * kR + 1];
    int cnt = -1;
    MT_CHECK(MPI_Get_count(pst, MPI_INT, &cnt));
    MT_EXPECT(pst->MPI_SOURCE == MPI_PROC_NULL && pst->MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "persistent receive from MPI_PROC_NULL rep %d: source %d tag %d count %d", rep,
              pst->MPI_SOURCE, pst->MPI_TAG, cnt);
    MT_EXPECT(pn[0] == 1 && pn[3] == 4, "receive from MPI_PROC_NULL wrote the buffer");
    /* Between repetitions nothing is active: Waitany over all returns MPI_UNDEFINED. */
    int idx = -2;
    MT_CHECK(MPI_Waitany(kAll, q, &idx, MPI_STATUS_IGNORE));
    MT_EXPECT(idx == MPI_UNDEFINED, "Waitany over inactive persistent requests: %d", idx);
  }
  for (int i = 0; i < kAll; ++i) {
    MT_CHECK(MPI_Request_free(&q[i]));
    MT_EXPECT(q[i] == MPI_REQUEST_NULL, "Request_free %d", i);
  }
  MT_CHECK(MPI_Comm_free(&dup));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  left = (mt_rank + mt_size - 1) % mt_size;
  right = (mt_rank + 1) % mt_size;
  /* Buffered messages in flight per rank: in run_mode a rank waits only for its own receive, so
   * around the ring it can be up to size - 1 repetitions ahead of its right neighbour, each with
   * a message still in the buffer; startall_mixed adds one small one (a barrier each time). */
  const int bufsize = (mt_size + 2) * (60000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD) +
                      2 * (40 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* attach = malloc((size_t)bufsize);
  MT_CHECK(MPI_Buffer_attach(attach, bufsize));
  for (int mode = 0; mode < kModes; ++mode) {
    run_mode(mode, 16);
    run_mode(mode, 60000); /* 240 KB */
  }
  startall_mixed();
  void* back;
  int size;
  MT_CHECK(MPI_Buffer_detach(&back, &size));
  free(attach);
  if (mt_rank == 0)
    printf("p2p_persistent: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
