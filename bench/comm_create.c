// SPDX-License-Identifier: BSD-3-Clause
// Communicator creation: the time per MPI_Comm_dup + MPI_Comm_free, per dup + a first allreduce
// + free, and per MPI_Comm_split + allreduce + free, the slowest rank's average over --iters
// calls. Built against onesided and Open MPI's mpicc from this source, so both run side by side:
//   onesided-run -n 2 build/bench/comm_create 30
//   mpirun.openmpi -np 2 build/bench/openmpi/comm_create 30
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  int p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int iters = argc > 1 ? atoi(argv[1]) : 50;
  if (iters <= 0) {
    if (me == 0) fprintf(stderr, "usage: comm_create [ITERS > 0]\n");
    MPI_Finalize();
    return 2;
  }
  static const char* const names[] = {"dup+free", "dup+allreduce+free", "split+allreduce+free"};
  int bad = 0;
  for (int mode = 0; mode < 3; ++mode) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Comm c;
      if (mode == 2) {
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c);
      } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
      }
      if (mode >= 1) {
        int n = 0;
        int one = 1;
        MPI_Comm_size(c, &n);
        int sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        if (sum != n) bad = 1;  // the new communicator must work, not only exist
      }
      MPI_Comm_free(&c);
    }
    const double us = (MPI_Wtime() - t0) / iters * 1e6;
    double slowest = 0;
    MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) {
      printf(
          "{\"bench\":\"comm_create\",\"op\":\"%s\",\"ranks\":%d,\"iters\":%d,\"avg_us\":%.1f}\n",
          names[mode], p, iters, slowest);
    }
  }
  int anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyBad != 0 && me == 0) fprintf(stderr, "comm_create: an allreduce gave a wrong sum\n");
  MPI_Finalize();
  return anyBad != 0 ? 1 : 0;
}
