/* SPDX-License-Identifier: BSD-3-Clause */
/* mapvals: MPI-2.2 §11.3, Example 11.2, in C. Read it after hello_rma.c.
 *
 * An array B of m floats per rank is spread over all ranks (rank r holds global elements
 * r*m .. r*m+m-1). Each rank wants A(i) = B(map(i)) for a list of global indices map(i).
 * With one-sided communication the owner of B does nothing: each rank simply reads the
 * elements it needs with MPI_Get, one call per element, between two fences.
 *
 *   build/bin/onesided-run -n 4 ./mapvals
 *
 * Here B(g) = g and map reverses the global array, so rank r should get
 * A(i) = m*p - 1 - (r*m + i); every rank checks that. Prints, from rank 0:
 *   mapvals: 4 ranks x 8 elements, A(i) = B(map(i)) correct on every rank
 * and exits 0 (1 on a wrong value). */
#include <mpi.h>
#include <stdio.h>

enum { kM = 8 }; /* elements of B (and of A) per rank */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  float a[kM];
  float b[kM];
  int map[kM];
  for (int k = 0; k < kM; ++k) b[k] = (float)(rank * kM + k); /* my part of B */
  for (int i = 0; i < kM; ++i) map[i] = kM * p - 1 - (rank * kM + i);

  /* Expose B. As in the Fortran original, disp_unit is the extent of a float, so the target
   * displacement k below is an element index, not a byte offset. */
  MPI_Aint lowerbound = 0;
  MPI_Aint sizeofreal = 0;
  MPI_Type_get_extent(MPI_FLOAT, &lowerbound, &sizeofreal);
  MPI_Win win;
  MPI_Win_create(b, kM * sizeofreal, (int)sizeofreal, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int i = 0; i < kM; ++i) {
    const int j = map[i] / kM; /* the rank that owns B(map(i)) */
    const int k = map[i] % kM; /* its position in that rank's part */
    MPI_Get(&a[i], 1, MPI_FLOAT, j, k, 1, MPI_FLOAT, win);
  }
  /* The gets are complete only after this fence: before it, A must not be read. */
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

  int ok = 1;
  for (int i = 0; i < kM; ++i) {
    if (a[i] != (float)map[i]) {
      fprintf(stderr, "mapvals: rank %d: A(%d) = %g, expected %d\n", rank, i, (double)a[i], map[i]);
      ok = 0;
    }
  }
  if (rank == 0 && ok) {
    printf("mapvals: %d ranks x %d elements, A(i) = B(map(i)) correct on every rank\n", p, kM);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return ok ? 0 : 1;
}
