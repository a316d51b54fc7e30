/* SPDX-License-Identifier: BSD-3-Clause */
/* Bad arguments to the communicator, group and collective calls under MPI_ERRORS_RETURN: each
 * gets its error class, a message naming the call and the bad value, and leaves the receive
 * buffers untouched. Every rank passes the same bad arguments (a collective whose ranks disagree
 * on whether to run cannot end), except for the mismatched-count cases, where the receivers
 * detect the mismatch and the senders complete normally.
 *
 * Each check prints   rank R: ok WHAT: CLASS   or   rank R: FAIL WHAT: ... */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static void expect(const char* what, int rc, int want, const char* needle) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  const int named = needle == NULL || strstr(msg, needle) != NULL;
  if (cls == want && named) {
    printf("rank %d: ok %s: class %d\n", mt_rank, what, want);
  } else {
    printf("rank %d: FAIL %s: expected class %d, got %d (%s)\n", mt_rank, what, want, cls, msg);
    ++mt_failures;
  }
}

static int untouched(const int* b, int n, int v) {
  for (int i = 0; i < n; ++i)
    if (b[i] != v) return 0;
  return 1;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int p = mt_size, me = mt_rank;
  MPI_Comm w = MPI_COMM_WORLD;
  MT_CHECK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
  int sbuf[64], rbuf[8 * 64 + 8];
  for (int i = 0; i < 64; ++i) sbuf[i] = me;
  memset(rbuf, 0x5a, sizeof rbuf);
  const int guard = rbuf[0];
  const int rn = (int)(sizeof rbuf / sizeof rbuf[0]);

  /* Roots out of range. */
  expect("bcast root p", MPI_Bcast(sbuf, 1, MPI_INT, p, w), MPI_ERR_ROOT, "MPI_Bcast: root");
  expect("gather root -1", MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, -1, w), MPI_ERR_ROOT,
         "root -1");
  expect("reduce root p+3", MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, p + 3, w), MPI_ERR_ROOT,
         "MPI_Reduce");
  /* Negative counts. */
  expect("gather count -1", MPI_Gather(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, 0, w), MPI_ERR_COUNT,
         "-1");
  expect("scatter count -2", MPI_Scatter(sbuf, -2, MPI_INT, rbuf, -2, MPI_INT, 0, w), MPI_ERR_COUNT,
         "-2");
  expect("allreduce count -1", MPI_Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT,
         NULL);
  {
    int* c = malloc((size_t)p * sizeof(int));
    int* d = calloc((size_t)p, sizeof(int));
    for (int i = 0; i < p; ++i) c[i] = i == p - 1 ? -4 : 1;
    expect("alltoallv sendcount -4", MPI_Alltoallv(sbuf, c, d, MPI_INT, rbuf, c, d, MPI_INT, w),
           MPI_ERR_COUNT, "-4");
    free(c);
    free(d);
  }
  {
    /* MPI_Alltoallw: arrays, counts and a datatype per block, each bad entry named. */
    int* c = malloc((size_t)p * sizeof(int));
    int* d = malloc((size_t)p * sizeof(int));
    MPI_Datatype* t = malloc((size_t)p * sizeof(MPI_Datatype));
    MPI_Datatype* u = malloc((size_t)p * sizeof(MPI_Datatype));
    MPI_Datatype loose;
    MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &loose));
    for (int i = 0; i < p; ++i) {
      c[i] = 1;
      d[i] = 4 * i;
      t[i] = u[i] = MPI_INT;
    }
    expect("alltoallw sendtypes NULL", MPI_Alltoallw(sbuf, c, d, NULL, rbuf, c, d, t, w),
           MPI_ERR_ARG, "sendtypes is NULL");
    expect("alltoallw rdispls NULL", MPI_Alltoallw(sbuf, c, d, t, rbuf, c, NULL, t, w), MPI_ERR_ARG,
           "rdispls is NULL");
    u[p - 1] = MPI_DATATYPE_NULL;
    char named[64];
    snprintf(named, sizeof named, "sendtypes[%d] is MPI_DATATYPE_NULL", p - 1);
    expect("alltoallw sendtypes[p-1] null", MPI_Alltoallw(sbuf, c, d, u, rbuf, c, d, t, w),
           MPI_ERR_TYPE, named);
    u[p - 1] = (MPI_Datatype)123456;
    expect("alltoallw recvtypes[p-1] bad handle", MPI_Alltoallw(sbuf, c, d, t, rbuf, c, d, u, w),
           MPI_ERR_TYPE, "recvtypes[");
    u[p - 1] = loose;
    expect("alltoallw recvtypes uncommitted", MPI_Alltoallw(sbuf, c, d, t, rbuf, c, d, u, w),
           MPI_ERR_TYPE, "not committed");
    c[0] = -2;
    expect("alltoallw recvcounts[0] -2", MPI_Alltoallw(sbuf, c, d, t, rbuf, c, d, t, w),
           MPI_ERR_COUNT, "recvcounts[0] -2");
    c[0] = 1;
    expect("alltoallw aliased", MPI_Alltoallw(rbuf, c, d, t, rbuf, c, d, t, w), MPI_ERR_BUFFER,
           "MPI_Alltoallw: sendbuf and recvbuf overlap");
    MT_CHECK(MPI_Type_free(&loose));
    free(c);
    free(d);
    free(t);
    free(u);
  }
  /* Datatypes. */
  expect("bcast MPI_DATATYPE_NULL", MPI_Bcast(sbuf, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE,
         NULL);
  {
    MPI_Datatype t;
    MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
    expect("allgather uncommitted", MPI_Allgather(sbuf, 1, t, rbuf, 1, t, w), MPI_ERR_TYPE,
           "not committed");
    MT_CHECK(MPI_Type_free(&t));
  }
  /* Operations. */
  expect("allreduce MPI_REPLACE", MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP,
         "MPI_REPLACE");
  expect("allreduce op 99", MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, 99, w), MPI_ERR_OP, "99");
  expect("reduce MAXLOC on int", MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_MAXLOC, 0, w), MPI_ERR_OP,
         "MPI_MAXLOC");
  expect("allreduce SUM on 2INT", MPI_Allreduce(sbuf, rbuf, 1, MPI_2INT, MPI_SUM, w), MPI_ERR_OP,
         NULL);
  /* Aliased buffers without MPI_IN_PLACE. */
  expect("alltoall aliased", MPI_Alltoall(rbuf, 1, MPI_INT, rbuf, 1, MPI_INT, w), MPI_ERR_BUFFER,
         "overlap");
  expect("allgather aliased", MPI_Allgather(rbuf, 1, MPI_INT, rbuf, 1, MPI_INT, w), MPI_ERR_BUFFER,
         "MPI_IN_PLACE");
  expect("allreduce aliased", MPI_Allreduce(rbuf, rbuf, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
         NULL);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  expect("gather aliased at the root",
         MPI_Gather(rbuf, 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER,
         "MPI_Gather: sendbuf and recvbuf overlap");
  /* MPI_IN_PLACE where the call does not take it: a marker, never used as an address. */
  {
    int c[8] = {1, 1, 1, 1, 1, 1, 1, 1}, d[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int bd[8] = {0, 4, 8, 12, 16, 20, 24, 28};
    MPI_Datatype t[8] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    void* ip = MPI_IN_PLACE;
    if (p <= 8) {
      expect("alltoall recvbuf in place", MPI_Alltoall(sbuf, 1, MPI_INT, ip, 1, MPI_INT, w),
             MPI_ERR_BUFFER, "MPI_Alltoall: recvbuf is MPI_IN_PLACE");
      expect("alltoallv recvbuf in place", MPI_Alltoallv(sbuf, c, d, MPI_INT, ip, c, d, MPI_INT, w),
             MPI_ERR_BUFFER, "only as sendbuf");
      expect("alltoallw recvbuf in place", MPI_Alltoallw(sbuf, c, bd, t, ip, c, bd, t, w),
             MPI_ERR_BUFFER, "MPI_Alltoallw: recvbuf");
      expect("allgatherv recvbuf in place", MPI_Allgatherv(sbuf, 1, MPI_INT, ip, c, d, MPI_INT, w),
             MPI_ERR_BUFFER, "recvbuf");
    }
    expect("allgather recvbuf in place", MPI_Allgather(sbuf, 1, MPI_INT, ip, 1, MPI_INT, w),
           MPI_ERR_BUFFER, "recvbuf is MPI_IN_PLACE");
    expect("allreduce recvbuf in place", MPI_Allreduce(sbuf, ip, 1, MPI_INT, MPI_SUM, w),
           MPI_ERR_BUFFER, "MPI_Allreduce: recvbuf");
    expect("reduce_scatter_block recvbuf in place",
           MPI_Reduce_scatter_block(sbuf, ip, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER, "recvbuf");
    expect("exscan recvbuf in place", MPI_Exscan(sbuf, ip, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
           "MPI_Exscan: recvbuf");
    expect("bcast buffer in place", MPI_Bcast(ip, 1, MPI_INT, 0, w), MPI_ERR_BUFFER,
           "MPI_Bcast: buffer is MPI_IN_PLACE, which this call does not take");
    expect("reduce_local inoutbuf in place", MPI_Reduce_local(sbuf, ip, 1, MPI_INT, MPI_SUM),
           MPI_ERR_BUFFER, "inoutbuf");
    /* Significant at the root only: on MPI_COMM_SELF every rank is its root. */
    MPI_Comm self = MPI_COMM_SELF;
    expect("gather recvbuf in place at the root",
           MPI_Gather(sbuf, 1, MPI_INT, ip, 1, MPI_INT, 0, self), MPI_ERR_BUFFER,
           "only as the root's sendbuf");
    expect("scatter sendbuf in place at the root",
           MPI_Scatter(ip, 1, MPI_INT, rbuf, 1, MPI_INT, 0, self), MPI_ERR_BUFFER,
           "only as the root's recvbuf");
    expect("reduce recvbuf in place at the root",
           MPI_Reduce(sbuf, ip, 1, MPI_INT, MPI_SUM, 0, self), MPI_ERR_BUFFER,
           "MPI_Reduce: recvbuf");
  }
  MT_EXPECT(untouched(rbuf, rn, guard), "a failed call wrote into the receive buffer");

  /* Mismatched counts: rank 1 sends one int more (then one fewer) than the root expects. The
   * root gets MPI_ERR_TRUNCATE (MPI_ERR_COUNT), with rank 1's block untouched. */
  if (p >= 2) {
    for (int more = 1; more >= -1; more -= 2) {
      memset(rbuf, 0x5a, sizeof rbuf);
      const int n = 4, mine = me == 1 ? n + more : n;
      int rc = MPI_Gather(sbuf, mine, MPI_INT, rbuf, n, MPI_INT, 0, w);
      if (me == 0) {
        expect(more > 0 ? "gather rank 1 sends more" : "gather rank 1 sends less", rc,
               more > 0 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT, "rank 1");
        MT_EXPECT(untouched(rbuf + n, n, guard), "rank 1's block written despite the mismatch");
        /* The other blocks land (linear) or are left alone too (tree: the root unpacks
         * nothing from a failed gather); either way none holds anything but its own data. */
        for (int r = 0; r < p; ++r)
          if (r != 1)
            MT_EXPECT(rbuf[r * n] == r || rbuf[r * n] == guard, "block %d: %d", r, rbuf[r * n]);
      } else {
        expect("gather sender completes", rc, MPI_SUCCESS, NULL);
      }
    }
    /* Same size, different type: rank 1 sends 4 floats where the root expects 4 ints. */
    memset(rbuf, 0x5a, sizeof rbuf);
    float fbuf[4] = {1.5f, 2.5f, 3.5f, 4.5f};
    int rc = me == 1 ? MPI_Gather(fbuf, 4, MPI_FLOAT, rbuf, 4, MPI_INT, 0, w)
                     : MPI_Gather(sbuf, 4, MPI_INT, rbuf, 4, MPI_INT, 0, w);
    if (me == 0) {
      expect("gather rank 1 sends floats for ints", rc, MPI_ERR_TYPE, "MPI_FLOAT data");
      MT_EXPECT(untouched(rbuf + 4, 4, guard), "rank 1's floats written despite the mismatch");
    } else {
      expect("gather sender of floats completes", rc, MPI_SUCCESS, NULL);
    }
    /* Bcast: the root sends 10 ints, the others expect 8: each receiver's buffer is untouched. */
    memset(rbuf, 0x5a, sizeof rbuf);
    rc = MPI_Bcast(me == 0 ? sbuf : rbuf, me == 0 ? 10 : 8, MPI_INT, 0, w);
    if (me == 0) {
      expect("bcast root", rc, MPI_SUCCESS, NULL);
    } else {
      expect("bcast receiver of a longer message", rc, MPI_ERR_TRUNCATE, NULL);
      MT_EXPECT(untouched(rbuf, rn, guard), "bcast wrote despite the mismatch");
    }
    /* Reductions with rank 1 giving one element more (then one fewer): the root of a reduce
     * fails and its receive buffer is untouched; an allreduce and a reduce_scatter_block fail
     * on every rank (the error travels with the data) and write no receive buffer; and none of
     * them leaves anything behind that the next collective would read. Large enough to take
     * several chunks, so folds that run as data arrives are covered too, and (80 KB) the
     * allreduce that halves on a power-of-two number of ranks. */
    static int big[2][20000], bout[20001];
    for (int i = 0; i < 20000; ++i) big[0][i] = big[1][i] = me + i;
    for (int more = 1; more >= -1; more -= 2) {
      const int sizes[3] = {4, 6000, 20000};
      for (int k = 0; k < 3; ++k) {
        const int n = sizes[k], mine = me == 1 ? n + more : n;
        int cls = 0;
        for (int i = 0; i <= n; ++i) bout[i] = guard;
        rc = MPI_Reduce(big[0], bout, mine, MPI_INT, MPI_SUM, 0, w);
        if (me == 0) {
          expect(more > 0 ? "reduce rank 1 gives more" : "reduce rank 1 gives less", rc,
                 more > 0 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT, "rank 1");
          MT_EXPECT(untouched(bout, n + 1, guard), "reduce of %d wrote despite the mismatch", n);
        } else {
          /* A sender completes, or (an inner node of the tree) reports what its child did. */
          MPI_Error_class(rc, &cls);
          MT_EXPECT(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT,
                    "reduce non-root: class %d", cls);
        }
        for (int i = 0; i <= n; ++i) bout[i] = guard;
        rc = MPI_Allreduce(big[0], bout, mine, MPI_INT, MPI_SUM, w);
        MPI_Error_class(rc, &cls);
        MT_EXPECT(cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT,
                  "allreduce of %d with rank 1 off by %d: class %d", n, more, cls);
        MT_EXPECT(untouched(bout, n + 1, guard), "allreduce of %d wrote despite the mismatch", n);
        for (int i = 0; i <= n; ++i) bout[i] = guard;
        const int block = n / p > 0 ? n / p : 1, myBlock = mine / p > 0 ? mine / p : 1;
        rc = MPI_Reduce_scatter_block(big[0], bout, myBlock, MPI_INT, MPI_SUM, w);
        MPI_Error_class(rc, &cls);
        if (myBlock != block) {
          MT_EXPECT(cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_COUNT,
                    "reduce_scatter_block of %d with rank 1 off: class %d", n, cls);
          MT_EXPECT(untouched(bout, n / p + 1, guard), "reduce_scatter_block wrote");
        }
        /* Sizes agree again: the results are right. */
        for (int i = 0; i < n; ++i) bout[i] = guard;
        MT_CHECK(MPI_Allreduce(big[1], bout, n, MPI_INT, MPI_SUM, w));
        int bad = 0;
        for (int i = 0; i < n; ++i) bad += bout[i] != p * (p - 1) / 2 + p * i;
        MT_EXPECT(bad == 0, "allreduce of %d after the mismatch: %d wrong", n, bad);
      }
    }
  }
  /* Communicators and groups. */
  expect("comm 999", MPI_Barrier(999), MPI_ERR_COMM, "999");
  expect("comm null", MPI_Bcast(sbuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
  {
    MPI_Comm d, saved;
    MT_CHECK(MPI_Comm_dup(w, &d));
    saved = d;
    MT_CHECK(MPI_Comm_free(&d));
    expect("freed comm", MPI_Barrier(saved), MPI_ERR_COMM, "freed");
    expect("free world", MPI_Comm_free(&w), MPI_ERR_COMM, "MPI_COMM_WORLD");
    expect("split color -5", MPI_Comm_split(w, -5, 0, &d), MPI_ERR_ARG, "-5");
  }
  {
    MPI_Group g, h, saved;
    MT_CHECK(MPI_Comm_group(w, &g));
    int bad[2] = {0, p};
    expect("incl rank p", MPI_Group_incl(g, 2, bad, &h), MPI_ERR_RANK, "is not a rank");
    int twice[2] = {0, 0};
    expect("incl rank twice", MPI_Group_incl(g, 2, twice, &h), MPI_ERR_RANK, "twice");
    int neg[1] = {-1};
    expect("excl rank -1", MPI_Group_excl(g, 1, neg, &h), MPI_ERR_RANK, "-1");
    int zero[1][3] = {{0, 0, 0}};
    expect("range stride 0", MPI_Group_range_incl(g, 1, zero, &h), MPI_ERR_ARG, "stride 0");
    int away[1][3] = {{p - 1, 0, 1}};
    if (p > 1) expect("range going away", MPI_Group_range_incl(g, 1, away, &h), MPI_ERR_ARG, NULL);
    expect("group null", MPI_Group_size(MPI_GROUP_NULL, &bad[0]), MPI_ERR_GROUP, NULL);
    expect("group 12345", MPI_Group_size(12345, &bad[0]), MPI_ERR_GROUP, "12345");
    int one = 0;
    int tr;
    expect("translate rank p", MPI_Group_translate_ranks(g, 1, &p, g, &tr), MPI_ERR_RANK, NULL);
    MT_CHECK(MPI_Group_incl(g, 1, &one, &h));
    saved = h;
    MT_CHECK(MPI_Group_free(&h));
    expect("freed group", MPI_Group_free(&saved), MPI_ERR_GROUP, "freed");
    /* A group that is not a subgroup: world's group on a split communicator. */
    MPI_Comm half;
    MT_CHECK(MPI_Comm_split(w, me % 2, 0, &half));
    MPI_Comm c;
    if (p > 1) {
      expect("create with a group beyond the communicator", MPI_Comm_create(half, g, &c),
             MPI_ERR_GROUP, "not a member");
    }
    MT_CHECK(MPI_Comm_free(&half));
    MT_CHECK(MPI_Group_free(&g));
  }
  /* Everything still works afterwards. */
  int x = me, sum = 0;
  MT_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, w));
  MT_EXPECT(sum == p * (p - 1) / 2, "allreduce after the errors: %d", sum);
  return mt_finish();
}
