/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank 1 dies of SIGSEGV while every other rank is blocked waiting for it. The launcher must
 * notice the dead rank, stop the others and exit non-zero with one line naming rank 1, and leave
 * no process behind (expect_fail.sh checks all of this). Needs at least 2 ranks.
 *
 *   crash          rank 1 takes part in MPI_Win_allocate, then crashes while the others wait
 *                  in MPI_Win_fence (the closing fence can never complete);
 *   crash init     rank 1 crashes right after MPI_Init, so the others wait in the collective
 *                  MPI_Win_allocate instead. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int early = argc > 1 && strcmp(argv[1], "init") == 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1 && early) {
    raise(SIGSEGV);
    return 0;
  }
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  if (rank == 1) {
    /* Give the others time to enter the fence, so the crash has to interrupt a blocked wait. */
    const struct timespec delay = {0, 300 * 1000 * 1000};
    nanosleep(&delay, NULL);
    raise(SIGSEGV);
    return 0;
  }
  MPI_Win_fence(0, win);
  fprintf(stderr, "rank %d: the fence completed without rank 1\n", rank);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
