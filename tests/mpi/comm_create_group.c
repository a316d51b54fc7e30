/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_create_group (MPI-3.1 §6.4.2): only the group's members call it. The evens make a
 * communicator while the odds do not take part; two disjoint groups at once with one tag;
 * overlapping groups told apart by their tags; the group's order becomes the rank order; a
 * non-member's call gives MPI_COMM_NULL; a negative tag is MPI_ERR_TAG. */
#include "mpiexpect.h"

static MPI_Group group_of(const int* ranks, int n) {
  MPI_Group world;
  MPI_Group g;
  MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  MT_CHECK(MPI_Group_incl(world, n, ranks, &g));
  MT_CHECK(MPI_Group_free(&world));
  return g;
}

/* The communicator's members sum their world ranks; checks size and the sum. */
static void check_comm(MPI_Comm c, int size, int sum, const char* what) {
  int n = 0;
  MT_CHECK(MPI_Comm_size(c, &n));
  MT_EXPECT(n == size, "%s: size %d, want %d", what, n, size);
  int s = 0;
  MT_CHECK(MPI_Allreduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, c));
  MT_EXPECT(s == sum, "%s: sum %d, want %d", what, s, sum);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  int* ranks = malloc(sizeof(int) * (size_t)mt_size);

  /* The evens, in reverse order; the odds do other things meanwhile. */
  int n = 0;
  int sum = 0;
  for (int r = mt_size - 1 - (mt_size - 1) % 2; r >= 0; r -= 2) {
    ranks[n++] = r;
    sum += r;
  }
  if (mt_rank % 2 == 0) {
    MPI_Group g = group_of(ranks, n);
    MPI_Comm c;
    MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c));
    check_comm(c, n, sum, "evens");
    int r = -1;
    MT_CHECK(MPI_Comm_rank(c, &r));
    MT_EXPECT(ranks[r] == mt_rank, "evens: rank %d is world %d, not %d", r, ranks[r], mt_rank);
    MT_CHECK(MPI_Comm_free(&c));
    MT_CHECK(MPI_Group_free(&g));
  }
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* Both parities at once, the same tag: disjoint groups do not mix. */
  {
    int m = 0;
    int s = 0;
    for (int r = mt_rank % 2; r < mt_size; r += 2) {
      ranks[m++] = r;
      s += r;
    }
    MPI_Group g = group_of(ranks, m);
    MPI_Comm c;
    MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 3, &c));
    check_comm(c, m, s, "parity");
    MT_CHECK(MPI_Comm_free(&c));
    MT_CHECK(MPI_Group_free(&g));
  }

  /* Overlapping pairs {r, r+1} for even r and {r, r+1} for odd r, tags 1 and 2: a middle rank
   * makes both, in the same order as its partners. */
  if (mt_size >= 3) {
    for (int tag = 1; tag <= 2; ++tag) {
      const int first = mt_rank % 2 == (tag - 1) ? mt_rank : mt_rank - 1;
      if (first < 0 || first + 1 >= mt_size) continue;
      const int pair[2] = {first, first + 1};
      MPI_Group g = group_of(pair, 2);
      MPI_Comm c;
      MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &c));
      check_comm(c, 2, 2 * first + 1, "pair");
      MT_CHECK(MPI_Comm_free(&c));
      MT_CHECK(MPI_Group_free(&g));
    }
  }

  /* Errors and a non-member. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm c = MPI_COMM_WORLD;
  expect("MPI_Comm_create_group with tag -1",
         MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -1, &c), MPI_ERR_TAG);
  MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 1, &c));
  MT_EXPECT(c == MPI_COMM_NULL, "a non-member gets MPI_COMM_NULL");
  /* Of a communicator made by it: a sub-group of a sub-group. */
  if (mt_size >= 2 && mt_rank < 2) {
    const int two[2] = {0, 1};
    MPI_Group g = group_of(two, 2);
    MPI_Comm pairc;
    MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 9, &pairc));
    MPI_Group pg;
    MPI_Group self;
    MT_CHECK(MPI_Comm_group(pairc, &pg));
    const int mine = mt_rank;
    MT_CHECK(MPI_Group_incl(pg, 1, &mine, &self));
    MPI_Comm solo;
    MT_CHECK(MPI_Comm_create_group(pairc, self, 0, &solo));
    check_comm(solo, 1, mt_rank, "solo");
    MT_CHECK(MPI_Comm_free(&solo));
    MT_CHECK(MPI_Group_free(&self));
    MT_CHECK(MPI_Group_free(&pg));
    MT_CHECK(MPI_Comm_free(&pairc));
    MT_CHECK(MPI_Group_free(&g));
  }
  free(ranks);
  return mt_finish();
}
