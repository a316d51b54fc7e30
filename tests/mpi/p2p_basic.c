/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point basics (MPI-3.1 chapter 3), in a ring: every rank sends to its right neighbour
 * and receives from its left one (at 1 rank both are the rank itself, so every send that could
 * block is nonblocking, buffered or has its receive posted first). Covered: the send modes
 * (standard, synchronous, ready, buffered; blocking and nonblocking), Sendrecv and
 * Sendrecv_replace, Probe / Iprobe, matched probes (Mprobe, Improbe, Mrecv, Imrecv,
 * MPI_MESSAGE_NO_PROC), MPI_Get_count / MPI_Get_elements (MPI_UNDEFINED for a partial element),
 * MPI_ANY_SOURCE / MPI_ANY_TAG, MPI_PROC_NULL, zero-count messages, self-sends,
 * MPI_Request_get_status, the Wait / Test families over arrays with MPI_REQUEST_NULL entries,
 * MPI_Request_free of an active send and the MPI_ERROR field of statuses.
 *
 * Every section ends with a barrier, so a wildcard receive never sees a later section's message.
 * Failures print "rank R: ...: expectation failed: ..." and the rank exits non-zero. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int left, right;

/* Contents of element k of the message with `tag` from rank `src`. */
static int val(int src, int tag, int k) { return src * 1000003 + tag * 1009 + k; }

static void fill(int* buf, int n, int src, int tag) {
  for (int k = 0; k < n; ++k) buf[k] = val(src, tag, k);
}

/* Counts the elements of buf[0..n) that differ from the message (src, tag). */
static int bad_elems(const int* buf, int n, int src, int tag) {
  int bad = 0;
  for (int k = 0; k < n; ++k) bad += buf[k] != val(src, tag, k);
  return bad;
}

/* A receive's status: source, tag, and count in `type`. */
static void check_status(const char* what, const MPI_Status* st, int src, int tag, int count,
                         MPI_Datatype type) {
  int n = -1;
  MT_CHECK(MPI_Get_count(st, type, &n));
  MT_EXPECT(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
  MT_EXPECT(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
  MT_EXPECT(n == count, "%s: count %d, expected %d", what, n, count);
}

/* An empty status (MPI-3.1 §3.7.3): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not
 * cancelled, error MPI_SUCCESS. The error field is checked only for the calls that return an
 * array of statuses: §3.2.5 lets the calls that return one status leave it unset (Open MPI 4.1
 * leaves it for Waitany and Testany over null requests). */
static void check_empty_status(const char* what, const MPI_Status* st, int check_error) {
  int n = -1, cancelled = -1;
  MT_CHECK(MPI_Get_count(st, MPI_INT, &n));
  MT_CHECK(MPI_Test_cancelled(st, &cancelled));
  MT_EXPECT(st->MPI_SOURCE == MPI_ANY_SOURCE, "%s: empty status source %d", what, st->MPI_SOURCE);
  MT_EXPECT(st->MPI_TAG == MPI_ANY_TAG, "%s: empty status tag %d", what, st->MPI_TAG);
  MT_EXPECT(n == 0, "%s: empty status count %d", what, n);
  MT_EXPECT(cancelled == 0, "%s: empty status cancelled", what);
  if (check_error)
    MT_EXPECT(st->MPI_ERROR == MPI_SUCCESS, "%s: empty status error %d", what, st->MPI_ERROR);
}

static void check_empty(const char* what, const MPI_Status* st) { check_empty_status(what, st, 0); }

/* The status of a receive from MPI_PROC_NULL (§3.11): source MPI_PROC_NULL, tag MPI_ANY_TAG,
 * count 0. */
static void check_proc_null(const char* what, const MPI_Status* st) {
  int n = -1;
  MT_CHECK(MPI_Get_count(st, MPI_INT, &n));
  MT_EXPECT(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, expected MPI_PROC_NULL", what,
            st->MPI_SOURCE);
  MT_EXPECT(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
  MT_EXPECT(n == 0, "%s: count %d, expected 0", what, n);
}

static void end_section(void) { MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

/* Standard, synchronous and ready mode, blocking and not. */
static void send_modes(void) {
  enum { n = 100 };
  int s[n], r[n];
  MPI_Request rq, sq;
  MPI_Status st;
  /* Irecv, then a blocking MPI_Send (its receive is posted, so it completes even to self). */
  fill(s, n, mt_rank, 1);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 1, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(s, n, MPI_INT, right, 1, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_EXPECT(rq == MPI_REQUEST_NULL, "Wait sets the request to MPI_REQUEST_NULL");
  check_status("Send/Irecv", &st, left, 1, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 1) == 0, "Send/Irecv data");
  /* Isend, then a blocking MPI_Recv. */
  fill(s, n, mt_rank, 2);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, right, 2, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Recv(r, n, MPI_INT, left, 2, MPI_COMM_WORLD, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("Isend/Recv", &st, left, 2, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 2) == 0, "Isend/Recv data");
  /* Ssend to a posted receive. */
  fill(s, n, mt_rank, 3);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 3, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Ssend(s, n, MPI_INT, right, 3, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("Ssend", &st, left, 3, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 3) == 0, "Ssend data");
  /* Issend completes only once its receive has started: nobody receives before the barrier. */
  fill(s, n, mt_rank, 4);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Issend(s, n, MPI_INT, right, 4, MPI_COMM_WORLD, &sq));
  int flag = -1;
  for (int i = 0; i < 50; ++i) {
    MT_CHECK(MPI_Test(&sq, &flag, MPI_STATUS_IGNORE));
    if (flag) break;
  }
  MT_EXPECT(flag == 0, "Issend completed before its receive was posted");
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Recv(r, n, MPI_INT, left, 4, MPI_COMM_WORLD, &st));
  if (!flag) MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("Issend", &st, left, 4, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 4) == 0, "Issend data");
  /* Ready mode: the receive is posted before the barrier, the send after it. */
  fill(s, n, mt_rank, 5);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 5, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Rsend(s, n, MPI_INT, right, 5, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("Rsend", &st, left, 5, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 5) == 0, "Rsend data");
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every Rsend's receive has completed */
  fill(s, n, mt_rank, 6);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 6, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Irsend(s, n, MPI_INT, right, 6, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("Irsend", &st, left, 6, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 6) == 0, "Irsend data");
  /* Synchronous and standard mode of a large message (a rendezvous in most MPIs). */
  {
    const int big = 300000;
    int* bs = malloc((size_t)big * sizeof(int));
    int* br = calloc((size_t)big, sizeof(int));
    fill(bs, big, mt_rank, 7);
    MT_CHECK(MPI_Irecv(br, big, MPI_INT, left, 7, MPI_COMM_WORLD, &rq));
    MT_CHECK(MPI_Ssend(bs, big, MPI_INT, right, 7, MPI_COMM_WORLD));
    MT_CHECK(MPI_Wait(&rq, &st));
    check_status("large Ssend", &st, left, 7, big, MPI_INT);
    MT_EXPECT(bad_elems(br, big, left, 7) == 0, "large Ssend data");
    fill(bs, big, mt_rank, 8);
    MT_CHECK(MPI_Isend(bs, big, MPI_INT, right, 8, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Recv(br, big, MPI_INT, left, 8, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    check_status("large Isend/Recv", &st, left, 8, big, MPI_INT);
    MT_EXPECT(bad_elems(br, big, left, 8) == 0, "large Isend/Recv data");
    free(bs);
    free(br);
  }
  end_section();
}

/* Buffered mode: the sends complete locally, before any receive is posted. */
static void buffered(void) {
  enum { n = 500, msgs = 4 };
  MPI_Aint lb, extent;
  MT_CHECK(MPI_Type_get_extent(MPI_INT, &lb, &extent));
  /* MPI_Pack_size would give the packed size; count * extent is at least that for MPI_INT. */
  const int per = (int)(n * extent) + MPI_BSEND_OVERHEAD;
  const int size = msgs * per;
  char* attach = malloc((size_t)size);
  MT_CHECK(MPI_Buffer_attach(attach, size));
  int s[msgs][n], r[n];
  MPI_Request sq[2];
  MPI_Status st;
  for (int m = 0; m < msgs; ++m) fill(s[m], n, mt_rank, 20 + m);
  /* Two Bsends and two Ibsends, none received yet: they must all fit. */
  MT_CHECK(MPI_Bsend(s[0], n, MPI_INT, right, 20, MPI_COMM_WORLD));
  MT_CHECK(MPI_Bsend(s[1], n, MPI_INT, right, 21, MPI_COMM_WORLD));
  MT_CHECK(MPI_Ibsend(s[2], n, MPI_INT, right, 22, MPI_COMM_WORLD, &sq[0]));
  MT_CHECK(MPI_Ibsend(s[3], n, MPI_INT, right, 23, MPI_COMM_WORLD, &sq[1]));
  /* Buffered sends complete locally: their requests complete without the receiver. */
  MT_CHECK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
  /* The user's buffers may be reused at once: the message is the copy. */
  for (int m = 0; m < msgs; ++m) memset(s[m], 0xff, sizeof s[m]);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  /* Receive in reverse tag order. */
  for (int m = msgs - 1; m >= 0; --m) {
    memset(r, 0, sizeof r);
    MT_CHECK(MPI_Recv(r, n, MPI_INT, left, 20 + m, MPI_COMM_WORLD, &st));
    check_status("Bsend/Ibsend", &st, left, 20 + m, n, MPI_INT);
    MT_EXPECT(bad_elems(r, n, left, 20 + m) == 0, "Bsend/Ibsend data, tag %d", 20 + m);
  }
  void* back = NULL;
  int back_size = -1;
  MT_CHECK(MPI_Buffer_detach(&back, &back_size));
  MT_EXPECT(back == attach && back_size == size, "Buffer_detach returned %p/%d, attached %p/%d",
            back, back_size, (void*)attach, size);
  /* Attach again (a buffer for one message), a Bsend whose receive comes after the detach: the
   * detach waits until the message has left the buffer. */
  MT_CHECK(MPI_Buffer_attach(attach, per));
  fill(s[0], n, mt_rank, 24);
  MT_CHECK(MPI_Bsend(s[0], n, MPI_INT, right, 24, MPI_COMM_WORLD));
  MPI_Request rq;
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 24, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Buffer_detach(&back, &back_size));
  MT_EXPECT(back == attach && back_size == per, "second Buffer_detach");
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("Bsend then detach", &st, left, 24, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 24) == 0, "Bsend then detach data");
  free(attach);
  end_section();
}

static void sendrecv(void) {
  enum { n = 64 };
  int s[n], r[n];
  MPI_Status st;
  fill(s, n, mt_rank, 30);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Sendrecv(s, n, MPI_INT, right, 30, r, n, MPI_INT, left, 30, MPI_COMM_WORLD, &st));
  check_status("Sendrecv", &st, left, 30, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 30) == 0, "Sendrecv data");
  /* Different tags and counts on the two sides, a wildcard source. */
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Sendrecv(s, n / 2, MPI_INT, right, 31, r, n, MPI_INT, MPI_ANY_SOURCE, 31,
                        MPI_COMM_WORLD, &st));
  check_status("Sendrecv half", &st, left, 31, n / 2, MPI_INT);
  MT_EXPECT(bad_elems(r, n / 2, left, 30) == 0 && r[n / 2] == 0, "Sendrecv half data");
  /* Replace: rank's own data goes right, the left one's comes in. */
  fill(r, n, mt_rank, 32);
  MT_CHECK(MPI_Sendrecv_replace(r, n, MPI_INT, right, 32, left, 32, MPI_COMM_WORLD, &st));
  check_status("Sendrecv_replace", &st, left, 32, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 32) == 0, "Sendrecv_replace data");
  /* A large replace (beyond any eager limit). */
  {
    const int big = 200000;
    int* b = malloc((size_t)big * sizeof(int));
    fill(b, big, mt_rank, 33);
    MT_CHECK(MPI_Sendrecv_replace(b, big, MPI_INT, right, 33, left, 33, MPI_COMM_WORLD, &st));
    check_status("large Sendrecv_replace", &st, left, 33, big, MPI_INT);
    MT_EXPECT(bad_elems(b, big, left, 33) == 0, "large Sendrecv_replace data");
    free(b);
  }
  /* With MPI_PROC_NULL on both sides: nothing moves, the status is MPI_PROC_NULL's. */
  fill(r, n, mt_rank, 34);
  MT_CHECK(MPI_Sendrecv(s, n, MPI_INT, MPI_PROC_NULL, 34, r, n, MPI_INT, MPI_PROC_NULL, 34,
                        MPI_COMM_WORLD, &st));
  check_proc_null("Sendrecv with MPI_PROC_NULL", &st);
  MT_EXPECT(bad_elems(r, n, mt_rank, 34) == 0, "Sendrecv from MPI_PROC_NULL left the buffer");
  end_section();
}

static void probes(void) {
  enum { n = 37 };
  int s[n], r[n];
  MPI_Request sq;
  MPI_Status st;
  int flag = -1;
  /* Nothing is pending after the previous section's barrier. */
  MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 0, "Iprobe found a message with none pending (source %d tag %d)", st.MPI_SOURCE,
            st.MPI_TAG);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has probed before anyone sends */
  fill(s, n, mt_rank, 40);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, right, 40, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Probe(left, 40, MPI_COMM_WORLD, &st));
  check_status("Probe", &st, left, 40, n, MPI_INT);
  /* Probing again finds the same message: a probe does not receive it. */
  MT_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  check_status("Probe again (wildcards)", &st, left, 40, n, MPI_INT);
  flag = 0;
  MT_CHECK(MPI_Iprobe(left, 40, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 1, "Iprobe after Probe found nothing");
  if (flag) check_status("Iprobe", &st, left, 40, n, MPI_INT);
  MT_CHECK(MPI_Iprobe(left, 41, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 0, "Iprobe for another tag found a message");
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Recv(r, n, MPI_INT, left, 40, MPI_COMM_WORLD, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  MT_EXPECT(bad_elems(r, n, left, 40) == 0, "data after Probe");
  MT_CHECK(MPI_Iprobe(left, 40, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 0, "Iprobe found the message already received");
  /* Iprobe polled until the message arrives; MPI_STATUS_IGNORE. */
  MT_CHECK(MPI_Isend(s, 5, MPI_INT, right, 42, MPI_COMM_WORLD, &sq));
  flag = 0;
  while (!flag) MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, &flag, &st));
  check_status("Iprobe polled", &st, left, 42, 5, MPI_INT);
  MT_CHECK(MPI_Iprobe(left, 42, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  MT_EXPECT(flag == 1, "Iprobe with MPI_STATUS_IGNORE");
  MT_CHECK(MPI_Recv(r, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  /* Probes of MPI_PROC_NULL return at once. */
  MT_CHECK(MPI_Probe(MPI_PROC_NULL, 43, MPI_COMM_WORLD, &st));
  check_proc_null("Probe(MPI_PROC_NULL)", &st);
  flag = 0;
  MT_CHECK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 1, "Iprobe(MPI_PROC_NULL) flag 0");
  check_proc_null("Iprobe(MPI_PROC_NULL)", &st);
  end_section();
}

static void matched_probes(void) {
  enum { n = 21 };
  int s7[n], s8[n], r7[n], r8[n];
  MPI_Request sq[2], rq;
  MPI_Status st;
  MPI_Message m7 = MPI_MESSAGE_NULL, m8 = MPI_MESSAGE_NULL;
  int flag = -1;
  MT_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m7, &st));
  MT_EXPECT(flag == 0, "Improbe found a message with none pending");
  MT_EXPECT(m7 == MPI_MESSAGE_NULL, "Improbe with nothing found changed the message handle");
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  fill(s7, n, mt_rank, 7);
  fill(s8, n - 1, mt_rank, 8);
  MT_CHECK(MPI_Isend(s7, n, MPI_INT, right, 7, MPI_COMM_WORLD, &sq[0]));
  MT_CHECK(MPI_Isend(s8, n - 1, MPI_INT, right, 8, MPI_COMM_WORLD, &sq[1]));
  /* Match tag 8 first, then tag 7: the matched message leaves the matching queue. */
  MT_CHECK(MPI_Mprobe(left, 8, MPI_COMM_WORLD, &m8, &st));
  MT_EXPECT(m8 != MPI_MESSAGE_NULL && m8 != MPI_MESSAGE_NO_PROC, "Mprobe message handle");
  check_status("Mprobe", &st, left, 8, n - 1, MPI_INT);
  flag = -1;
  MT_CHECK(MPI_Iprobe(left, 8, MPI_COMM_WORLD, &flag, &st));
  MT_EXPECT(flag == 0, "Iprobe still sees the message matched by Mprobe");
  flag = 0;
  while (!flag) MT_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m7, &st));
  check_status("Improbe", &st, left, 7, n, MPI_INT);
  MPI_Message m_extra = MPI_MESSAGE_NULL;
  MT_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m_extra, &st));
  MT_EXPECT(flag == 0, "a third Improbe found a message (both are matched)");
  memset(r7, 0, sizeof r7);
  memset(r8, 0, sizeof r8);
  /* Received in the other order than matched. */
  MT_CHECK(MPI_Imrecv(r8, n, MPI_INT, &m8, &rq));
  MT_EXPECT(m8 == MPI_MESSAGE_NULL, "Imrecv sets the message to MPI_MESSAGE_NULL");
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("Imrecv", &st, left, 8, n - 1, MPI_INT);
  MT_EXPECT(bad_elems(r8, n - 1, left, 8) == 0, "Imrecv data");
  MT_CHECK(MPI_Mrecv(r7, n, MPI_INT, &m7, &st));
  MT_EXPECT(m7 == MPI_MESSAGE_NULL, "Mrecv sets the message to MPI_MESSAGE_NULL");
  check_status("Mrecv", &st, left, 7, n, MPI_INT);
  MT_EXPECT(bad_elems(r7, n, left, 7) == 0, "Mrecv data");
  MT_CHECK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));
  end_section();
}

/* Mprobe / Mrecv in the usual order, and MPI_MESSAGE_NO_PROC. */
static void matched_probes2(void) {
  enum { n = 9 };
  int s[n], r[n];
  MPI_Request sq, rq;
  MPI_Status st;
  MPI_Message m = MPI_MESSAGE_NULL;
  int flag = 0;
  fill(s, n, mt_rank, 9);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, right, 9, MPI_COMM_WORLD, &sq));
  while (!flag) MT_CHECK(MPI_Improbe(left, 9, MPI_COMM_WORLD, &flag, &m, &st));
  check_status("Improbe tag 9", &st, left, 9, n, MPI_INT);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Mrecv(r, n, MPI_INT, &m, &st));
  MT_EXPECT(m == MPI_MESSAGE_NULL, "Mrecv sets the message to MPI_MESSAGE_NULL");
  check_status("Mrecv", &st, left, 9, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 9) == 0, "Mrecv data");
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  /* MPI_PROC_NULL: the message is MPI_MESSAGE_NO_PROC, its receive a receive from
   * MPI_PROC_NULL. */
  MT_CHECK(MPI_Mprobe(MPI_PROC_NULL, 10, MPI_COMM_WORLD, &m, &st));
  MT_EXPECT(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC");
  check_proc_null("Mprobe(MPI_PROC_NULL)", &st);
  fill(r, n, mt_rank, 10);
  MT_CHECK(MPI_Mrecv(r, n, MPI_INT, &m, &st));
  check_proc_null("Mrecv(MPI_MESSAGE_NO_PROC)", &st);
  MT_EXPECT(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) sets MPI_MESSAGE_NULL");
  MT_EXPECT(bad_elems(r, n, mt_rank, 10) == 0, "Mrecv(MPI_MESSAGE_NO_PROC) wrote the buffer");
  flag = 0;
  MT_CHECK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
  MT_EXPECT(flag == 1 && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d", flag);
  check_proc_null("Improbe(MPI_PROC_NULL)", &st);
  MT_CHECK(MPI_Imrecv(r, n, MPI_INT, &m, &rq));
  MT_EXPECT(m == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) sets MPI_MESSAGE_NULL");
  MT_CHECK(MPI_Wait(&rq, &st));
  check_proc_null("Imrecv(MPI_MESSAGE_NO_PROC)", &st);
  /* A large message through Mprobe / Mrecv. */
  {
    const int big = 150000;
    int* bs = malloc((size_t)big * sizeof(int));
    int* br = calloc((size_t)big, sizeof(int));
    fill(bs, big, mt_rank, 11);
    MT_CHECK(MPI_Isend(bs, big, MPI_INT, right, 11, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &m, &st));
    check_status("large Mprobe", &st, left, 11, big, MPI_INT);
    MT_CHECK(MPI_Mrecv(br, big, MPI_INT, &m, &st));
    check_status("large Mrecv", &st, left, 11, big, MPI_INT);
    MT_EXPECT(bad_elems(br, big, left, 11) == 0, "large Mrecv data");
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    free(bs);
    free(br);
  }
  end_section();
}

static void counts(void) {
  MPI_Request sq;
  MPI_Status st;
  int n = -2;
  /* 41 bytes received as MPI_BYTE into room for 100. */
  {
    unsigned char s[41], r[100];
    for (int k = 0; k < 41; ++k) s[k] = (unsigned char)(mt_rank * 7 + k);
    memset(r, 0, sizeof r);
    MT_CHECK(MPI_Isend(s, 41, MPI_BYTE, right, 50, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Recv(r, 100, MPI_BYTE, left, 50, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    check_status("41 bytes", &st, left, 50, 41, MPI_BYTE);
    MT_CHECK(MPI_Get_elements(&st, MPI_BYTE, &n));
    MT_EXPECT(n == 41, "Get_elements of 41 bytes: %d", n);
    int bad = 0;
    for (int k = 0; k < 41; ++k) bad += r[k] != (unsigned char)(left * 7 + k);
    for (int k = 41; k < 100; ++k) bad += r[k] != 0;
    MT_EXPECT(bad == 0, "41 bytes: %d wrong", bad);
  }
  /* 3 ints received as pairs (MPI-3.1 §4.1.11, Example 4.12): Get_count of the pair is
   * MPI_UNDEFINED, Get_elements 3. */
  {
    int s[3], r[4] = {0, 0, 0, 0};
    MPI_Datatype pair;
    MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MT_CHECK(MPI_Type_commit(&pair));
    fill(s, 3, mt_rank, 51);
    MT_CHECK(MPI_Isend(s, 3, MPI_INT, right, 51, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Recv(r, 2, pair, left, 51, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Get_count(&st, pair, &n));
    MT_EXPECT(n == MPI_UNDEFINED, "Get_count of 3 ints in pairs: %d, expected MPI_UNDEFINED", n);
    MT_CHECK(MPI_Get_elements(&st, pair, &n));
    MT_EXPECT(n == 3, "Get_elements of 3 ints in pairs: %d", n);
    MPI_Count nx = -2;
    MT_CHECK(MPI_Get_elements_x(&st, pair, &nx));
    MT_EXPECT(nx == 3, "Get_elements_x of 3 ints in pairs: %lld", (long long)nx);
    MT_EXPECT(bad_elems(r, 3, left, 51) == 0 && r[3] == 0, "3 ints in pairs data");
    /* 4 ints: 2 pairs exactly. */
    int s4[4];
    fill(s4, 4, mt_rank, 52);
    MT_CHECK(MPI_Isend(s4, 4, MPI_INT, right, 52, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Recv(r, 2, pair, left, 52, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Get_count(&st, pair, &n));
    MT_EXPECT(n == 2, "Get_count of 4 ints in pairs: %d", n);
    MT_CHECK(MPI_Get_elements(&st, pair, &n));
    MT_EXPECT(n == 4, "Get_elements of 4 ints in pairs: %d", n);
    MT_CHECK(MPI_Type_free(&pair));
  }
  end_section();
}

static void wildcards(void) {
  /* Every rank (rank 0 too, to itself) sends to rank 0 with tag 100 + rank. */
  enum { n = 16 };
  int s[n];
  MPI_Request sq;
  fill(s, n, mt_rank, 100 + mt_rank);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, 0, 100 + mt_rank, MPI_COMM_WORLD, &sq));
  if (mt_rank == 0) {
    int* seen = calloc((size_t)mt_size, sizeof(int));
    for (int i = 0; i < mt_size; ++i) {
      int r[n];
      MPI_Status st;
      memset(r, 0, sizeof r);
      MT_CHECK(MPI_Recv(r, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
      const int src = st.MPI_SOURCE;
      MT_EXPECT(src >= 0 && src < mt_size, "ANY_SOURCE: source %d", src);
      if (src < 0 || src >= mt_size) continue;
      ++seen[src];
      check_status("ANY_SOURCE/ANY_TAG", &st, src, 100 + src, n, MPI_INT);
      MT_EXPECT(bad_elems(r, n, src, 100 + src) == 0, "ANY_SOURCE data from %d", src);
    }
    for (int i = 0; i < mt_size; ++i) MT_EXPECT(seen[i] == 1, "messages from %d: %d", i, seen[i]);
    free(seen);
  }
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  /* ANY_TAG from a given source, and ANY_SOURCE with a given tag: three tags from the left. */
  {
    int t[3][n];
    MPI_Request q[3];
    for (int i = 0; i < 3; ++i) {
      fill(t[i], n, mt_rank, 110 + i);
      MT_CHECK(MPI_Isend(t[i], n, MPI_INT, right, 110 + i, MPI_COMM_WORLD, &q[i]));
    }
    int r[n];
    MPI_Status st;
    MT_CHECK(MPI_Recv(r, n, MPI_INT, MPI_ANY_SOURCE, 112, MPI_COMM_WORLD, &st));
    check_status("ANY_SOURCE tag 112", &st, left, 112, n, MPI_INT);
    MT_EXPECT(bad_elems(r, n, left, 112) == 0, "ANY_SOURCE tag 112 data");
    /* Non-overtaking: the first of the two left is tag 110. */
    MT_CHECK(MPI_Recv(r, n, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_status("ANY_TAG first", &st, left, 110, n, MPI_INT);
    MT_EXPECT(bad_elems(r, n, left, 110) == 0, "ANY_TAG first data");
    MT_CHECK(MPI_Recv(r, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_status("ANY_TAG second", &st, left, 111, n, MPI_INT);
    MT_EXPECT(bad_elems(r, n, left, 111) == 0, "ANY_TAG second data");
    MT_CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  }
  end_section();
}

static void proc_null(void) {
  int buf[8];
  MPI_Status st;
  MPI_Request q[2];
  fill(buf, 8, mt_rank, 60);
  MT_CHECK(MPI_Send(buf, 8, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD));
  MT_CHECK(MPI_Ssend(buf, 8, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD));
  MT_CHECK(MPI_Rsend(buf, 8, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD));
  MT_CHECK(MPI_Recv(buf, 8, MPI_INT, MPI_PROC_NULL, 60, MPI_COMM_WORLD, &st));
  check_proc_null("Recv(MPI_PROC_NULL)", &st);
  MT_EXPECT(bad_elems(buf, 8, mt_rank, 60) == 0, "Recv(MPI_PROC_NULL) wrote the buffer");
  MT_CHECK(MPI_Recv(buf, 8, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  check_proc_null("Recv(MPI_PROC_NULL, MPI_ANY_TAG)", &st);
  MT_CHECK(MPI_Isend(buf, 8, MPI_INT, MPI_PROC_NULL, 61, MPI_COMM_WORLD, &q[0]));
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, MPI_PROC_NULL, 61, MPI_COMM_WORLD, &q[1]));
  MPI_Status sts[2];
  MT_CHECK(MPI_Waitall(2, q, sts));
  check_proc_null("Irecv(MPI_PROC_NULL) in Waitall", &sts[1]);
  MT_EXPECT(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "Waitall nulls the requests");
  int flag = 0;
  MT_CHECK(MPI_Irecv(buf, 8, MPI_INT, MPI_PROC_NULL, 62, MPI_COMM_WORLD, &q[1]));
  MT_CHECK(MPI_Test(&q[1], &flag, &st));
  MT_EXPECT(flag == 1, "Test of an Irecv(MPI_PROC_NULL) is not complete at once");
  if (flag) {
    check_proc_null("Test of Irecv(MPI_PROC_NULL)", &st);
  } else {
    MT_CHECK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
  }
  MT_EXPECT(bad_elems(buf, 8, mt_rank, 60) == 0, "Irecv(MPI_PROC_NULL) wrote the buffer");
  end_section();
}

static void zero_count(void) {
  int r[4] = {-1, -1, -1, -1};
  MPI_Request sq, rq;
  MPI_Status st;
  /* NULL buffers with count 0 are valid. */
  MT_CHECK(MPI_Irecv(r, 4, MPI_INT, left, 70, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(NULL, 0, MPI_INT, right, 70, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("zero-count Send", &st, left, 70, 0, MPI_INT);
  int n = -2;
  MT_CHECK(MPI_Get_elements(&st, MPI_INT, &n));
  MT_EXPECT(n == 0, "zero-count Get_elements %d", n);
  MT_EXPECT(r[0] == -1 && r[3] == -1, "zero-count message wrote the buffer");
  MT_CHECK(MPI_Isend(r, 0, MPI_INT, right, 71, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Recv(NULL, 0, MPI_INT, left, 71, MPI_COMM_WORLD, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("zero-count Isend/Recv(NULL, 0)", &st, left, 71, 0, MPI_INT);
  MT_CHECK(MPI_Issend(NULL, 0, MPI_BYTE, right, 72, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Probe(left, 72, MPI_COMM_WORLD, &st));
  check_status("zero-count Probe", &st, left, 72, 0, MPI_BYTE);
  MT_CHECK(MPI_Recv(r, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("zero-count Issend", &st, left, 72, 0, MPI_INT);
  MT_EXPECT(r[0] == -1, "zero-count Issend wrote the buffer");
  end_section();
}

static void self_sends(void) {
  enum { n = 33 };
  int s[n], r[n];
  MPI_Request sq, rq;
  MPI_Status st;
  /* Isend to self, then Recv. */
  fill(s, n, mt_rank, 80);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, mt_rank, 80, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Recv(r, n, MPI_INT, mt_rank, 80, MPI_COMM_WORLD, &st));
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  check_status("self Isend/Recv", &st, mt_rank, 80, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, mt_rank, 80) == 0, "self Isend/Recv data");
  /* Irecv from self, then a blocking Ssend. */
  fill(s, n, mt_rank, 81);
  memset(r, 0, sizeof r);
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, MPI_ANY_SOURCE, 81, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Ssend(s, n, MPI_INT, mt_rank, 81, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("self Ssend", &st, mt_rank, 81, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, mt_rank, 81) == 0, "self Ssend data");
  /* A large self-send, and on MPI_COMM_SELF. */
  {
    const int big = 262144 + 3;
    int* bs = malloc((size_t)big * sizeof(int));
    int* br = calloc((size_t)big, sizeof(int));
    fill(bs, big, mt_rank, 82);
    MT_CHECK(MPI_Isend(bs, big, MPI_INT, mt_rank, 82, MPI_COMM_WORLD, &sq));
    MT_CHECK(MPI_Recv(br, big, MPI_INT, mt_rank, 82, MPI_COMM_WORLD, &st));
    MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    check_status("large self", &st, mt_rank, 82, big, MPI_INT);
    MT_EXPECT(bad_elems(br, big, mt_rank, 82) == 0, "large self data");
    fill(bs, big, mt_rank, 83);
    MT_CHECK(MPI_Irecv(br, big, MPI_INT, 0, 83, MPI_COMM_SELF, &rq));
    MT_CHECK(MPI_Send(bs, big, MPI_INT, 0, 83, MPI_COMM_SELF));
    MT_CHECK(MPI_Wait(&rq, &st));
    check_status("MPI_COMM_SELF", &st, 0, 83, big, MPI_INT);
    MT_EXPECT(bad_elems(br, big, mt_rank, 83) == 0, "MPI_COMM_SELF data");
    free(bs);
    free(br);
  }
  end_section();
}

static void get_status(void) {
  enum { n = 12 };
  int s[n], r[n];
  MPI_Request rq, sq;
  MPI_Status st;
  int flag = -1;
  MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, 90, MPI_COMM_WORLD, &rq));
  /* Nobody sends before the barrier. */
  MT_CHECK(MPI_Request_get_status(rq, &flag, &st));
  MT_EXPECT(flag == 0, "Request_get_status of an unmatched receive: flag %d", flag);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  fill(s, n, mt_rank, 90);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, right, 90, MPI_COMM_WORLD, &sq));
  flag = 0;
  while (!flag) MT_CHECK(MPI_Request_get_status(rq, &flag, &st));
  check_status("Request_get_status", &st, left, 90, n, MPI_INT);
  MT_EXPECT(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
  MT_CHECK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
  MT_EXPECT(flag == 1, "Request_get_status again: flag %d", flag);
  MT_CHECK(MPI_Wait(&rq, &st));
  check_status("Wait after Request_get_status", &st, left, 90, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 90) == 0, "Request_get_status data");
  MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
  MT_EXPECT(flag == 1, "Request_get_status(MPI_REQUEST_NULL): flag %d", flag);
  check_empty("Request_get_status(MPI_REQUEST_NULL)", &st);
  end_section();
}

/* The completion calls over an array of receives with MPI_REQUEST_NULL at odd indices. */
enum { kSlots = 9, kMsgs = 5, kN = 6 };

static int slot_tag(int base, int i) { return base + i; }

/* Posts the receives at even slots, MPI_REQUEST_NULL at the others. */
static void post(int base, int r[kSlots][kN], MPI_Request* q) {
  for (int i = 0; i < kSlots; ++i) {
    memset(r[i], 0, sizeof r[i]);
    q[i] = MPI_REQUEST_NULL;
    if (i % 2 == 0)
      MT_CHECK(MPI_Irecv(r[i], kN, MPI_INT, left, slot_tag(base, i), MPI_COMM_WORLD, &q[i]));
  }
}

/* Sends the messages for post() after a barrier (so nothing matches before it). */
static void send_all(int base, int s[kSlots][kN], MPI_Request* sq) {
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int m = 0;
  /* In reverse order, so completion order differs from index order. */
  for (int i = kSlots - 1; i >= 0; --i) {
    if (i % 2 != 0) continue;
    fill(s[i], kN, mt_rank, slot_tag(base, i));
    MT_CHECK(MPI_Isend(s[i], kN, MPI_INT, right, slot_tag(base, i), MPI_COMM_WORLD, &sq[m++]));
  }
}

static void check_slot(const char* what, int base, int i, int r[kSlots][kN], const MPI_Status* st) {
  char w[96];
  snprintf(w, sizeof w, "%s slot %d", what, i);
  if (i % 2 != 0) {
    MT_EXPECT(0, "%s: a MPI_REQUEST_NULL slot was reported complete", w);
    return;
  }
  if (st != NULL) check_status(w, st, left, slot_tag(base, i), kN, MPI_INT);
  MT_EXPECT(bad_elems(r[i], kN, left, slot_tag(base, i)) == 0, "%s data", w);
}

static void completion_calls(void) {
  int r[kSlots][kN], s[kSlots][kN];
  MPI_Request q[kSlots], sq[kMsgs];
  MPI_Status sts[kSlots], st;
  int flag = -1, idx = -2, out = -2, ids[kSlots];
  /* Single MPI_REQUEST_NULL: Wait and Test return an empty status. */
  MPI_Request nul = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Wait(&nul, &st));
  check_empty("Wait(MPI_REQUEST_NULL)", &st);
  MT_CHECK(MPI_Test(&nul, &flag, &st));
  MT_EXPECT(flag == 1, "Test(MPI_REQUEST_NULL): flag %d", flag);
  check_empty("Test(MPI_REQUEST_NULL)", &st);
  /* Arrays of MPI_REQUEST_NULL only. */
  for (int i = 0; i < kSlots; ++i) q[i] = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Waitany(kSlots, q, &idx, &st));
  MT_EXPECT(idx == MPI_UNDEFINED, "Waitany over nulls: index %d", idx);
  check_empty("Waitany over nulls", &st);
  flag = 0;
  MT_CHECK(MPI_Testany(kSlots, q, &idx, &flag, &st));
  MT_EXPECT(flag == 1 && idx == MPI_UNDEFINED, "Testany over nulls: flag %d index %d", flag, idx);
  check_empty("Testany over nulls", &st);
  MT_CHECK(MPI_Waitsome(kSlots, q, &out, ids, sts));
  MT_EXPECT(out == MPI_UNDEFINED, "Waitsome over nulls: outcount %d", out);
  MT_CHECK(MPI_Testsome(kSlots, q, &out, ids, sts));
  MT_EXPECT(out == MPI_UNDEFINED, "Testsome over nulls: outcount %d", out);
  MT_CHECK(MPI_Testall(kSlots, q, &flag, sts));
  MT_EXPECT(flag == 1, "Testall over nulls: flag %d", flag);
  for (int i = 0; i < kSlots; ++i) check_empty_status("Testall over nulls", &sts[i], 1);
  MT_CHECK(MPI_Waitall(kSlots, q, sts));
  for (int i = 0; i < kSlots; ++i) check_empty_status("Waitall over nulls", &sts[i], 1);
  /* Count 0 arrays. */
  MT_CHECK(MPI_Waitall(0, q, sts));
  MT_CHECK(MPI_Waitany(0, q, &idx, &st));
  MT_EXPECT(idx == MPI_UNDEFINED, "Waitany of 0 requests: index %d", idx);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* Waitall: statuses of the null slots are empty. The MPI_ERROR fields: a multiple-completion
   * call that returns MPI_SUCCESS leaves them unset or MPI_SUCCESS (MPI-3.1 §3.7.5). */
  post(200, r, q);
  MT_CHECK(MPI_Testall(kSlots, q, &flag, sts));
  MT_EXPECT(flag == 0, "Testall before any send: flag %d", flag);
  MT_CHECK(MPI_Testany(kSlots, q, &idx, &flag, &st));
  MT_EXPECT(flag == 0 && idx == MPI_UNDEFINED, "Testany before any send: flag %d idx %d", flag,
            idx);
  MT_CHECK(MPI_Testsome(kSlots, q, &out, ids, sts));
  MT_EXPECT(out == 0, "Testsome before any send: outcount %d", out);
  send_all(200, s, sq);
  const int sentinel = -77;
  for (int i = 0; i < kSlots; ++i) sts[i].MPI_ERROR = sentinel;
  MT_CHECK(MPI_Waitall(kSlots, q, sts));
  for (int i = 0; i < kSlots; ++i) {
    MT_EXPECT(q[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
    MT_EXPECT(sts[i].MPI_ERROR == sentinel || sts[i].MPI_ERROR == MPI_SUCCESS,
              "Waitall status %d MPI_ERROR %d", i, sts[i].MPI_ERROR);
    if (i % 2 == 0) {
      check_slot("Waitall", 200, i, r, &sts[i]);
    } else {
      check_empty_status("Waitall null slot", &sts[i], 0);
    }
  }
  MT_CHECK(MPI_Waitall(kMsgs, sq, MPI_STATUSES_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* Waitany until MPI_UNDEFINED: each message slot once. */
  post(220, r, q);
  send_all(220, s, sq);
  int seen[kSlots] = {0};
  for (int k = 0; k <= kMsgs; ++k) {
    MT_CHECK(MPI_Waitany(kSlots, q, &idx, &st));
    if (k == kMsgs) {
      MT_EXPECT(idx == MPI_UNDEFINED, "Waitany after all: %d", idx);
      break;
    }
    MT_EXPECT(idx >= 0 && idx < kSlots, "Waitany index %d", idx);
    if (idx < 0 || idx >= kSlots) break;
    MT_EXPECT(q[idx] == MPI_REQUEST_NULL, "Waitany left request %d", idx);
    ++seen[idx];
    check_slot("Waitany", 220, idx, r, &st);
  }
  for (int i = 0; i < kSlots; i += 2) MT_EXPECT(seen[i] == 1, "Waitany slot %d: %d", i, seen[i]);
  MT_CHECK(MPI_Waitall(kMsgs, sq, MPI_STATUSES_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* Waitsome until MPI_UNDEFINED. */
  post(240, r, q);
  send_all(240, s, sq);
  memset(seen, 0, sizeof seen);
  for (int guard = 0; guard < 100; ++guard) {
    for (int i = 0; i < kSlots; ++i) sts[i].MPI_ERROR = sentinel;
    MT_CHECK(MPI_Waitsome(kSlots, q, &out, ids, sts));
    if (out == MPI_UNDEFINED) break;
    MT_EXPECT(out >= 1 && out <= kMsgs, "Waitsome outcount %d", out);
    for (int j = 0; j < out && j < kSlots; ++j) {
      const int i = ids[j];
      MT_EXPECT(i >= 0 && i < kSlots, "Waitsome index %d", i);
      if (i < 0 || i >= kSlots) continue;
      ++seen[i];
      MT_EXPECT(q[i] == MPI_REQUEST_NULL, "Waitsome left request %d", i);
      MT_EXPECT(sts[j].MPI_ERROR == sentinel || sts[j].MPI_ERROR == MPI_SUCCESS,
                "Waitsome status MPI_ERROR %d", sts[j].MPI_ERROR);
      check_slot("Waitsome", 240, i, r, &sts[j]);
    }
  }
  for (int i = 0; i < kSlots; i += 2) MT_EXPECT(seen[i] == 1, "Waitsome slot %d: %d", i, seen[i]);
  MT_CHECK(MPI_Waitall(kMsgs, sq, MPI_STATUSES_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* Testall polled, then Testany and Testsome polled. */
  post(260, r, q);
  send_all(260, s, sq);
  flag = 0;
  while (!flag) MT_CHECK(MPI_Testall(kSlots, q, &flag, sts));
  for (int i = 0; i < kSlots; ++i) {
    MT_EXPECT(q[i] == MPI_REQUEST_NULL, "Testall left request %d", i);
    if (i % 2 == 0) check_slot("Testall", 260, i, r, &sts[i]);
  }
  MT_CHECK(MPI_Waitall(kMsgs, sq, MPI_STATUSES_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  post(280, r, q);
  send_all(280, s, sq);
  memset(seen, 0, sizeof seen);
  for (int done = 0; done < kMsgs;) {
    MT_CHECK(MPI_Testany(kSlots, q, &idx, &flag, &st));
    if (!flag) continue;
    MT_EXPECT(idx >= 0 && idx < kSlots, "Testany index %d", idx);
    if (idx < 0 || idx >= kSlots) break;
    ++seen[idx];
    ++done;
    check_slot("Testany", 280, idx, r, &st);
  }
  MT_CHECK(MPI_Testany(kSlots, q, &idx, &flag, &st));
  MT_EXPECT(flag == 1 && idx == MPI_UNDEFINED, "Testany after all: flag %d index %d", flag, idx);
  for (int i = 0; i < kSlots; i += 2) MT_EXPECT(seen[i] == 1, "Testany slot %d: %d", i, seen[i]);
  MT_CHECK(MPI_Waitall(kMsgs, sq, MPI_STATUSES_IGNORE));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  post(300, r, q);
  send_all(300, s, sq);
  memset(seen, 0, sizeof seen);
  for (int done = 0; done < kMsgs;) {
    MT_CHECK(MPI_Testsome(kSlots, q, &out, ids, sts));
    MT_EXPECT(out >= 0 && out <= kMsgs - done, "Testsome outcount %d", out);
    if (out < 0 || out > kMsgs - done) break;
    for (int j = 0; j < out; ++j) {
      const int i = ids[j];
      if (i < 0 || i >= kSlots) continue;
      ++seen[i];
      check_slot("Testsome", 300, i, r, &sts[j]);
    }
    done += out;
  }
  MT_CHECK(MPI_Testsome(kSlots, q, &out, ids, sts));
  MT_EXPECT(out == MPI_UNDEFINED, "Testsome after all: outcount %d", out);
  for (int i = 0; i < kSlots; i += 2) MT_EXPECT(seen[i] == 1, "Testsome slot %d: %d", i, seen[i]);
  /* Send requests through Testsome / Waitsome too (MPI_STATUSES_IGNORE). */
  for (int guard = 0; guard < 1000000; ++guard) {
    MT_CHECK(MPI_Testsome(kMsgs, sq, &out, ids, MPI_STATUSES_IGNORE));
    if (out == MPI_UNDEFINED) break;
  }
  MT_EXPECT(out == MPI_UNDEFINED, "send requests never all completed under Testsome");
  end_section();
}

/* MPI_Request_free of an active send: the message is still delivered; the receiver's reply
 * tells the sender that its buffer is free again (MPI-3.1 §3.7.3, Example 3.13). */
static void free_active(void) {
  const int n = 100000; /* beyond the eager limit of most MPIs */
  int* s = malloc((size_t)n * sizeof(int));
  int* r = calloc((size_t)n, sizeof(int));
  MPI_Request sq, rq;
  MPI_Status st;
  fill(s, n, mt_rank, 120);
  MT_CHECK(MPI_Isend(s, n, MPI_INT, right, 120, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Request_free(&sq));
  MT_EXPECT(sq == MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
  int peek = s[n / 2]; /* reading the buffer is allowed, writing it is not */
  MT_EXPECT(peek == val(mt_rank, 120, n / 2), "send buffer of a freed Isend");
  MT_CHECK(MPI_Recv(r, n, MPI_INT, left, 120, MPI_COMM_WORLD, &st));
  check_status("freed Isend", &st, left, 120, n, MPI_INT);
  MT_EXPECT(bad_elems(r, n, left, 120) == 0, "freed Isend data");
  int ack = 1, got = 0;
  MT_CHECK(MPI_Irecv(&got, 1, MPI_INT, right, 121, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(&ack, 1, MPI_INT, left, 121, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  MT_EXPECT(got == 1, "ack %d", got);
  /* A small one too, freed and acknowledged the same way. */
  fill(s, 3, mt_rank, 122);
  MT_CHECK(MPI_Issend(s, 3, MPI_INT, right, 122, MPI_COMM_WORLD, &sq));
  MT_CHECK(MPI_Request_free(&sq));
  MT_CHECK(MPI_Recv(r, 3, MPI_INT, left, 122, MPI_COMM_WORLD, &st));
  check_status("freed Issend", &st, left, 122, 3, MPI_INT);
  MT_EXPECT(bad_elems(r, 3, left, 122) == 0, "freed Issend data");
  MT_CHECK(MPI_Sendrecv(&ack, 1, MPI_INT, left, 123, &got, 1, MPI_INT, right, 123, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  free(s);
  free(r);
  end_section();
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  left = (mt_rank + mt_size - 1) % mt_size;
  right = (mt_rank + 1) % mt_size;
  send_modes();
  buffered();
  sendrecv();
  probes();
  matched_probes();
  matched_probes2();
  counts();
  wildcards();
  proc_null();
  zero_count();
  self_sends();
  get_status();
  completion_calls();
  free_active();
  if (mt_rank == 0) printf("p2p_basic: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
