/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-2.2 §11.3 Example 11.1 (MAPVALS) in C, as the seed has it: A(i) = B(map(i)) with ONE
 * MPI_Get per process, origin and target described by MPI_Type_create_indexed_block (oindex:
 * where in A, tindex: where in that process's part of B). Then the put variant with the same
 * kind of types: the owner of each B element pushes it, origin entries in B (which repeat for a
 * map that is not a permutation: fine for a put's origin), target entries in A (distinct). B and
 * A are MPI_Win_create windows with disp_unit = extent of MPI_FLOAT, as in the Fortran original.
 *
 * Each rank checks A against the serial computation (mapvals_common.h) and prints, identical
 * under any MPI implementation:   rank R: OP map NAME m M checksum X ok
 * Usage: mapvals_indexed [m]   (elements per rank, default 1000) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mapvals_common.h"
#include "mpitest.h"

/* Example 11.1's types for this rank's map: for each process j, the entries of A it provides
 * (oindex, in A) and where they are in its part of B (tindex). */
static void build_get_types(const long* map, long m, int p, MPI_Datatype* otype,
                            MPI_Datatype* ttype) {
  int* count = calloc((size_t)p, sizeof *count);
  int* total = calloc((size_t)p, sizeof *total);
  int* oindex = malloc((size_t)m * sizeof *oindex);
  int* tindex = malloc((size_t)m * sizeof *tindex);
  if (!count || !total || !oindex || !tindex) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long i = 0; i < m; ++i) ++count[map[i] / m];
  for (int j = 1; j < p; ++j) total[j] = total[j - 1] + count[j - 1];
  for (int j = 0; j < p; ++j) count[j] = 0;
  for (long i = 0; i < m; ++i) {
    const int j = (int)(map[i] / m);
    const int k = (int)(map[i] % m);
    oindex[total[j] + count[j]] = (int)i;
    tindex[total[j] + count[j]] = k;
    ++count[j];
  }
  for (int j = 0; j < p; ++j) {
    MT_CHECK(MPI_Type_create_indexed_block(count[j], 1, oindex + total[j], MPI_FLOAT, &otype[j]));
    MT_CHECK(MPI_Type_commit(&otype[j]));
    MT_CHECK(MPI_Type_create_indexed_block(count[j], 1, tindex + total[j], MPI_FLOAT, &ttype[j]));
    MT_CHECK(MPI_Type_commit(&ttype[j]));
  }
  free(count);
  free(total);
  free(oindex);
  free(tindex);
}

/* The put variant's types: for each destination rank r, the entries i of r's A whose source
 * B(map_r(i)) this rank owns; origin = positions in my B, target = positions in r's A. */
static void build_put_types(int kind, long m, int p, MPI_Datatype* otype, MPI_Datatype* ttype) {
  int* oindex = malloc((size_t)m * sizeof *oindex);
  int* tindex = malloc((size_t)m * sizeof *tindex);
  if (!oindex || !tindex) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int r = 0; r < p; ++r) {
    int n = 0;
    for (long i = 0; i < m; ++i) {
      const long src = mv_map(kind, r, i, m, p);
      if (src / m != mt_rank) continue;
      oindex[n] = (int)(src % m);
      tindex[n] = (int)i;
      ++n;
    }
    MT_CHECK(MPI_Type_create_indexed_block(n, 1, oindex, MPI_FLOAT, &otype[r]));
    MT_CHECK(MPI_Type_commit(&otype[r]));
    MT_CHECK(MPI_Type_create_indexed_block(n, 1, tindex, MPI_FLOAT, &ttype[r]));
    MT_CHECK(MPI_Type_commit(&ttype[r]));
  }
  free(oindex);
  free(tindex);
}

static long check(const char* op, int kind, const float* a, long m) {
  long bad = 0;
  for (long i = 0; i < m; ++i) {
    const long src = mv_map(kind, mt_rank, i, m, mt_size);
    const float want = mv_b_value(src); /* the serial computation */
    if (a[i] != want) {
      if (bad < 5) {
        fprintf(stderr, "rank %d: %s map %s: A(%ld) = %g, expected %g (B(%ld))\n", mt_rank, op,
                kMapNames[kind], i, (double)a[i], (double)want, src);
      }
      ++bad;
    }
  }
  MT_EXPECT(bad == 0, "%s map %s: %ld of %ld elements wrong", op, kMapNames[kind], bad, m);
  printf("rank %d: %s map %s m %ld checksum %llu %s\n", mt_rank, op, kMapNames[kind], m,
         mv_checksum(a, m), bad == 0 ? "ok" : "FAILED");
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const long m = argc > 1 ? atol(argv[1]) : 1000;
  if (m < 1 || m * mt_size >= (1L << 22)) {
    if (mt_rank == 0) fprintf(stderr, "usage: mapvals_indexed [m], 1 <= m*p < 2^22\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int p = mt_size;
  float* a = malloc((size_t)m * sizeof *a);
  float* b = malloc((size_t)m * sizeof *b);
  long* map = malloc((size_t)m * sizeof *map);
  MPI_Datatype* otype = malloc((size_t)p * sizeof *otype);
  MPI_Datatype* ttype = malloc((size_t)p * sizeof *ttype);
  if (!a || !b || !map || !otype || !ttype) MPI_Abort(MPI_COMM_WORLD, 2);
  for (long k = 0; k < m; ++k) b[k] = mv_b_value((long)mt_rank * m + k);

  MPI_Aint lowerbound = 0;
  MPI_Aint sizeofreal = 0;
  MT_CHECK(MPI_Type_get_extent(MPI_FLOAT, &lowerbound, &sizeofreal));
  MPI_Win bwin;
  MPI_Win awin;
  MT_CHECK(
      MPI_Win_create(b, m * sizeofreal, (int)sizeofreal, MPI_INFO_NULL, MPI_COMM_WORLD, &bwin));
  MT_CHECK(
      MPI_Win_create(a, m * sizeofreal, (int)sizeofreal, MPI_INFO_NULL, MPI_COMM_WORLD, &awin));

  for (int kind = 0; kind < kNumMaps; ++kind) {
    /* Get: the example itself. */
    for (long i = 0; i < m; ++i) {
      map[i] = mv_map(kind, mt_rank, i, m, p);
      a[i] = -1.0f;
    }
    build_get_types(map, m, p, otype, ttype);
    MT_CHECK(MPI_Win_fence(0, bwin));
    for (int j = 0; j < p; ++j) MT_CHECK(MPI_Get(a, 1, otype[j], j, 0, 1, ttype[j], bwin));
    MT_CHECK(MPI_Win_fence(0, bwin));
    for (int j = 0; j < p; ++j) {
      MT_CHECK(MPI_Type_free(&otype[j]));
      MT_CHECK(MPI_Type_free(&ttype[j]));
    }
    check("get", kind, a, m);

    /* Put: the owners push, one MPI_Put per destination. A's local stores come before the
     * fence that opens the epoch. */
    for (long i = 0; i < m; ++i) a[i] = -1.0f;
    build_put_types(kind, m, p, otype, ttype);
    MT_CHECK(MPI_Win_fence(0, awin));
    for (int r = 0; r < p; ++r) MT_CHECK(MPI_Put(b, 1, otype[r], r, 0, 1, ttype[r], awin));
    /* Types may be freed while the puts are pending: they stay valid until complete. */
    for (int r = 0; r < p; ++r) {
      MT_CHECK(MPI_Type_free(&otype[r]));
      MT_CHECK(MPI_Type_free(&ttype[r]));
    }
    MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE, awin));
    check("put", kind, a, m);
  }
  MT_CHECK(MPI_Win_free(&awin));
  MT_CHECK(MPI_Win_free(&bwin));
  free(a);
  free(b);
  free(map);
  free(otype);
  free(ttype);
  return mt_finish();
}
