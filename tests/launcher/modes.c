/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank program for the launcher tests: after MPI_Init and a window, rank 1 misbehaves as
 * argv[1] says while the others wait in MPI_Win_fence; "ok" runs to completion. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank, *buf;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &win);
  const char* mode = argc > 1 ? argv[1] : "ok";
  if (rank == 1) {
    if (strcmp(mode, "exit3") == 0) exit(3);
    if (strcmp(mode, "nofinalize") == 0) exit(0);
    if (strcmp(mode, "sigabrt") == 0) raise(SIGABRT);
    if (strcmp(mode, "sigkill") == 0) raise(SIGKILL);
    if (strcmp(mode, "hang") == 0) pause();
  }
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  if (rank == 0) printf("modes: %s done\n", mode);
  return 0;
}
