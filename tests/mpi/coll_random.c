/* SPDX-License-Identifier: BSD-3-Clause */
/* Randomized v-collectives and MPI_Alltoallw against a serial reference: random counts (zeros
 * included), gapped displacements and, per rank and side (per block for alltoallw), one of three
 * one-int element types with different layouts (so sender and receiver type maps differ while
 * signatures match), on random sub-communicators from MPI_Comm_split. Every rank draws the same
 * numbers from the seed (argv[1], default 12345, printed), so each knows what everyone sends;
 * holes must stay untouched. Run with ONESIDED_COLL_ALG / ONESIDED_COLL_CHUNK set to cover each
 * algorithm. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static uint64_t rng;
static unsigned draw(unsigned n) { /* xorshift64*, the same sequence on every rank */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (unsigned)((rng * 2685821657736338717ULL) >> 33) % n;
}

enum { kTypes = 3, kHole = -99 };
static MPI_Datatype types[kTypes];
static const int kExtent[kTypes] = {4, 8, 12}; /* bytes per element */
static const int kOffset[kTypes] = {0, 0, 4};  /* where the int sits in it */

static int* elem(void* buf, int t, long e) {
  return (int*)((char*)buf + e * kExtent[t] + kOffset[t]);
}
static int val(int from, int to, int k) { return from * 1000000 + to * 1000 + k; }

static void make_types(void) {
  types[0] = MPI_INT;
  MT_CHECK(MPI_Type_create_resized(MPI_INT, 0, 8, &types[1]));
  int bl = 1;
  MPI_Aint d = 4;
  MPI_Datatype tmp, t = MPI_INT;
  MT_CHECK(MPI_Type_create_struct(1, &bl, &d, &t, &tmp));
  MT_CHECK(MPI_Type_create_resized(tmp, 0, 12, &types[2]));
  MT_CHECK(MPI_Type_free(&tmp));
  for (int i = 1; i < kTypes; ++i) MT_CHECK(MPI_Type_commit(&types[i]));
}

/* A buffer of n elements of type t, every byte a hole. */
static void* holes(int t, long n) {
  size_t bytes = (size_t)(n + 1) * (size_t)kExtent[t];
  int* b = malloc(bytes);
  for (size_t i = 0; i < bytes / 4; ++i) b[i] = kHole;
  return b;
}

static int check_holes(void* buf, int t, long n, const char* what, int it) {
  /* Every int-sized slot that is not an element's int must still be a hole. */
  int bad = 0;
  int* b = buf;
  for (long i = 0; i < n * kExtent[t] / 4; ++i) {
    long byte = i * 4;
    if (byte % kExtent[t] == kOffset[t]) continue;
    if (b[i] != kHole) ++bad;
  }
  MT_EXPECT(bad == 0, "iteration %d %s: %d holes written", it, what, bad);
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 12345;
  const int iters = argc > 2 ? atoi(argv[2]) : 12;
  if (mt_rank == 0) printf("coll_random: seed %llu, %d iterations\n", seed, iters);
  make_types();
  const int P = mt_size;
  int* colors = malloc((size_t)P * sizeof(int));
  int* keys = malloc((size_t)P * sizeof(int));
  for (int it = 0; it < iters; ++it) {
    rng = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)it + 1;
    for (int r = 0; r < P; ++r) {
      colors[r] = (int)draw(2);
      keys[r] = (int)draw(100);
    }
    MPI_Comm c;
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, colors[mt_rank], keys[mt_rank], &c));
    int q, m;
    MT_CHECK(MPI_Comm_size(c, &q));
    MT_CHECK(MPI_Comm_rank(c, &m));
    /* Every rank draws the tables for both colors' communicators the same way, then uses its
     * own: per member i its send / receive type, and the counts cnt[i][j] from i to j. Both
     * subcommunicators draw from the same stream; that is fine, each only needs consistency. */
    rng = seed * 31 + (uint64_t)it * 7 + (uint64_t)colors[mt_rank] * 1000003ULL;
    int* st = malloc((size_t)q * sizeof(int));
    int* rt = malloc((size_t)q * sizeof(int));
    int* cnt = malloc((size_t)q * (size_t)q * sizeof(int));
    for (int i = 0; i < q; ++i) {
      st[i] = (int)draw(kTypes);
      rt[i] = (int)draw(kTypes);
    }
    for (int i = 0; i < q * q; ++i) cnt[i] = draw(4) == 0 ? 0 : (int)draw(40);
    const int root = (int)draw((unsigned)q);
    int* gap = malloc((size_t)q * sizeof(int));
    for (int i = 0; i < q; ++i) gap[i] = (int)draw(3);
    /* ---- gatherv: i sends cnt[i][root] elements to the root ---- */
    {
      int n = cnt[m * q + root];
      void* s = holes(st[m], n);
      for (int k = 0; k < n; ++k) *elem(s, st[m], k) = val(m, root, k);
      int *rc = malloc((size_t)q * sizeof(int)), *d = malloc((size_t)q * sizeof(int));
      long off = 0;
      for (int i = 0; i < q; ++i) {
        rc[i] = cnt[i * q + root];
        d[i] = (int)off;
        off += rc[i] + gap[i];
      }
      void* r = m == root ? holes(rt[m], off) : NULL;
      MT_CHECK(MPI_Gatherv(s, n, types[st[m]], r, rc, d, types[rt[m]], root, c));
      if (m == root) {
        for (int i = 0; i < q; ++i) {
          for (int k = 0; k < rc[i]; ++k)
            MT_EXPECT(*elem(r, rt[m], d[i] + k) == val(i, root, k), "it %d gatherv %d %d", it, i,
                      k);
          for (int g = 0; g < gap[i]; ++g)
            MT_EXPECT(*elem(r, rt[m], d[i] + rc[i] + g) == kHole, "it %d gatherv gap", it);
        }
        check_holes(r, rt[m], off, "gatherv", it);
      }
      free(s);
      free(r);
      free(rc);
      free(d);
    }
    /* ---- scatterv: the root sends cnt[root][j] elements to j ---- */
    {
      int *sc = malloc((size_t)q * sizeof(int)), *d = malloc((size_t)q * sizeof(int));
      long off = 0;
      for (int j = 0; j < q; ++j) {
        sc[j] = cnt[root * q + j];
        d[j] = (int)off;
        off += sc[j] + gap[j];
      }
      void* s = NULL;
      if (m == root) {
        s = holes(st[m], off);
        for (int j = 0; j < q; ++j)
          for (int k = 0; k < sc[j]; ++k) *elem(s, st[m], d[j] + k) = val(root, j, k);
      }
      int n = sc[m];
      void* r = holes(rt[m], n);
      MT_CHECK(MPI_Scatterv(s, sc, d, types[st[m]], r, n, types[rt[m]], root, c));
      for (int k = 0; k < n; ++k)
        MT_EXPECT(*elem(r, rt[m], k) == val(root, m, k), "it %d scatterv %d", it, k);
      check_holes(r, rt[m], n, "scatterv", it);
      free(s);
      free(r);
      free(sc);
      free(d);
    }
    /* ---- allgatherv: i contributes cnt[i][i] elements ---- */
    {
      int n = cnt[m * q + m];
      void* s = holes(st[m], n);
      for (int k = 0; k < n; ++k) *elem(s, st[m], k) = val(m, m, k);
      int *rc = malloc((size_t)q * sizeof(int)), *d = malloc((size_t)q * sizeof(int));
      long off = 0;
      for (int i = q - 1; i >= 0; --i) { /* blocks in reverse order */
        rc[i] = cnt[i * q + i];
        d[i] = (int)off;
        off += rc[i] + gap[i];
      }
      void* r = holes(rt[m], off);
      MT_CHECK(MPI_Allgatherv(s, n, types[st[m]], r, rc, d, types[rt[m]], c));
      for (int i = 0; i < q; ++i)
        for (int k = 0; k < rc[i]; ++k)
          MT_EXPECT(*elem(r, rt[m], d[i] + k) == val(i, i, k), "it %d allgatherv %d %d", it, i, k);
      check_holes(r, rt[m], off, "allgatherv", it);
      free(s);
      free(r);
      free(rc);
      free(d);
    }
    /* ---- alltoallv: i sends cnt[i][j] elements to j ---- */
    {
      int *sc = malloc((size_t)q * sizeof(int)), *sd = malloc((size_t)q * sizeof(int));
      int *rc = malloc((size_t)q * sizeof(int)), *rd = malloc((size_t)q * sizeof(int));
      long so = 0, ro = 0;
      for (int j = 0; j < q; ++j) {
        sc[j] = cnt[m * q + j];
        sd[j] = (int)so;
        so += sc[j] + gap[j];
      }
      for (int i = q - 1; i >= 0; --i) {
        rc[i] = cnt[i * q + m];
        rd[i] = (int)ro;
        ro += rc[i] + gap[(i + 1) % q];
      }
      void* s = holes(st[m], so);
      for (int j = 0; j < q; ++j)
        for (int k = 0; k < sc[j]; ++k) *elem(s, st[m], sd[j] + k) = val(m, j, k);
      void* r = holes(rt[m], ro);
      MT_CHECK(MPI_Alltoallv(s, sc, sd, types[st[m]], r, rc, rd, types[rt[m]], c));
      for (int i = 0; i < q; ++i)
        for (int k = 0; k < rc[i]; ++k)
          MT_EXPECT(*elem(r, rt[m], rd[i] + k) == val(i, m, k), "it %d alltoallv %d %d: %d", it, i,
                    k, *elem(r, rt[m], rd[i] + k));
      check_holes(r, rt[m], ro, "alltoallv", it);
      free(s);
      free(r);
      free(sc);
      free(sd);
      free(rc);
      free(rd);
    }
    /* ---- alltoallw: i sends cnt[i][j] elements to j, every block with its own type on each
     * side (wt[i][j] at the sender for its block to j, wt[q q + j q + i] at the receiver j for
     * the block from i), at byte displacements; then in place with symmetric counts ---- */
    {
      int* wt = malloc((size_t)(2 * q * q) * sizeof(int));
      for (int i = 0; i < 2 * q * q; ++i) wt[i] = (int)draw(kTypes);
      int* arrays = malloc(4 * (size_t)q * sizeof(int));
      int *sc = arrays, *sd = sc + q, *rc = sd + q, *rd = rc + q;
      MPI_Datatype* tt = malloc(2 * (size_t)q * sizeof(MPI_Datatype));
      MPI_Datatype *stt = tt, *rtt = tt + q;
      long so = 0, ro = 0; /* bytes */
      for (int j = 0; j < q; ++j) {
        const int t = wt[m * q + j];
        sc[j] = cnt[m * q + j];
        sd[j] = (int)so;
        stt[j] = types[t];
        so += (long)(sc[j] + gap[j]) * kExtent[t];
      }
      for (int i = q - 1; i >= 0; --i) {
        const int t = wt[q * q + m * q + i];
        rc[i] = cnt[i * q + m];
        rd[i] = (int)ro;
        rtt[i] = types[t];
        ro += (long)(rc[i] + gap[(i + 1) % q]) * kExtent[t];
      }
      int* s = holes(0, so / 4);
      for (int j = 0; j < q; ++j)
        for (int k = 0; k < sc[j]; ++k) *elem((char*)s + sd[j], wt[m * q + j], k) = val(m, j, k);
      int* r = holes(0, ro / 4);
      int* want = holes(0, ro / 4);
      for (int i = 0; i < q; ++i)
        for (int k = 0; k < rc[i]; ++k)
          *elem((char*)want + rd[i], wt[q * q + m * q + i], k) = val(i, m, k);
      MT_CHECK(MPI_Alltoallw(s, sc, sd, stt, r, rc, rd, rtt, c));
      int bad = 0;
      for (long x = 0; x < ro / 4 + 1; ++x) bad += r[x] != want[x];
      MT_EXPECT(bad == 0, "it %d alltoallw: %d ints differ from the reference", it, bad);
      /* In place: i and j exchange cnt[min][max] elements; this rank's block j has type
       * wt[q q + m q + j] and is followed by gap[j] holes. */
      long o = 0;
      for (int j = 0; j < q; ++j) {
        const int t = wt[q * q + m * q + j];
        rc[j] = cnt[(m < j ? m : j) * q + (m < j ? j : m)];
        rd[j] = (int)o;
        rtt[j] = types[t];
        o += (long)(rc[j] + gap[j]) * kExtent[t];
      }
      int* x = holes(0, o / 4);
      int* w = holes(0, o / 4);
      for (int j = 0; j < q; ++j)
        for (int k = 0; k < rc[j]; ++k) {
          *elem((char*)x + rd[j], wt[q * q + m * q + j], k) = val(m, j, k);
          *elem((char*)w + rd[j], wt[q * q + m * q + j], k) = val(j, m, k);
        }
      MT_CHECK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, x, rc, rd, rtt, c));
      bad = 0;
      for (long y = 0; y < o / 4 + 1; ++y) bad += x[y] != w[y];
      MT_EXPECT(bad == 0, "it %d alltoallw in place: %d ints differ from the reference", it, bad);
      free(x);
      free(w);
      free(s);
      free(r);
      free(want);
      free(arrays);
      free(tt);
      free(wt);
    }
    free(st);
    free(rt);
    free(cnt);
    free(gap);
    MT_CHECK(MPI_Comm_free(&c));
  }
  for (int i = 1; i < kTypes; ++i) MT_CHECK(MPI_Type_free(&types[i]));
  free(colors);
  free(keys);
  if (mt_rank == 0) printf("coll_random: %s\n", mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
