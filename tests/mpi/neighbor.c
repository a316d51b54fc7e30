/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbourhood collectives beyond the block order (topo_cart.c, topo_graph.c check that): a
 * 2-D periodic halo exchange of every size from 8 B to 1 MiB (small chunks, the ring, and the
 * rendezvous paths), halos taken straight from a grid with vector datatypes through
 * MPI_Neighbor_alltoallw, and misuse: MPI_IN_PLACE (not allowed here), negative counts, a
 * receive shorter than the send, after which the communicator still works. Prints nothing but
 * failures and one line per rank. */
#include "mpiexpect.h"

static void check_class(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  if (cls != want) {
    printf("rank %d: FAIL %s: expected %s, got %s (code %d)\n", mt_rank, what, class_name(want),
           class_name(cls), rc);
    ++mt_failures;
  }
}

static unsigned char byte_of(int rank, int block, size_t i) {
  return (unsigned char)(rank * 31 + block * 7 + (int)(i % 251));
}

/* Periodic 2-D grid: every block of `bytes` bytes; the block from the -1 neighbour of dim d is
 * what that neighbour sent towards +1. */
static void halo_sizes(MPI_Comm c) {
  int nb[4];
  MT_CHECK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
  MT_CHECK(MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]));
  for (size_t bytes = 8; bytes <= ((size_t)1 << 20); bytes *= 4) {
    unsigned char* s = malloc(4 * bytes);
    unsigned char* r = malloc(4 * bytes);
    if (s == NULL || r == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int b = 0; b < 4; ++b) {
      for (size_t i = 0; i < bytes; ++i) s[(size_t)b * bytes + i] = byte_of(mt_rank, b, i);
    }
    for (int rep = 0; rep < 3; ++rep) {
      memset(r, 0, 4 * bytes);
      MT_CHECK(MPI_Neighbor_alltoall(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, c));
      for (int k = 0; k < 4; ++k) {
        size_t bad = bytes;
        for (size_t i = 0; i < bytes && bad == bytes; ++i) {
          if (r[(size_t)k * bytes + i] != byte_of(nb[k], k ^ 1, i)) bad = i;
        }
        MT_EXPECT(bad == bytes, "halo %zu bytes, block %d: byte %zu differs", bytes, k, bad);
      }
    }
    free(s);
    free(r);
  }
}

/* A grid of (n + 2) x (n + 2) doubles per rank, halos of width 1 exchanged straight from it
 * with MPI_Neighbor_alltoallw: rows are contiguous, columns a vector type. */
static void halo_types(MPI_Comm c) {
  enum { n = 6, w = n + 2 };
  double g[w][w];
  for (int i = 0; i < w; ++i) {
    for (int j = 0; j < w; ++j) {
      const int inner = i >= 1 && i <= n && j >= 1 && j <= n;
      g[i][j] = inner ? mt_rank * 1000 + i * 10 + j : -1.0;
    }
  }
  MPI_Datatype row, col;
  MT_CHECK(MPI_Type_contiguous(n, MPI_DOUBLE, &row));
  MT_CHECK(MPI_Type_vector(n, 1, w, MPI_DOUBLE, &col));
  MT_CHECK(MPI_Type_commit(&row));
  MT_CHECK(MPI_Type_commit(&col));
  /* Dim 0 moves rows (up, down), dim 1 columns (left, right). */
#define AT(i, j) ((MPI_Aint)(((i)*w + (j)) * (int)sizeof(double)))
  const int counts[4] = {1, 1, 1, 1};
  const MPI_Datatype types[4] = {row, row, col, col};
  const MPI_Aint sd[4] = {AT(1, 1), AT(n, 1), AT(1, 1), AT(1, n)};
  const MPI_Aint rd[4] = {AT(0, 1), AT(n + 1, 1), AT(1, 0), AT(1, n + 1)};
  MT_CHECK(MPI_Neighbor_alltoallw(g, counts, sd, types, g, counts, rd, types, c));
#undef AT
  int nb[4];
  MT_CHECK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
  MT_CHECK(MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]));
  for (int j = 1; j <= n; ++j) {
    /* Top halo: the row the upper neighbour sent down (its last inner row); and so on. */
    MT_EXPECT(g[0][j] == nb[0] * 1000 + n * 10 + j, "top halo %d: %g", j, g[0][j]);
    MT_EXPECT(g[n + 1][j] == nb[1] * 1000 + 10 + j, "bottom halo %d: %g", j, g[n + 1][j]);
    MT_EXPECT(g[j][0] == nb[2] * 1000 + j * 10 + n, "left halo %d: %g", j, g[j][0]);
    MT_EXPECT(g[j][n + 1] == nb[3] * 1000 + j * 10 + 1, "right halo %d: %g", j, g[j][n + 1]);
  }
  MT_EXPECT(g[0][0] == -1.0 && g[w - 1][w - 1] == -1.0, "corners written");
  MT_CHECK(MPI_Type_free(&row));
  MT_CHECK(MPI_Type_free(&col));
}

static void misuse(MPI_Comm c) {
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int s[4] = {1, 2, 3, 4}, r[4];
#ifdef ONESIDED_MPI /* classes Open MPI 4.1 does not give */
  check_class("Neighbor_alltoall sendbuf MPI_IN_PLACE",
              MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, c), MPI_ERR_BUFFER);
  check_class("Neighbor_allgather recvbuf MPI_IN_PLACE",
              MPI_Neighbor_allgather(s, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, c), MPI_ERR_BUFFER);
  check_class("Neighbor_alltoall sendcount -1",
              MPI_Neighbor_alltoall(s, -1, MPI_INT, r, 1, MPI_INT, c), MPI_ERR_COUNT);
  const int counts[4] = {1, 1, -1, 1}, displs[4] = {0, 1, 2, 3};
  check_class("Neighbor_alltoallv recvcounts[2] -1",
              MPI_Neighbor_alltoallv(s, counts + 1, displs, MPI_INT, r, counts, displs, MPI_INT, c),
              MPI_ERR_COUNT);
  check_class("Neighbor_alltoall MPI_DATATYPE_NULL",
              MPI_Neighbor_alltoall(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, c), MPI_ERR_TYPE);
  /* Every rank sends 2 ints per block and receives 1: each receiver's blocks fail. */
  int big[8] = {0};
  check_class("Neighbor_alltoall receive shorter than the send",
              MPI_Neighbor_alltoall(big, 2, MPI_INT, r, 1, MPI_INT, c), MPI_ERR_TRUNCATE);
#endif
  /* The communicator still works. */
  MT_CHECK(MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c));
  MT_EXPECT(r[0] == 2 && r[1] == 1 && r[2] == 4 && r[3] == 3, "after misuse: %d %d %d %d", r[0],
            r[1], r[2], r[3]);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  int dims[2] = {0, 0};
  MT_CHECK(MPI_Dims_create(mt_size, 2, dims));
  MPI_Comm c;
  MT_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){1, 1}, 0, &c));
  halo_sizes(c);
  halo_types(c);
  misuse(c);
  MT_CHECK(MPI_Comm_free(&c));
  printf("rank %d: neighbor %s\n", mt_rank, mt_failures == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return mt_failures == 0 ? 0 : 1;
}
