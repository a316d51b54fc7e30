/* SPDX-License-Identifier: BSD-3-Clause */
/* Derived datatypes given bad input under MPI_ERRORS_RETURN: every failure gets its error class
 * (through MPI_Error_class) and touches no memory -- the target window (checked by its owner
 * after the closing fence), the origin buffers and the output arguments.
 *
 * Each check prints   rank R: ok WHAT: CLASS (error string)
 * or                  rank R: FAIL WHAT: expected CLASS, got ... (error string)
 * and the program exits non-zero if any check failed. onesided only: it relies on integer
 * handles (a freed handle stays recognisable) and documents onesided's classes. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kWin = 32 };

static const char* class_name(int c) {
  switch (c) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE";
    case MPI_ERR_RMA_RANGE:
      return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    default:
      return "(other class)";
  }
}

static void expect(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  if (cls == want) {
    printf("rank %d: ok %s: %s (%s)\n", mt_rank, what, class_name(want), msg);
  } else {
    printf("rank %d: FAIL %s: expected %s, got %s (class %d: %s)\n", mt_rank, what,
           class_name(want), class_name(cls), cls, msg);
    ++mt_failures;
  }
}

static void expect_true(const char* what, int cond) {
  printf("rank %d: %s %s\n", mt_rank, cond ? "ok" : "FAIL", what);
  if (!cond) ++mt_failures;
}

static void constructor_checks(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const int bl[2] = {1, -1}, ds[2] = {0, 4};
  expect("MPI_Type_contiguous with count -1", MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  expect("MPI_Type_vector with count -2", MPI_Type_vector(-2, 1, 2, MPI_INT, &t), MPI_ERR_COUNT);
  expect("MPI_Type_vector with blocklength -1", MPI_Type_vector(2, -1, 2, MPI_INT, &t),
         MPI_ERR_ARG);
  expect("MPI_Type_indexed with a negative blocklength", MPI_Type_indexed(2, bl, ds, MPI_INT, &t),
         MPI_ERR_ARG);
  expect("MPI_Type_create_indexed_block with count -1",
         MPI_Type_create_indexed_block(-1, 1, ds, MPI_INT, &t), MPI_ERR_COUNT);
  expect("MPI_Type_contiguous of MPI_DATATYPE_NULL", MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t),
         MPI_ERR_TYPE);
  {
    const int sbl[2] = {1, 1};
    const MPI_Aint sds[2] = {0, 8};
    const MPI_Datatype sts[2] = {MPI_INT, MPI_DATATYPE_NULL};
    expect("MPI_Type_create_struct with MPI_DATATYPE_NULL in array_of_types",
           MPI_Type_create_struct(2, sbl, sds, sts, &t), MPI_ERR_TYPE);
  }
  {
    const int sizes[2] = {4, 4}, subs[2] = {2, 5}, starts[2] = {0, 0}, bad_start[2] = {3, 0};
    const int ok_subs[2] = {2, 2};
    expect("MPI_Type_create_subarray with subsize > size",
           MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    expect("MPI_Type_create_subarray with start + subsize > size",
           MPI_Type_create_subarray(2, sizes, ok_subs, bad_start, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
    expect("MPI_Type_create_subarray with order 99",
           MPI_Type_create_subarray(2, sizes, ok_subs, starts, 99, MPI_INT, &t), MPI_ERR_ARG);
  }
  {
    const int g[1] = {10}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {2}, ps[1] = {4};
    expect("MPI_Type_create_darray whose blocks do not cover the array (2 x 4 < 10)",
           MPI_Type_create_darray(4, 0, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
  }
  /* Sizes that overflow: INT_MAX x (INT_MAX doubles) is 2^64 bytes. */
  MPI_Datatype big = MPI_DATATYPE_NULL;
  MT_CHECK(MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &big));
  expect("MPI_Type_contiguous of INT_MAX x (INT_MAX doubles)",
         MPI_Type_contiguous(INT_MAX, big, &t), MPI_ERR_COUNT);
  expect_true("no type returned by the failed constructors", t == MPI_DATATYPE_NULL);
  int size = 42;
  MT_CHECK(MPI_Type_size(big, &size));
  expect_true("MPI_Type_size of a type over 2 GiB is MPI_UNDEFINED", size == MPI_UNDEFINED);
  MPI_Count size_x = 0;
  MT_CHECK(MPI_Type_size_x(big, &size_x));
  expect_true("MPI_Type_size_x of it is exact", size_x == (MPI_Count)INT_MAX * 8);
  size = 42;
  expect("MPI_Pack_size of 2 x that", MPI_Pack_size(2, big, MPI_COMM_WORLD, &size), MPI_ERR_COUNT);
  expect_true("MPI_Pack_size's output untouched", size == 42);
  MT_CHECK(MPI_Type_free(&big));

  /* Freeing. */
  MPI_Datatype pre = MPI_INT;
  expect("MPI_Type_free of MPI_INT", MPI_Type_free(&pre), MPI_ERR_TYPE);
  expect_true("MPI_INT handle unchanged", pre == MPI_INT);
  MPI_Datatype v = MPI_DATATYPE_NULL;
  MT_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
  MPI_Datatype stale = v;
  MT_CHECK(MPI_Type_free(&v));
  expect_true("MPI_Type_free sets the handle to MPI_DATATYPE_NULL", v == MPI_DATATYPE_NULL);
  expect("MPI_Type_free of a freed handle", MPI_Type_free(&stale), MPI_ERR_TYPE);
  expect("MPI_Type_size of a freed handle", MPI_Type_size(stale, &size), MPI_ERR_TYPE);
  expect("MPI_Type_commit of a freed handle", MPI_Type_commit(&stale), MPI_ERR_TYPE);
  MPI_Datatype null = MPI_DATATYPE_NULL;
  expect("MPI_Type_commit of MPI_DATATYPE_NULL", MPI_Type_commit(&null), MPI_ERR_TYPE);
  int ni[1];
  MPI_Aint na[1];
  MPI_Datatype nd[1];
  expect("MPI_Type_get_contents of MPI_INT", MPI_Type_get_contents(MPI_INT, 1, 1, 1, ni, na, nd),
         MPI_ERR_TYPE);
}

static void pack_checks(void) {
  MPI_Datatype v;
  MT_CHECK(MPI_Type_vector(4, 1, 2, MPI_INT, &v));
  int in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  char out[16];
  memset(out, 0x5a, sizeof out);
  int pos = 0;
  expect("MPI_Pack of an uncommitted type", MPI_Pack(in, 1, v, out, 16, &pos, MPI_COMM_WORLD),
         MPI_ERR_TYPE);
  MT_CHECK(MPI_Type_commit(&v));
  pos = 4;
  expect("MPI_Pack into 12 bytes left of 16 bytes",
         MPI_Pack(in, 1, v, out, 16, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  int untouched = pos == 4;
  for (int i = 0; i < 16; ++i) untouched &= out[i] == 0x5a;
  expect_true("MPI_Pack's output and position untouched by the failure", untouched);
  pos = 0;
  MT_CHECK(MPI_Pack(in, 1, v, out, 16, &pos, MPI_COMM_WORLD));
  int back[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  pos = 4;
  expect("MPI_Unpack of 16 bytes from 12 left",
         MPI_Unpack(out, 16, &pos, back, 1, v, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  untouched = pos == 4;
  for (int i = 0; i < 8; ++i) untouched &= back[i] == 0;
  expect_true("MPI_Unpack's output untouched by the failure", untouched);
  expect("MPI_Pack with incount -1", MPI_Pack(in, -1, v, out, 16, &pos, MPI_COMM_WORLD),
         MPI_ERR_COUNT);
  MT_CHECK(MPI_Type_free(&v));
}

static void rma_checks(const char* flavor, MPI_Win win, double* base) {
  const int right = (mt_rank + 1) % mt_size;
  char what[200];
  double src[64], dst[64];
  for (int i = 0; i < 64; ++i) {
    src[i] = 1.0 + i;
    dst[i] = -1.0;
  }
  for (int i = 0; i < kWin; ++i) base[i] = 1000.0 * mt_rank + i;
#define CHECK_RMA(desc, call, cls)                               \
  do {                                                           \
    snprintf(what, sizeof what, "%s (%s window)", desc, flavor); \
    expect(what, (call), (cls));                                 \
  } while (0)

  MPI_Datatype raw, over, wide, neg, mixed, freed;
  MT_CHECK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &raw));  /* never committed */
  MT_CHECK(MPI_Type_vector(3, 2, 1, MPI_DOUBLE, &over)); /* blocks overlap */
  MT_CHECK(MPI_Type_commit(&over));
  MT_CHECK(MPI_Type_vector(4, 1, 10, MPI_DOUBLE, &wide)); /* spans 31 elements */
  MT_CHECK(MPI_Type_commit(&wide));
  {
    const int one = 1;
    const MPI_Aint below = -(MPI_Aint)sizeof(double);
    MT_CHECK(MPI_Type_create_hindexed(1, &one, &below, MPI_DOUBLE, &neg)); /* true lb < 0 */
    MT_CHECK(MPI_Type_commit(&neg));
    const int bl[2] = {1, 2};
    const MPI_Aint ds[2] = {0, 8};
    const MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_INT};
    MT_CHECK(MPI_Type_create_struct(2, bl, ds, ts, &mixed)); /* 16 bytes: double, int, int */
    MT_CHECK(MPI_Type_commit(&mixed));
  }
  MT_CHECK(MPI_Type_contiguous(2, MPI_DOUBLE, &freed));
  MT_CHECK(MPI_Type_commit(&freed));
  const MPI_Datatype stale = freed;
  MT_CHECK(MPI_Type_free(&freed));

  MT_CHECK(MPI_Win_fence(0, win));
  CHECK_RMA("put with an uncommitted origin type",
            MPI_Put(src, 1, raw, right, 0, 4, MPI_DOUBLE, win), MPI_ERR_TYPE);
  CHECK_RMA("get with an uncommitted target type",
            MPI_Get(dst, 4, MPI_DOUBLE, right, 0, 1, raw, win), MPI_ERR_TYPE);
  CHECK_RMA("put with a freed target type handle",
            MPI_Put(src, 2, MPI_DOUBLE, right, 0, 1, stale, win), MPI_ERR_TYPE);
  CHECK_RMA("put to overlapping target entries",
            MPI_Put(src, 6, MPI_DOUBLE, right, 0, 1, over, win), MPI_ERR_TYPE);
  CHECK_RMA("get into overlapping origin entries",
            MPI_Get(dst, 1, over, right, 0, 6, MPI_DOUBLE, win), MPI_ERR_TYPE);
  CHECK_RMA("put of a strided type whose last block is past the window end",
            MPI_Put(src, 4, MPI_DOUBLE, right, 2, 1, wide, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("put of a type reaching below displacement 0",
            MPI_Put(src, 1, MPI_DOUBLE, right, 0, 1, neg, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("put of 5 doubles into a strided type of 4 doubles",
            MPI_Put(src, 5, MPI_DOUBLE, right, 0, 1, wide, win), MPI_ERR_TYPE);
  CHECK_RMA("put of (double, int, int) into 2 doubles (same size, signatures differ)",
            MPI_Put(src, 1, mixed, right, 0, 2, MPI_DOUBLE, win), MPI_ERR_TYPE);
  CHECK_RMA("put with target count -1 of a derived type",
            MPI_Put(src, 1, wide, right, 0, -1, wide, win), MPI_ERR_COUNT);
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  int changed = 0;
  for (int i = 0; i < kWin; ++i) changed += base[i] != 1000.0 * mt_rank + i;
  snprintf(what, sizeof what, "%s window untouched by the failed calls", flavor);
  expect_true(what, changed == 0);
  int origin_ok = 1;
  for (int i = 0; i < 64; ++i) origin_ok &= src[i] == 1.0 + i && dst[i] == -1.0;
  snprintf(what, sizeof what, "origin buffers untouched (%s window)", flavor);
  expect_true(what, origin_ok);
#undef CHECK_RMA
  MPI_Datatype* ts[] = {&raw, &over, &wide, &neg, &mixed};
  for (int i = 0; i < 5; ++i) MT_CHECK(MPI_Type_free(ts[i]));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  constructor_checks();
  pack_checks();
  double* cbase = malloc(kWin * sizeof *cbase);
  if (!cbase) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Win wc, wa;
  MT_CHECK(MPI_Win_create(cbase, kWin * (MPI_Aint)sizeof(double), (int)sizeof(double),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &wc));
  MT_CHECK(MPI_Win_set_errhandler(wc, MPI_ERRORS_RETURN));
  rma_checks("create", wc, cbase);
  MT_CHECK(MPI_Win_free(&wc));
  free(cbase);
  double* abase = NULL;
  MT_CHECK(MPI_Win_allocate(kWin * (MPI_Aint)sizeof(double), (int)sizeof(double), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &abase, &wa));
  MT_CHECK(MPI_Win_set_errhandler(wa, MPI_ERRORS_RETURN));
  rma_checks("allocate", wa, abase);
  MT_CHECK(MPI_Win_free(&wa));
  printf("rank %d: %s\n", mt_rank, mt_failures == 0 ? "all checks passed" : "some checks FAILED");
  return mt_finish();
}
