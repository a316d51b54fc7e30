// SPDX-License-Identifier: BSD-3-Clause
// Window creation: the time per MPI_Win_allocate + a fence epoch with one put to the right
// neighbour + MPI_Win_free, and the same with MPI_Win_create over a malloc'd buffer, the slowest
// rank's average over --iters calls (ARMCI-MPI makes a window per allocation). The put's value is
// checked. Built against onesided and Open MPI's mpicc from this source, so both run side by
// side:
//   onesided-run -n 2 build/bench/win_create 300 4096
//   mpirun.openmpi -np 2 build/bench/openmpi/win_create 300 4096
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int iters = argc > 1 ? atoi(argv[1]) : 100;
  const long bytes = argc > 2 ? atol(argv[2]) : 4096;
  if (iters <= 0 || bytes < (long)sizeof(int)) {
    if (me == 0) fprintf(stderr, "usage: win_create [ITERS > 0] [BYTES >= 4]\n");
    MPI_Finalize();
    return 2;
  }
  static const char* const names[] = {"allocate+fence+put+free", "create+fence+put+free"};
  int bad = 0;
  for (int mode = 0; mode < 2; ++mode) {
    char* mine = mode == 1 ? malloc((size_t)bytes) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Win win;
      int* base = NULL;
      if (mode == 0) {
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
      } else {
        base = (int*)mine;
        MPI_Win_create(base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
      }
      base[0] = -1;
      const int v = me * 1000 + i;
      MPI_Win_fence(0, win);
      MPI_Put(&v, 1, MPI_INT, (me + 1) % p, 0, 1, MPI_INT, win);
      MPI_Win_fence(0, win);
      if (base[0] != ((me + p - 1) % p) * 1000 + i) bad = 1;
      MPI_Win_free(&win);
    }
    const double us = (MPI_Wtime() - t0) / iters * 1e6;
    free(mine);
    double slowest = 0;
    MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) {
      printf(
          "{\"bench\":\"win_create\",\"op\":\"%s\",\"ranks\":%d,\"bytes\":%ld,\"iters\":%d,"
          "\"avg_us\":%.1f}\n",
          names[mode], p, bytes, iters, slowest);
    }
  }
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyBad != 0 && me == 0) fprintf(stderr, "win_create: a put did not land\n");
  MPI_Finalize();
  return anyBad != 0 ? 1 : 0;
}
