/* SPDX-License-Identifier: BSD-3-Clause */
/* Erroneous programs that hang (issue 63), for the hang report (hang.sh): argv[1] says which.
 *   fence_barrier  rank 0 in MPI_Win_fence, the others in MPI_Barrier
 *   pscw           3+ ranks: rank 0 starts an access epoch to ranks 1 and 2; rank 1 posts to
 *                  rank 0 and waits; rank 2 posts to rank 1 (not 0) and waits
 *   recv           rank 0 receives (tag 7) from rank 1, which never sends (it is in a barrier)
 *   compute        rank 1 computes (sleeps) forever, rank 0 waits in MPI_Barrier
 *   ok             fences and a barrier, then the job ends normally */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank, size, *buf;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
  const char* mode = argc > 1 ? argv[1] : "ok";
  if (strcmp(mode, "fence_barrier") == 0) {
    if (rank == 0) {
      MPI_Win_fence(0, win);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "pscw") == 0 && size >= 3) {
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (rank == 0) {
      int targets[2] = {1, 2};
      MPI_Group_incl(world, 2, targets, &g);
      MPI_Win_start(g, 0, win);
      MPI_Win_complete(win);
    } else if (rank <= 2) {
      int origin = rank == 1 ? 0 : 1; /* rank 2's group is wrong */
      MPI_Group_incl(world, 1, &origin, &g);
      MPI_Win_post(g, 0, win);
      MPI_Win_wait(win);
    }
  } else if (strcmp(mode, "recv") == 0) {
    if (rank == 0) {
      int x;
      MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "compute") == 0) {
    if (rank == 1) {
      for (;;) sleep(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    for (int i = 0; i < 10; ++i) MPI_Win_fence(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  if (rank == 0) printf("done\n");
  return 0;
}
