/* SPDX-License-Identifier: BSD-3-Clause */
/* win_memory: what a window costs in memory on each rank as the number of ranks grows. Every
 * rank creates --windows windows of --bytes bytes each (MPI_Win_allocate), one after another,
 * and runs one fence epoch on each in which it puts one int to its right neighbour (so the
 * fence's barrier and one target are touched, as in a halo code). It reads its heap in use
 * (glibc mallinfo2: small and mmap'd blocks) and its resident set (/proc/self/statm) before the
 * first window and after the last, while all are alive; rank 0 prints the mean and largest
 * growth per window over the ranks as one JSON line. Written against <mpi.h> only, so the same
 * source builds with Open MPI (mpicc.openmpi).
 *
 *   win_memory [--windows 200] [--bytes 4096] [--label NAME]
 *
 * The heap figure is the metadata a runtime keeps per window; the resident figure adds the
 * window memory itself and anything mapped (shared-memory segments, registrations). */
#define _GNU_SOURCE
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double heap_bytes(void) {
  const struct mallinfo2 m = mallinfo2();
  return (double)m.uordblks + (double)m.hblkhd;
}

static double resident_bytes(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
  fclose(f);
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

int main(int argc, char** argv) {
  int windows = 200;
  long bytes = 4096;
  const char* label = "mpi";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--windows") && i + 1 < argc) {
      windows = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
      bytes = atol(argv[++i]);
    } else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
      label = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--windows N] [--bytes N] [--label NAME]\n", argv[0]);
      return 2;
    }
  }
  if (windows < 1 || bytes < (long)sizeof(int)) {
    fprintf(stderr, "win_memory: --windows must be >= 1 and --bytes >= %zu\n", sizeof(int));
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Win* wins = malloc((size_t)windows * sizeof(MPI_Win));
  if (wins == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const double heap0 = heap_bytes();
  const double res0 = resident_bytes();
  const int right = (rank + 1) % p;
  for (int w = 0; w < windows; ++w) {
    int* base = NULL;
    MPI_Win_allocate((MPI_Aint)bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &wins[w]);
    MPI_Win_fence(0, wins[w]);
    MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, wins[w]);
    MPI_Win_fence(0, wins[w]);
    if (base[0] != (rank + p - 1) % p) {
      fprintf(stderr, "win_memory: rank %d window %d holds %d, expected %d\n", rank, w, base[0],
              (rank + p - 1) % p);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  /* Per window, on this rank: heap and resident growth. */
  const double mine[2] = {(heap_bytes() - heap0) / windows, (resident_bytes() - res0) / windows};
  double sum[2], max[2];
  MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  for (int w = 0; w < windows; ++w) MPI_Win_free(&wins[w]);
  free(wins);
  if (rank == 0) {
    printf(
        "{\"bench\":\"win_memory\",\"system\":\"%s\",\"ranks\":%d,\"windows\":%d,\"bytes\":%ld,"
        "\"heap_per_window\":%.0f,\"heap_per_window_max\":%.0f,\"resident_per_window\":%.0f,"
        "\"resident_per_window_max\":%.0f}\n",
        label, p, windows, bytes, sum[0] / p, max[0], sum[1] / p, max[1]);
  }
  MPI_Finalize();
  return 0;
}
