/* SPDX-License-Identifier: BSD-3-Clause */
/* The datatype queries and helpers through the C API, each checked against the value the
 * standard gives (MT_EXPECT) and printed (the output is the same under any MPI):
 *   envelope / contents of each combiner (returned derived handles are freed), names, extents
 *   and true extents, MPI_Get_address + MPI_Aint_add / MPI_Aint_diff with an absolute-address
 *   struct put from MPI_BOTTOM, MPI_Pack / MPI_Unpack / MPI_Pack_size with positions,
 *   MPI_Get_count / MPI_Get_elements on a status set by MPI_Status_set_elements, and the seed's
 *   MPI_UB row type (MPI-2.2 §5.5 Example 5.10) next to its MPI_Type_create_resized twin. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

static void envelope(const char* what, MPI_Datatype t, int ni, int na, int nd, int comb) {
  int i = -1, a = -1, d = -1, c = -1;
  MT_CHECK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
  MT_EXPECT(i == ni && a == na && d == nd && c == comb, "%s: envelope %d %d %d %d", what, i, a, d,
            c);
  printf("rank %d: %s envelope %d %d %d\n", mt_rank, what, i, a, d);
}

static void extents(const char* what, MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                    MPI_Aint text, int size) {
  MPI_Aint l, e, tl, te;
  int s;
  MPI_Count lx, ex, tlx, tex, sx;
  MT_CHECK(MPI_Type_get_extent(t, &l, &e));
  MT_CHECK(MPI_Type_get_true_extent(t, &tl, &te));
  MT_CHECK(MPI_Type_size(t, &s));
  MT_CHECK(MPI_Type_get_extent_x(t, &lx, &ex));
  MT_CHECK(MPI_Type_get_true_extent_x(t, &tlx, &tex));
  MT_CHECK(MPI_Type_size_x(t, &sx));
  MT_EXPECT(l == lb && e == ext && tl == tlb && te == text && s == size,
            "%s: lb %ld extent %ld true lb %ld true extent %ld size %d", what, (long)l, (long)e,
            (long)tl, (long)te, s);
  MT_EXPECT(lx == l && ex == e && tlx == tl && tex == te && sx == s, "%s: _x versions differ",
            what);
  printf("rank %d: %s lb %ld extent %ld true_lb %ld true_extent %ld size %d\n", mt_rank, what,
         (long)l, (long)e, (long)tl, (long)te, s);
}

/* MPI_Type_get_contents with the exact counts of the envelope (Open MPI 4.1 reads
 * max_datatypes entries whatever the type has, and crashes on larger maxima). */
static void contents(MPI_Datatype t, int* ints, MPI_Aint* aints, MPI_Datatype* types) {
  int ni, na, nd, comb;
  MT_CHECK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  MT_CHECK(MPI_Type_get_contents(t, ni, na, nd, ints, aints, types));
}

static void contents_checks(void) {
  MPI_Datatype vec, st, sub, res, dup;
  MT_CHECK(MPI_Type_vector(3, 2, 5, MPI_INT, &vec));
  envelope("vector", vec, 3, 0, 1, MPI_COMBINER_VECTOR);
  int ints[16];
  MPI_Aint aints[8];
  MPI_Datatype types[4];
  contents(vec, ints, aints, types);
  MT_EXPECT(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT,
            "vector contents %d %d %d", ints[0], ints[1], ints[2]);

  const int bl[3] = {1, 2, 1};
  const MPI_Aint ds[3] = {0, 8, 40};
  const MPI_Datatype ts[3] = {MPI_CHAR, vec, MPI_DOUBLE};
  MT_CHECK(MPI_Type_create_struct(3, bl, ds, ts, &st));
  envelope("struct", st, 4, 3, 3, MPI_COMBINER_STRUCT);
  contents(st, ints, aints, types);
  MT_EXPECT(ints[0] == 3 && ints[2] == 2 && aints[1] == 8 && aints[2] == 40 &&
                types[0] == MPI_CHAR && types[2] == MPI_DOUBLE,
            "struct contents");
  /* The derived member comes back as a handle of its own, with vec's envelope; freed here. */
  envelope("struct member", types[1], 3, 0, 1, MPI_COMBINER_VECTOR);
  MT_CHECK(MPI_Type_free(&types[1]));

  const int sizes[2] = {10, 20}, subs[2] = {3, 4}, starts[2] = {1, 2};
  MT_CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, &sub));
  envelope("subarray", sub, 8, 0, 1, MPI_COMBINER_SUBARRAY);
  contents(sub, ints, aints, types);
  MT_EXPECT(ints[0] == 2 && ints[1] == 10 && ints[4] == 4 && ints[6] == 2 &&
                ints[7] == MPI_ORDER_FORTRAN && types[0] == MPI_FLOAT,
            "subarray contents");
  extents("subarray", sub, 0, 10 * 20 * 4, (2 * 10 + 1) * 4, ((5 * 10 + 3) - (2 * 10 + 1) + 1) * 4,
          12 * 4);

  MT_CHECK(MPI_Type_create_resized(vec, -4, 100, &res));
  envelope("resized", res, 0, 2, 1, MPI_COMBINER_RESIZED);
  contents(res, ints, aints, types);
  MT_EXPECT(aints[0] == -4 && aints[1] == 100, "resized contents");
  MT_CHECK(MPI_Type_free(&types[0]));
  extents("resized vector", res, -4, 100, 0, 4 * 12, 24);
  MT_CHECK(MPI_Type_dup(MPI_DOUBLE, &dup));
  envelope("dup", dup, 0, 0, 1, MPI_COMBINER_DUP);
  envelope("MPI_INT", MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);

  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MT_CHECK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
  MT_EXPECT(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "name %s", name);
  MT_CHECK(MPI_Type_get_name(vec, name, &len));
  MT_EXPECT(len == 0 && name[0] == '\0', "unnamed derived type has name '%s'", name);
  MT_CHECK(MPI_Type_set_name(vec, "column"));
  MT_CHECK(MPI_Type_get_name(vec, name, &len));
  MT_EXPECT(strcmp(name, "column") == 0 && len == 6, "name %s", name);
  printf("rank %d: names ok\n", mt_rank);

  MPI_Datatype* all[] = {&vec, &st, &sub, &res, &dup};
  for (int i = 0; i < 5; ++i) MT_CHECK(MPI_Type_free(all[i]));
}

/* A struct over absolute addresses, put from MPI_BOTTOM into the right neighbour's window. */
static void address_checks(void) {
  struct {
    int a;
    double pad;
    double b;
  } s = {7 + mt_rank, 0.0, 2.5 + mt_rank};
  MPI_Aint pa, pb;
  MT_CHECK(MPI_Get_address(&s.a, &pa));
  MT_CHECK(MPI_Get_address(&s.b, &pb));
  MT_EXPECT(MPI_Aint_diff(pb, pa) == (MPI_Aint)((char*)&s.b - (char*)&s.a), "MPI_Aint_diff");
  MT_EXPECT(MPI_Aint_add(pa, MPI_Aint_diff(pb, pa)) == pb, "MPI_Aint_add");
  const int bl[2] = {1, 1};
  const MPI_Aint ds[2] = {pa, pb};
  const MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype abs_t, packed_t;
  MT_CHECK(MPI_Type_create_struct(2, bl, ds, ts, &abs_t));
  MT_CHECK(MPI_Type_commit(&abs_t));
  /* The target: the same int and double at offsets 0 and 8 (a C struct {int; double}). */
  const MPI_Aint tds[2] = {0, 8};
  MT_CHECK(MPI_Type_create_struct(2, bl, tds, ts, &packed_t));
  MT_CHECK(MPI_Type_commit(&packed_t));
  struct {
    int a;
    double b;
  }* w = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
  MT_CHECK(MPI_Win_fence(0, win));
  MT_CHECK(MPI_Put(MPI_BOTTOM, 1, abs_t, (mt_rank + 1) % mt_size, 0, 1, packed_t, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  const int left = (mt_rank + mt_size - 1) % mt_size;
  MT_EXPECT(w->a == 7 + left && w->b == 2.5 + left, "MPI_BOTTOM put: %d %g", w->a, w->b);
  printf("rank %d: MPI_BOTTOM struct put %s\n", mt_rank,
         w->a == 7 + left && w->b == 2.5 + left ? "ok" : "FAILED");
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Type_free(&abs_t));
  MT_CHECK(MPI_Type_free(&packed_t));
}

static void pack_checks(void) {
  MPI_Datatype col;
  MT_CHECK(MPI_Type_vector(4, 1, 3, MPI_INT, &col)); /* a column of a 4 x 3 matrix */
  MT_CHECK(MPI_Type_commit(&col));
  int m[12];
  for (int i = 0; i < 12; ++i) m[i] = i;
  int size = 0;
  MT_CHECK(MPI_Pack_size(2, col, MPI_COMM_WORLD, &size));
  MT_EXPECT(size >= 32, "MPI_Pack_size %d", size);
  char buf[64];
  int pos = 0;
  MT_CHECK(MPI_Pack(m, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  MT_CHECK(MPI_Pack(m + 2, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
  int out[8];
  int upos = 0;
  MT_CHECK(MPI_Unpack(buf, pos, &upos, out, 8, MPI_INT, MPI_COMM_WORLD));
  const int want[8] = {0, 3, 6, 9, 2, 5, 8, 11};
  MT_EXPECT(memcmp(out, want, sizeof want) == 0 && upos == pos, "pack / unpack");
  printf("rank %d: pack %d bytes unpack ok\n", mt_rank, pos);

  MPI_Status st;
  memset(&st, 0, sizeof st);
  int count = -1;
  MT_CHECK(MPI_Status_set_elements(&st, col, 6)); /* one column and a half */
  MT_CHECK(MPI_Get_count(&st, col, &count));
  MT_EXPECT(count == MPI_UNDEFINED, "MPI_Get_count of 1.5 columns: %d", count);
  MT_CHECK(MPI_Get_elements(&st, col, &count));
  MT_EXPECT(count == 6, "MPI_Get_elements: %d", count);
  MT_CHECK(MPI_Get_count(&st, MPI_INT, &count));
  MT_EXPECT(count == 6, "MPI_Get_count in ints: %d", count);
  MT_CHECK(MPI_Status_set_elements(&st, col, 8));
  MT_CHECK(MPI_Get_count(&st, col, &count));
  MT_EXPECT(count == 2, "MPI_Get_count of 2 columns: %d", count);
  printf("rank %d: status counts ok\n", mt_rank);
  MT_CHECK(MPI_Type_free(&col));
}

/* MPI-2.2 §5.5 Example 5.10's type: one int with the extent of a row of 150 ints. */
static void seed_ub_checks(void) {
  MPI_Datatype stype, rtype;
#ifdef ONESIDED_MPI
  const int blocklen[2] = {1, 1};
  const MPI_Aint disp[2] = {0, 150 * (MPI_Aint)sizeof(int)};
  const MPI_Datatype type[2] = {MPI_INT, MPI_UB};
  MT_CHECK(MPI_Type_create_struct(2, blocklen, disp, type, &stype));
#else
  /* MPI_UB was removed in MPI-3 (Open MPI 4 rejects it at compile time): its MPI-3 twin, so the
   * output stays comparable. */
  MT_CHECK(MPI_Type_create_resized(MPI_INT, 0, 150 * (MPI_Aint)sizeof(int), &stype));
#endif
  MT_CHECK(MPI_Type_commit(&stype));
  extents("MPI_UB row type", stype, 0, 600, 0, 4, 4);
  MT_CHECK(MPI_Type_create_resized(MPI_INT, 0, 150 * (MPI_Aint)sizeof(int), &rtype));
  MT_CHECK(MPI_Type_commit(&rtype));
  extents("resized row type", rtype, 0, 600, 0, 4, 4);
  /* 100 of either pack the same column of a 100 x 150 array. */
  static int a[100][150];
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 150; ++j) a[i][j] = i * 1000 + j;
  }
  int p1[100], p2[100];
  int pos1 = 0, pos2 = 0;
  MT_CHECK(MPI_Pack(&a[0][mt_rank % 150], 100, stype, p1, sizeof p1, &pos1, MPI_COMM_WORLD));
  MT_CHECK(MPI_Pack(&a[0][mt_rank % 150], 100, rtype, p2, sizeof p2, &pos2, MPI_COMM_WORLD));
  int ok = pos1 == 400 && pos2 == 400;
  for (int i = 0; i < 100; ++i) ok &= p1[i] == i * 1000 + mt_rank % 150 && p2[i] == p1[i];
  MT_EXPECT(ok, "the MPI_UB and the resized row types pack a column alike");
  printf("rank %d: MPI_UB column %s\n", mt_rank, ok ? "ok" : "FAILED");
  MT_CHECK(MPI_Type_free(&stype));
  MT_CHECK(MPI_Type_free(&rtype));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  contents_checks();
  address_checks();
  pack_checks();
  seed_ub_checks();
  return mt_finish();
}
