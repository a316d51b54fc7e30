/* SPDX-License-Identifier: BSD-3-Clause */
/* hello_rma: the smallest one-sided program. Read this one first.
 *
 * Every rank exposes one int in a window and writes its rank number into the window of its
 * right-hand neighbour (a ring). Nobody calls a receive: the target does nothing but take part
 * in the fences.
 *
 *   build/bin/mpicc examples/hello_rma.c -o hello_rma
 *   build/bin/onesided-run -n 4 ./hello_rma
 *
 * Prints, from rank 0:  hello_rma: 4 ranks, every rank got its left neighbour's number
 * and exits 0 (1 if any rank got a wrong value). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* MPI_Win_allocate gives each rank sizeof(int) bytes of memory that the other ranks may
   * access. disp_unit = sizeof(int) means a target displacement counts ints, not bytes. */
  int* mine = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine,
                   &win);
  *mine = -1; /* plain local store: allowed because no epoch has started yet */

  /* A fence starts an access epoch on every rank. MPI_MODE_NOPRECEDE says no RMA came before. */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);

  /* Write my rank into element 0 of my right neighbour's window. The put may not have happened
   * yet when MPI_Put returns, and `rank` must not change until the next fence. */
  const int right = (rank + 1) % size;
  MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win);

  /* The closing fence completes every put, at the origin and at the target. MPI_MODE_NOSUCCEED
   * says no epoch follows. Only now may each rank read its window. */
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  const int left = (rank + size - 1) % size;
  const int ok = *mine == left;
  if (!ok) fprintf(stderr, "hello_rma: rank %d got %d, expected %d\n", rank, *mine, left);
  if (rank == 0 && ok) {
    printf("hello_rma: %d ranks, every rank got its left neighbour's number\n", size);
  }

  MPI_Win_free(&win); /* also frees the memory from MPI_Win_allocate */
  MPI_Finalize();
  return ok ? 0 : 1; /* each rank reports its own result; the launcher fails if any rank fails */
}
