/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Cancel (MPI-3.1 §3.8.4) in a ring (right neighbour, left neighbour):
 *  - a posted receive that nothing matches: cancelled (MPI_Test_cancelled true), buffer untouched;
 *    by MPI_Wait, MPI_Test and MPI_Waitall; with a specific source and with MPI_ANY_SOURCE;
 *  - a receive that has completed (seen by MPI_Request_get_status) but not been waited for: the
 *    cancel does nothing, the data is there and MPI_Test_cancelled is false;
 *  - an Isend / Issend (small and large): either outcome is allowed, but exactly one holds:
 *    cancelled and never received, or not cancelled and received intact. The sender tells the
 *    receiver which in a second message. MPI_Wait after MPI_Cancel must be local; Open MPI's
 *    is not for a large send (it waits for the receiver), so with OPEN_MPI a send still pending
 *    half a second after the cancel is received instead of failing the check;
 *  - a persistent receive: the started request is cancelled, stays allocated and inactive, and
 *    is started again for a message that then arrives. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int left, right;

/* Seconds a cancelled send may take to complete. Generous (a loaded machine, a peer's progress
 * thread that must answer); with Open MPI, whose cancelled sends never complete alone, short. */
#ifdef OPEN_MPI
static const double kPatience = 0.5;
#else
static const double kPatience = 20.0;
#endif

static int val(int src, int tag, int k) { return src * 100003 + tag * 101 + k; }

static int cancelled_of(const MPI_Status* st) {
  int c = -1;
  MT_CHECK(MPI_Test_cancelled(st, &c));
  return c;
}

static void cancel_unmatched_receives(void) {
  int buf[8];
  for (int k = 0; k < 8; ++k) buf[k] = -k;
  MPI_Request rq;
  MPI_Status st;
  /* Tags 900+ are never sent. */
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, left, 900, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Cancel(&rq));
  MT_EXPECT(rq != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_EXPECT(cancelled_of(&st) == 1, "cancelled receive (Wait): not cancelled");
  MT_EXPECT(rq == MPI_REQUEST_NULL, "Wait of a cancelled receive left the request");
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &rq));
  MT_CHECK(MPI_Cancel(&rq));
  int flag = 0;
  while (!flag) MT_CHECK(MPI_Test(&rq, &flag, &st));
  MT_EXPECT(cancelled_of(&st) == 1, "cancelled wildcard receive (Test): not cancelled");
  MPI_Request q[3];
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, MPI_ANY_SOURCE, 901, MPI_COMM_WORLD, &q[0]));
  q[1] = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, right, 902, MPI_COMM_WORLD, &q[2]));
  MT_CHECK(MPI_Cancel(&q[2]));
  MT_CHECK(MPI_Cancel(&q[0]));
  MPI_Status sts[3];
  MT_CHECK(MPI_Waitall(3, q, sts));
  MT_EXPECT(cancelled_of(&sts[0]) == 1 && cancelled_of(&sts[2]) == 1,
            "cancelled receives (Waitall): not cancelled");
  MT_EXPECT(cancelled_of(&sts[1]) == 0, "MPI_REQUEST_NULL slot reported cancelled");
  int bad = 0;
  for (int k = 0; k < 8; ++k) bad += buf[k] != -k;
  MT_EXPECT(bad == 0, "cancelled receives wrote the buffer");
  /* A message sent afterwards with the cancelled receives' tag goes to the next receive. */
  int one = val(mt_rank, 900, 0), got = 0;
  MT_CHECK(MPI_Irecv(&got, 1, MPI_INT, left, 900, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(&one, 1, MPI_INT, right, 900, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_EXPECT(got == val(left, 900, 0) && cancelled_of(&st) == 0, "receive after cancels: %d", got);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void cancel_completed_receive(void) {
  int s[4], r[4] = {0, 0, 0, 0};
  for (int k = 0; k < 4; ++k) s[k] = val(mt_rank, 10, k);
  MPI_Request rq, sq;
  MPI_Status st;
  MT_CHECK(MPI_Irecv(r, 4, MPI_INT, left, 10, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Isend(s, 4, MPI_INT, right, 10, MPI_COMM_WORLD, &sq));
  int flag = 0;
  while (!flag) MT_CHECK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Cancel(&rq));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_EXPECT(cancelled_of(&st) == 0, "a completed receive was reported cancelled");
  int n = -1;
  MT_CHECK(MPI_Get_count(&st, MPI_INT, &n));
  MT_EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 10 && n == 4,
            "completed-then-cancelled receive: status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, n);
  int bad = 0;
  for (int k = 0; k < 4; ++k) bad += r[k] != val(left, 10, k);
  MT_EXPECT(bad == 0, "completed-then-cancelled receive: data");
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Cancel of a send: the outcome goes to the receiver with tag + 1 on the same communicator. */
static void cancel_send(int sync, int n, int tag, int before_barrier) {
  int* s = malloc((size_t)n * sizeof(int));
  int* r = malloc((size_t)n * sizeof(int));
  for (int k = 0; k < n; ++k) s[k] = val(mt_rank, tag, k);
  MPI_Request sq;
  MPI_Status st;
  if (sync) {
    MT_CHECK(MPI_Issend(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq));
  } else {
    MT_CHECK(MPI_Isend(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq));
  }
  /* Optionally the receiver is given time to see the message first (it does not receive it). */
  if (before_barrier) MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Cancel(&sq));
  /* MPI_Wait on a request marked for cancellation is local (§3.8.4); polled with MPI_Test for at
   * most kPatience seconds so that an MPI where it is not ends in a failed check, not a hang. */
  int flag = 0;
  const double t0 = MPI_Wtime();
  while (!flag && MPI_Wtime() - t0 < kPatience) MT_CHECK(MPI_Test(&sq, &flag, &st));
  /* 0 not cancelled, 1 cancelled, 2 still pending */
  int c = flag ? cancelled_of(&st) : 2;
  if (c == 2) {
#ifdef OPEN_MPI
    /* Open MPI (ob1) does not cancel a send whose rendezvous has begun, and its MPI_Wait then
     * waits for the receiver: the receiver is told to take the message. */
    if (mt_rank == 0)
      printf("Open MPI: %s of %d ints not completed %g s after MPI_Cancel (not local)\n",
             sync ? "Issend" : "Isend", n, kPatience);
#else
    MT_EXPECT(0, "%s of %d ints: MPI_Wait after MPI_Cancel is not local (pending after %g s)",
              sync ? "Issend" : "Isend", n, kPatience);
#endif
  }
  MT_EXPECT(c >= 0 && c <= 2, "Test_cancelled gave %d", c);
  MT_CHECK(MPI_Send(&c, 1, MPI_INT, right, tag + 1, MPI_COMM_WORLD));
  int peer_c = -1;
  MT_CHECK(MPI_Recv(&peer_c, 1, MPI_INT, left, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (peer_c == 1) {
    /* Cancelled: the message must never arrive. Every rank has finished its cancel. */
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int found = 1;
    MT_CHECK(MPI_Iprobe(left, tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE));
    MT_EXPECT(found == 0, "%s of %d ints: cancelled, but the message arrived",
              sync ? "Issend" : "Isend", n);
    if (found) MT_CHECK(MPI_Recv(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  } else {
    memset(r, 0, (size_t)n * sizeof(int));
    MT_CHECK(MPI_Recv(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int k = 0; k < n; ++k) bad += r[k] != val(left, tag, k);
    MT_EXPECT(bad == 0, "%s of %d ints: not cancelled, but %d ints wrong",
              sync ? "Issend" : "Isend", n, bad);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  if (c == 2) {
    MT_CHECK(MPI_Wait(&sq, &st));
    MT_EXPECT(cancelled_of(&st) == 0, "a send that was received reports cancelled");
  }
  if (mt_rank == 0)
    printf("cancel of %s (%d ints%s): %s\n", sync ? "Issend" : "Isend", n,
           before_barrier ? ", after a barrier" : "",
           c == 1   ? "cancelled"
           : c == 0 ? "not cancelled"
                    : "pending, then received");
  free(s);
  free(r);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void cancel_persistent_receive(void) {
  int r[3] = {-1, -2, -3}, s[3];
  MPI_Request pq;
  MPI_Status st;
  MT_CHECK(MPI_Recv_init(r, 3, MPI_INT, left, 30, MPI_COMM_WORLD, &pq));
  MT_CHECK(MPI_Start(&pq));
  MT_CHECK(MPI_Cancel(&pq));
  MT_CHECK(MPI_Wait(&pq, &st));
  MT_EXPECT(cancelled_of(&st) == 1, "persistent receive: not cancelled");
  MT_EXPECT(pq != MPI_REQUEST_NULL, "Wait freed a cancelled persistent request");
  MT_EXPECT(r[0] == -1 && r[2] == -3, "cancelled persistent receive wrote the buffer");
  /* Inactive now: Wait returns at once, not cancelled (an empty status). */
  MT_CHECK(MPI_Wait(&pq, &st));
  MT_EXPECT(cancelled_of(&st) == 0, "inactive persistent request: status still cancelled");
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every receive cancelled before anything is sent */
  for (int k = 0; k < 3; ++k) s[k] = val(mt_rank, 30, k);
  MT_CHECK(MPI_Start(&pq));
  MT_CHECK(MPI_Send(s, 3, MPI_INT, right, 30, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&pq, &st));
  MT_EXPECT(cancelled_of(&st) == 0, "restarted persistent receive reported cancelled");
  MT_EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == 30, "restarted persistent receive status");
  MT_EXPECT(r[0] == val(left, 30, 0) && r[2] == val(left, 30, 2),
            "restarted persistent receive data");
  /* Cancel again, and free the inactive request. */
  MT_CHECK(MPI_Start(&pq));
  MT_CHECK(MPI_Cancel(&pq));
  MT_CHECK(MPI_Wait(&pq, &st));
  MT_EXPECT(cancelled_of(&st) == 1, "persistent receive, second cancel: not cancelled");
  MT_CHECK(MPI_Request_free(&pq));
  MT_EXPECT(pq == MPI_REQUEST_NULL, "Request_free of the persistent receive");
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  left = (mt_rank + mt_size - 1) % mt_size;
  right = (mt_rank + 1) % mt_size;
  cancel_unmatched_receives();
  cancel_completed_receive();
  int tag = 100;
  for (int sync = 0; sync < 2; ++sync) {
    for (int big = 0; big < 2; ++big) {
      for (int late = 0; late < 2; ++late) {
        cancel_send(sync, big ? 100000 : 4, tag, late);
        tag += 2;
      }
    }
  }
  cancel_persistent_receive();
  if (mt_rank == 0) printf("p2p_cancel: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
