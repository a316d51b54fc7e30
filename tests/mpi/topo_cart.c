/* SPDX-License-Identifier: BSD-3-Clause */
/* Cartesian topologies (MPI-3.1 §7.5): MPI_Dims_create's rules, grids of every shape the rank
 * count allows (periodic and not, dimensions of size 1 and 2 whose two neighbours are one rank),
 * the queries, shifts, sub-grids, and the neighbourhood collectives' block order on them: per
 * dimension the -1 then the +1 neighbour, a block sent towards -1 landing in the receiver's
 * block from +1, MPI_PROC_NULL neighbours' blocks untouched. Prints nothing but failures and one
 * line per rank, so the output is the same under any correct MPI. */
#include "mpiexpect.h"

/* rc must be of class want; only a failure prints (its text differs from one MPI to another). */
static void check_class(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  if (cls != want) {
    printf("rank %d: FAIL %s: expected %s, got %s (code %d)\n", mt_rank, what, class_name(want),
           class_name(cls), rc);
    ++mt_failures;
  }
}

#define MAXD 4
#define UNTOUCHED (-7)

static void check_dims(int nnodes, int ndims, const int* in, const int* want) {
  int d[MAXD];
  memcpy(d, in, sizeof(int) * (size_t)ndims);
  MT_CHECK(MPI_Dims_create(nnodes, ndims, d));
  for (int i = 0; i < ndims; ++i) {
    MT_EXPECT(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, want %d", nnodes, ndims, i,
              d[i], want[i]);
  }
}

static void dims_create(void) {
  check_dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
  check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
  check_dims(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
  check_dims(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
  check_dims(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
  check_dims(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
  check_dims(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
  check_dims(36, 2, (int[]){0, 0}, (int[]){6, 6});
  check_dims(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
  check_dims(6, 2, (int[]){2, 3}, (int[]){2, 3});
  check_dims(8, 2, (int[]){0, 2}, (int[]){4, 2});
  /* Every count from 1 to 100 in 1 to 4 dimensions: the product, and non-increasing order. */
  for (int n = 1; n <= 100; ++n) {
    for (int k = 1; k <= MAXD; ++k) {
      int d[MAXD] = {0, 0, 0, 0};
      MT_CHECK(MPI_Dims_create(n, k, d));
      int prod = 1;
      for (int i = 0; i < k; ++i) {
        prod *= d[i];
        if (i > 0) MT_EXPECT(d[i] <= d[i - 1], "Dims_create(%d, %d) increases at %d", n, k, i);
      }
      MT_EXPECT(prod == n, "Dims_create(%d, %d): product %d", n, k, prod);
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int d[3] = {0, 3, 0};
  check_class("Dims_create 7 over (0,3,0)", MPI_Dims_create(7, 3, d), MPI_ERR_DIMS);
  int e[2] = {4, 0};
  check_class("Dims_create 6 over (4,0)", MPI_Dims_create(6, 2, e), MPI_ERR_DIMS);
  int f[2] = {-2, 0};
  check_class("Dims_create negative entry", MPI_Dims_create(4, 2, f), MPI_ERR_DIMS);
  check_class("Dims_create ndims -1", MPI_Dims_create(4, -1, f), MPI_ERR_DIMS);
#ifdef ONESIDED_MPI /* Open MPI 4.1 accepts a full dims whose product is not nnodes */
  int g[2] = {2, 2};
  check_class("Dims_create 6 over (2,2)", MPI_Dims_create(6, 2, g), MPI_ERR_DIMS);
#endif
}

/* The value rank r puts in send block b. */
static int val(int r, int b) { return r * 100 + b; }

/* A grid of ndims dims / periods over the first ranks of the world: checks the queries and the
 * neighbourhood collectives on it. */
static void grid(int ndims, const int* dims, const int* periods) {
  int nnodes = 1;
  for (int i = 0; i < ndims; ++i) nnodes *= dims[i];
  MPI_Comm c;
  MT_CHECK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c));
  if (mt_rank >= nnodes) {
    MT_EXPECT(c == MPI_COMM_NULL, "rank beyond a grid of %d got a communicator", nnodes);
    return;
  }
  MT_EXPECT(c != MPI_COMM_NULL, "rank %d of a grid of %d got MPI_COMM_NULL", mt_rank, nnodes);
  int size = 0, rank = -1, status = 0, nd = -1;
  MT_CHECK(MPI_Comm_size(c, &size));
  MT_CHECK(MPI_Comm_rank(c, &rank));
  MT_CHECK(MPI_Topo_test(c, &status));
  MT_CHECK(MPI_Cartdim_get(c, &nd));
  MT_EXPECT(size == nnodes && rank == mt_rank, "size %d rank %d", size, rank);
  MT_EXPECT(status == MPI_CART, "Topo_test %d", status);
  MT_EXPECT(nd == ndims, "Cartdim_get %d, want %d", nd, ndims);
  int gd[MAXD], gp[MAXD], gc[MAXD];
  MT_CHECK(MPI_Cart_get(c, MAXD, gd, gp, gc));
  int coords[MAXD];
  MT_CHECK(MPI_Cart_coords(c, rank, MAXD, coords));
  int back = -1;
  MT_CHECK(MPI_Cart_rank(c, coords, &back));
  MT_EXPECT(back == rank, "Cart_rank(Cart_coords(%d)) = %d", rank, back);
  /* Row-major: the last dimension varies fastest. */
  int lin = 0;
  for (int i = 0; i < ndims; ++i) {
    MT_EXPECT(gd[i] == dims[i] && (gp[i] != 0) == (periods[i] != 0) && gc[i] == coords[i],
              "Cart_get dim %d: %d %d %d", i, gd[i], gp[i], gc[i]);
    lin = lin * dims[i] + coords[i];
  }
  MT_EXPECT(lin == rank, "coords of %d are not row-major", rank);

  /* Shifts, and the neighbour lists they make. */
  int nb[2 * MAXD];
  for (int i = 0; i < ndims; ++i) {
    int s = -1, d = -1;
    MT_CHECK(MPI_Cart_shift(c, i, 1, &s, &d));
    int cs[MAXD], cd[MAXD];
    memcpy(cs, coords, sizeof cs);
    memcpy(cd, coords, sizeof cd);
    cs[i] -= 1;
    cd[i] += 1;
    int ws = MPI_PROC_NULL, wd = MPI_PROC_NULL;
    if (periods[i] || cs[i] >= 0) MT_CHECK(MPI_Cart_rank(c, cs, &ws));
    if (periods[i] || cd[i] < dims[i]) MT_CHECK(MPI_Cart_rank(c, cd, &wd));
    MT_EXPECT(s == ws && d == wd, "shift dim %d: (%d, %d), want (%d, %d)", i, s, d, ws, wd);
    nb[2 * i] = s;
    nb[2 * i + 1] = d;
    /* A shift by a whole period and more comes back around. */
    if (periods[i]) {
      int s2 = -1, d2 = -1;
      MT_CHECK(MPI_Cart_shift(c, i, dims[i] + 1, &s2, &d2));
      MT_EXPECT(s2 == s && d2 == d, "shift dim %d by %d: (%d, %d)", i, dims[i] + 1, s2, d2);
    } else {
      int s2 = -1, d2 = -1;
      MT_CHECK(MPI_Cart_shift(c, i, dims[i], &s2, &d2));
      MT_EXPECT(s2 == MPI_PROC_NULL && d2 == MPI_PROC_NULL, "shift dim %d off the grid: (%d, %d)",
                i, s2, d2);
    }
  }
  const int n = 2 * ndims;

  int sbuf[2 * MAXD], rbuf[2 * MAXD + 1];
  for (int k = 0; k < n; ++k) sbuf[k] = val(rank, k);
  for (int k = 0; k <= n; ++k) rbuf[k] = UNTOUCHED;
  MT_CHECK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, c));
  for (int k = 0; k < n; ++k) {
    /* From the -1 neighbour, what it sent towards +1 (its block k + 1), and the reverse. */
    const int want = nb[k] == MPI_PROC_NULL ? UNTOUCHED : val(nb[k], k ^ 1);
    MT_EXPECT(rbuf[k] == want, "alltoall block %d: %d, want %d", k, rbuf[k], want);
  }
  MT_EXPECT(rbuf[n] == UNTOUCHED, "alltoall wrote past its blocks");

  for (int k = 0; k <= n; ++k) rbuf[k] = UNTOUCHED;
  MT_CHECK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, c));
  for (int k = 0; k < n; ++k) {
    const int want = nb[k] == MPI_PROC_NULL ? UNTOUCHED : nb[k];
    MT_EXPECT(rbuf[k] == want, "allgather block %d: %d, want %d", k, rbuf[k], want);
  }

  /* alltoallv: dimension i's blocks have i + 1 elements, laid out backwards with gaps. */
  int scounts[2 * MAXD], sdispls[2 * MAXD], rcounts[2 * MAXD], rdispls[2 * MAXD];
  int sv[64], rv[64];
  int off = 0;
  for (int k = n - 1; k >= 0; --k) {
    scounts[k] = rcounts[k] = k / 2 + 1;
    sdispls[k] = rdispls[k] = off;
    off += scounts[k] + 1;
  }
  for (int i = 0; i < 64; ++i) rv[i] = UNTOUCHED;
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < scounts[k]; ++j) sv[sdispls[k] + j] = val(rank, k) * 10 + j;
  }
  MT_CHECK(MPI_Neighbor_alltoallv(sv, scounts, sdispls, MPI_INT, rv, rcounts, rdispls, MPI_INT, c));
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < rcounts[k]; ++j) {
      const int want = nb[k] == MPI_PROC_NULL ? UNTOUCHED : val(nb[k], k ^ 1) * 10 + j;
      MT_EXPECT(rv[rdispls[k] + j] == want, "alltoallv block %d elem %d: %d, want %d", k, j,
                rv[rdispls[k] + j], want);
    }
    MT_EXPECT(rv[rdispls[k] + rcounts[k]] == UNTOUCHED, "alltoallv wrote a gap");
  }
  MT_CHECK(MPI_Comm_free(&c));
}

/* Sub-grids, duplicates, MPI_Cart_map, ndims 0. */
static void derived(void) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MT_CHECK(MPI_Dims_create(mt_size, 2, dims));
  MPI_Comm c;
  MT_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
  int coords[2];
  MT_CHECK(MPI_Cart_coords(c, mt_rank, 2, coords));

  /* A row: the ranks with my first coordinate, in the order of the second. */
  MPI_Comm row;
  MT_CHECK(MPI_Cart_sub(c, (int[]){0, 1}, &row));
  int size = 0, rank = -1, nd = -1, status = 0;
  MT_CHECK(MPI_Comm_size(row, &size));
  MT_CHECK(MPI_Comm_rank(row, &rank));
  MT_CHECK(MPI_Cartdim_get(row, &nd));
  MT_EXPECT(size == dims[1] && rank == coords[1] && nd == 1, "row: size %d rank %d ndims %d", size,
            rank, nd);
  int gd = 0, gp = -1, gc = -1;
  MT_CHECK(MPI_Cart_get(row, 1, &gd, &gp, &gc));
  MT_EXPECT(gd == dims[1] && gp == 0 && gc == coords[1], "row Cart_get %d %d %d", gd, gp, gc);
  MT_CHECK(MPI_Comm_free(&row));
  MPI_Comm col;
  MT_CHECK(MPI_Cart_sub(c, (int[]){1, 0}, &col));
  MT_CHECK(MPI_Comm_size(col, &size));
  MT_CHECK(MPI_Comm_rank(col, &rank));
  MT_CHECK(MPI_Cart_get(col, 1, &gd, &gp, &gc));
  MT_EXPECT(size == dims[0] && rank == coords[0] && gp == 1, "col: size %d rank %d periodic %d",
            size, rank, gp);
  MT_CHECK(MPI_Comm_free(&col));
  /* Nothing kept: a zero-dimensional grid of this rank alone. */
  MPI_Comm none;
  MT_CHECK(MPI_Cart_sub(c, (int[]){0, 0}, &none));
  MT_CHECK(MPI_Comm_size(none, &size));
  MT_CHECK(MPI_Topo_test(none, &status));
  MT_CHECK(MPI_Cartdim_get(none, &nd));
  MT_EXPECT(size == 1 && status == MPI_CART && nd == 0, "empty sub: size %d topo %d ndims %d", size,
            status, nd);
  MT_CHECK(MPI_Comm_free(&none));

  /* A duplicate keeps the topology, and its collectives work; a split drops it. */
  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(c, &dup));
  MT_CHECK(MPI_Topo_test(dup, &status));
  MT_EXPECT(status == MPI_CART, "dup Topo_test %d", status);
  int dd[2], dp[2], dc[2];
  MT_CHECK(MPI_Cart_get(dup, 2, dd, dp, dc));
  MT_EXPECT(dd[0] == dims[0] && dd[1] == dims[1] && dp[0] == 1 && dp[1] == 0 &&
                dc[0] == coords[0] && dc[1] == coords[1],
            "dup Cart_get");
  int rb[4] = {UNTOUCHED, UNTOUCHED, UNTOUCHED, UNTOUCHED};
  MT_CHECK(MPI_Neighbor_allgather(&mt_rank, 1, MPI_INT, rb, 1, MPI_INT, dup));
  int s = -1, d = -1;
  MT_CHECK(MPI_Cart_shift(dup, 0, 1, &s, &d));
  MT_EXPECT(rb[0] == s && rb[1] == d, "dup allgather %d %d, want %d %d", rb[0], rb[1], s, d);
  MT_CHECK(MPI_Comm_free(&dup));
  MPI_Comm split;
  MT_CHECK(MPI_Comm_split(c, 0, mt_rank, &split));
  MT_CHECK(MPI_Topo_test(split, &status));
  MT_EXPECT(status == MPI_UNDEFINED, "split Topo_test %d", status);
  MT_CHECK(MPI_Comm_free(&split));
  MT_CHECK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  MT_EXPECT(status == MPI_UNDEFINED, "world Topo_test %d", status);

  /* MPI_Cart_map: reordering ignored is a valid map; ranks beyond the grid get none. */
  int newrank = -1;
  const int one[1] = {mt_size > 1 ? mt_size - 1 : 1}, per[1] = {0};
  MT_CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, one, per, &newrank));
  if (mt_rank < one[0]) {
    MT_EXPECT(newrank >= 0 && newrank < one[0], "Cart_map gave %d", newrank);
  } else {
#ifdef ONESIDED_MPI /* Open MPI 4.1 returns the rank itself */
    MT_EXPECT(newrank == MPI_UNDEFINED, "Cart_map beyond the grid gave %d", newrank);
#endif
  }

  /* ndims 0: a grid of one node, rank 0's. */
  MPI_Comm zero;
  MT_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &zero));
  if (mt_rank == 0) {
    MT_EXPECT(zero != MPI_COMM_NULL, "ndims 0: rank 0 got MPI_COMM_NULL");
    if (zero != MPI_COMM_NULL) {
      MT_CHECK(MPI_Comm_size(zero, &size));
      MT_CHECK(MPI_Cartdim_get(zero, &nd));
      MT_CHECK(MPI_Topo_test(zero, &status));
      MT_EXPECT(size == 1 && nd == 0 && status == MPI_CART, "ndims 0: size %d ndims %d topo %d",
                size, nd, status);
      int r = -1;
      MT_CHECK(MPI_Cart_rank(zero, NULL, &r));
      MT_EXPECT(r == 0, "ndims 0 Cart_rank %d", r);
      MT_CHECK(MPI_Comm_free(&zero));
    }
  } else {
    MT_EXPECT(zero == MPI_COMM_NULL, "ndims 0: rank %d got a communicator", mt_rank);
  }

  /* Bad input. */
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int r = 0;
  int out[2] = {dims[0], dims[1]};
  check_class("Cart_rank outside a non-periodic dim", MPI_Cart_rank(c, out, &r), MPI_ERR_ARG);
  out[1] = -1;
  check_class("Cart_rank below a non-periodic dim", MPI_Cart_rank(c, out, &r), MPI_ERR_ARG);
  out[0] = -1;
  out[1] = 0;
  MT_CHECK(MPI_Cart_rank(c, out, &r)); /* periodic: wraps */
  int wrapped[2] = {dims[0] - 1, 0};
  int want = -1;
  MT_CHECK(MPI_Cart_rank(c, wrapped, &want));
  MT_EXPECT(r == want, "Cart_rank(-1, 0) = %d, want %d", r, want);
  check_class("Cart_shift direction -1", MPI_Cart_shift(c, -1, 1, &s, &d), MPI_ERR_DIMS);
  check_class("Cartdim_get on a communicator without topology",
              MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
  int nn = 0, ne = 0;
  check_class("Graphdims_get on a Cartesian communicator", MPI_Graphdims_get(c, &nn, &ne),
              MPI_ERR_TOPOLOGY);
  int big[1] = {mt_size + 1};
  MPI_Comm bad = MPI_COMM_NULL;
  check_class("Cart_create larger than the communicator",
              MPI_Cart_create(MPI_COMM_WORLD, 1, big, per, 0, &bad), MPI_ERR_ARG);
  check_class("Cart_create ndims -1", MPI_Cart_create(MPI_COMM_WORLD, -1, big, per, 0, &bad),
              MPI_ERR_ARG);
#ifdef ONESIDED_MPI /* Open MPI 4.1: MPI_ERR_OTHER, success, success, MPI_ERR_INTERN */
  int neg[1] = {-1};
  check_class("Cart_create dims[0] -1", MPI_Cart_create(MPI_COMM_WORLD, 1, neg, per, 0, &bad),
              MPI_ERR_DIMS);
  check_class("Cart_shift direction ndims", MPI_Cart_shift(c, 2, 1, &s, &d), MPI_ERR_DIMS);
  check_class("Cart_coords of rank size", MPI_Cart_coords(c, mt_size, 2, coords), MPI_ERR_RANK);
  check_class("Neighbor_allgather without topology",
              MPI_Neighbor_allgather(&r, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD),
              MPI_ERR_TOPOLOGY);
#endif
  MT_CHECK(MPI_Comm_free(&c));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  dims_create();
  const int p = mt_size;
  /* 1-D, periodic and not, over every rank (size 1 and 2: both neighbours one rank). */
  grid(1, (int[]){p}, (int[]){1});
  grid(1, (int[]){p}, (int[]){0});
  /* Fewer nodes than ranks. */
  if (p > 1) grid(1, (int[]){p - 1}, (int[]){1});
  /* 2-D and 3-D from Dims_create, mixed periodicity, and a periodic dimension of size 1. */
  int d2[2] = {0, 0};
  MT_CHECK(MPI_Dims_create(p, 2, d2));
  grid(2, d2, (int[]){1, 0});
  grid(2, d2, (int[]){0, 1});
  grid(2, (int[]){p, 1}, (int[]){0, 1});
  grid(3, (int[]){1, p, 1}, (int[]){1, 1, 0});
  int d3[3] = {0, 0, 0};
  MT_CHECK(MPI_Dims_create(p, 3, d3));
  grid(3, d3, (int[]){1, 1, 1});
  grid(3, d3, (int[]){0, 0, 0});
  derived();
  printf("rank %d: topo_cart %s\n", mt_rank, mt_failures == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return mt_failures == 0 ? 0 : 1;
}
