/* SPDX-License-Identifier: BSD-3-Clause */
/* gather_get: collecting one result per rank on rank 0 with MPI_Get. Read it after mapvals.c.
 *
 * There is no MPI_Reduce or MPI_Gather here, only one-sided calls: every rank computes a partial
 * sum and leaves it in its own window; after a fence, rank 0 reads every rank's value with one
 * MPI_Get each and adds them up. The other ranks do nothing but take part in the fences.
 *
 *   build/bin/onesided-run -n 4 ./gather_get
 *
 * Each rank sums its share of 1 .. kN (rank r takes every p-th number starting at r + 1).
 * Prints, from rank 0:  gather_get: 4 ranks, sum of 1..1000 = 500500 (correct)
 * and exits 0 (1 on a wrong total). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kN = 1000 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  /* One long per rank, exposed to the others. disp_unit 1: displacements count bytes here, and
   * the only displacement used is 0. */
  long* partial = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof(long), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &partial, &win);
  *partial = 0;
  for (long v = rank + 1; v <= kN; v += p) *partial += v; /* local stores, before any epoch */

  /* NOPRECEDE: no RMA before this fence. NOPUT: nobody will put into the windows in the epoch
   * that follows, only read them. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT, win);
  long* all = NULL;
  if (rank == 0) {
    all = malloc((size_t)p * sizeof *all);
    if (all == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int r = 0; r < p; ++r) MPI_Get(&all[r], 1, MPI_LONG, r, 0, 1, MPI_LONG, win);
  }
  /* The gets are complete only after this fence. NOSTORE: no rank stored to its window since
   * the previous fence. NOSUCCEED: no epoch follows. */
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win);

  int ok = 1;
  if (rank == 0) {
    long total = 0;
    for (int r = 0; r < p; ++r) total += all[r];
    const long want = (long)kN * (kN + 1) / 2;
    ok = total == want;
    printf("gather_get: %d ranks, sum of 1..%d = %ld (%s)\n", p, kN, total,
           ok ? "correct" : "WRONG");
    if (!ok) fprintf(stderr, "gather_get: expected %ld\n", want);
    free(all);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return ok ? 0 : 1;
}
