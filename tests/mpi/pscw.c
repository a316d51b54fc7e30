/* SPDX-License-Identifier: BSD-3-Clause */
/* General active-target synchronisation (MPI_Win_post / start / complete / wait / test) with
 * groups made from the window's group: a ring where every rank writes into its right
 * neighbour for many epochs, a gather of accumulates into rank 0 closed with MPI_Win_test, and
 * MPI_Win_get_group. Then the error classes of misuse, with MPI_ERRORS_RETURN on the window.
 * Prints only lines any correct MPI prints identically.
 * Usage: pscw [rounds [noerrors]]   (default 40; noerrors skips the error checks) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define expect_class(rc, want, what) mt_expect_class(what, rc, want)

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 40;
  const int check_errors = !(argc > 2 && strcmp(argv[2], "noerrors") == 0);
  const int p = mt_size;
  const int me = mt_rank;
  const int left = (me + p - 1) % p;
  const int right = (me + 1) % p;

  int64_t* base = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate((MPI_Aint)(4 * sizeof(int64_t)), sizeof(int64_t), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &base, &win));
  memset(base, 0, 4 * sizeof(int64_t));

  MPI_Group world_group, win_group, left_group, right_group, zero_group, others_group;
  MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  MT_CHECK(MPI_Win_get_group(win, &win_group));
  int cmp = -1;
  MT_CHECK(MPI_Group_compare(world_group, win_group, &cmp));
  MT_EXPECT(cmp == MPI_IDENT, "MPI_Win_get_group is not the window's group (%d)", cmp);
  MT_CHECK(MPI_Group_incl(world_group, 1, &left, &left_group));
  MT_CHECK(MPI_Group_incl(world_group, 1, &right, &right_group));
  const int zero = 0;
  MT_CHECK(MPI_Group_incl(world_group, 1, &zero, &zero_group));
  MT_CHECK(MPI_Group_excl(world_group, 1, &zero, &others_group));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* 1. Ring: post to the left neighbour, start on the right one, many epochs in a row. */
  for (int r = 0; r < rounds; ++r) {
    MT_CHECK(MPI_Win_post(left_group, 0, win));
    MT_CHECK(MPI_Win_start(right_group, 0, win));
    const int64_t v[2] = {(int64_t)me * 1000 + r, -(int64_t)r};
    MT_CHECK(MPI_Put(v, 2, MPI_INT64_T, right, r % 2, 2, MPI_INT64_T, win));
    MT_CHECK(MPI_Win_complete(win));
    MT_CHECK(MPI_Win_wait(win));
    MT_EXPECT(base[r % 2] == (int64_t)left * 1000 + r && base[r % 2 + 1] == -(int64_t)r,
              "ring round %d: got %lld %lld", r, (long long)base[r % 2],
              (long long)base[r % 2 + 1]);
  }
  if (me == 0) printf("ring %d rounds\n", rounds);

  /* 2. Everybody else adds into rank 0, which waits with MPI_Win_test. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  base[3] = 0;
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int r = 0; r < rounds; ++r) {
    if (me == 0) {
      if (p > 1) MT_CHECK(MPI_Win_post(others_group, 0, win));
      int done = 0;
      while (p > 1 && !done) MT_CHECK(MPI_Win_test(win, &done));
    } else {
      MT_CHECK(MPI_Win_start(zero_group, 0, win));
      const int64_t add = me + r;
      MT_CHECK(MPI_Accumulate(&add, 1, MPI_INT64_T, 0, 3, 1, MPI_INT64_T, MPI_SUM, win));
      MT_CHECK(MPI_Win_complete(win));
    }
  }
  if (me == 0) {
    int64_t want = 0;
    for (int q = 1; q < p; ++q)
      for (int r = 0; r < rounds; ++r) want += q + r;
    MT_EXPECT(base[3] == want, "sum %lld, expected %lld", (long long)base[3], (long long)want);
    printf("sum %lld\n", (long long)base[3]);
  }
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* 3. Misuse: each call fails with its class, and the window stays usable. */
  if (check_errors) {
    MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    expect_class(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "complete without start");
    expect_class(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post");
    int flag = 0;
    expect_class(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC, "test without post");
    expect_class(MPI_Win_post(MPI_GROUP_NULL, 0, win), MPI_ERR_GROUP, "post MPI_GROUP_NULL");
    expect_class(MPI_Win_start(right_group, MPI_MODE_NOPUT, win), MPI_ERR_ASSERT,
                 "start with MPI_MODE_NOPUT");
    MT_CHECK(MPI_Win_post(left_group, 0, win));
    expect_class(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC, "fence in an exposure epoch");
    MT_CHECK(MPI_Win_start(right_group, 0, win));
    const int64_t v = 5;
    if (p > 2) {
      expect_class(MPI_Put(&v, 1, MPI_INT64_T, left, 0, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC,
                   "put outside the start group");
    }
    expect_class(MPI_Put(&v, 1, MPI_INT64_T, right, 4, 1, MPI_INT64_T, win), MPI_ERR_RMA_RANGE,
                 "put past the window");
    MT_CHECK(MPI_Win_complete(win));
    MT_CHECK(MPI_Win_wait(win));
    if (me == 0) printf("errors checked\n");
  }

  MT_CHECK(MPI_Group_free(&left_group));
  MT_CHECK(MPI_Group_free(&right_group));
  MT_CHECK(MPI_Group_free(&zero_group));
  MT_CHECK(MPI_Group_free(&others_group));
  MT_CHECK(MPI_Group_free(&win_group));
  MT_CHECK(MPI_Group_free(&world_group));
  MT_CHECK(MPI_Win_free(&win));
  return mt_finish();
}
