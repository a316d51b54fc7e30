/* SPDX-License-Identifier: BSD-3-Clause */
/* With more ranks on a node than CPUs, ranks crowded onto one CPU spread out while they wait in
 * MPI (ONESIDED_BALANCE): every rank of the node but the last is put on the first CPU it may
 * use, the last on the second, then each gets its whole CPU set back (what the scheduler does
 * by itself in about one launch of three, and keeps for the whole run); then the ranks run
 * barriers until no CPU holds more than its share (ranks / CPUs, rounded up): within 50 rounds
 * of 200.
 * With as many CPUs as ranks, or one, there is nothing to spread: it says so and passes. Under
 * another MPI (or ONESIDED_BALANCE=0) it may fail: the scheduler alone often leaves them. */
#define _GNU_SOURCE /* sched_getcpu, CPU_* */
#include <sched.h>

#include "mpitest.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MPI_Comm node;
  MT_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int n = 0;
  int me = 0;
  MT_CHECK(MPI_Comm_size(node, &n));
  MT_CHECK(MPI_Comm_rank(node, &me));
  cpu_set_t all;
  CPU_ZERO(&all);
  if (sched_getaffinity(0, sizeof all, &all) != 0) CPU_ZERO(&all);
  const int cpus = CPU_COUNT(&all);
  int lo = cpus; /* the fewest CPUs any rank of the node may use */
  MT_CHECK(MPI_Allreduce(&cpus, &lo, 1, MPI_INT, MPI_MIN, node));
  if (lo < 2 || n <= lo) {
    if (mt_rank == 0) printf("spread_ranks: %d ranks on %d CPUs: nothing to spread\n", n, lo);
    MT_CHECK(MPI_Comm_free(&node));
    return mt_finish();
  }
  int two[2] = {-1, -1};
  for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; ++c) {
    if (CPU_ISSET(c, &all)) two[k++] = c;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(two[me == n - 1 ? 1 : 0], &one);
  /* Where affinities cannot be set (a sandbox that refuses the call) there is nothing to test. */
  int set = sched_setaffinity(0, sizeof one, &one) == 0;
  if (set) MT_EXPECT(sched_setaffinity(0, sizeof all, &all) == 0, "sched_setaffinity back");
  int all_set = 0;
  MT_CHECK(MPI_Allreduce(&set, &all_set, 1, MPI_INT, MPI_MIN, node));
  if (!all_set) {
    if (mt_rank == 0) printf("spread_ranks: affinities cannot be set here: nothing to spread\n");
    MT_CHECK(MPI_Comm_free(&node));
    return mt_finish();
  }
  const int share = (n + lo - 1) / lo;
  int* where = malloc((size_t)n * sizeof(int));
  /* The scheduler alone took 63-295 rounds here (40-185 ms) to spread 4 ranks crowded 3 + 1;
   * a rank that sees the crowd while it waits moves within the first round (0.5-2 ms). */
  enum { kRounds = 50 };
  int state = 0; /* rank 0's verdict: 0 go on, 1 even, 2 too many rounds */
  int rounds = 0;
  int most = 0;
  while (state == 0) {
    for (int i = 0; i < 200; ++i) MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    ++rounds;
    const int cpu = sched_getcpu();
    MT_CHECK(MPI_Allgather(&cpu, 1, MPI_INT, where, 1, MPI_INT, node));
    most = 0;
    for (int i = 0; i < n; ++i) {
      int same = 0;
      for (int j = 0; j < n; ++j) same += where[j] == where[i];
      if (same > most) most = same;
    }
    if (me == 0) state = most <= share ? 1 : rounds >= kRounds ? 2 : 0;
    MT_CHECK(MPI_Bcast(&state, 1, MPI_INT, 0, node));
  }
  MT_EXPECT(state == 1, "after %d rounds of 200 barriers, %d of the %d ranks still on one CPU",
            rounds, most, n);
  if (mt_rank == 0 && state == 1) printf("spread_ranks: %d ranks on %d CPUs: spread\n", n, lo);
  free(where);
  MT_CHECK(MPI_Comm_free(&node));
  return mt_finish();
}
