/* SPDX-License-Identifier: BSD-3-Clause */
/* Window attributes, MPI_PROC_NULL and self targets, many fence epochs, and fence assertions:
 *  - MPI_Win_get_attr of MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR and MODEL on allocate and
 *    create windows, including size-0 windows (create with a NULL base);
 *  - MPI_Put / MPI_Get to MPI_PROC_NULL: MPI_SUCCESS and no effect (MPI-3.1 §11.3);
 *  - puts and gets to self;
 *  - kEpochs fence epochs in a row, one put each, alternating two slots by epoch parity: a slot
 *    is read right after the fence that completes it, because the next epoch's puts (to the
 *    other slot) may already be landing;
 *  - MPI_MODE_NOPRECEDE, NOSUCCEED, NOSTORE and NOPUT where they are true.
 * Output is one line per part, identical under any MPI implementation. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kEpochs = 2000, kInts = 8 };

/* Checks every attribute of win; base may be NULL for a size-0 create window. */
static void check_attrs(const char* what, MPI_Win win, const void* base, MPI_Aint size,
                        int disp_unit, int flavor, int check_base) {
  void* got_base = (void*)&got_base; /* anything but the expected value */
  MPI_Aint* got_size = NULL;
  int* got_disp = NULL;
  int* got_flavor = NULL;
  int* got_model = NULL;
  int flag = 0;
  /* MPI-3.1 §11.2.6: for MPI_WIN_BASE the attribute value is the base itself; the others are
   * pointers to the value. */
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
  MT_EXPECT(flag == 1, "%s: MPI_WIN_BASE flag %d", what, flag);
  if (check_base) MT_EXPECT(got_base == base, "%s: base %p, expected %p", what, got_base, base);
  flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
  MT_EXPECT(flag == 1 && got_size != NULL && *got_size == size, "%s: MPI_WIN_SIZE flag %d", what,
            flag);
  flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_disp, &flag));
  MT_EXPECT(flag == 1 && got_disp != NULL && *got_disp == disp_unit, "%s: MPI_WIN_DISP_UNIT", what);
  flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &got_flavor, &flag));
  MT_EXPECT(flag == 1 && got_flavor != NULL && *got_flavor == flavor,
            "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", what,
            got_flavor != NULL ? *got_flavor : -1, flavor);
  flag = 0;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &got_model, &flag));
  MT_EXPECT(flag == 1 && got_model != NULL &&
                (*got_model == MPI_WIN_UNIFIED || *got_model == MPI_WIN_SEPARATE),
            "%s: MPI_WIN_MODEL", what);
  printf("rank %d: attributes of %s ok\n", mt_rank, what);
}

static void attributes(void) {
  MPI_Win win;
  int* abase = NULL;
  const MPI_Aint asize = kInts * (MPI_Aint)sizeof(int);
  MT_CHECK(MPI_Win_allocate(asize, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abase, &win));
  check_attrs("allocate window", win, abase, asize, (int)sizeof(int), MPI_WIN_FLAVOR_ALLOCATE, 1);
  MT_CHECK(MPI_Win_free(&win));
  MT_EXPECT(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");

  double user[5];
  MT_CHECK(MPI_Win_create(user, (MPI_Aint)sizeof user, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_attrs("create window", win, user, (MPI_Aint)sizeof user, 1, MPI_WIN_FLAVOR_CREATE, 1);
  MT_CHECK(MPI_Win_free(&win));

  MT_CHECK(MPI_Win_create(NULL, 0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_attrs("size-0 create window (NULL base)", win, NULL, 0, 8, MPI_WIN_FLAVOR_CREATE, 1);
  MT_CHECK(MPI_Win_free(&win));

  /* A size-0 allocate window may have any base (MPI-3.1 §11.2.2); only check the rest. */
  void* zbase = NULL;
  MT_CHECK(MPI_Win_allocate(0, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &zbase, &win));
  check_attrs("size-0 allocate window", win, zbase, 0, 2, MPI_WIN_FLAVOR_ALLOCATE, 0);
  MT_CHECK(MPI_Win_free(&win));

  /* Rank-dependent sizes: the attributes are the local ones. */
  int* vbase = NULL;
  const MPI_Aint vsize = (MPI_Aint)(mt_rank % 3) * (MPI_Aint)sizeof(int);
  MT_CHECK(MPI_Win_allocate(vsize, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &vbase, &win));
  check_attrs("rank-sized allocate window", win, vbase, vsize, (int)sizeof(int),
              MPI_WIN_FLAVOR_ALLOCATE, vsize > 0);
  MT_CHECK(MPI_Win_free(&win));
}

/* MPI_PROC_NULL targets and self targets, on a window whose size is 0 on odd ranks. */
static void proc_null_and_self(void) {
  int* base = NULL;
  const int n = mt_rank % 2 == 0 ? kInts : 0;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate((MPI_Aint)n * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win));
  for (int i = 0; i < n; ++i) base[i] = 100 * mt_rank + i;
  int origin[kInts];
  int got[kInts];
  for (int i = 0; i < kInts; ++i) {
    origin[i] = -1 - i;
    got[i] = 7;
  }
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  /* PROC_NULL: no effect, whatever the displacement and count. */
  MT_EXPECT(MPI_Put(origin, kInts, MPI_INT, MPI_PROC_NULL, 0, kInts, MPI_INT, win) == MPI_SUCCESS,
            "put to MPI_PROC_NULL");
  MT_EXPECT(MPI_Put(origin, 1, MPI_INT, MPI_PROC_NULL, 1000000, 1, MPI_INT, win) == MPI_SUCCESS,
            "put to MPI_PROC_NULL far past any window");
  MT_EXPECT(MPI_Get(got, kInts, MPI_INT, MPI_PROC_NULL, 0, kInts, MPI_INT, win) == MPI_SUCCESS,
            "get from MPI_PROC_NULL");
  MT_EXPECT(MPI_Get(got, 0, MPI_INT, MPI_PROC_NULL, 0, 0, MPI_INT, win) == MPI_SUCCESS,
            "get of count 0 from MPI_PROC_NULL");
  /* Self: the even ranks put two elements into their own window and get one back. */
  if (n > 0) {
    MT_CHECK(MPI_Put(origin, 2, MPI_INT, mt_rank, n - 2, 2, MPI_INT, win));
    MT_CHECK(MPI_Get(&got[1], 1, MPI_INT, mt_rank, 1, 1, MPI_INT, win));
  }
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  MT_EXPECT(got[0] == 7 && got[kInts - 1] == 7, "MPI_PROC_NULL get wrote %d %d", got[0],
            got[kInts - 1]);
  for (int i = 0; i < kInts; ++i) MT_EXPECT(origin[i] == -1 - i, "origin[%d] changed", i);
  if (n > 0) {
    MT_EXPECT(got[1] == 100 * mt_rank + 1, "self get %d", got[1]);
    for (int i = 0; i < n - 2; ++i)
      MT_EXPECT(base[i] == 100 * mt_rank + i, "base[%d] %d", i, base[i]);
    MT_EXPECT(base[n - 2] == -1 && base[n - 1] == -2, "self put %d %d", base[n - 2], base[n - 1]);
  }
  MT_CHECK(MPI_Win_free(&win));
  printf("rank %d: MPI_PROC_NULL and self targets ok\n", mt_rank);
}

/* kEpochs fence epochs, one put each to the right neighbour, alternating slots 0 and 1. */
static void many_epochs(void) {
  const int right = (mt_rank + 1) % mt_size;
  const int left = (mt_rank + mt_size - 1) % mt_size;
  int* slot = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(2 * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &slot, &win));
  slot[0] = slot[1] = -1; /* local stores, before the first fence */
  int bad = 0;
  int value = 0; /* origin of the put: not changed until the fence completes the put */
  /* Nothing precedes the first fence; later fences follow no local stores (slots are only read),
   * so MPI_MODE_NOSTORE is true for all of them. */
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int e = 0; e < kEpochs; ++e) {
    value = e * mt_size + mt_rank;
    MT_CHECK(MPI_Put(&value, 1, MPI_INT, right, e % 2, 1, MPI_INT, win));
    MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
    /* Epoch e is complete; epoch e+1 writes the other slot. */
    const int want = e * mt_size + left;
    if (slot[e % 2] != want) {
      if (bad < 5) {
        fprintf(stderr, "rank %d: epoch %d: slot %d holds %d, expected %d\n", mt_rank, e, e % 2,
                slot[e % 2], want);
      }
      ++bad;
    }
  }
  MT_EXPECT(bad == 0, "%d of %d epochs wrong", bad, kEpochs);

  /* A get-only epoch: NOPUT on the fence that opens it and on the one that closes it (no put
   * updates the window until the next fence); NOSUCCEED on the last one. */
  int got[2] = {0, 0};
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
  MT_CHECK(MPI_Get(got, 2, MPI_INT, right, 0, 2, MPI_INT, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win));
  /* The right neighbour's slots hold my last two values. */
  const int last = kEpochs - 1;
  MT_EXPECT(got[last % 2] == last * mt_size + mt_rank &&
                got[(last - 1) % 2] == (last - 1) * mt_size + mt_rank,
            "final get %d %d", got[0], got[1]);

  /* A fence with NOPRECEDE | NOSUCCEED neither ends nor starts an epoch: it is a no-op. */
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
  MT_CHECK(MPI_Win_free(&win));
  printf("rank %d: %d fence epochs ok\n", mt_rank, kEpochs);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  attributes();
  proc_null_and_self();
  many_epochs();
  return mt_finish();
}
