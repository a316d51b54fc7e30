/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank program for the launcher tests: after MPI_Init and a window, rank 1 misbehaves as
 * argv[1] says while the others wait in MPI_Win_fence; "ok" runs to completion. "gate DIR"
 * (attack.py): once every rank is past MPI_Init, rank 0 creates DIR/ready and waits for DIR/go,
 * then the job runs to completion; each rank checks the values its peers put. */
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
  if (strcmp(mode, "gate") == 0 && argc > 2 && rank == 0) {
    char path[4096];
    snprintf(path, sizeof path, "%s/ready", argv[2]);
    FILE* f = fopen(path, "w");
    if (f != NULL) fclose(f);
    snprintf(path, sizeof path, "%s/go", argv[2]);
    while (access(path, F_OK) != 0) usleep(20000);
  }
  int size, right, bad = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  right = (rank + 1) % size;
  *buf = -1;
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (*buf != (rank + size - 1) % size) bad = 1;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  if (rank == 0) printf("modes: %s %s\n", mode, bad == 0 ? "done" : "WRONG VALUES");
  return bad == 0 ? 0 : 1;
}
