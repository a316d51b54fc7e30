/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_split_type (MPI-3.1 §6.4.2) with MPI_COMM_TYPE_SHARED, the way MPI-3 shared-memory
 * codes (ARMCI-MPI, OpenSHMEM over MPI) find the ranks they can share memory with: the node
 * communicator, ordered by key; every rank in exactly one; a shared window over it, written
 * with stores and read by the others with loads; the same on a communicator from
 * MPI_Comm_split; MPI_UNDEFINED gives MPI_COMM_NULL; bad input under MPI_ERRORS_RETURN (the
 * same on every rank). Works on one node and across hosts (tests/cluster).
 * Output: one line from rank 0, the same under any MPI. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

/* The node communicator of `comm` with keys `key`, checked: its members share a window's memory,
 * their order follows the keys, and the node communicators cover `comm` once. */
static void node_of(MPI_Comm comm, int key, int descending) {
  int me = 0, p = 0;
  MT_CHECK(MPI_Comm_rank(comm, &me));
  MT_CHECK(MPI_Comm_size(comm, &p));
  MPI_Comm node = MPI_COMM_NULL;
  MT_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &node));
  MT_EXPECT(node != MPI_COMM_NULL, "no node communicator");
  if (node == MPI_COMM_NULL) return;
  int nme = 0, np = 0;
  MT_CHECK(MPI_Comm_rank(node, &nme));
  MT_CHECK(MPI_Comm_size(node, &np));
  MT_EXPECT(np >= 1 && np <= p, "node of %d ranks in a communicator of %d", np, p);

  /* Each member's rank in `comm`, by its node rank: ordered by the keys (ties by rank). */
  MPI_Group g = MPI_GROUP_NULL, gn = MPI_GROUP_NULL;
  MT_CHECK(MPI_Comm_group(comm, &g));
  MT_CHECK(MPI_Comm_group(node, &gn));
  int nranks[64], cranks[64];
  const int shown = np < 64 ? np : 64;
  for (int i = 0; i < shown; ++i) nranks[i] = i;
  MT_CHECK(MPI_Group_translate_ranks(gn, shown, nranks, g, cranks));
  MT_EXPECT(cranks[nme] == me, "node rank %d is rank %d of comm, not %d", nme, cranks[nme], me);
  for (int i = 1; i < shown; ++i) {
    MT_EXPECT(descending ? cranks[i] < cranks[i - 1] : cranks[i] > cranks[i - 1],
              "node ranks %d and %d are ranks %d and %d of comm (keys %s)", i - 1, i, cranks[i - 1],
              cranks[i], descending ? "descending" : "equal");
  }
  MT_CHECK(MPI_Group_free(&gn));
  MT_CHECK(MPI_Group_free(&g));

  /* Every rank of comm in exactly one node communicator: the node sizes, counted once per node
   * (by its rank 0), add up to p. */
  int leader_count = nme == 0 ? np : 0, total = 0;
  MT_CHECK(MPI_Allreduce(&leader_count, &total, 1, MPI_INT, MPI_SUM, comm));
  MT_EXPECT(total == p, "node communicators hold %d ranks, comm %d", total, p);

  /* The members share memory: a shared window over the node communicator, stores and loads. */
  int64_t* mine = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate_shared((MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, node,
                                   &mine, &win));
  MT_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  *mine = 1000 + me;
  MT_CHECK(MPI_Win_sync(win));
  MT_CHECK(MPI_Barrier(node));
  MT_CHECK(MPI_Win_sync(win));
  for (int r = 0; r < shown; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    int64_t* part = NULL;
    MT_CHECK(MPI_Win_shared_query(win, r, &size, &unit, &part));
    MT_EXPECT(size == (MPI_Aint)sizeof(int64_t) && part != NULL && *part == 1000 + cranks[r],
              "node rank %d's part holds %lld, expected %d", r, part ? (long long)*part : -1LL,
              1000 + cranks[r]);
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Comm_free(&node));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int me = mt_rank;
  node_of(MPI_COMM_WORLD, 0, 0);
  node_of(MPI_COMM_WORLD, -me, 1);
  /* On a communicator of its own: the odd ranks and the even ones, in reverse. */
  MPI_Comm half = MPI_COMM_NULL;
  MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half));
  node_of(half, 0, 0);

  /* MPI_UNDEFINED on some ranks: they get MPI_COMM_NULL, the others their node. */
  MPI_Comm some = MPI_COMM_WORLD;
  MT_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &some));
  MT_EXPECT((some == MPI_COMM_NULL) == (me % 2 == 1), "rank %d: newcomm %s", me,
            some == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
  if (some != MPI_COMM_NULL) MT_CHECK(MPI_Comm_free(&some));

  /* With an info object (its keys are hints). */
  MPI_Info info;
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "no_such_hint", "true"));
  MPI_Comm node = MPI_COMM_NULL;
  MT_CHECK(MPI_Comm_split_type(half, MPI_COMM_TYPE_SHARED, 0, info, &node));
  MT_CHECK(MPI_Info_free(&info));
  MT_CHECK(MPI_Comm_free(&node));

  /* Bad input, alike on every rank, under MPI_ERRORS_RETURN. */
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  node = MPI_COMM_NULL;
  mt_expect_class("split_type 12345",
                  MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &node), MPI_ERR_ARG);
  MT_EXPECT(node == MPI_COMM_NULL, "newcomm set by a failed call");
  mt_expect_class("NULL newcomm",
                  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL),
                  MPI_ERR_ARG);
  mt_expect_class("MPI_COMM_NULL",
                  MPI_Comm_split_type(MPI_COMM_NULL, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                  MPI_ERR_COMM);
  MPI_Info stale;
  MT_CHECK(MPI_Info_create(&stale));
  MPI_Info freed = stale;
  MT_CHECK(MPI_Info_free(&stale));
  mt_expect_class("freed info",
                  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, freed, &node),
                  MPI_ERR_INFO);
  /* The world still works after the failed calls. */
  node_of(MPI_COMM_WORLD, 0, 0);

  MT_CHECK(MPI_Comm_free(&half));
  if (me == 0) printf("split_type: node communicators ok\n");
  return mt_finish();
}
