/* SPDX-License-Identifier: BSD-3-Clause */
/* Under the default MPI_ERRORS_ARE_FATAL, rank 0's out-of-range put must end the whole job with
 * a non-zero status and a message naming MPI_ERR_RMA_RANGE, while the other ranks wait in the
 * closing fence. Registered through expect_fail.sh; a zero exit is the failure. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(4 * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 0) {
    const int values[2] = {1, 2};
    /* Elements 3 and 4 of a 4-element window: crosses the end. */
    MPI_Put(values, 2, MPI_INT, (rank + 1) % size, 3, 2, MPI_INT, win);
    fprintf(stderr, "rank 0: the out-of-range put returned: the fatal handler did not run\n");
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0; /* reaching this is the failure that expect_fail.sh reports */
}
