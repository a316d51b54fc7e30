/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared-memory windows: MPI_Win_allocate_shared with a different size per rank, contiguous by
 * default (rank r + 1's part right after rank r's), MPI_Win_shared_query (every rank, and
 * MPI_PROC_NULL: the lowest rank with a size > 0), parts written with plain stores and read by
 * the others with plain loads after MPI_Win_sync + barrier, RMA (put, fetch_and_op) on the same
 * window, alloc_shared_noncontig, and bad input under MPI_ERRORS_RETURN.
 * Output: one line per part from rank 0, the same under any MPI. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

enum { kInts = 16, kRounds = 50 };

static int ints_of(int rank) { return kInts * (rank % 3 + 1); }

static void shared(int noncontig) {
  const int me = mt_rank;
  const int p = mt_size;
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    MT_CHECK(MPI_Info_create(&info));
    MT_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  }
  int* mine = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate_shared(ints_of(me) * (MPI_Aint)sizeof(int), sizeof(int), info,
                                   MPI_COMM_WORLD, &mine, &win));
  if (info != MPI_INFO_NULL) MT_CHECK(MPI_Info_free(&info));
  int* flavor = NULL;
  int flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  MT_EXPECT(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor %d", flavor ? *flavor : -1);
  int* parts[64];
  for (int r = 0; r < p && r < 64; ++r) {
    MPI_Aint size = -1;
    int unit = -1;
    MT_CHECK(MPI_Win_shared_query(win, r, &size, &unit, &parts[r]));
    /* Open MPI 4.1 reports noncontiguous parts rounded up to a page. */
    const MPI_Aint want = ints_of(r) * (MPI_Aint)sizeof(int);
    MT_EXPECT((size == want || (noncontig && size >= want)) && unit == (int)sizeof(int),
              "rank %d: size %ld unit %d", r, (long)size, unit);
    if (r == me)
      MT_EXPECT(parts[r] == mine, "my part %p, baseptr %p", (void*)parts[r], (void*)mine);
    if (!noncontig && r > 0) {
      MT_EXPECT(parts[r] == parts[r - 1] + ints_of(r - 1), "rank %d's part does not follow %d's", r,
                r - 1);
    }
  }
  /* Stores into my part, loads from everyone's. */
  MT_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < ints_of(me); ++i) mine[i] = me * 100000 + round * 100 + i;
    MT_CHECK(MPI_Win_sync(win));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Win_sync(win));
    int bad = 0;
    for (int r = 0; r < p && r < 64; ++r) {
      for (int i = 0; i < ints_of(r); ++i) bad += parts[r][i] != r * 100000 + round * 100 + i;
    }
    MT_EXPECT(bad == 0, "round %d: %d wrong values", round, bad);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  /* RMA on the same window: a counter in rank 0's part and a put into the next rank's. */
  if (me == 0) mine[0] = 0;
  MT_CHECK(MPI_Win_sync(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int one = 1;
  int old = 0;
  for (int i = 0; i < 10; ++i) {
    MT_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win));
  }
  const int next = (me + 1) % p;
  const int v = -me;
  MT_CHECK(MPI_Put(&v, 1, MPI_INT, next, 1, 1, MPI_INT, win));
  MT_CHECK(MPI_Win_flush_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_sync(win));
  MT_EXPECT(parts[0][0] == 10 * p, "counter %d, expected %d", parts[0][0], 10 * p);
  MT_EXPECT(mine[1] == -((me + p - 1) % p), "put %d", mine[1]);
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_free(&win));
  if (me == 0) printf("%s shared window ok\n", noncontig ? "noncontiguous" : "contiguous");
}

static void proc_null_query(void) {
  /* Rank 0 (and only it) has no memory: MPI_PROC_NULL gives rank 1's part. */
  const MPI_Aint bytes = mt_rank == 0 ? 0 : 8 * (MPI_Aint)sizeof(double);
  double* mine = NULL;
  MPI_Win win;
  MT_CHECK(
      MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
  MPI_Aint size = -1;
  int unit = -1;
  double* first = NULL;
  MT_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &first));
  if (mt_size > 1) {
    double* one = NULL;
    MPI_Aint size1 = -1;
    MT_CHECK(MPI_Win_shared_query(win, 1, &size1, &unit, &one));
    MT_EXPECT(first == one && size == size1 && size == 8 * (MPI_Aint)sizeof(double),
              "MPI_PROC_NULL: size %ld", (long)size);
  } else {
    MT_EXPECT(size == 0, "MPI_PROC_NULL with every size 0: size %ld", (long)size);
  }
#ifdef ONESIDED_MPI
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  mt_expect_class("shared_query of rank size",
                  MPI_Win_shared_query(win, mt_size, &size, &unit, &first), MPI_ERR_RANK);
  mt_expect_class("shared_query with NULL size", MPI_Win_shared_query(win, 0, NULL, &unit, &first),
                  MPI_ERR_ARG);
  MPI_Win plain;
  int* pbase = NULL;
  MT_CHECK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &pbase, &plain));
  MT_CHECK(MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN));
  mt_expect_class("shared_query of an allocate window",
                  MPI_Win_shared_query(plain, 0, &size, &unit, &first), MPI_ERR_RMA_FLAVOR);
  MT_CHECK(MPI_Win_free(&plain));
  mt_expect_class("allocate_shared with a negative size",
                  MPI_Win_allocate_shared(mt_rank == 0 ? -8 : 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                          &pbase, &plain),
                  mt_rank == 0 ? MPI_ERR_SIZE : MPI_ERR_OTHER);
#endif
  MT_CHECK(MPI_Win_free(&win));
  if (mt_rank == 0) printf("MPI_PROC_NULL query ok\n");
}

static void zero_parts(int noncontig, int all_zero) {
  /* Odd ranks (or all, with all_zero) have no memory. With alloc_shared_noncontig their base is
   * NULL, from the call and from the query, as MPICH and Open MPI give; contiguous, a part
   * still starts where the previous one ends. */
  const int me = mt_rank;
  const int p = mt_size;
  MPI_Info info = MPI_INFO_NULL;
  if (noncontig) {
    MT_CHECK(MPI_Info_create(&info));
    MT_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  }
  const int zero = all_zero || me % 2 == 1;
  const MPI_Aint bytes = zero ? 0 : 3 * (MPI_Aint)sizeof(double);
  double* mine = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate_shared(bytes, sizeof(double), info, MPI_COMM_WORLD, &mine, &win));
  if (info != MPI_INFO_NULL) MT_CHECK(MPI_Info_free(&info));
  if (noncontig) {
    MT_EXPECT((mine == NULL) == zero, "noncontig, size %ld: baseptr %p", (long)bytes, (void*)mine);
  }
  double* prev = NULL;
  MPI_Aint prevSize = 0;
  for (int r = 0; r < p && r < 64; ++r) {
    MPI_Aint size = -1;
    int unit = -1;
    double* part = NULL;
    MT_CHECK(MPI_Win_shared_query(win, r, &size, &unit, &part));
    const int rzero = all_zero || r % 2 == 1;
    MT_EXPECT(rzero ? size == 0 : size >= 3 * (MPI_Aint)sizeof(double), "rank %d: size %ld", r,
              (long)size);
    if (r == me)
      MT_EXPECT(part == mine, "rank %d: query %p, baseptr %p", r, (void*)part, (void*)mine);
    if (noncontig) {
      MT_EXPECT((part == NULL) == rzero, "noncontig: rank %d's part %p (size %ld)", r, (void*)part,
                (long)size);
    } else if (r > 0) {
      MT_EXPECT(part == (double*)((char*)prev + prevSize),
                "contiguous: rank %d's part %p does not follow rank %d's %p (size %ld)", r,
                (void*)part, r - 1, (void*)prev, (long)prevSize);
    }
    prev = part;
    prevSize = size;
  }
  MPI_Aint size = -1;
  int unit = -1;
  double* first = NULL;
  MT_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &first));
  if (all_zero) {
    MT_EXPECT(size == 0 && (!noncontig || first == NULL), "MPI_PROC_NULL, all 0: size %ld, %p",
              (long)size, (void*)first);
  } else {
    MT_EXPECT(size >= 3 * (MPI_Aint)sizeof(double) && first != NULL, "MPI_PROC_NULL: size %ld",
              (long)size);
  }
  /* The parts with memory still work. */
  if (!zero) {
    for (int i = 0; i < 3; ++i) mine[i] = me + i;
  }
  MT_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  MT_CHECK(MPI_Win_sync(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_sync(win));
  if (!all_zero) {
    double* part0 = NULL;
    MT_CHECK(MPI_Win_shared_query(win, 0, &size, &unit, &part0));
    MT_EXPECT(part0[0] == 0 && part0[2] == 2, "rank 0's part %g %g", part0[0], part0[2]);
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Win_free(&win));
  if (me == 0) {
    printf("%s shared window with %s parts of size 0 ok\n",
           noncontig ? "noncontiguous" : "contiguous", all_zero ? "all" : "some");
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  shared(0);
  shared(1);
  proc_null_query();
  for (int all_zero = 0; all_zero < 2; ++all_zero) {
    zero_parts(0, all_zero);
    zero_parts(1, all_zero);
  }
  return mt_finish();
}
