/* SPDX-License-Identifier: BSD-3-Clause */
/* Strided RMA with derived datatypes on both sides, in a ring, on an MPI_Win_create and an
 * MPI_Win_allocate window, every result checked against a serial computation:
 *   columns   every column of my R x C matrix (MPI_Type_vector) into the next column of my right
 *             neighbour's; then its columns back by MPI_Get into contiguous buffers
 *   transpose C x R contiguous values into the C columns of a column type resized to one
 *             element (count C: elements interleave without overlapping)
 *   faces     MPI_Type_create_subarray planes of a 3-D array (C order): my last z-plane into the
 *             neighbour's first, my last x-plane into its first x-plane (next epoch)
 *   block     a Fortran-order sub-block of the neighbour's array into a C-order sub-block of a
 *             local array of another shape (MPI_Get, subarrays on both sides)
 * Output, identical under any MPI:  rank R: FLAVOR TEST ok */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kR = 32, kC = 12, kX = 5, kY = 6, kZ = 7 };

static double value(int rank, long i) { return rank * 1e6 + (double)i + 0.25; }

static void report(const char* flavor, const char* test, long bad) {
  MT_EXPECT(bad == 0, "%s %s: %ld wrong", flavor, test, bad);
  printf("rank %d: %s %s %s\n", mt_rank, flavor, test, bad == 0 ? "ok" : "FAILED");
}

static MPI_Win make_window(int create, MPI_Aint bytes, void** base) {
  MPI_Win win;
  if (create) {
    *base = malloc((size_t)bytes);
    if (*base == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    MT_CHECK(
        MPI_Win_create(*base, bytes, (int)sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  } else {
    MT_CHECK(
        MPI_Win_allocate(bytes, (int)sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, base, &win));
  }
  return win;
}

static void matrix_tests(const char* flavor, int create) {
  const int p = mt_size, me = mt_rank, right = (me + 1) % p, left = (me + p - 1) % p;
  double* w = NULL;
  MPI_Win win = make_window(create, (MPI_Aint)(kR * kC * sizeof(double)), (void**)&w);
  double* mine = malloc(kR * kC * sizeof *mine);
  double* got = malloc(kR * kC * sizeof *got);
  if (!mine || !got) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long i = 0; i < kR * kC; ++i) {
    mine[i] = value(me, i);
    w[i] = -1.0;
  }
  MPI_Datatype column, column1;
  MT_CHECK(MPI_Type_vector(kR, 1, kC, MPI_DOUBLE, &column));
  MT_CHECK(MPI_Type_commit(&column));
  MT_CHECK(MPI_Type_create_resized(column, 0, (MPI_Aint)sizeof(double), &column1));
  MT_CHECK(MPI_Type_commit(&column1));

  MT_CHECK(MPI_Win_fence(0, win));
  for (int c = 0; c < kC; ++c) {
    MT_CHECK(MPI_Put(mine + c, 1, column, right, (c + 1) % kC, 1, column, win));
  }
  MT_CHECK(MPI_Win_fence(0, win));
  long bad = 0;
  for (int r = 0; r < kR; ++r) {
    for (int c = 0; c < kC; ++c) bad += w[r * kC + (c + 1) % kC] != value(left, r * kC + c);
  }
  report(flavor, "columns put", bad);

  for (long i = 0; i < kR * kC; ++i) got[i] = -2.0;
  for (int c = 0; c < kC; ++c) {
    MT_CHECK(MPI_Get(got + c * kR, kR, MPI_DOUBLE, right, c, 1, column, win));
  }
  MT_CHECK(MPI_Win_fence(0, win));
  bad = 0;
  /* The right neighbour's window holds my matrix, shifted one column. */
  for (int c = 0; c < kC; ++c) {
    for (int r = 0; r < kR; ++r) bad += got[c * kR + r] != value(me, r * kC + (c + kC - 1) % kC);
  }
  report(flavor, "columns get", bad);

  for (long i = 0; i < kR * kC; ++i) mine[i] = value(me, i) + 0.5;
  MT_CHECK(MPI_Put(mine, kR * kC, MPI_DOUBLE, right, 0, kC, column1, win));
  MT_CHECK(MPI_Win_fence(0, win));
  bad = 0;
  for (int r = 0; r < kR; ++r) {
    for (int k = 0; k < kC; ++k) bad += w[r * kC + k] != value(left, (long)k * kR + r) + 0.5;
  }
  report(flavor, "transpose", bad);
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

  MT_CHECK(MPI_Type_free(&column1));
  MT_CHECK(MPI_Type_free(&column));
  MT_CHECK(MPI_Win_free(&win));
  if (create) free(w);
  free(mine);
  free(got);
}

static long idx3(int x, int y, int z) { return ((long)x * kY + y) * kZ + z; }

static void subarray_tests(const char* flavor, int create) {
  const int p = mt_size, me = mt_rank, right = (me + 1) % p, left = (me + p - 1) % p;
  const long n = (long)kX * kY * kZ;
  double* w = NULL;
  MPI_Win win = make_window(create, (MPI_Aint)(n * (long)sizeof(double)), (void**)&w);
  double* a = malloc((size_t)n * sizeof *a);
  if (!a) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long i = 0; i < n; ++i) {
    a[i] = value(me, i);
    w[i] = value(me, i) + 0.5;
  }
  const int sizes[3] = {kX, kY, kZ};
  MPI_Datatype zlast, zfirst, xlast, xfirst;
  {
    int sub[3] = {kX, kY, 1}, s1[3] = {0, 0, kZ - 1}, s0[3] = {0, 0, 0};
    MT_CHECK(MPI_Type_create_subarray(3, sizes, sub, s1, MPI_ORDER_C, MPI_DOUBLE, &zlast));
    MT_CHECK(MPI_Type_create_subarray(3, sizes, sub, s0, MPI_ORDER_C, MPI_DOUBLE, &zfirst));
    int subx[3] = {1, kY, kZ}, sx1[3] = {kX - 1, 0, 0};
    MT_CHECK(MPI_Type_create_subarray(3, sizes, subx, sx1, MPI_ORDER_C, MPI_DOUBLE, &xlast));
    MT_CHECK(MPI_Type_create_subarray(3, sizes, subx, s0, MPI_ORDER_C, MPI_DOUBLE, &xfirst));
  }
  MPI_Datatype* all[4] = {&zlast, &zfirst, &xlast, &xfirst};
  for (int i = 0; i < 4; ++i) MT_CHECK(MPI_Type_commit(all[i]));

  MT_CHECK(MPI_Win_fence(0, win));
  MT_CHECK(MPI_Put(a, 1, zlast, right, 0, 1, zfirst, win));
  MT_CHECK(MPI_Win_fence(0, win)); /* the two planes share a line: one epoch each */
  MT_CHECK(MPI_Put(a, 1, xlast, right, 0, 1, xfirst, win));
  MT_CHECK(MPI_Win_fence(0, win));
  long bad = 0;
  for (int x = 0; x < kX; ++x) {
    for (int y = 0; y < kY; ++y) {
      for (int z = 0; z < kZ; ++z) {
        double want = value(me, idx3(x, y, z)) + 0.5;
        if (x == 0) {
          want = value(left, idx3(kX - 1, y, z));
        } else if (z == 0) {
          want = value(left, idx3(x, y, kZ - 1));
        }
        bad += w[idx3(x, y, z)] != want;
      }
    }
  }
  report(flavor, "faces", bad);

  /* A 2 x 3 x 4 block of the neighbour's array at (1, 2, 2), seen in Fortran order (so the
   * Fortran sizes are the C sizes reversed), into a local 4 x 4 x 6 array (C order) at
   * (1, 0, 2); the rest of the local array stays untouched. */
  enum { kLx = 4, kLy = 4, kLz = 6 };
  double* local = malloc(kLx * kLy * kLz * sizeof *local);
  if (!local) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < kLx * kLy * kLz; ++i) local[i] = -3.0;
  MPI_Datatype tblock, oblock;
  {
    int fsizes[3] = {kZ, kY, kX}, fsub[3] = {4, 3, 2}, fstart[3] = {2, 2, 1};
    MT_CHECK(
        MPI_Type_create_subarray(3, fsizes, fsub, fstart, MPI_ORDER_FORTRAN, MPI_DOUBLE, &tblock));
    int lsizes[3] = {kLx, kLy, kLz}, lsub[3] = {2, 3, 4}, lstart[3] = {1, 0, 2};
    MT_CHECK(MPI_Type_create_subarray(3, lsizes, lsub, lstart, MPI_ORDER_C, MPI_DOUBLE, &oblock));
    MT_CHECK(MPI_Type_commit(&tblock));
    MT_CHECK(MPI_Type_commit(&oblock));
  }
  MT_CHECK(MPI_Get(local, 1, oblock, right, 0, 1, tblock, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  bad = 0;
  for (int x = 0; x < kLx; ++x) {
    for (int y = 0; y < kLy; ++y) {
      for (int z = 0; z < kLz; ++z) {
        const int in = x >= 1 && x < 3 && y < 3 && z >= 2 && z < 6;
        /* The neighbour's window after the faces: its x = 0 plane and z = 0 line came from me,
         * but the block (x 1..2, y 2..4, z 2..5) lies inside, untouched by them. */
        const double want = in ? value(right, idx3(x - 1 + 1, y + 2, z - 2 + 2)) + 0.5 : -3.0;
        bad += local[((long)x * kLy + y) * kLz + z] != want;
      }
    }
  }
  report(flavor, "block", bad);

  MT_CHECK(MPI_Type_free(&tblock));
  MT_CHECK(MPI_Type_free(&oblock));
  for (int i = 0; i < 4; ++i) MT_CHECK(MPI_Type_free(all[i]));
  MT_CHECK(MPI_Win_free(&win));
  if (create) free(w);
  free(a);
  free(local);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  matrix_tests("create", 1);
  matrix_tests("allocate", 0);
  subarray_tests("create", 1);
  subarray_tests("allocate", 0);
  return mt_finish();
}
