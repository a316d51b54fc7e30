/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point with derived datatypes (MPI-3.1 §3.3 type matching, chapter 4): every rank
 * sends to its right neighbour and receives from its left one. The sender's and the receiver's
 * types differ in layout but have the same type signature: vector against contiguous, two
 * different indexed types, a struct with padding against a packed struct, a contiguous of
 * vectors, a resized column type (a transpose); the bytes outside the receive type's blocks
 * (holes, padding, past the end) stay untouched. MPI_Get_count / MPI_Get_elements for messages
 * that fill a derived type partially. Then messages of 0 B to 4 MiB, contiguous and strided on
 * either side, checked byte for byte. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int left, right;

enum { kPoison = 0xEE };

static int ival(int src, int k) { return src * 100000 + k; }

/* Sends `sbuf` as (scount, stype) to the right while receiving (rcount, rtype) from the left into
 * `rbuf`; checks the status (source, tag, Get_count in rtype == want_count). */
static void exchange(const char* what, const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                     int rcount, MPI_Datatype rtype, int tag, int want_count) {
  MPI_Request rq;
  MPI_Status st;
  MT_CHECK(MPI_Irecv(rbuf, rcount, rtype, left, tag, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(sbuf, scount, stype, right, tag, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  int n = -2;
  MT_CHECK(MPI_Get_count(&st, rtype, &n));
  MT_EXPECT(st.MPI_SOURCE == left && st.MPI_TAG == tag, "%s: status source %d tag %d", what,
            st.MPI_SOURCE, st.MPI_TAG);
  MT_EXPECT(n == want_count, "%s: Get_count %d, expected %d", what, n, want_count);
}

static MPI_Datatype commit(MPI_Datatype t) {
  MT_CHECK(MPI_Type_commit(&t));
  return t;
}

/* A vector of 10 ints (stride 3) against 10 contiguous ints, both ways. */
static void vector_vs_contiguous(void) {
  int s[30], r[30];
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  MT_CHECK(MPI_Type_vector(10, 1, 3, MPI_INT, &vec));
  vec = commit(vec);
  for (int k = 0; k < 30; ++k) s[k] = ival(mt_rank, k);
  memset(r, kPoison, sizeof r);
  exchange("vector -> contiguous", s, 1, vec, r, 10, MPI_INT, 1, 10);
  int bad = 0;
  for (int k = 0; k < 10; ++k) bad += r[k] != ival(left, 3 * k);
  for (int k = 10; k < 30; ++k) bad += r[k] != (int)0xEEEEEEEE;
  MT_EXPECT(bad == 0, "vector -> contiguous: %d wrong", bad);
  /* And back: 10 contiguous ints into the vector; the holes stay poisoned. */
  memset(r, kPoison, sizeof r);
  exchange("contiguous -> vector", s, 10, MPI_INT, r, 1, vec, 2, 1);
  bad = 0;
  for (int k = 0; k < 30; ++k) bad += r[k] != (k % 3 == 0 ? ival(left, k / 3) : (int)0xEEEEEEEE);
  MT_EXPECT(bad == 0, "contiguous -> vector: %d wrong", bad);
  /* The vector against MPI_INT: Get_count in ints. */
  memset(r, kPoison, sizeof r);
  exchange("vector -> vector", s, 1, vec, r, 1, vec, 3, 1);
  MT_CHECK(MPI_Type_free(&vec));
}

/* Two indexed types with the same signature (6 ints) and different layouts. */
static void indexed_both_sides(void) {
  int s[16], r[16];
  const int sbl[3] = {1, 3, 2}, sdi[3] = {0, 4, 10};
  const int rbl[3] = {2, 2, 2}, rdi[3] = {13, 1, 7}; /* not monotone */
  MPI_Datatype st = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
  MT_CHECK(MPI_Type_indexed(3, sbl, sdi, MPI_INT, &st));
  MT_CHECK(MPI_Type_indexed(3, rbl, rdi, MPI_INT, &rt));
  st = commit(st);
  rt = commit(rt);
  for (int k = 0; k < 16; ++k) s[k] = ival(mt_rank, k);
  memset(r, kPoison, sizeof r);
  exchange("indexed -> indexed", s, 1, st, r, 1, rt, 10, 1);
  /* The sender's ints in type order: 0, 4, 5, 6, 10, 11; land at 13, 14, 1, 2, 7, 8. */
  const int from[6] = {0, 4, 5, 6, 10, 11}, to[6] = {13, 14, 1, 2, 7, 8};
  int want[16];
  for (int k = 0; k < 16; ++k) want[k] = (int)0xEEEEEEEE;
  for (int k = 0; k < 6; ++k) want[to[k]] = ival(left, from[k]);
  int bad = 0;
  for (int k = 0; k < 16; ++k) bad += r[k] != want[k];
  MT_EXPECT(bad == 0, "indexed -> indexed: %d wrong", bad);
  /* Two of them (count 2: the second starts one extent further). */
  int s2[32], r2[32];
  MPI_Aint lb, sext, rext;
  MT_CHECK(MPI_Type_get_extent(st, &lb, &sext));
  MT_CHECK(MPI_Type_get_extent(rt, &lb, &rext));
  MT_EXPECT(sext == 12 * (MPI_Aint)sizeof(int) && rext == 14 * (MPI_Aint)sizeof(int),
            "indexed extents %ld %ld", (long)sext, (long)rext);
  for (int k = 0; k < 32; ++k) s2[k] = ival(mt_rank, k);
  memset(r2, kPoison, sizeof r2);
  exchange("2 x indexed -> 2 x indexed", s2, 2, st, r2, 2, rt, 11, 2);
  bad = 0;
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 6; ++k) bad += r2[14 * c + to[k]] != ival(left, 12 * c + from[k]);
  MT_EXPECT(bad == 0, "2 x indexed: %d wrong", bad);
  MT_CHECK(MPI_Type_free(&st));
  MT_CHECK(MPI_Type_free(&rt));
}

/* A struct with padding (char, double, 3 ints) against the same fields packed without gaps. */
struct rec {
  char c;
  double d;
  int i[3];
};

static void struct_with_gaps(void) {
  enum { n = 5 };
  const int bl[3] = {1, 1, 3};
  const MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  const MPI_Aint padded[3] = {offsetof(struct rec, c), offsetof(struct rec, d),
                              offsetof(struct rec, i)};
  const MPI_Aint packed[3] = {0, 1, 9};
  MPI_Datatype t0, tpad, t1, tpack;
  MT_CHECK(MPI_Type_create_struct(3, bl, padded, ty, &t0));
  MT_CHECK(MPI_Type_create_resized(t0, 0, sizeof(struct rec), &tpad));
  tpad = commit(tpad);
  MT_CHECK(MPI_Type_create_struct(3, bl, packed, ty, &t1));
  MT_CHECK(MPI_Type_create_resized(t1, 0, 21, &tpack));
  tpack = commit(tpack);
  struct rec s[n], r[n];
  memset(s, 0, sizeof s);
  for (int k = 0; k < n; ++k) {
    s[k].c = (char)('a' + mt_rank + k);
    s[k].d = mt_rank + k * 0.25;
    for (int j = 0; j < 3; ++j) s[k].i[j] = ival(mt_rank, 10 * k + j);
  }
  /* Padded -> padded: the padding bytes of the receive buffer stay poisoned. */
  memset(r, kPoison, sizeof r);
  exchange("struct -> struct", s, n, tpad, r, n, tpad, 20, n);
  int bad = 0;
  for (int k = 0; k < n; ++k) {
    bad += r[k].c != (char)('a' + left + k) || r[k].d != left + k * 0.25;
    for (int j = 0; j < 3; ++j) bad += r[k].i[j] != ival(left, 10 * k + j);
  }
  MT_EXPECT(bad == 0, "struct -> struct: %d wrong records", bad);
  const unsigned char* rb = (const unsigned char*)r;
  int holes = 0;
  for (int k = 0; k < n; ++k) {
    const size_t base = k * sizeof(struct rec);
    for (size_t b = 1; b < offsetof(struct rec, d); ++b) holes += rb[base + b] != kPoison;
    for (size_t b = offsetof(struct rec, i) + 3 * sizeof(int); b < sizeof(struct rec); ++b)
      holes += rb[base + b] != kPoison;
  }
  MT_EXPECT(holes == 0, "struct -> struct: %d padding bytes written", holes);
  /* Padded -> packed (21 bytes a record), and packed -> padded. */
  unsigned char pk[n * 21 + 8];
  memset(pk, kPoison, sizeof pk);
  exchange("struct -> packed struct", s, n, tpad, pk, n, tpack, 21, n);
  bad = 0;
  for (int k = 0; k < n; ++k) {
    const unsigned char* e = pk + 21 * k;
    double d;
    int iv[3];
    memcpy(&d, e + 1, sizeof d);
    memcpy(iv, e + 9, sizeof iv);
    bad += e[0] != (unsigned char)('a' + left + k) || d != left + k * 0.25;
    for (int j = 0; j < 3; ++j) bad += iv[j] != ival(left, 10 * k + j);
  }
  for (int b = n * 21; b < (int)sizeof pk; ++b) bad += pk[b] != kPoison;
  MT_EXPECT(bad == 0, "struct -> packed struct: %d wrong", bad);
  unsigned char spk[n * 21];
  for (int k = 0; k < n; ++k) {
    unsigned char* e = spk + 21 * k;
    const double d = mt_rank * 2 + k;
    int iv[3] = {ival(mt_rank, k), ival(mt_rank, k + 1), ival(mt_rank, k + 2)};
    e[0] = (unsigned char)('A' + k);
    memcpy(e + 1, &d, sizeof d);
    memcpy(e + 9, iv, sizeof iv);
  }
  memset(r, kPoison, sizeof r);
  exchange("packed struct -> struct", spk, n, tpack, r, n, tpad, 22, n);
  bad = 0;
  for (int k = 0; k < n; ++k) {
    bad += r[k].c != (char)('A' + k) || r[k].d != left * 2 + k;
    for (int j = 0; j < 3; ++j) bad += r[k].i[j] != ival(left, k + j);
  }
  MT_EXPECT(bad == 0, "packed struct -> struct: %d wrong", bad);
  MT_CHECK(MPI_Type_free(&t0));
  MT_CHECK(MPI_Type_free(&t1));
  MT_CHECK(MPI_Type_free(&tpad));
  MT_CHECK(MPI_Type_free(&tpack));
}

/* Contiguous of a vector: vector(3 blocks of 2, stride 4) has extent 10 ints, so 5 of them
 * cover ints 0..49 with blocks at 10c + {0,1,4,5,8,9}. Received as 30 contiguous ints. */
static void contiguous_of_vector(void) {
  int s[50], r[40];
  MPI_Datatype vec, cv;
  MT_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
  MT_CHECK(MPI_Type_contiguous(5, vec, &cv));
  cv = commit(cv);
  for (int k = 0; k < 50; ++k) s[k] = ival(mt_rank, k);
  memset(r, kPoison, sizeof r);
  exchange("contiguous(vector) -> ints", s, 1, cv, r, 40, MPI_INT, 30, 30);
  const int off[6] = {0, 1, 4, 5, 8, 9};
  int bad = 0;
  for (int c = 0; c < 5; ++c)
    for (int j = 0; j < 6; ++j) bad += r[6 * c + j] != ival(left, 10 * c + off[j]);
  for (int k = 30; k < 40; ++k) bad += r[k] != (int)0xEEEEEEEE;
  MT_EXPECT(bad == 0, "contiguous(vector): %d wrong", bad);
  MT_CHECK(MPI_Type_free(&vec));
  MT_CHECK(MPI_Type_free(&cv));
}

/* A column of a rows x cols matrix resized to one int: `cols` of them send the transpose. */
static void resized_transpose(void) {
  enum { rows = 7, cols = 5 };
  int a[rows][cols], t[cols][rows];
  MPI_Datatype col, colr;
  MT_CHECK(MPI_Type_vector(rows, 1, cols, MPI_INT, &col));
  MT_CHECK(MPI_Type_create_resized(col, 0, sizeof(int), &colr));
  colr = commit(colr);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) a[i][j] = ival(mt_rank, 100 * i + j);
  memset(t, kPoison, sizeof t);
  exchange("resized columns -> rows", a, cols, colr, t, rows * cols, MPI_INT, 40, rows * cols);
  int bad = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) bad += t[j][i] != ival(left, 100 * i + j);
  MT_EXPECT(bad == 0, "transpose: %d wrong", bad);
  /* And the receiver transposes: the sender's transpose in rows, the matrix out of columns. */
  int b[rows][cols];
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[j][i] = ival(mt_rank, 100 * i + j);
  memset(b, kPoison, sizeof b);
  exchange("rows -> resized columns", t, rows * cols, MPI_INT, b, cols, colr, 41, cols);
  bad = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) bad += b[i][j] != ival(left, 100 * i + j);
  MT_EXPECT(bad == 0, "receiver transpose: %d wrong", bad);
  MT_CHECK(MPI_Type_free(&col));
  MT_CHECK(MPI_Type_free(&colr));
}

/* Messages that fill a derived type partially (MPI-3.1 §4.1.11). */
static void partial_elements(void) {
  MPI_Datatype pair, id;
  MT_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &pair)); /* 2 ints, a hole between */
  pair = commit(pair);
  int s[7], r[16];
  for (int k = 0; k < 7; ++k) s[k] = ival(mt_rank, k);
  memset(r, kPoison, sizeof r);
  /* 7 ints into up to 5 pairs: 3 whole pairs and one int. */
  exchange("7 ints into pairs", s, 7, MPI_INT, r, 5, pair, 50, MPI_UNDEFINED);
  MPI_Status st;
  int n = -2;
  MPI_Request rq;
  MT_CHECK(MPI_Irecv(r, 5, pair, left, 51, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(s, 7, MPI_INT, right, 51, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_CHECK(MPI_Get_elements(&st, pair, &n));
  MT_EXPECT(n == 7, "Get_elements of 7 ints in pairs: %d", n);
  MT_CHECK(MPI_Get_count(&st, pair, &n));
  MT_EXPECT(n == MPI_UNDEFINED, "Get_count of 7 ints in pairs: %d", n);
  MT_CHECK(MPI_Get_elements(&st, MPI_INT, &n));
  MT_EXPECT(n == 7, "Get_elements of 7 ints as MPI_INT: %d", n);
  int bad = 0;
  /* The ints land at 0, 2 (pair 0), 3, 5 (pair 1: extent 3 ints), 6, 8, 9. */
  const int at[7] = {0, 2, 3, 5, 6, 8, 9};
  for (int k = 0; k < 7; ++k) bad += r[at[k]] != ival(left, k);
  bad += r[1] != (int)0xEEEEEEEE || r[4] != (int)0xEEEEEEEE || r[10] != (int)0xEEEEEEEE;
  MT_EXPECT(bad == 0, "7 ints in pairs: %d wrong", bad);
  /* A struct {int, double, int} sent as 3 basic elements into 2 {int, double} structs. */
  struct id_rec {
    int i;
    double d;
  };
  const int bl[2] = {1, 1};
  const MPI_Aint di[2] = {offsetof(struct id_rec, i), offsetof(struct id_rec, d)};
  const MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype id0;
  MT_CHECK(MPI_Type_create_struct(2, bl, di, ty, &id0));
  MT_CHECK(MPI_Type_create_resized(id0, 0, sizeof(struct id_rec), &id));
  id = commit(id);
  struct id_rec sr[2] = {{ival(mt_rank, 1), mt_rank + 0.5}, {ival(mt_rank, 2), 0}}, rr[2];
  memset(rr, kPoison, sizeof rr);
  /* Sender: the struct type, count 1, then one more int: an hindexed of the three fields. */
  const int bl3[3] = {1, 1, 1};
  const MPI_Aint di3[3] = {offsetof(struct id_rec, i), offsetof(struct id_rec, d),
                           sizeof(struct id_rec) + offsetof(struct id_rec, i)};
  const MPI_Datatype ty3[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
  MPI_Datatype three;
  MT_CHECK(MPI_Type_create_struct(3, bl3, di3, ty3, &three));
  three = commit(three);
  MT_CHECK(MPI_Irecv(rr, 2, id, left, 52, MPI_COMM_WORLD, &rq));
  MT_CHECK(MPI_Send(sr, 1, three, right, 52, MPI_COMM_WORLD));
  MT_CHECK(MPI_Wait(&rq, &st));
  MT_CHECK(MPI_Get_count(&st, id, &n));
  MT_EXPECT(n == MPI_UNDEFINED, "Get_count of int,double,int in {int,double}: %d", n);
  MT_CHECK(MPI_Get_elements(&st, id, &n));
  MT_EXPECT(n == 3, "Get_elements of int,double,int in {int,double}: %d", n);
  MPI_Count nx = -2;
  MT_CHECK(MPI_Get_elements_x(&st, id, &nx));
  MT_EXPECT(nx == 3, "Get_elements_x: %lld", (long long)nx);
  MT_EXPECT(rr[0].i == ival(left, 1) && rr[0].d == left + 0.5 && rr[1].i == ival(left, 2),
            "int,double,int data");
  double dpoison;
  memset(&dpoison, kPoison, sizeof dpoison);
  MT_EXPECT(memcmp(&rr[1].d, &dpoison, sizeof dpoison) == 0, "the missing double was written");
  MT_CHECK(MPI_Type_free(&pair));
  MT_CHECK(MPI_Type_free(&id0));
  MT_CHECK(MPI_Type_free(&id));
  MT_CHECK(MPI_Type_free(&three));
}

static unsigned char bval(int src, long size, long i) {
  return (unsigned char)((i * 131 + size * 7 + src * 29 + (i >> 8) * 17) & 0xff);
}

/* Sizes from 0 B to 4 MiB: contiguous both sides, strided sender, strided receiver. */
static void sizes(void) {
  static const long kSizes[] = {0, 1, 7, 64, 1000, 4096, 65536, 1L << 20, 4L << 20};
  const int nsizes = (int)(sizeof kSizes / sizeof kSizes[0]);
  const long maxs = 4L << 20;
  unsigned char* s = malloc((size_t)(2 * maxs + 16));
  unsigned char* r = malloc((size_t)(2 * maxs + 16));
  if (s == NULL || r == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int z = 0; z < nsizes; ++z) {
    const long size = kSizes[z];
    const int n = (int)size;
    char what[80];
    MPI_Datatype strided;
    MT_CHECK(MPI_Type_vector(n > 0 ? n : 1, 1, 2, MPI_BYTE, &strided));
    strided = commit(strided);
    const int scount = n > 0 ? 1 : 0;
    /* Contiguous both sides. */
    for (long i = 0; i < size; ++i) s[i] = bval(mt_rank, size, i);
    memset(r, kPoison, (size_t)size + 16);
    snprintf(what, sizeof what, "%ld bytes contiguous", size);
    exchange(what, s, n, MPI_BYTE, r, n + 16, MPI_BYTE, 100 + z, n);
    long bad = 0;
    for (long i = 0; i < size; ++i) bad += r[i] != bval(left, size, i);
    for (long i = size; i < size + 16; ++i) bad += r[i] != kPoison;
    MT_EXPECT(bad == 0, "%s: %ld bytes wrong", what, bad);
    /* Strided sender (every other byte of 2 * size), contiguous receiver. */
    for (long i = 0; i < 2 * size; ++i) s[i] = (i % 2 == 0) ? bval(mt_rank, size, i / 2) : 0x55;
    memset(r, kPoison, (size_t)size + 16);
    snprintf(what, sizeof what, "%ld bytes from a strided sender", size);
    exchange(what, s, scount, strided, r, n + 16, MPI_BYTE, 200 + z, n);
    bad = 0;
    for (long i = 0; i < size; ++i) bad += r[i] != bval(left, size, i);
    for (long i = size; i < size + 16; ++i) bad += r[i] != kPoison;
    MT_EXPECT(bad == 0, "%s: %ld bytes wrong", what, bad);
    /* Contiguous sender, strided receiver: the odd bytes stay poisoned. */
    for (long i = 0; i < size; ++i) s[i] = bval(mt_rank, size, i);
    memset(r, kPoison, (size_t)(2 * size) + 16);
    snprintf(what, sizeof what, "%ld bytes into a strided receiver", size);
    exchange(what, s, n, MPI_BYTE, r, scount, strided, 300 + z, scount);
    bad = 0;
    for (long i = 0; i < 2 * size; ++i)
      bad += r[i] != ((i % 2 == 0) ? bval(left, size, i / 2) : kPoison);
    MT_EXPECT(bad == 0, "%s: %ld bytes wrong", what, bad);
    MT_CHECK(MPI_Type_free(&strided));
  }
  free(s);
  free(r);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  left = (mt_rank + mt_size - 1) % mt_size;
  right = (mt_rank + 1) % mt_size;
  vector_vs_contiguous();
  indexed_both_sides();
  struct_with_gaps();
  contiguous_of_vector();
  resized_transpose();
  partial_elements();
  sizes();
  if (mt_rank == 0) printf("p2p_types: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
