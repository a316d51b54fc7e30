/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on buffers from MPI_Alloc_mem: on one node their receivers read large send buffers
 * straight from the sender's mapped memory (one copy), and keep the sender's key unpacked from
 * one call to the next. Checked against serial computations, at sizes on both sides of the
 * 16 KiB threshold:
 *   - alltoall into a contiguous and into a strided receive type (the mapped copy follows the
 *     receiver's type map; the gaps stay untouched);
 *   - alltoallv with uneven counts, gather, scatter, bcast, allgather;
 *   - reduce and allreduce (the receiver folds straight from the sender's memory);
 *   - one phase where some senders' buffers are MPI_Alloc_mem memory (at an offset into the
 *     region) and the others' malloc'ed (through the ring);
 *   - rounds that free every buffer and allocate new ones (old keys must never be used for the
 *     new memory), in alternating sizes so addresses are reused. */
#include "mpitest.h"

/* Built twice: as coll_alloc_mem, and with COLL_MALLOC as coll_malloc, where the buffers come
 * from malloc: on one node their receivers read large send buffers through the pages the
 * sender shares for them (ONESIDED_COLL_SHARE), and freed buffers whose addresses come back
 * must never be read through the old memory. */
#ifdef COLL_MALLOC
#define PROGRAM "coll_malloc"
#else
#define PROGRAM "coll_alloc_mem"
#endif

enum { kHole = -7 };
static int val(int from, int to, long k) { return (int)(from * 1000003L + to * 1009L + k); }

static int* alloc_ints(long n) {
  int* p = NULL;
#ifdef COLL_MALLOC
  p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  MT_EXPECT(p != NULL, "malloc of %ld ints failed", n);
#else
  MT_CHECK(MPI_Alloc_mem((MPI_Aint)(n > 0 ? n : 1) * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &p));
#endif
  for (long i = 0; i < n; ++i) p[i] = kHole;
  return p;
}

static void free_ints(int* p) {
#ifdef COLL_MALLOC
  free(p);
#else
  MT_CHECK(MPI_Free_mem(p));
#endif
}

static void check_alltoall(int P, int me, long n, int round) {
  int* s = alloc_ints((long)P * n);
  int* r = alloc_ints((long)P * n);
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) s[j * n + k] = val(me, j, k + round);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, me, k + round);
  MT_EXPECT(bad == 0, "alltoall of %ld ints, round %d: %ld wrong", n, round, bad);
  /* Received as every other int: the mapped copy follows the receive type map. */
  MPI_Datatype every2;
  MT_CHECK(MPI_Type_vector((int)n, 1, 2, MPI_INT, &every2));
  MPI_Datatype blk;
  MT_CHECK(MPI_Type_create_resized(every2, 0, (MPI_Aint)(2 * n * (long)sizeof(int)), &blk));
  MT_CHECK(MPI_Type_commit(&blk));
  int* r2 = alloc_ints(2 * (long)P * n);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r2, 1, blk, MPI_COMM_WORLD));
  bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) {
      bad += r2[2 * (j * n + k)] != val(j, me, k + round);
      bad += r2[2 * (j * n + k) + 1] != kHole;
    }
  MT_EXPECT(bad == 0, "alltoall into a strided type, %ld ints, round %d: %ld wrong", n, round, bad);
  MT_CHECK(MPI_Type_free(&blk));
  MT_CHECK(MPI_Type_free(&every2));
  free_ints(r2);
  free_ints(r);
  free_ints(s);
}

static void check_alltoallv(int P, int me, long n, int round) {
  /* Rank i sends (i + j) % 3 * n / 2 + 1 ints to rank j. */
  int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
  int *rc = malloc(sizeof(int) * (size_t)P), *rd = malloc(sizeof(int) * (size_t)P);
  long st = 0, rt = 0;
  for (int j = 0; j < P; ++j) {
    sc[j] = (int)((me + j) % 3 * n / 2 + 1);
    rc[j] = (int)((j + me) % 3 * n / 2 + 1);
    sd[j] = (int)st;
    rd[j] = (int)rt;
    st += sc[j];
    rt += rc[j];
  }
  int* s = alloc_ints(st);
  int* r = alloc_ints(rt);
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < sc[j]; ++k) s[sd[j] + k] = val(me, j, k + round);
  MT_CHECK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < rc[j]; ++k) bad += r[rd[j] + k] != val(j, me, k + round);
  MT_EXPECT(bad == 0, "alltoallv around %ld ints, round %d: %ld wrong", n, round, bad);
  free_ints(r);
  free_ints(s);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void check_rooted(int P, int me, long n, int round) {
  const int root = round % P;
  int* s = alloc_ints((long)P * n);
  int* r = alloc_ints((long)P * n);
  /* gather */
  for (long k = 0; k < n; ++k) s[k] = val(me, root, k + round);
  MT_CHECK(MPI_Gather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  long bad = 0;
  if (me == root)
    for (int j = 0; j < P; ++j)
      for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, root, k + round);
  MT_EXPECT(bad == 0, "gather of %ld ints to %d, round %d: %ld wrong", n, root, round, bad);
  /* scatter */
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) s[j * n + k] = val(me, j, k + round);
  MT_CHECK(MPI_Scatter(s, (int)n, MPI_INT, r, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += r[k] != val(root, me, k + round);
  MT_EXPECT(bad == 0, "scatter of %ld ints from %d, round %d: %ld wrong", n, root, round, bad);
  /* bcast */
  for (long k = 0; k < n; ++k) s[k] = me == root ? val(root, 0, k + round) : kHole;
  MT_CHECK(MPI_Bcast(s, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += s[k] != val(root, 0, k + round);
  MT_EXPECT(bad == 0, "bcast of %ld ints from %d, round %d: %ld wrong", n, root, round, bad);
  /* allgather */
  for (long k = 0; k < n; ++k) s[k] = val(me, 1, k + round);
  MT_CHECK(MPI_Allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, 1, k + round);
  MT_EXPECT(bad == 0, "allgather of %ld ints, round %d: %ld wrong", n, round, bad);
  /* reduce and allreduce: sums folded from the senders' memory */
  for (long k = 0; k < n; ++k) s[k] = (int)(me + 1) * (int)((k + round) % 1000);
  const int tri = P * (P + 1) / 2;
  MT_CHECK(MPI_Reduce(s, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
  bad = 0;
  if (me == root)
    for (long k = 0; k < n; ++k) bad += r[k] != tri * (int)((k + round) % 1000);
  MT_EXPECT(bad == 0, "reduce of %ld ints to %d, round %d: %ld wrong", n, root, round, bad);
  MT_CHECK(MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += r[k] != tri * (int)((k + round) % 1000);
  MT_EXPECT(bad == 0, "allreduce of %ld ints, round %d: %ld wrong", n, round, bad);
  free_ints(r);
  free_ints(s);
}

/* Even ranks send from an MPI_Alloc_mem region at an offset into it, odd ranks from malloc:
 * one phase mixes streams read from mapped memory with streams through the ring. */
static void check_mixed(int P, int me, long n) {
  int* region = NULL;
  int* s = NULL;
  if (me % 2 == 0) {
    region = alloc_ints((long)P * n + 3);
    s = region + 3;
  } else {
    s = malloc(sizeof(int) * (size_t)n * (size_t)P);
  }
  int* r = alloc_ints((long)P * n);
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) s[j * n + k] = val(me, j, k + 11);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, me, k + 11);
  MT_EXPECT(bad == 0, "alltoall from mixed buffers, %ld ints: %ld wrong", n, bad);
  free_ints(r);
  if (region != NULL) {
    free_ints(region);
  } else {
    free(s);
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int P = mt_size, me = mt_rank;
  /* ints per block: below, at and above the 16 KiB threshold (kept small: the suite also
   * runs in the soft-RoCE VM under emulation). */
  const long sizes[] = {100, 4096, 20000};
  const int nsizes = (int)(sizeof sizes / sizeof *sizes);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < nsizes; ++i) {
      /* Alternating directions, so freed regions' addresses come back for other sizes. */
      const long n = sizes[round % 2 == 0 ? i : nsizes - 1 - i];
      check_alltoall(P, me, n, round);
      check_alltoallv(P, me, n, round);
      check_rooted(P, me, n, round);
    }
  }
  check_mixed(P, me, 20000);
  if (me == 0) printf(PROGRAM ": %d ranks done\n", P);
  return mt_finish();
}
