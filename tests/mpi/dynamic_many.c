/* SPDX-License-Identifier: BSD-3-Clause */
/* Dynamic windows with many regions: 1000 adjacent regions of one buffer attached per rank (in
 * a shuffled order, so the attach table grows and its entries are not in address order), then
 * puts, gets, strided puts, accumulates (8-byte integers: transport atomics; doubles: the
 * lock or message path) and get_accumulates whose bytes span many adjacent regions, all
 * checked exactly; then a region detached in the middle (a spanning access over the hole is
 * MPI_ERR_RMA_RANGE, the parts on either side still work), and every region detached in a
 * shuffled order and some attached again.
 * Not compared with Open MPI: its osc components take at most 32 or 64 regions by default. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kRegions = 1000, kRegionInts = 8 }; /* 64-byte regions */
static const MPI_Aint kRegionBytes = kRegionInts * (MPI_Aint)sizeof(int64_t);

static void shuffle(int* order, int n, unsigned seed) {
  for (int i = 0; i < n; ++i) order[i] = i;
  for (int i = n - 1; i > 0; --i) {
    seed = seed * 1103515245u + 12345u;
    const int j = (int)((seed >> 8) % (unsigned)(i + 1));
    const int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int me = mt_rank;
  const int p = mt_size;
  const int next = (me + 1) % p;
  const int prev = (me + p - 1) % p;
  const int total = kRegions * kRegionInts;
  int64_t* buf = malloc((size_t)total * sizeof(int64_t));
  double* dbuf = malloc((size_t)total * sizeof(double));
  for (int i = 0; i < total; ++i) buf[i] = -1, dbuf[i] = 0;
  MPI_Win win;
  MT_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int* order = malloc(kRegions * sizeof(int));
  shuffle(order, kRegions, 7u + (unsigned)me);
  for (int k = 0; k < kRegions; ++k) {
    MT_CHECK(MPI_Win_attach(win, buf + order[k] * kRegionInts, kRegionBytes));
  }
  /* The doubles: 100 adjacent regions of 10 doubles. */
  for (int k = 0; k < 100; ++k) {
    MT_CHECK(MPI_Win_attach(win, dbuf + k * 10, 10 * (MPI_Aint)sizeof(double)));
  }
  MPI_Aint mine[2];
  MT_CHECK(MPI_Get_address(buf, &mine[0]));
  MT_CHECK(MPI_Get_address(dbuf, &mine[1]));
  MPI_Aint* all = malloc(2 * (size_t)p * sizeof(MPI_Aint));
  MT_CHECK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
  const MPI_Aint nbase = all[2 * next];
  const MPI_Aint base0 = all[0];
  const MPI_Aint dbase0 = all[1];

  /* 1. A put of 10 regions' worth, starting 3 ints into region 3, and a get of it back. */
  enum { kSpan = 10 * kRegionInts };
  const int first = 3 * kRegionInts + 3;
  int64_t src[kSpan];
  int64_t got[kSpan];
  for (int i = 0; i < kSpan; ++i) src[i] = me * 100000 + i;
  MT_CHECK(MPI_Win_lock_all(0, win));
  MT_CHECK(MPI_Put(src, kSpan, MPI_INT64_T, next, nbase + first * 8, kSpan, MPI_INT64_T, win));
  MT_CHECK(MPI_Win_flush(next, win));
  memset(got, 0, sizeof got);
  MT_CHECK(MPI_Get(got, kSpan, MPI_INT64_T, next, nbase + first * 8, kSpan, MPI_INT64_T, win));
  MT_CHECK(MPI_Win_flush(next, win));
  int bad = 0;
  for (int i = 0; i < kSpan; ++i) bad += got[i] != src[i];
  MT_EXPECT(bad == 0, "get back across regions: %d wrong", bad);
  /* A strided put: every third int over 900 regions (a vector type). */
  MPI_Datatype every3;
  MT_CHECK(MPI_Type_vector(2400, 1, 3, MPI_INT64_T, &every3));
  MT_CHECK(MPI_Type_commit(&every3));
  int64_t* strided = malloc(2400 * sizeof(int64_t));
  for (int i = 0; i < 2400; ++i) strided[i] = -(me * 100000 + i);
  const int sfirst = 100 * kRegionInts + 1; /* well past the spanning put above */
  MT_CHECK(MPI_Put(strided, 2400, MPI_INT64_T, next, nbase + sfirst * 8, 1, every3, win));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  bad = 0;
  for (int i = 0; i < total; ++i) {
    int64_t want = -1;
    if (i >= first && i < first + kSpan) want = prev * 100000 + (i - first);
    if (i >= sfirst && (i - sfirst) % 3 == 0 && (i - sfirst) / 3 < 2400) {
      want = -(prev * 100000 + (i - sfirst) / 3);
    }
    bad += buf[i] != want;
  }
  MT_EXPECT(bad == 0, "puts across regions: %d wrong values", bad);
  if (me == 0) printf("put / get across adjacent regions ok\n");

  /* 2. Everybody accumulates into rank 0 across regions: int64 sums (transport atomics),
   * doubles (lock or message path), and a get_accumulate. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < total; ++i) buf[i] = 0;
  MT_CHECK(MPI_Win_sync(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const int afirst = 500 * kRegionInts + 5;
  enum { kAcc = 40 * kRegionInts };
  int64_t* ones = malloc(kAcc * sizeof(int64_t));
  int64_t* olds = malloc(kAcc * sizeof(int64_t));
  for (int i = 0; i < kAcc; ++i) ones[i] = i + 1;
  double dsrc[95];
  for (int i = 0; i < 95; ++i) dsrc[i] = 0.5 * (i + 1);
  MT_CHECK(MPI_Win_lock_all(0, win));
  for (int round = 0; round < 5; ++round) {
    MT_CHECK(MPI_Accumulate(ones, kAcc, MPI_INT64_T, 0, base0 + afirst * 8, kAcc, MPI_INT64_T,
                            MPI_SUM, win));
    MT_CHECK(MPI_Accumulate(dsrc, 95, MPI_DOUBLE, 0, dbase0 + 3 * 8, 95, MPI_DOUBLE, MPI_SUM, win));
  }
  MT_CHECK(MPI_Get_accumulate(ones, kAcc, MPI_INT64_T, olds, kAcc, MPI_INT64_T, 0,
                              base0 + afirst * 8, kAcc, MPI_INT64_T, MPI_NO_OP, win));
  MT_CHECK(MPI_Win_flush(0, win));
  bad = 0;
  for (int i = 0; i < kAcc; ++i) bad += olds[i] < 5 * (int64_t)(i + 1) || olds[i] % (i + 1) != 0;
  MT_EXPECT(bad == 0, "get_accumulate across regions: %d implausible values", bad);
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_sync(win));
  if (me == 0) {
    bad = 0;
    for (int i = 0; i < total; ++i) {
      const int64_t want = i >= afirst && i < afirst + kAcc ? 5 * p * (int64_t)(i - afirst + 1) : 0;
      bad += buf[i] != want;
    }
    MT_EXPECT(bad == 0, "int64 accumulates across regions: %d wrong values", bad);
    bad = 0;
    for (int i = 0; i < 1000; ++i) {
      const double want = i >= 3 && i < 98 ? 5.0 * p * 0.5 * (i - 2) : 0.0;
      bad += dbuf[i] != want;
    }
    MT_EXPECT(bad == 0, "double accumulates across regions: %d wrong values", bad);
    printf("accumulates across adjacent regions ok\n");
  }

  /* 3. Region 20 of every rank detached: an access over the hole fails, either side works. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_detach(win, buf + 20 * kRegionInts));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_lock_all(0, win));
  mt_expect_class("put over a detached region",
                  MPI_Put(src, 3 * kRegionInts, MPI_INT64_T, next, nbase + 19 * kRegionBytes,
                          3 * kRegionInts, MPI_INT64_T, win),
                  MPI_ERR_RMA_RANGE);
  mt_expect_class(
      "get reaching into a detached region",
      MPI_Get(got, 2, MPI_INT64_T, next, nbase + 20 * kRegionBytes - 8, 2, MPI_INT64_T, win),
      MPI_ERR_RMA_RANGE);
  MT_CHECK(MPI_Put(src, 2 * kRegionInts, MPI_INT64_T, next, nbase + 18 * kRegionBytes,
                   2 * kRegionInts, MPI_INT64_T, win));
  MT_CHECK(MPI_Put(src, 2 * kRegionInts, MPI_INT64_T, next, nbase + 21 * kRegionBytes,
                   2 * kRegionInts, MPI_INT64_T, win));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  bad = 0;
  for (int i = 0; i < 2 * kRegionInts; ++i) {
    bad += buf[18 * kRegionInts + i] != src[i] - me * 100000 + prev * 100000;
    bad += buf[21 * kRegionInts + i] != src[i] - me * 100000 + prev * 100000;
  }
  MT_EXPECT(bad == 0, "puts beside a detached region: %d wrong values", bad);
  if (me == 0) printf("detached region in the middle ok\n");

  /* 4. Every region detached in another order, 300 attached again, a spanning put. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  shuffle(order, kRegions, 11u + (unsigned)me);
  for (int k = 0; k < kRegions; ++k) {
    if (order[k] == 20) continue;
    MT_CHECK(MPI_Win_detach(win, buf + order[k] * kRegionInts));
  }
  for (int k = 0; k < 300; ++k) {
    MT_CHECK(MPI_Win_attach(win, buf + k * kRegionInts, kRegionBytes));
  }
  for (int i = 0; i < total; ++i) buf[i] = -1;
  MT_CHECK(MPI_Win_sync(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_lock_all(0, win));
  MT_CHECK(
      MPI_Put(src, kSpan, MPI_INT64_T, next, nbase + 250 * kRegionBytes, kSpan, MPI_INT64_T, win));
  mt_expect_class(
      "put past the regions attached again",
      MPI_Put(src, kSpan, MPI_INT64_T, next, nbase + 295 * kRegionBytes, kSpan, MPI_INT64_T, win),
      MPI_ERR_RMA_RANGE);
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  bad = 0;
  for (int i = 0; i < kSpan; ++i) bad += buf[250 * kRegionInts + i] != prev * 100000 + i;
  MT_EXPECT(bad == 0, "put after reattaching: %d wrong values", bad);
  if (me == 0) printf("detach all, attach again ok\n");

  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int k = 0; k < 300; ++k) MT_CHECK(MPI_Win_detach(win, buf + k * kRegionInts));
  for (int k = 0; k < 100; ++k) MT_CHECK(MPI_Win_detach(win, dbuf + k * 10));
  MT_CHECK(MPI_Type_free(&every3));
  MT_CHECK(MPI_Win_free(&win));
  free(strided);
  free(ones);
  free(olds);
  free(order);
  free(all);
  free(buf);
  free(dbuf);
  return mt_finish();
}
