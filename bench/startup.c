/* SPDX-License-Identifier: BSD-3-Clause */
/* Start-up time: MPI_Init, then MPI_Win_allocate + the first MPI_Win_fence, per rank, and the
 * slowest rank's times printed by rank 0 as one JSON line. Uses only RMA (the times travel by
 * MPI_Put), so the same source builds with onesided and with Open MPI (mpicc.openmpi).
 *   startup [--launcher NAME]   NAME only labels the output (srun, mpirun, onesided-run) */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
  const double t0 = now_us();
  MPI_Init(&argc, &argv);
  const double t1 = now_us();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* times = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)(2 * (size_t)size * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &times, &win);
  MPI_Win_fence(0, win);
  const double t2 = now_us();

  double mine[2] = {t1 - t0, t2 - t0};
  MPI_Put(mine, 2, MPI_DOUBLE, 0, 2 * rank, 2, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  if (rank == 0) {
    const char* launcher = "unknown";
    for (int i = 1; i + 1 < argc; ++i) {
      if (strcmp(argv[i], "--launcher") == 0) launcher = argv[i + 1];
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    double init_max = 0, total_max = 0;
    for (int r = 0; r < size; ++r) {
      if (times[2 * r] > init_max) init_max = times[2 * r];
      if (times[2 * r + 1] > total_max) total_max = times[2 * r + 1];
    }
    printf(
        "{\"bench\":\"startup\",\"mpi\":\"%s\",\"launcher\":\"%s\",\"ranks\":%d,"
        "\"init_us\":%.0f,\"init_win_fence_us\":%.0f}\n",
        strncmp(lib, "onesided", 8) == 0 ? "onesided" : "openmpi", launcher, size, init_max,
        total_max);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
