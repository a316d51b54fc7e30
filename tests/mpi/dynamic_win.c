/* SPDX-License-Identifier: BSD-3-Clause */
/* Dynamic windows: MPI_Win_create_dynamic, attach / detach churn (a fresh buffer per round,
 * its address published through an allocate window), puts, gets and accumulates by absolute
 * address under lock_all and fence, attributes, and bad input under MPI_ERRORS_RETURN: an
 * address outside every attached region (also a region detached in an earlier epoch) is
 * MPI_ERR_RMA_RANGE at the origin; overlapping attach and detach of an unknown base are
 * MPI_ERR_RMA_ATTACH; attach on an allocate window is MPI_ERR_RMA_FLAVOR.
 * Output: one line per part from rank 0, the same under any MPI. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kN = 32, kRounds = 30 };

/* Every rank's `mine` into all[rank] on every rank (there are no collectives in the subset). */
static void exchange(MPI_Win addrs, MPI_Aint mine, MPI_Aint* all) {
  MT_CHECK(MPI_Win_fence(0, addrs));
  for (int r = 0; r < mt_size; ++r) {
    MT_CHECK(MPI_Put(&mine, 1, MPI_AINT, r, mt_rank, 1, MPI_AINT, addrs));
  }
  MT_CHECK(MPI_Win_fence(0, addrs));
  (void)all;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int me = mt_rank;
  const int p = mt_size;
  const int next = (me + 1) % p;
  const int prev = (me + p - 1) % p;
  MPI_Aint* all = NULL;
  MPI_Win addrs;
  MT_CHECK(MPI_Win_allocate(p * (MPI_Aint)sizeof(MPI_Aint), sizeof(MPI_Aint), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &all, &addrs));
  MPI_Win win;
  MT_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int* flavor = NULL;
  MPI_Aint* size = NULL;
  void* base = &base;
  int flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  MT_EXPECT(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", flavor ? *flavor : -1);
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
  MT_EXPECT(flag && *size == 0, "size %ld", size ? (long)*size : -1L);
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
  MT_EXPECT(flag && base == MPI_BOTTOM, "base %p", base);

  /* Churn: a new buffer each round, written by prev with puts and read by next with gets. */
  for (int round = 0; round < kRounds; ++round) {
    int* buf = malloc(kN * sizeof(int));
    for (int i = 0; i < kN; ++i) buf[i] = -1;
    MT_CHECK(MPI_Win_attach(win, buf, kN * sizeof(int)));
    MPI_Aint addr;
    MT_CHECK(MPI_Get_address(buf, &addr));
    exchange(addrs, addr, all);
    int src[kN];
    for (int i = 0; i < kN; ++i) src[i] = me * 10000 + round * 100 + i;
    if (round % 2 == 0) {
      MT_CHECK(MPI_Win_lock_all(0, win));
      MT_CHECK(MPI_Put(src, kN, MPI_INT, next, all[next], kN, MPI_INT, win));
      MT_CHECK(MPI_Win_unlock_all(win));
    } else {
      MT_CHECK(MPI_Win_fence(0, win));
      MT_CHECK(MPI_Put(src, kN, MPI_INT, next, all[next], kN, MPI_INT, win));
      MT_CHECK(MPI_Win_fence(0, win));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int bad = 0;
    for (int i = 0; i < kN; ++i) bad += buf[i] != prev * 10000 + round * 100 + i;
    MT_EXPECT(bad == 0, "round %d: %d wrong values from rank %d", round, bad, prev);
    /* Read back what prev put into next's buffer... from next's side: get from prev. */
    int got[kN];
    MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, prev, 0, win));
    MT_CHECK(MPI_Get(got, kN, MPI_INT, prev, all[prev], kN, MPI_INT, win));
    MT_CHECK(MPI_Win_unlock(prev, win));
    bad = 0;
    const int pp = (prev + p - 1) % p;
    for (int i = 0; i < kN; ++i) bad += got[i] != pp * 10000 + round * 100 + i;
    MT_EXPECT(bad == 0, "round %d: %d wrong values read from rank %d", round, bad, prev);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Win_detach(win, buf));
    free(buf);
  }
  if (me == 0) printf("attach / detach churn ok\n");

  /* Accumulates into one region at rank 0, two regions per rank attached at once. */
  int64_t* counters = NULL;
  double* sums = NULL;
  MT_CHECK(MPI_Alloc_mem(4 * sizeof(int64_t), MPI_INFO_NULL, &counters));
  sums = malloc(4 * sizeof(double));
  memset(counters, 0, 4 * sizeof(int64_t));
  memset(sums, 0, 4 * sizeof(double));
  MT_CHECK(MPI_Win_attach(win, counters, 4 * sizeof(int64_t)));
  MT_CHECK(MPI_Win_attach(win, sums, 4 * sizeof(double)));
  MPI_Aint caddr;
  MPI_Aint saddr;
  MT_CHECK(MPI_Get_address(counters, &caddr));
  MT_CHECK(MPI_Get_address(sums, &saddr));
  exchange(addrs, caddr, all);
  const MPI_Aint counters0 = all[0];
  exchange(addrs, saddr, all);
  const MPI_Aint sums0 = all[0];
  MT_CHECK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < 50; ++i) {
    const int64_t one = 1;
    int64_t old = 0;
    const double half[4] = {0.5, 0.5, 0.5, 0.5};
    MT_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, counters0, MPI_SUM, win));
    MT_CHECK(MPI_Accumulate(half, 4, MPI_DOUBLE, 0, sums0, 4, MPI_DOUBLE, MPI_SUM, win));
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    MT_EXPECT(counters[0] == 50 * p, "counter %lld, expected %d", (long long)counters[0], 50 * p);
    MT_EXPECT(sums[3] == 25.0 * p, "sum %g, expected %g", sums[3], 25.0 * p);
    printf("accumulates ok\n");
  }

#ifdef ONESIDED_MPI
  /* Bad input (onesided reports these; other MPIs may not check them). */
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int v = 7;
  MT_CHECK(MPI_Win_lock_all(0, win));
  mt_expect_class(
      "put past an attached region",
      MPI_Put(&v, 1, MPI_INT, next, sums0 + 4 * (MPI_Aint)sizeof(double), 1, MPI_INT, win),
      MPI_ERR_RMA_RANGE);
  mt_expect_class("put straddling a region's end",
                  MPI_Put(&v, 1, MPI_INT64_T, 0, counters0 + 3 * 8 + 4, 1, MPI_INT64_T, win),
                  MPI_ERR_RMA_RANGE);
  mt_expect_class("get from address 4096", MPI_Get(&v, 1, MPI_INT, next, 4096, 1, MPI_INT, win),
                  MPI_ERR_RMA_RANGE);
  mt_expect_class("fetch_and_op outside", MPI_Fetch_and_op(&v, &v, MPI_INT, next, 64, MPI_SUM, win),
                  MPI_ERR_RMA_RANGE);
  MT_CHECK(MPI_Win_unlock_all(win));
  int* gone = malloc(16);
  MPI_Aint gaddr;
  MT_CHECK(MPI_Win_attach(win, gone, 16));
  MT_CHECK(MPI_Get_address(gone, &gaddr));
  exchange(addrs, gaddr, all);
  MT_CHECK(MPI_Win_lock_all(0, win));
  MT_CHECK(MPI_Put(&v, 1, MPI_INT, next, all[next], 1, MPI_INT, win));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_detach(win, gone));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_lock_all(0, win));
  mt_expect_class("put to a region detached before the epoch",
                  MPI_Put(&v, 1, MPI_INT, next, all[next], 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  MT_CHECK(MPI_Win_unlock_all(win));
  free(gone);
  int ints[8];
  MT_CHECK(MPI_Win_attach(win, ints, sizeof ints));
  mt_expect_class("attach overlapping", MPI_Win_attach(win, ints + 4, sizeof ints),
                  MPI_ERR_RMA_ATTACH);
  mt_expect_class("attach of the same base", MPI_Win_attach(win, ints, 4), MPI_ERR_RMA_ATTACH);
  mt_expect_class("detach of an unknown base", MPI_Win_detach(win, ints + 1), MPI_ERR_RMA_ATTACH);
  mt_expect_class("attach with a negative size", MPI_Win_attach(win, &v, -1), MPI_ERR_SIZE);
  MT_CHECK(MPI_Win_detach(win, ints));
  mt_expect_class("detach twice", MPI_Win_detach(win, ints), MPI_ERR_RMA_ATTACH);
  MT_CHECK(MPI_Win_set_errhandler(addrs, MPI_ERRORS_RETURN));
  mt_expect_class("attach to an allocate window", MPI_Win_attach(addrs, ints, sizeof ints),
                  MPI_ERR_RMA_FLAVOR);
#endif
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_detach(win, counters));
  MT_CHECK(MPI_Win_detach(win, sums));
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Free_mem(counters));
  free(sums);
  MT_CHECK(MPI_Win_free(&addrs));
  return mt_finish();
}
