/* SPDX-License-Identifier: BSD-3-Clause */
/* The put variant of MPI-2.2 §11.3 Example 11.2 (MAPVALS): the same A(i) = B(map(i)), but the
 * owner of each B element pushes it. A is the window (MPI_Win_allocate, disp_unit = extent of
 * MPI_FLOAT); since the maps are pure functions, every rank enumerates all destinations (r, i)
 * and puts B(map_r(i)) to A(i) on rank r when it owns that B element. Every A element is written
 * exactly once per epoch, also for the map that is not a permutation.
 * Output, identical to mapvals_get:  rank R: map NAME m M checksum X ok
 * Usage: mapvals_put [m]   (elements per rank, default 1000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mapvals_common.h"
#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const long m = argc > 1 ? atol(argv[1]) : 1000;
  if (m < 1 || m * mt_size >= (1L << 22)) {
    if (mt_rank == 0) fprintf(stderr, "usage: mapvals_put [m], 1 <= m*p < 2^22\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int p = mt_size;
  float* b = malloc((size_t)m * sizeof *b);
  unsigned char* seen = malloc((size_t)(m * p));
  if (b == NULL || seen == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long k = 0; k < m; ++k) b[k] = mv_b_value((long)mt_rank * m + k);

  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MT_CHECK(MPI_Type_get_extent(MPI_FLOAT, &lb, &extent));
  float* a = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(m * extent, (int)extent, MPI_INFO_NULL, MPI_COMM_WORLD, &a, &win));

  for (int kind = 0; kind < kNumMaps; ++kind) {
    /* Local stores to the window, then a fence before anybody may put into it. */
    for (long i = 0; i < m; ++i) a[i] = -1.0f;
    MT_CHECK(MPI_Win_fence(kind == 0 ? MPI_MODE_NOPRECEDE : 0, win));
    for (int r = 0; r < p; ++r) {
      for (long i = 0; i < m; ++i) {
        const long src = mv_map(kind, r, i, m, p);
        if (src / m != mt_rank) continue;
        MT_CHECK(MPI_Put(&b[src % m], 1, MPI_FLOAT, r, (MPI_Aint)i, 1, MPI_FLOAT, win));
      }
    }
    /* Closes the put epoch; NOSTORE: no local store to A since the previous fence. The next
     * map's local stores come before that map's opening fence. */
    MT_CHECK(
        MPI_Win_fence(MPI_MODE_NOSTORE | (kind == kNumMaps - 1 ? MPI_MODE_NOSUCCEED : 0), win));

    long bad = 0;
    for (long i = 0; i < m; ++i) {
      const long src = mv_map(kind, mt_rank, i, m, p);
      const float want = mv_b_value(src); /* the serial computation */
      if (a[i] != want) {
        if (bad < 5) {
          fprintf(stderr, "rank %d: map %s: A(%ld) = %g, expected %g (B(%ld))\n", mt_rank,
                  kMapNames[kind], i, (double)a[i], (double)want, src);
        }
        ++bad;
      }
    }
    MT_EXPECT(bad == 0, "map %s: %ld of %ld elements wrong", kMapNames[kind], bad, m);
    const int perm = mv_is_permutation(kind, m, p, seen);
    MT_EXPECT(perm == (kind != kMapSquare) || m * p < 4, "map %s: permutation %d", kMapNames[kind],
              perm);
    printf("rank %d: map %s m %ld checksum %llu %s\n", mt_rank, kMapNames[kind], m,
           mv_checksum(a, m), bad == 0 ? "ok" : "FAILED");
  }
  MT_CHECK(MPI_Win_free(&win));
  free(b);
  free(seen);
  return mt_finish();
}
