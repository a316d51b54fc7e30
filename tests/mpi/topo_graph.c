/* SPDX-License-Identifier: BSD-3-Clause */
/* Graph and distributed-graph topologies (MPI-3.1 §7.5.3-7.5.5): creation, the queries, and the
 * neighbourhood collectives over them, with self loops and repeated edges (whose blocks match
 * in list order: the k-th block from i to j lands in j's k-th block from i), weights and
 * MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY, ranks outside the graph, and bad input. Prints nothing but
 * failures and one line per rank. */
#include "mpiexpect.h"

#define UNTOUCHED (-7)
#define MAXN 64 /* neighbours per rank at most */

static void check_class(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  if (cls != want) {
    printf("rank %d: FAIL %s: expected %s, got %s (code %d)\n", mt_rank, what, class_name(want),
           class_name(cls), rc);
    ++mt_failures;
  }
}

static int val(int r, int b) { return r * 1000 + b; }

/* The block of `from`'s out-list that lands in `to`'s in-list at position k: the j-th
 * appearance of `from` in to's sources is the j-th appearance of `to` in from's destinations. */
static int matching_block(const int* in, int k, const int* from_out, int from_outdeg) {
  int j = 0;
  for (int i = 0; i < k; ++i) j += in[i] == in[k];
  for (int b = 0; b < from_outdeg; ++b) {
    if (from_out[b] == mt_rank && j-- == 0) return b;
  }
  return -1;
}

/* The neighbourhood collectives on `c`, whose in / out lists are in[indeg] / out[outdeg] on
 * this rank (every rank's out lists are gathered for the expected values). */
static void collectives(MPI_Comm c, const int* in, int indeg, const int* out, int outdeg,
                        const char* what) {
  int size = 0;
  MT_CHECK(MPI_Comm_size(c, &size));
  static int allout[MAXN * MAXN], alldeg[MAXN];
  int mine[MAXN];
  for (int i = 0; i < MAXN; ++i) mine[i] = i < outdeg ? out[i] : -1;
  MT_CHECK(MPI_Allgather(mine, MAXN, MPI_INT, allout, MAXN, MPI_INT, c));
  MT_CHECK(MPI_Allgather(&outdeg, 1, MPI_INT, alldeg, 1, MPI_INT, c));

  int sbuf[MAXN], rbuf[MAXN + 1];
  for (int b = 0; b < outdeg; ++b) sbuf[b] = val(mt_rank, b);
  for (int k = 0; k <= indeg; ++k) rbuf[k] = UNTOUCHED;
  MT_CHECK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, c));
  for (int k = 0; k < indeg; ++k) {
    const int b = matching_block(in, k, allout + in[k] * MAXN, alldeg[in[k]]);
    MT_EXPECT(rbuf[k] == val(in[k], b), "%s alltoall block %d: %d, want %d", what, k, rbuf[k],
              val(in[k], b));
  }
  MT_EXPECT(rbuf[indeg] == UNTOUCHED, "%s alltoall wrote past its blocks", what);

  for (int k = 0; k <= indeg; ++k) rbuf[k] = UNTOUCHED;
  const int me = mt_rank + 500;
  MT_CHECK(MPI_Neighbor_allgather(&me, 1, MPI_INT, rbuf, 1, MPI_INT, c));
  for (int k = 0; k < indeg; ++k) {
    MT_EXPECT(rbuf[k] == in[k] + 500, "%s allgather block %d: %d", what, k, rbuf[k]);
  }

  /* allgatherv: block k of 2 elements at 3k (the sender's value twice); gaps untouched. */
  int two[2] = {me, me};
  int rc2[MAXN], dl[MAXN], rv[3 * MAXN];
  for (int k = 0; k < indeg; ++k) {
    rc2[k] = 2;
    dl[k] = 3 * k;
  }
  for (int i = 0; i < 3 * MAXN; ++i) rv[i] = UNTOUCHED;
  MT_CHECK(MPI_Neighbor_allgatherv(two, 2, MPI_INT, rv, rc2, dl, MPI_INT, c));
  for (int k = 0; k < indeg; ++k) {
    MT_EXPECT(
        rv[3 * k] == in[k] + 500 && rv[3 * k + 1] == in[k] + 500 && rv[3 * k + 2] == UNTOUCHED,
        "%s allgatherv block %d: %d %d %d", what, k, rv[3 * k], rv[3 * k + 1], rv[3 * k + 2]);
  }

  /* alltoallw: each block one int, at byte displacements in reverse block order. */
  int scnt[MAXN], rcnt[MAXN];
  MPI_Aint sd[MAXN], rd[MAXN];
  MPI_Datatype st[MAXN], rt[MAXN];
  int sw[MAXN], rw[MAXN];
  for (int b = 0; b < outdeg; ++b) {
    scnt[b] = 1;
    sd[b] = (MPI_Aint)((outdeg - 1 - b) * sizeof(int));
    st[b] = MPI_INT;
    sw[outdeg - 1 - b] = val(mt_rank, b) + 1;
  }
  for (int k = 0; k < indeg; ++k) {
    rcnt[k] = 1;
    rd[k] = (MPI_Aint)((indeg - 1 - k) * sizeof(int));
    rt[k] = MPI_INT;
    rw[k] = UNTOUCHED;
  }
  MT_CHECK(MPI_Neighbor_alltoallw(sw, scnt, sd, st, rw, rcnt, rd, rt, c));
  for (int k = 0; k < indeg; ++k) {
    const int b = matching_block(in, k, allout + in[k] * MAXN, alldeg[in[k]]);
    MT_EXPECT(rw[indeg - 1 - k] == val(in[k], b) + 1, "%s alltoallw block %d: %d", what, k,
              rw[indeg - 1 - k]);
  }
}

static void graph(void) {
  const int p = mt_size;
  /* A ring, each edge both ways (twice over when p is 1 or 2), and a self loop at node 0. */
  int index[MAXN], edges[3 * MAXN];
  int ne = 0;
  for (int i = 0; i < p; ++i) {
    edges[ne++] = (i - 1 + p) % p;
    edges[ne++] = (i + 1) % p;
    if (i == 0) edges[ne++] = 0;
    index[i] = ne;
  }
  MPI_Comm g;
  MT_CHECK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &g));
  int status = 0, nn = 0, nedges = 0;
  MT_CHECK(MPI_Topo_test(g, &status));
  MT_CHECK(MPI_Graphdims_get(g, &nn, &nedges));
  MT_EXPECT(status == MPI_GRAPH && nn == p && nedges == ne, "graph: topo %d nnodes %d nedges %d",
            status, nn, nedges);
  int gi[MAXN], ge[3 * MAXN];
  MT_CHECK(MPI_Graph_get(g, p, ne, gi, ge));
  for (int i = 0; i < p; ++i) MT_EXPECT(gi[i] == index[i], "Graph_get index[%d] %d", i, gi[i]);
  for (int i = 0; i < ne; ++i) MT_EXPECT(ge[i] == edges[i], "Graph_get edges[%d] %d", i, ge[i]);
  int cnt = 0, nb[3];
  MT_CHECK(MPI_Graph_neighbors_count(g, mt_rank, &cnt));
  MT_EXPECT(cnt == (mt_rank == 0 ? 3 : 2), "Graph_neighbors_count %d", cnt);
  MT_CHECK(MPI_Graph_neighbors(g, mt_rank, 3, nb));
  for (int i = 0; i < cnt; ++i) {
    const int begin = mt_rank == 0 ? 0 : index[mt_rank - 1];
    MT_EXPECT(nb[i] == edges[begin + i], "Graph_neighbors[%d] %d", i, nb[i]);
  }
  collectives(g, nb, cnt, nb, cnt, "graph");
  /* A duplicate keeps the graph. */
  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(g, &dup));
  MT_CHECK(MPI_Topo_test(dup, &status));
  MT_EXPECT(status == MPI_GRAPH, "dup of a graph: topo %d", status);
  collectives(dup, nb, cnt, nb, cnt, "graph dup");
  MT_CHECK(MPI_Comm_free(&dup));

  /* Bad input. */
  MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ndims = 0;
  check_class("Cartdim_get on a graph", MPI_Cartdim_get(g, &ndims), MPI_ERR_TOPOLOGY);
  int in = 0, out = 0, w = 0;
  check_class("Dist_graph_neighbors_count on a graph",
              MPI_Dist_graph_neighbors_count(g, &in, &out, &w), MPI_ERR_TOPOLOGY);
  check_class("Graphdims_get on a communicator without topology",
              MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &nedges), MPI_ERR_TOPOLOGY);
  MPI_Comm bad = MPI_COMM_NULL;
  check_class("Graph_create nnodes > size",
              MPI_Graph_create(MPI_COMM_WORLD, p + 1, index, edges, 0, &bad), MPI_ERR_ARG);
  check_class("Graph_create nnodes -1", MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &bad),
              MPI_ERR_ARG);
#ifdef ONESIDED_MPI /* Open MPI 4.1 takes both */
  int badedge[1] = {p};
  int one[1] = {1};
  check_class("Graph_create edge past nnodes",
              MPI_Graph_create(MPI_COMM_WORLD, 1, one, badedge, 0, &bad), MPI_ERR_ARG);
  check_class("Graph_neighbors_count of node p", MPI_Graph_neighbors_count(g, p, &cnt),
              MPI_ERR_RANK);
#endif
  MT_CHECK(MPI_Comm_free(&g));

  /* Fewer nodes than ranks: node i's neighbour is i itself, the others get no communicator. */
  if (p > 1) {
    int idx2[MAXN], e2[MAXN];
    for (int i = 0; i < p - 1; ++i) {
      idx2[i] = i + 1;
      e2[i] = i;
    }
    MPI_Comm small;
    MT_CHECK(MPI_Graph_create(MPI_COMM_WORLD, p - 1, idx2, e2, 1, &small));
    if (mt_rank == p - 1) {
      MT_EXPECT(small == MPI_COMM_NULL, "rank beyond the graph got a communicator");
    } else {
      MT_EXPECT(small != MPI_COMM_NULL, "rank in the graph got MPI_COMM_NULL");
      int self[1] = {mt_rank};
      collectives(small, self, 1, self, 1, "self graph");
      MT_CHECK(MPI_Comm_free(&small));
    }
    int newrank = -1;
    MT_CHECK(MPI_Graph_map(MPI_COMM_WORLD, p - 1, idx2, e2, &newrank));
    if (mt_rank < p - 1) MT_EXPECT(newrank >= 0 && newrank < p - 1, "Graph_map %d", newrank);
  }
}

static void dist_graph(void) {
  const int p = mt_size, r = mt_rank;
  /* Adjacent, weighted: out to r+1, r+2 and self twice; in from r-1, r-2 and self twice. */
  int src[4] = {(r - 1 + p) % p, (r - 2 + 2 * p) % p, r, r};
  int dst[4] = {(r + 1) % p, (r + 2) % p, r, r};
  int sw[4] = {1, 2, 3, 4}, dw[4] = {5, 6, 7, 8};
  MPI_Comm d;
  MT_CHECK(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, src, sw, 4, dst, dw, MPI_INFO_NULL, 0, &d));
  int status = 0, indeg = -1, outdeg = -1, weighted = -1;
  MT_CHECK(MPI_Topo_test(d, &status));
  MT_CHECK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
  MT_EXPECT(status == MPI_DIST_GRAPH && indeg == 4 && outdeg == 4 && weighted,
            "adjacent: topo %d in %d out %d weighted %d", status, indeg, outdeg, weighted);
  int gs[4], gsw[4], gd[4], gdw[4];
  MT_CHECK(MPI_Dist_graph_neighbors(d, 4, gs, gsw, 4, gd, gdw));
  for (int i = 0; i < 4; ++i) {
    MT_EXPECT(gs[i] == src[i] && gsw[i] == sw[i] && gd[i] == dst[i] && gdw[i] == dw[i],
              "Dist_graph_neighbors entry %d: %d/%d %d/%d", i, gs[i], gsw[i], gd[i], gdw[i]);
  }
  collectives(d, src, 4, dst, 4, "adjacent");
  MT_CHECK(MPI_Comm_free(&d));

  /* Unweighted (MPI_UNWEIGHTED everywhere), and a rank with no edges at all: the last. */
  const int last = r == p - 1 && p > 1;
  int s1[1] = {(r - 1 + p) % p}, d1[1] = {(r + 1) % p};
  /* The ring without the last rank: r -> r+1 for r < p-2, and p-2 -> 0 closes it. */
  if (p > 1) {
    s1[0] = r == 0 ? p - 2 : r - 1;
    d1[0] = r == p - 2 ? 0 : r + 1;
  }
  MT_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, last ? 0 : 1, s1, MPI_UNWEIGHTED,
                                          last ? 0 : 1, d1, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d));
  MT_CHECK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
  MT_EXPECT(!weighted && indeg == (last ? 0 : 1) && outdeg == indeg,
            "unweighted: in %d out %d weighted %d", indeg, outdeg, weighted);
  MT_CHECK(MPI_Dist_graph_neighbors(d, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED));
  if (!last)
    collectives(d, s1, 1, d1, 1, "unweighted");
  else
    collectives(d, s1, 0, d1, 0, "isolated");
  MT_CHECK(MPI_Comm_free(&d));

  /* Weighted with no edges: MPI_WEIGHTS_EMPTY. */
  MT_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                          MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &d));
  MT_CHECK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
  MT_EXPECT(weighted && indeg == 0 && outdeg == 0, "empty: in %d out %d weighted %d", indeg, outdeg,
            weighted);
  MT_CHECK(MPI_Comm_free(&d));

  /* MPI_Dist_graph_create: rank 0 gives every edge r -> r+1 (weight r) and r -> r (weight 100
   * + r); each rank learns its own in and out edges, in an order of the library's choosing. */
  int n = r == 0 ? p : 0;
  int nodes[MAXN], degrees[MAXN], targets[2 * MAXN], weights[2 * MAXN];
  for (int i = 0; i < n; ++i) {
    nodes[i] = i;
    degrees[i] = 2;
    targets[2 * i] = (i + 1) % p;
    weights[2 * i] = i;
    targets[2 * i + 1] = i;
    weights[2 * i + 1] = 100 + i;
  }
  MT_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, nodes, degrees, targets,
                                 n > 0 ? weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &d));
  MT_CHECK(MPI_Dist_graph_neighbors_count(d, &indeg, &outdeg, &weighted));
  MT_EXPECT(weighted && indeg == 2 && outdeg == 2, "create: in %d out %d weighted %d", indeg,
            outdeg, weighted);
  if (indeg == 2 && outdeg == 2) {
    MT_CHECK(MPI_Dist_graph_neighbors(d, 2, gs, gsw, 2, gd, gdw));
    const int prev = (r - 1 + p) % p;
    for (int i = 0; i < 2; ++i) {
      /* Self edge: weight 100 + r; the ring edge: weight prev (in) or r (out). When p is 1
       * both are self edges, with weights 0 and 100. */
      const int okIn = (gs[i] == r && (gsw[i] == 100 + r || (p == 1 && gsw[i] == 0))) ||
                       (gs[i] == prev && gsw[i] == prev);
      const int okOut = (gd[i] == r && (gdw[i] == 100 + r || (p == 1 && gdw[i] == 0))) ||
                        (gd[i] == (r + 1) % p && gdw[i] == r);
      MT_EXPECT(okIn && okOut, "create: in %d (w %d), out %d (w %d)", gs[i], gsw[i], gd[i], gdw[i]);
    }
    MT_EXPECT(gsw[0] + gsw[1] == prev + 100 + r && gdw[0] + gdw[1] == 100 + 2 * r,
              "create: weights %d+%d, %d+%d", gsw[0], gsw[1], gdw[0], gdw[1]);
    collectives(d, gs, 2, gd, 2, "create");
  }
  MT_CHECK(MPI_Comm_free(&d));

  /* Bad input. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm bad = MPI_COMM_NULL;
  int badsrc[1] = {p};
  int negw[1] = {-1};
  int zero[1] = {0};
  check_class("Dist_graph_create_adjacent indegree -1",
              MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, zero, MPI_UNWEIGHTED, 0, zero,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad),
              MPI_ERR_ARG);
  check_class("Dist_graph_create_adjacent source p",
              MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, badsrc, MPI_UNWEIGHTED, 0, zero,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad),
              MPI_ERR_ARG);
  check_class("Dist_graph_create_adjacent weight -1",
              MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, zero, negw, 0, zero,
                                             MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &bad),
              MPI_ERR_ARG);
  int one[1] = {1};
  check_class("Dist_graph_create destination p",
              MPI_Dist_graph_create(MPI_COMM_WORLD, 1, zero, one, badsrc, MPI_UNWEIGHTED,
                                    MPI_INFO_NULL, 0, &bad),
              MPI_ERR_ARG);
  int gn[1];
  check_class(
      "Dist_graph_neighbors without topology",
      MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 1, gn, MPI_UNWEIGHTED, 1, gn, MPI_UNWEIGHTED),
      MPI_ERR_TOPOLOGY);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_size > MAXN) {
    printf("rank %d: topo_graph needs at most %d ranks\n", mt_rank, MAXN);
    MPI_Finalize();
    return 1;
  }
  graph();
  dist_graph();
  printf("rank %d: topo_graph %s\n", mt_rank, mt_failures == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return mt_failures == 0 ? 0 : 1;
}
