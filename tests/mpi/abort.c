/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7) while every other rank waits in MPI_Win_fence for
 * it. The launcher must end the job promptly with a non-zero status and leave no process behind
 * (expect_fail.sh checks all three). Needs at least 2 ranks. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  if (rank == 1) {
    /* Give the others time to enter the fence, so the abort has to interrupt a blocked wait. */
    const struct timespec delay = {0, 300 * 1000 * 1000};
    nanosleep(&delay, NULL);
    MPI_Abort(MPI_COMM_WORLD, 7);
    fprintf(stderr, "rank 1: MPI_A%s returned\n", "bort"); /* not matching the expected text */
    return 0;
  }
  MPI_Win_fence(0, win);
  fprintf(stderr, "rank %d: the fence completed without rank 1\n", rank);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
