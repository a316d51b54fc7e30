/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Scatterv's two examples and its MPI_IN_PLACE rule (shared/seeds/MPI_Scatterv.3in), and
 * the all-to-all rule of shared/seeds/alltoall-alltoallv-zh.txt: block j of rank i lands in
 * block i of rank j, for MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw, with derived types and
 * in place. Every result is checked against the serial answer. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int v(int from, int to, int k) { return from * 1000000 + to * 1000 + k; }

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const int gsize = mt_size, me = mt_rank;
  int cases = 0;
  for (int root = 0; root < gsize; ++root) {
    /* Example 1: the root scatters sets of 100 ints, stride ints apart in its buffer. */
    {
      const int stride = 120;
      int* sendbuf = NULL;
      int *displs = malloc((size_t)gsize * sizeof(int)),
          *scounts = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        scounts[i] = 100;
      }
      if (me == root) {
        sendbuf = malloc((size_t)gsize * stride * sizeof(int));
        for (int i = 0; i < gsize * stride; ++i) sendbuf[i] = v(root, i / stride, i % stride);
      }
      int rbuf[100];
      MT_CHECK(MPI_Scatterv(sendbuf, scounts, displs, MPI_INT, rbuf, 100, MPI_INT, root, comm));
      for (int k = 0; k < 100; ++k)
        MT_EXPECT(rbuf[k] == v(root, me, k), "ex1 root %d k %d", root, k);
      free(sendbuf);
      free(displs);
      free(scounts);
      ++cases;
    }
    /* Example 2: scatter 100 ints to each (the reverse of MPI_Gather's first example), and the
     * same received as a column of a 100 x 150 array (a vector type at the receiver). */
    {
      int* sendbuf = NULL;
      if (me == root) {
        sendbuf = malloc((size_t)gsize * 100 * sizeof(int));
        for (int i = 0; i < gsize * 100; ++i) sendbuf[i] = v(root, i / 100, i % 100);
      }
      int rbuf[100];
      MT_CHECK(MPI_Scatter(sendbuf, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
      for (int k = 0; k < 100; ++k)
        MT_EXPECT(rbuf[k] == v(root, me, k), "ex2 root %d k %d", root, k);
      static int cols[100][150];
      MPI_Datatype col;
      MT_CHECK(MPI_Type_vector(100, 1, 150, MPI_INT, &col));
      MT_CHECK(MPI_Type_commit(&col));
      memset(cols, 0, sizeof cols);
      MT_CHECK(MPI_Scatter(sendbuf, 100, MPI_INT, &cols[0][me % 150], 1, col, root, comm));
      for (int k = 0; k < 100; ++k)
        MT_EXPECT(cols[k][me % 150] == v(root, me, k) && cols[k][(me + 1) % 150] == 0,
                  "ex2 column root %d k %d", root, k);
      MT_CHECK(MPI_Type_free(&col));
      free(sendbuf);
      cases += 2;
    }
    /* MPI_IN_PLACE as the root's recvbuf: the root sends itself nothing. */
    {
      int* sendbuf = malloc((size_t)gsize * 10 * sizeof(int));
      for (int i = 0; i < gsize * 10; ++i) sendbuf[i] = me == root ? v(root, i / 10, i % 10) : -1;
      if (me == root) {
        MT_CHECK(MPI_Scatter(sendbuf, 10, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
        for (int i = 0; i < gsize * 10; ++i)
          MT_EXPECT(sendbuf[i] == v(root, i / 10, i % 10), "in place root %d i %d", root, i);
      } else {
        int rbuf[10];
        MT_CHECK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, rbuf, 10, MPI_INT, root, comm));
        for (int k = 0; k < 10; ++k) MT_EXPECT(rbuf[k] == v(root, me, k), "in place k %d", k);
      }
      free(sendbuf);
      ++cases;
    }
  }
  /* Alltoall: block j of rank i lands in block i of rank j (n ints per block). */
  for (int n = 0; n <= 300; n = n == 0 ? 1 : n * 7) {
    int* s = malloc((size_t)gsize * (size_t)n * sizeof(int) + 1);
    int* r = malloc((size_t)gsize * (size_t)n * sizeof(int) + 1);
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < n; ++k) s[j * n + k] = v(me, j, k);
    MT_CHECK(MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, comm));
    for (int i = 0; i < gsize; ++i)
      for (int k = 0; k < n; ++k)
        MT_EXPECT(r[i * n + k] == v(i, me, k), "alltoall n %d block %d k %d: %d", n, i, k,
                  r[i * n + k]);
    /* In place: the receive buffer is both. */
    memcpy(r, s, (size_t)gsize * (size_t)n * sizeof(int));
    MT_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm));
    for (int i = 0; i < gsize; ++i)
      for (int k = 0; k < n; ++k)
        MT_EXPECT(r[i * n + k] == v(i, me, k), "alltoall in place n %d block %d k %d", n, i, k);
    free(s);
    free(r);
    cases += 2;
  }
  /* Alltoall with different type maps: sent as n MPI_INT, received as pairs of ints with a
   * one-int hole after each (a resized vector), so block i lands at stride 3. */
  {
    const int n = 6;
    MPI_Datatype pair, spaced;
    MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MT_CHECK(MPI_Type_create_resized(pair, 0, 3 * (MPI_Aint)sizeof(int), &spaced));
    MT_CHECK(MPI_Type_commit(&spaced));
    int* s = malloc((size_t)gsize * n * sizeof(int));
    int* r = malloc((size_t)gsize * (n / 2) * 3 * sizeof(int));
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < n; ++k) s[j * n + k] = v(me, j, k);
    for (int i = 0; i < gsize * (n / 2) * 3; ++i) r[i] = -5;
    MT_CHECK(MPI_Alltoall(s, n, MPI_INT, r, n / 2, spaced, comm));
    for (int i = 0; i < gsize; ++i)
      for (int e = 0; e < n / 2; ++e) {
        const int* at = r + (i * (n / 2) + e) * 3;
        MT_EXPECT(at[0] == v(i, me, 2 * e) && at[1] == v(i, me, 2 * e + 1) && at[2] == -5,
                  "alltoall types block %d pair %d: %d %d %d", i, e, at[0], at[1], at[2]);
      }
    MT_CHECK(MPI_Type_free(&pair));
    MT_CHECK(MPI_Type_free(&spaced));
    free(s);
    free(r);
    ++cases;
  }
  /* Alltoallv: rank i sends (i + j) % 4 + j ints to rank j, at gapped displacements. */
  {
    int *sc = malloc((size_t)gsize * sizeof(int)), *sd = malloc((size_t)gsize * sizeof(int));
    int *rc = malloc((size_t)gsize * sizeof(int)), *rd = malloc((size_t)gsize * sizeof(int));
    int so = 0, ro = 0;
    for (int j = 0; j < gsize; ++j) {
      sc[j] = (me + j) % 4 + j;
      sd[j] = so;
      so += sc[j] + 2;
      rc[j] = (j + me) % 4 + me;
      rd[j] = ro;
      ro += rc[j] + 1;
    }
    int* s = malloc((size_t)(so + 1) * sizeof(int));
    int* r = malloc((size_t)(ro + 1) * sizeof(int));
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < sc[j]; ++k) s[sd[j] + k] = v(me, j, k);
    for (int i = 0; i < ro; ++i) r[i] = -3;
    MT_CHECK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm));
    for (int i = 0; i < gsize; ++i) {
      for (int k = 0; k < rc[i]; ++k)
        MT_EXPECT(r[rd[i] + k] == v(i, me, k), "alltoallv block %d k %d: %d", i, k, r[rd[i] + k]);
      MT_EXPECT(r[rd[i] + rc[i]] == -3, "alltoallv gap after block %d written", i);
    }
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    ++cases;
  }
  /* Alltoallv in place needs symmetric counts: rank i and j exchange (i + j) % 5 ints. */
  {
    int *c = malloc((size_t)gsize * sizeof(int)), *d = malloc((size_t)gsize * sizeof(int));
    int o = 0;
    for (int j = 0; j < gsize; ++j) {
      c[j] = (me + j) % 5;
      d[j] = o;
      o += c[j];
    }
    int* r = malloc((size_t)(o + 1) * sizeof(int));
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < c[j]; ++k) r[d[j] + k] = v(me, j, k);
    MT_CHECK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, c, d, MPI_INT, comm));
    for (int i = 0; i < gsize; ++i)
      for (int k = 0; k < c[i]; ++k)
        MT_EXPECT(r[d[i] + k] == v(i, me, k), "alltoallv in place block %d k %d", i, k);
    free(c);
    free(d);
    free(r);
    ++cases;
  }
  /* Alltoallw transposes a matrix: rank i holds rows [i b, i b + b) of a (p b) x (p b) matrix of
   * ints, row-major, and sends rank j its columns [j b, j b + b) as one vector type (b rows of b
   * ints, p b apart) at a byte displacement; rank j receives the b x b blocks as plain ints. */
  {
    const int b = 3, row = gsize * b;
    MPI_Datatype cols;
    MT_CHECK(MPI_Type_vector(b, b, row, MPI_INT, &cols));
    MT_CHECK(MPI_Type_commit(&cols));
    int* s = malloc((size_t)(b * row) * sizeof(int));
    int* r = malloc((size_t)(gsize * b * b + 1) * sizeof(int));
    int* arrays = malloc(4 * (size_t)gsize * sizeof(int));
    int *sc = arrays, *sd = sc + gsize, *rc = sd + gsize, *rd = rc + gsize;
    MPI_Datatype* types = malloc(2 * (size_t)gsize * sizeof(MPI_Datatype));
    MPI_Datatype *st = types, *rt = types + gsize;
    for (int rr = 0; rr < b; ++rr)
      for (int c = 0; c < row; ++c) s[rr * row + c] = v(me, c / b, rr * b + c % b);
    for (int i = 0; i < gsize * b * b + 1; ++i) r[i] = -5;
    for (int j = 0; j < gsize; ++j) {
      sc[j] = 1;
      sd[j] = j * b * (int)sizeof(int);
      st[j] = cols;
      rc[j] = b * b;
      rd[j] = j * b * b * (int)sizeof(int);
      rt[j] = MPI_INT;
    }
    MT_CHECK(MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, comm));
    for (int i = 0; i < gsize; ++i)
      for (int k = 0; k < b * b; ++k)
        MT_EXPECT(r[i * b * b + k] == v(i, me, k), "alltoallw transpose block %d k %d: %d", i, k,
                  r[i * b * b + k]);
    MT_EXPECT(r[gsize * b * b] == -5, "alltoallw transpose wrote past the blocks");
    MT_CHECK(MPI_Type_free(&cols));
    free(s);
    free(r);
    free(arrays);
    free(types);
    ++cases;
  }
  /* Alltoallw with a different basic type per pair: rank i sends rank j (i + j) % 3 + 1 doubles
   * when i + j is even, ints when it is odd, each block 8 bytes past the one before. */
  {
    int* arrays = malloc(4 * (size_t)gsize * sizeof(int));
    int *sc = arrays, *sd = sc + gsize, *rc = sd + gsize, *rd = rc + gsize;
    MPI_Datatype* t = malloc((size_t)gsize * sizeof(MPI_Datatype));
    int off = 0;
    for (int j = 0; j < gsize; ++j) {
      const int dbl = (me + j) % 2 == 0;
      t[j] = dbl ? MPI_DOUBLE : MPI_INT;
      sc[j] = rc[j] = (me + j) % 3 + 1;
      sd[j] = rd[j] = off;
      off += sc[j] * (dbl ? 8 : 4) + 8;
    }
    char* s = malloc((size_t)off);
    char* r = malloc((size_t)off);
    memset(r, 0x77, (size_t)off);
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < sc[j]; ++k) {
        if (t[j] == MPI_DOUBLE) {
          const double x = v(me, j, k) + 0.5;
          memcpy(s + sd[j] + 8 * k, &x, sizeof x);
        } else {
          const int x = v(me, j, k);
          memcpy(s + sd[j] + 4 * k, &x, sizeof x);
        }
      }
    MT_CHECK(MPI_Alltoallw(s, sc, sd, t, r, rc, rd, t, comm));
    for (int i = 0; i < gsize; ++i) {
      const int size = t[i] == MPI_DOUBLE ? 8 : 4;
      for (int k = 0; k < rc[i]; ++k) {
        if (size == 8) {
          double x;
          memcpy(&x, r + rd[i] + 8 * k, sizeof x);
          MT_EXPECT(x == v(i, me, k) + 0.5, "alltoallw doubles from %d k %d: %g", i, k, x);
        } else {
          int x;
          memcpy(&x, r + rd[i] + 4 * k, sizeof x);
          MT_EXPECT(x == v(i, me, k), "alltoallw ints from %d k %d: %d", i, k, x);
        }
      }
      for (int g = 0; g < 8; ++g)
        MT_EXPECT(r[rd[i] + rc[i] * size + g] == 0x77, "alltoallw gap after block %d written", i);
    }
    free(s);
    free(r);
    free(arrays);
    free(t);
    ++cases;
  }
  /* Alltoallw in place: ranks i and j exchange (i + j) % 4 ints; this rank's block j holds them
   * packed when j is even, 8 bytes apart (a resized int) when j is odd. */
  {
    MPI_Datatype wide;
    MT_CHECK(MPI_Type_create_resized(MPI_INT, 0, 8, &wide));
    MT_CHECK(MPI_Type_commit(&wide));
    int *c = malloc((size_t)gsize * sizeof(int)), *d = malloc((size_t)gsize * sizeof(int));
    MPI_Datatype* t = malloc((size_t)gsize * sizeof(MPI_Datatype));
    int off = 0;
    for (int j = 0; j < gsize; ++j) {
      c[j] = (me + j) % 4;
      d[j] = off;
      t[j] = j % 2 == 0 ? MPI_INT : wide;
      off += c[j] * (j % 2 == 0 ? 4 : 8);
    }
    int* r = malloc((size_t)off + sizeof(int));
    for (int i = 0; i < off / 4 + 1; ++i) r[i] = -7;
    for (int j = 0; j < gsize; ++j)
      for (int k = 0; k < c[j]; ++k) r[d[j] / 4 + k * (j % 2 == 0 ? 1 : 2)] = v(me, j, k);
    MT_CHECK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, c, d, t, comm));
    for (int i = 0; i < gsize; ++i) {
      const int step = i % 2 == 0 ? 1 : 2;
      for (int k = 0; k < c[i]; ++k) {
        MT_EXPECT(r[d[i] / 4 + k * step] == v(i, me, k), "alltoallw in place block %d k %d: %d", i,
                  k, r[d[i] / 4 + k * step]);
        if (step == 2)
          MT_EXPECT(r[d[i] / 4 + k * 2 + 1] == -7, "alltoallw in place hole in block %d", i);
      }
    }
    MT_CHECK(MPI_Type_free(&wide));
    free(c);
    free(d);
    free(t);
    free(r);
    ++cases;
  }
  if (me == 0)
    printf("scatter and alltoall: %d cases, %s\n", cases, mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
