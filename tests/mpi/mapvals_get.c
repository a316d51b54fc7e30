/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-2.2 §11.3 Example 11.2 (MAPVALS) in C: A(i) = B(map(i)) with one MPI_Get per element.
 * B is exposed with MPI_Win_create and disp_unit = extent of MPI_FLOAT, exactly as in the
 * Fortran original (j = map(i) / m is the owner, k = map(i) mod m the displacement).
 *
 * Three maps (mapvals_common.h): two permutations of 0 .. m*p-1 and one that is not. Each rank
 * checks its A against the serial computation and prints one line per map, identical under any
 * MPI implementation:  rank R: map NAME m M checksum X ok
 * Usage: mapvals_get [m]   (elements per rank, default 1000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mapvals_common.h"
#include "mpitest.h"

/* The example itself, for one map: one get per element, between two fences. The fence that
 * opens the epoch is given by the caller (the first one asserts MPI_MODE_NOPRECEDE). */
static void mapvals(float* a, const long* map, long m, MPI_Win win) {
  for (long i = 0; i < m; ++i) {
    const int j = (int)(map[i] / m); /* owner of B(map(i)) */
    const MPI_Aint k = map[i] % m;   /* its index there, in units of sizeof(float) */
    MT_CHECK(MPI_Get(&a[i], 1, MPI_FLOAT, j, k, 1, MPI_FLOAT, win));
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const long m = argc > 1 ? atol(argv[1]) : 1000;
  if (m < 1 || m * mt_size >= (1L << 22)) {
    if (mt_rank == 0) fprintf(stderr, "usage: mapvals_get [m], 1 <= m*p < 2^22\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  float* a = malloc((size_t)m * sizeof *a);
  float* b = malloc((size_t)m * sizeof *b);
  long* map = malloc((size_t)m * sizeof *map);
  unsigned char* seen = malloc((size_t)(m * mt_size));
  if (a == NULL || b == NULL || map == NULL || seen == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long k = 0; k < m; ++k) b[k] = mv_b_value((long)mt_rank * m + k);

  MPI_Aint lb = 0;
  MPI_Aint sizeofreal = 0;
  MT_CHECK(MPI_Type_get_extent(MPI_FLOAT, &lb, &sizeofreal));
  MT_EXPECT(lb == 0 && sizeofreal == (MPI_Aint)sizeof(float), "lb %ld extent %ld", (long)lb,
            (long)sizeofreal);
  MPI_Win win;
  MT_CHECK(MPI_Win_create(b, m * sizeofreal, (int)sizeofreal, MPI_INFO_NULL, MPI_COMM_WORLD, &win));

  /* B is only read, so one fence both closes an epoch and opens the next. */
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int kind = 0; kind < kNumMaps; ++kind) {
    for (long i = 0; i < m; ++i) {
      map[i] = mv_map(kind, mt_rank, i, m, mt_size);
      a[i] = -1.0f;
    }
    mapvals(a, map, m, win);
    MT_CHECK(MPI_Win_fence(kind == kNumMaps - 1 ? MPI_MODE_NOSUCCEED : 0, win));

    long bad = 0;
    for (long i = 0; i < m; ++i) {
      const float want = mv_b_value(map[i]); /* the serial computation */
      if (a[i] != want) {
        if (bad < 5) {
          fprintf(stderr, "rank %d: map %s: A(%ld) = %g, expected %g (B(%ld))\n", mt_rank,
                  kMapNames[kind], i, (double)a[i], (double)want, map[i]);
        }
        ++bad;
      }
    }
    MT_EXPECT(bad == 0, "map %s: %ld of %ld elements wrong", kMapNames[kind], bad, m);
    const int perm = mv_is_permutation(kind, m, mt_size, seen);
    MT_EXPECT(perm == (kind != kMapSquare) || m * mt_size < 4, "map %s: permutation %d",
              kMapNames[kind], perm);
    printf("rank %d: map %s m %ld checksum %llu %s\n", mt_rank, kMapNames[kind], m,
           mv_checksum(a, m), bad == 0 ? "ok" : "FAILED");
  }
  /* Gets never change the target. */
  for (long k = 0; k < m; ++k) {
    MT_EXPECT(b[k] == mv_b_value((long)mt_rank * m + k), "B(%ld) changed to %g", k, (double)b[k]);
  }
  MT_CHECK(MPI_Win_free(&win));
  free(a);
  free(b);
  free(map);
  free(seen);
  return mt_finish();
}
