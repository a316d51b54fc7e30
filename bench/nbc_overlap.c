/* SPDX-License-Identifier: BSD-3-Clause */
/* How much of a nonblocking collective hides behind computation: MPI_Iallreduce of --bytes
 * (doubles, MPI_SUM; default 1 MiB), then a compute loop as long as the blocking MPI_Allreduce
 * takes, then MPI_Wait. Two ways of computing: without any MPI call ("pure"), and in 16 slices
 * with MPI_Test between them ("test"), which is what a library that progresses only inside MPI
 * calls needs. Prints one JSON line per row, medians over --iters:
 *   blocking_us (MPI_Allreduce alone), compute_us (the loop alone), pure_us / test_us (the
 *   overlapped iteration), pure_overlap / test_overlap (the fraction hidden:
 *   (blocking + compute - overlapped) / min(blocking, compute), 1 = perfect, 0 = none).
 * Built against mpi.h only: the same source runs on Open MPI and MPICH. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a;
  const double y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return v[n / 2];
}

/* `units` units of work on a private array (kept out of the optimizer's reach by `sink`). */
static volatile double sink;
static double work[4096];
static void compute(long units) {
  double acc = 0;
  for (long u = 0; u < units; ++u) {
    for (int i = 0; i < 4096; ++i) acc += work[i] * 1.0000001;
  }
  sink = acc;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long bytes = 1 << 20;
  int iters = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--bytes") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = (int)(bytes / (long)sizeof(double));
  double* in = malloc(sizeof(double) * (size_t)n);
  double* out = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) in[i] = i;
  for (int i = 0; i < 4096; ++i) work[i] = i;
  double* t = malloc(sizeof(double) * (size_t)iters);

  /* The blocking time (after warm-up). */
  for (int i = 0; i < 5; ++i) MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t[i] = MPI_Wtime() - t0;
  }
  double blocking = median(t, iters);
  MPI_Bcast(&blocking, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* one length of work for all */

  /* Units of work that take as long as the blocking call. */
  long units = 1;
  for (;;) {
    const double t0 = MPI_Wtime();
    compute(units);
    if (MPI_Wtime() - t0 >= blocking || units > (1L << 30)) break;
    units *= 2;
  }
  const double t0c = MPI_Wtime();
  compute(units);
  const double per = (MPI_Wtime() - t0c) / (double)units;
  units = (long)(blocking / per) + 1;
  MPI_Bcast(&units, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    const double t0 = MPI_Wtime();
    compute(units);
    t[i] = MPI_Wtime() - t0;
  }
  const double comp = median(t, iters);

  double overlapped[2];
  for (int mode = 0; mode < 2; ++mode) {
    for (int i = 0; i < iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Request req;
      MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
      if (mode == 0) {
        compute(units);
      } else {
        const long slice = units / 16 > 0 ? units / 16 : 1;
        for (long done = 0; done < units; done += slice) {
          compute(slice);
          int flag = 0;
          MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
      }
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      t[i] = MPI_Wtime() - t0;
    }
    overlapped[mode] = median(t, iters);
  }
  if (rank == 0) {
    const double lo = blocking < comp ? blocking : comp;
    double ov[2];
    for (int m = 0; m < 2; ++m) {
      ov[m] = (blocking + comp - overlapped[m]) / lo;
      if (ov[m] < 0) ov[m] = 0;
    }
    printf(
        "{\"bench\":\"nbc_overlap\",\"bytes\":%ld,\"blocking_us\":%.1f,\"compute_us\":%.1f,"
        "\"pure_us\":%.1f,\"test_us\":%.1f,\"pure_overlap\":%.2f,\"test_overlap\":%.2f}\n",
        bytes, blocking * 1e6, comp * 1e6, overlapped[0] * 1e6, overlapped[1] * 1e6, ov[0], ov[1]);
  }
  free(in);
  free(out);
  free(t);
  MPI_Finalize();
  return 0;
}
