/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 1 dies of SIGSEGV right after MPI_Init while every other rank waits in MPI_Win_fence.
 * Rank 1 never creates the window, so the others block in MPI_Win_allocate or the fence: the
 * launcher must notice the dead rank, stop the others and exit non-zero (expect_fail.sh).
 * Needs at least 2 ranks. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    raise(SIGSEGV);
    return 0;
  }
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  MPI_Win_fence(0, win);
  fprintf(stderr, "rank %d: the fence completed without rank 1\n", rank);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
