/* SPDX-License-Identifier: BSD-3-Clause */
/* Groups and communicators (dup, split, create, compare, free, the group calls) and the other
 * collective families on them: barrier, bcast, allgather(v), reduce, allreduce and
 * reduce_scatter_block, with MPI_IN_PLACE and derived types, checked against serial answers. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* The families on one communicator; `tag` names it in messages. */
static void families(MPI_Comm comm, const char* tag) {
  int p, me;
  MT_CHECK(MPI_Comm_size(comm, &p));
  MT_CHECK(MPI_Comm_rank(comm, &me));
  MT_CHECK(MPI_Barrier(comm));
  /* Bcast from every root, plain and as a vector type (every other int). */
  for (int root = 0; root < p; ++root) {
    int buf[64];
    for (int k = 0; k < 64; ++k) buf[k] = me == root ? root * 100 + k : -1;
    MT_CHECK(MPI_Bcast(buf, 64, MPI_INT, root, comm));
    for (int k = 0; k < 64; ++k)
      MT_EXPECT(buf[k] == root * 100 + k, "%s bcast root %d k %d", tag, root, k);
    MPI_Datatype every2;
    MT_CHECK(MPI_Type_vector(32, 1, 2, MPI_INT, &every2));
    MT_CHECK(MPI_Type_commit(&every2));
    for (int k = 0; k < 64; ++k) buf[k] = me == root ? root * 100 + k : -1;
    MT_CHECK(MPI_Bcast(buf, 1, every2, root, comm));
    for (int k = 0; k < 64; ++k) {
      int want = (k % 2 == 0 || me == root) ? root * 100 + k : -1;
      MT_EXPECT(buf[k] == want, "%s bcast vector root %d k %d: %d", tag, root, k, buf[k]);
    }
    MT_CHECK(MPI_Type_free(&every2));
  }
  /* Bcast of 48 KiB from every root, twice from one malloc'ed buffer: on one node linear (every
   * member reads the root's buffer, shared from its second use), across nodes a tree; a
   * communicator split so that it lies on one node takes the one while the world takes the
   * other. */
  {
    enum { kBig = 12000 };
    int* big = malloc(kBig * sizeof(int));
    for (int root = 0; root < p; ++root) {
      for (int round = 0; round < 2; ++round) {
        for (int k = 0; k < kBig; ++k) big[k] = me == root ? root * 100000 + round * 20000 + k : -1;
        MT_CHECK(MPI_Bcast(big, kBig, MPI_INT, root, comm));
        long bad = 0;
        for (int k = 0; k < kBig; ++k) bad += big[k] != root * 100000 + round * 20000 + k;
        MT_EXPECT(bad == 0, "%s bcast of %d ints from %d, round %d: %ld wrong", tag, kBig, root,
                  round, bad);
      }
    }
    free(big);
  }
  /* Allgather: 3 doubles each, plain and in place. */
  {
    double s[3], *r = malloc((size_t)p * 3 * sizeof(double));
    for (int k = 0; k < 3; ++k) s[k] = me + k / 4.0;
    MT_CHECK(MPI_Allgather(s, 3, MPI_DOUBLE, r, 3, MPI_DOUBLE, comm));
    for (int i = 0; i < p; ++i)
      for (int k = 0; k < 3; ++k)
        MT_EXPECT(r[i * 3 + k] == i + k / 4.0, "%s allgather %d %d", tag, i, k);
    for (int i = 0; i < p * 3; ++i) r[i] = i / 3 == me ? me + (i % 3) / 4.0 : -1;
    MT_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, 3, MPI_DOUBLE, comm));
    for (int i = 0; i < p; ++i)
      for (int k = 0; k < 3; ++k)
        MT_EXPECT(r[i * 3 + k] == i + k / 4.0, "%s allgather in place %d %d", tag, i, k);
    free(r);
  }
  /* Allgatherv: rank i contributes i + 1 ints, placed in reverse rank order. */
  {
    int *rc = malloc((size_t)p * sizeof(int)), *d = malloc((size_t)p * sizeof(int));
    int total = 0;
    for (int i = p - 1; i >= 0; --i) {
      rc[i] = i + 1;
      d[i] = total;
      total += rc[i];
    }
    int* s = malloc((size_t)(me + 1) * sizeof(int));
    int* r = malloc((size_t)total * sizeof(int));
    for (int k = 0; k <= me; ++k) s[k] = me * 10 + k;
    MT_CHECK(MPI_Allgatherv(s, me + 1, MPI_INT, r, rc, d, MPI_INT, comm));
    for (int i = 0; i < p; ++i)
      for (int k = 0; k <= i; ++k)
        MT_EXPECT(r[d[i] + k] == i * 10 + k, "%s allgatherv %d %d", tag, i, k);
    free(s);
    free(r);
    free(rc);
    free(d);
  }
  /* Reduce to every root, allreduce, in place, and MINLOC / MAXLOC on pairs. */
  for (int root = 0; root < p; ++root) {
    long s[5], r[5];
    for (int k = 0; k < 5; ++k) s[k] = (me + 1) * (k + 1);
    MT_CHECK(MPI_Reduce(s, r, 5, MPI_LONG, MPI_SUM, root, comm));
    if (me == root)
      for (int k = 0; k < 5; ++k)
        MT_EXPECT(r[k] == (long)p * (p + 1) / 2 * (k + 1), "%s reduce root %d k %d: %ld", tag, root,
                  k, r[k]);
    if (me == root) {
      memcpy(r, s, sizeof s);
      MT_CHECK(MPI_Reduce(MPI_IN_PLACE, r, 5, MPI_LONG, MPI_MAX, root, comm));
      for (int k = 0; k < 5; ++k)
        MT_EXPECT(r[k] == (long)p * (k + 1), "%s reduce in place max %d", tag, k);
    } else {
      MT_CHECK(MPI_Reduce(s, NULL, 5, MPI_LONG, MPI_MAX, root, comm));
    }
  }
  {
    int s[4], r[4];
    for (int k = 0; k < 4; ++k) s[k] = (me + k) % 3;
    MT_CHECK(MPI_Allreduce(s, r, 4, MPI_INT, MPI_BOR, comm));
    for (int k = 0; k < 4; ++k) {
      int want = 0;
      for (int i = 0; i < p; ++i) want |= (i + k) % 3;
      MT_EXPECT(r[k] == want, "%s allreduce bor %d", tag, k);
    }
    double d[2] = {me * 0.5, -me * 0.5};
    MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, d, 2, MPI_DOUBLE, MPI_MIN, comm));
    MT_EXPECT(d[0] == 0 && d[1] == -(p - 1) * 0.5, "%s allreduce in place min %g %g", tag, d[0],
              d[1]);
    struct {
      int v, i;
    } in[2] = {{me % 2, me}, {-(me / 2), me}}, out[2];
    MT_CHECK(MPI_Allreduce(in, out, 2, MPI_2INT, MPI_MAXLOC, comm));
    MT_EXPECT(out[0].v == (p > 1 ? 1 : 0) && out[0].i == (p > 1 ? 1 : 0), "%s maxloc %d %d", tag,
              out[0].v, out[0].i);
    MT_EXPECT(out[1].v == 0 && out[1].i == 0, "%s maxloc ties %d %d", tag, out[1].v, out[1].i);
    MT_CHECK(MPI_Allreduce(in, out, 2, MPI_2INT, MPI_MINLOC, comm));
    MT_EXPECT(out[1].v == -((p - 1) / 2) && out[1].i == ((p - 1) / 2) * 2, "%s minloc %d %d", tag,
              out[1].v, out[1].i);
  }
  /* Reduce_scatter_block: 2 ints per rank; element j of rank i is i * j. */
  {
    int* s = malloc((size_t)p * 2 * sizeof(int));
    for (int j = 0; j < 2 * p; ++j) s[j] = me * j;
    int r[2];
    MT_CHECK(MPI_Reduce_scatter_block(s, r, 2, MPI_INT, MPI_SUM, comm));
    for (int k = 0; k < 2; ++k) {
      int j = me * 2 + k;
      MT_EXPECT(r[k] == j * p * (p - 1) / 2, "%s reduce_scatter_block %d: %d", tag, k, r[k]);
    }
    MT_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, s, 2, MPI_INT, MPI_SUM, comm));
    for (int k = 0; k < 2; ++k) {
      int j = me * 2 + k;
      MT_EXPECT(s[k] == j * p * (p - 1) / 2, "%s reduce_scatter_block in place %d", tag, k);
    }
    free(s);
  }
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int p = mt_size, me = mt_rank;
  families(MPI_COMM_WORLD, "world");
  families(MPI_COMM_SELF, "self");

  /* Groups. */
  MPI_Group world, evens, odds, u, x, dgrp, rev, empty_check;
  MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int gs, gr;
  MT_CHECK(MPI_Group_size(world, &gs));
  MT_CHECK(MPI_Group_rank(world, &gr));
  MT_EXPECT(gs == p && gr == me, "world group size %d rank %d", gs, gr);
  int ranges[1][3] = {{0, p - 1, 2}};
  MT_CHECK(MPI_Group_range_incl(world, 1, ranges, &evens));
  MT_CHECK(MPI_Group_range_excl(world, 1, ranges, &odds));
  MT_CHECK(MPI_Group_size(evens, &gs));
  MT_EXPECT(gs == (p + 1) / 2, "evens size %d", gs);
  MT_CHECK(MPI_Group_rank(odds, &gr));
  MT_EXPECT(gr == (me % 2 == 1 ? me / 2 : MPI_UNDEFINED), "odds rank %d", gr);
  MT_CHECK(MPI_Group_union(odds, evens, &u));
  MT_CHECK(MPI_Group_intersection(odds, evens, &x));
  MT_CHECK(MPI_Group_difference(world, odds, &dgrp));
  int cmp;
  MT_CHECK(MPI_Group_compare(u, world, &cmp));
  MT_EXPECT(cmp == (p == 1 ? MPI_IDENT : MPI_SIMILAR), "union (odds first) vs world %d", cmp);
  MT_CHECK(MPI_Group_compare(dgrp, evens, &cmp));
  MT_EXPECT(cmp == MPI_IDENT, "difference vs evens %d", cmp);
  MT_CHECK(MPI_Group_size(x, &gs));
  MT_EXPECT(gs == 0, "intersection size %d", gs);
  MT_CHECK(MPI_Group_compare(x, MPI_GROUP_EMPTY, &cmp));
  MT_EXPECT(cmp == MPI_IDENT, "empty intersection vs MPI_GROUP_EMPTY %d", cmp);
  int* order = malloc((size_t)p * sizeof(int));
  for (int i = 0; i < p; ++i) order[i] = p - 1 - i;
  MT_CHECK(MPI_Group_incl(world, p, order, &rev));
  int* tr = malloc((size_t)p * sizeof(int));
  MT_CHECK(MPI_Group_translate_ranks(world, p, order, rev, tr));
  for (int i = 0; i < p; ++i) MT_EXPECT(tr[i] == i, "translate %d: %d", i, tr[i]);
  MT_CHECK(MPI_Group_translate_ranks(world, p, order, evens, tr));
  for (int i = 0; i < p; ++i)
    MT_EXPECT(tr[i] == (order[i] % 2 == 0 ? order[i] / 2 : MPI_UNDEFINED),
              "translate to evens %d: %d", i, tr[i]);
  MT_CHECK(MPI_Group_excl(world, 1, &order[0], &empty_check));
  MT_CHECK(MPI_Group_size(empty_check, &gs));
  MT_EXPECT(gs == p - 1, "excl size %d", gs);

  /* Communicators: dup (congruent), split by parity with reversed keys, create from the
   * reversed group; the families run on each. */
  MPI_Comm dup, half, revc, evc;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MT_CHECK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
  MT_EXPECT(cmp == MPI_CONGRUENT, "dup compare %d", cmp);
  MT_CHECK(MPI_Comm_compare(dup, dup, &cmp));
  MT_EXPECT(cmp == MPI_IDENT, "self compare %d", cmp);
  families(dup, "dup");
  MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half));
  int hs, hr;
  MT_CHECK(MPI_Comm_size(half, &hs));
  MT_CHECK(MPI_Comm_rank(half, &hr));
  MT_EXPECT(hs == (me % 2 == 0 ? (p + 1) / 2 : p / 2), "split size %d", hs);
  MT_EXPECT(hr == hs - 1 - me / 2, "split rank %d (keys reverse the order)", hr);
  families(half, "split");
  MT_CHECK(MPI_Comm_create(MPI_COMM_WORLD, rev, &revc));
  MT_CHECK(MPI_Comm_rank(revc, &hr));
  MT_EXPECT(hr == p - 1 - me, "create rank %d", hr);
  MT_CHECK(MPI_Comm_compare(revc, MPI_COMM_WORLD, &cmp));
  MT_EXPECT(cmp == (p == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "reversed compare %d", cmp);
  families(revc, "reversed");
  MT_CHECK(MPI_Comm_create(MPI_COMM_WORLD, evens, &evc));
  MT_EXPECT((evc == MPI_COMM_NULL) == (me % 2 == 1), "create evens: null on odd ranks only");
  if (evc != MPI_COMM_NULL) {
    families(evc, "evens");
    MT_CHECK(MPI_Comm_free(&evc));
  }
  /* Split with MPI_UNDEFINED: rank 0 joins nothing. */
  MPI_Comm rest;
  MT_CHECK(MPI_Comm_split(dup, me == 0 ? MPI_UNDEFINED : 1, 0, &rest));
  MT_EXPECT((rest == MPI_COMM_NULL) == (me == 0), "split undefined");
  if (rest != MPI_COMM_NULL) {
    families(rest, "rest");
    MT_CHECK(MPI_Comm_free(&rest));
  }
  /* A split of a split. */
  MPI_Comm quarter;
  MT_CHECK(MPI_Comm_split(half, hr % 2, hr, &quarter));
  families(quarter, "quarter");
  MT_CHECK(MPI_Comm_free(&quarter));
  MT_CHECK(MPI_Comm_free(&half));
  MT_CHECK(MPI_Comm_free(&revc));
  /* A window outlives the communicator it was made on (MPI-3.1 §6.4.3: freeing only marks it). */
  {
    MPI_Win win;
    int* base;
    MT_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &base, &win));
    *base = -1;
    MT_CHECK(MPI_Comm_free(&dup));
    MT_CHECK(MPI_Win_fence(0, win));
    MT_CHECK(MPI_Put(&me, 1, MPI_INT, (me + 1) % p, 0, 1, MPI_INT, win));
    MT_CHECK(MPI_Win_fence(0, win));
    MT_EXPECT(*base == (me + p - 1) % p, "window on a freed communicator: %d", *base);
    MT_CHECK(MPI_Win_free(&win));
  }
  MT_EXPECT(dup == MPI_COMM_NULL, "freed handle set to MPI_COMM_NULL");
  /* Communicators made and freed in a loop reuse the freed ones' scratch regions and the peers'
   * mappings of them: each must still give the right answers, with the previous one's last
   * collective of another kind and size. */
  for (int i = 0; i < 20; ++i) {
    MPI_Comm c;
    MT_CHECK(i % 2 == 0 ? MPI_Comm_dup(MPI_COMM_WORLD, &c)
                        : MPI_Comm_split(MPI_COMM_WORLD, 0, p - me, &c));
    int cr = -1;
    MT_CHECK(MPI_Comm_rank(c, &cr));
    MT_EXPECT(cr == (i % 2 == 0 ? me : p - 1 - me), "round %d: rank %d in the new one", i, cr);
    int sum = 0;
    const int mine = cr + i;
    MT_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    MT_EXPECT(sum == p * (p - 1) / 2 + p * i, "round %d: allreduce %d", i, sum);
    long block[64];
    for (int k = 0; k < 64; ++k) block[k] = cr == i % p ? i * 1000L + k : -1;
    MT_CHECK(MPI_Bcast(block, 8 + 8 * (i % 8), MPI_LONG, i % p, c));
    for (int k = 0; k < 8 + 8 * (i % 8); ++k) {
      MT_EXPECT(block[k] == i * 1000L + k, "round %d: bcast [%d] = %ld", i, k, block[k]);
    }
    MT_CHECK(MPI_Comm_free(&c));
  }
  MPI_Group* all[] = {&world, &evens, &odds, &u, &x, &dgrp, &rev, &empty_check};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) MT_CHECK(MPI_Group_free(all[i]));
  free(order);
  free(tr);
  if (me == 0)
    printf("communicators, groups and collective families: %s\n",
           mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
