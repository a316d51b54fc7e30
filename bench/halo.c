/* SPDX-License-Identifier: BSD-3-Clause */
/* halo: a 2-D periodic halo exchange (the four faces of a block of a grid) over a Cartesian
 * communicator from MPI_Dims_create, done two ways: one MPI_Neighbor_alltoall, and the same
 * blocks with MPI_Irecv / MPI_Isend / MPI_Waitall to the MPI_Cart_shift neighbours. Per size
 * (the bytes of one face, x4 from --min-bytes, and --max-bytes), warm-up exchanges, then batches
 * of timed ones with a barrier before each; the time per exchange is averaged over the ranks
 * and the median batch is printed by rank 0, one row per size. Written against the standard
 * <mpi.h> only, so it builds with onesided and with Open MPI (mpicc.openmpi).
 *
 *   halo [--min-bytes 8] [--max-bytes 65536] [--iters 200] [--repeats 5] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* One exchange of 4 faces of n bytes: sbuf's face k goes to neighbour k, rbuf's face k comes
 * from it (the neighbourhood collectives' Cartesian order: per dimension -1, then +1; a face
 * sent towards -1 arrives as the receiver's face from +1, so tags tell the two apart when
 * both neighbours are one rank). */
static void exchange_p2p(MPI_Comm c, const int* nb, const char* sbuf, char* rbuf, int n) {
  MPI_Request req[8];
  for (int k = 0; k < 4; ++k) {
    MPI_Irecv(rbuf + (size_t)k * (size_t)n, n, MPI_BYTE, nb[k], k, c, &req[k]);
  }
  for (int k = 0; k < 4; ++k) {
    MPI_Isend(sbuf + (size_t)k * (size_t)n, n, MPI_BYTE, nb[k], k ^ 1, c, &req[4 + k]);
  }
  MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
}

/* Microseconds per exchange, averaged over the ranks, median of `repeats` batches. */
static double timed(MPI_Comm c, const int* nb, int neighbor, const char* sbuf, char* rbuf, int n,
                    int iters, int repeats) {
  double* batch = malloc(sizeof(double) * (size_t)repeats);
  for (int i = 0; i < iters / 10 + 1; ++i) {
    if (neighbor) {
      MPI_Neighbor_alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, c);
    } else {
      exchange_p2p(c, nb, sbuf, rbuf, n);
    }
  }
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(c);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      if (neighbor) {
        MPI_Neighbor_alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, c);
      } else {
        exchange_p2p(c, nb, sbuf, rbuf, n);
      }
    }
    const double mine = (MPI_Wtime() - t0) / iters * 1e6;
    MPI_Allreduce(&mine, &batch[r], 1, MPI_DOUBLE, MPI_SUM, c);
    int p = 1;
    MPI_Comm_size(c, &p);
    batch[r] /= p;
  }
  qsort(batch, (size_t)repeats, sizeof(double), cmp_double);
  const double med = batch[repeats / 2];
  free(batch);
  return med;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long min = 8, max = 65536;
  int iters = 200, repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--min-bytes") == 0) min = atol(argv[i + 1]);
    if (strcmp(argv[i], "--max-bytes") == 0) max = atol(argv[i + 1]);
    if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--repeats") == 0) repeats = atoi(argv[i + 1]);
  }
  int p = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(p, 2, dims);
  MPI_Comm c;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
  MPI_Comm_rank(c, &rank);
  int nb[4];
  MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]);
  char* sbuf = malloc(4 * (size_t)max);
  char* rbuf = malloc(4 * (size_t)max);
  memset(sbuf, rank, 4 * (size_t)max);
  if (rank == 0) {
    printf("# halo: %d ranks, %d x %d periodic grid, us per exchange of 4 faces\n", p, dims[0],
           dims[1]);
    printf("%10s %16s %16s\n", "bytes", "neighbor_a2a", "isend_irecv");
  }
  /* x4 steps, and --max-bytes itself. */
  for (long n = min; n <= max; n = (n < max && n * 4 > max) ? max : n * 4) {
    const double a = timed(c, nb, 1, sbuf, rbuf, (int)n, iters, repeats);
    const double b = timed(c, nb, 0, sbuf, rbuf, (int)n, iters, repeats);
    if (rank == 0) printf("%10ld %16.2f %16.2f\n", n, a, b);
  }
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&c);
  MPI_Finalize();
  return 0;
}
