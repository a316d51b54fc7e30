/* SPDX-License-Identifier: BSD-3-Clause */
/* collectives: the same sum as gather_get.c, with collectives instead of a window. Read it after
 * gather_get.c.
 *
 * Rank 0 hands out the numbers 1 .. kN with MPI_Scatterv (rank r gets a block of its own size,
 * the last one the remainder), every rank adds up its block, MPI_Gather brings the partial sums
 * to rank 0 (MPI-2.2 Example 5.2's pattern), and MPI_Allreduce gives every rank the total too.
 * Underneath, each collective writes into the other ranks' registered scratch memory with
 * one-sided puts and a counter; nothing waits for a matching send or receive.
 *
 *   build/bin/onesided-run -n 4 ./collectives
 *
 * Prints, from rank 0:  collectives: 4 ranks, sum of 1..1000 = 500500 (gather), 500500 (allreduce)
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

  /* Block sizes and where each block starts: only the root's values matter to MPI_Scatterv, but
   * every rank computes its own count the same way. */
  int* counts = malloc((size_t)p * sizeof(int));
  int* displs = malloc((size_t)p * sizeof(int));
  for (int r = 0; r < p; ++r) {
    counts[r] = kN / p + (r == p - 1 ? kN % p : 0);
    displs[r] = r * (kN / p);
  }
  int* numbers = NULL;
  if (rank == 0) {
    numbers = malloc(kN * sizeof(int));
    for (int i = 0; i < kN; ++i) numbers[i] = i + 1;
  }
  int* mine = malloc((size_t)counts[rank] * sizeof(int) + 1);
  MPI_Scatterv(numbers, counts, displs, MPI_INT, mine, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);

  long partial = 0;
  for (int i = 0; i < counts[rank]; ++i) partial += mine[i];

  long* partials = rank == 0 ? malloc((size_t)p * sizeof(long)) : NULL;
  MPI_Gather(&partial, 1, MPI_LONG, partials, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  long total = 0;
  MPI_Allreduce(&partial, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  const long want = (long)kN * (kN + 1) / 2;
  int ok = total == want;
  if (rank == 0) {
    long gathered = 0;
    for (int r = 0; r < p; ++r) gathered += partials[r];
    ok = ok && gathered == want;
    printf("collectives: %d ranks, sum of 1..%d = %ld (gather), %ld (allreduce)%s\n", p, kN,
           gathered, total, ok ? "" : " WRONG");
  }
  free(numbers);
  free(mine);
  free(partials);
  free(counts);
  free(displs);
  MPI_Finalize();
  return ok ? 0 : 1;
}
