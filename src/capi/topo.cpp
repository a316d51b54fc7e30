// SPDX-License-Identifier: BSD-3-Clause
// Process topologies (MPI-3.1 chapter 7): Cartesian grids, graphs and distributed graphs, kept
// with the communicator's handle (CommEntry::topo), and the blocking neighbourhood collectives
// over them (collectives/neighbor.cpp). reorder is ignored: a topology communicator keeps its
// parent's rank order, so a grid's or graph's ranks are the first nnodes ranks of the parent.
#include <cstring>
#include <limits>

#include "capi/coll_forms.hpp"
#include "capi/state.hpp"
#include "capi/topology.hpp"
#include "collectives/channel.hpp"
#include "onesided/collectives.hpp"

namespace onesided::capi {
namespace {

using Kind = Topology::Kind;

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kCart:
      return "Cartesian";
    case Kind::kGraph:
      return "graph";
    case Kind::kDistGraph:
      return "distributed graph";
  }
  return "";
}

/// The topology of `comm` (a valid communicator); MPI_ERR_TOPOLOGY when it has none, or not of
/// kind `want` when given.
const Topology& topologyOf(MPI_Comm comm, const Kind* want = nullptr) {
  const CommEntry& e = commEntry(comm);
  if (!e.topo || (want != nullptr && e.topo->kind != *want)) {
    throw Error(MPI_ERR_TOPOLOGY, "communicator " + std::to_string(comm) + " has no " +
                                      (want != nullptr ? std::string(kindName(*want)) + " topology"
                                                       : std::string("process topology")));
  }
  return *e.topo;
}
const Topology& cartOf(MPI_Comm comm) {
  const Kind k = Kind::kCart;
  return topologyOf(comm, &k);
}
const Topology& graphOf(MPI_Comm comm) {
  const Kind k = Kind::kGraph;
  return topologyOf(comm, &k);
}
const Topology& distGraphOf(MPI_Comm comm) {
  const Kind k = Kind::kDistGraph;
  return topologyOf(comm, &k);
}

/// A new handle for `c` (MPI_COMM_NULL for none) with topology `t`, its lists made for the
/// rank this process has in it.
MPI_Comm addTopoComm(std::unique_ptr<Comm> c, MPI_Errhandler eh,
                     const std::shared_ptr<Topology>& t) {
  if (!c) return MPI_COMM_NULL;
  t->neighbors(c->rank(), t->in, t->out);
  auto& comms = state().comms;
  CommEntry e;
  e.comm = c.get();
  e.owned = std::move(c);
  e.errhandler = eh;  // MPI-3.1 §8.3.1: a new communicator inherits its parent's handler
  e.topo = t;
  comms.push_back(std::move(e));
  return static_cast<MPI_Comm>(comms.size() - 1);
}

void checkNonNegative(int n, const char* what) {
  if (n < 0) throw Error(MPI_ERR_ARG, std::string(what) + " " + std::to_string(n) + " is negative");
}

/// A grid's dims and periods (MPI_Cart_create, MPI_Cart_map): returns the number of nodes;
/// MPI_ERR_DIMS for a dimension that is not positive, MPI_ERR_ARG for a grid larger than the
/// communicator.
int checkGrid(const Comm& c, int ndims, const int* dims, const int* periods) {
  checkNonNegative(ndims, "ndims");
  if (ndims > 0) {
    requireArg(dims, "dims");
    requireArg(periods, "periods");
  }
  std::int64_t nnodes = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) {
      throw Error(MPI_ERR_DIMS, "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) +
                                    " is not positive");
    }
    nnodes = std::min<std::int64_t>(nnodes * dims[i], std::numeric_limits<int>::max() + 1LL);
  }
  if (nnodes > c.size()) {
    throw Error(MPI_ERR_ARG, "the grid has " + std::to_string(nnodes) +
                                 " nodes, more than the communicator's " +
                                 std::to_string(c.size()) + " ranks");
  }
  return static_cast<int>(nnodes);
}

/// A graph's index and edges (MPI_Graph_create, MPI_Graph_map); MPI_ERR_ARG for a size larger
/// than the communicator, an index that decreases, or an edge that names no node.
void checkGraph(const Comm& c, int nnodes, const int* index, const int* edges) {
  checkNonNegative(nnodes, "nnodes");
  if (nnodes > c.size()) {
    throw Error(MPI_ERR_ARG, "nnodes " + std::to_string(nnodes) +
                                 " is larger than the communicator's " + std::to_string(c.size()) +
                                 " ranks");
  }
  if (nnodes == 0) return;
  requireArg(index, "index");
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < prev) {
      throw Error(MPI_ERR_ARG, "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                                   (i == 0 ? " is negative" : " is less than index[i - 1]"));
    }
    prev = index[i];
  }
  if (prev > 0) requireArg(edges, "edges");
  for (int i = 0; i < prev; ++i) {
    if (edges[i] < 0 || edges[i] >= nnodes) {
      throw Error(MPI_ERR_ARG, "edges[" + std::to_string(i) + "] = " + std::to_string(edges[i]) +
                                   " is not a node of the graph (nnodes " + std::to_string(nnodes) +
                                   ")");
    }
  }
}

/// A distributed graph's list of ranks (sources, destinations): MPI_ERR_ARG naming an entry
/// that is not a rank of the communicator (MPICH's and Open MPI's class).
void checkRankList(const Comm& c, int n, const int* list, const char* what) {
  if (n > 0) requireArg(list, what);
  for (int i = 0; i < n; ++i) {
    if (list[i] < 0 || list[i] >= c.size()) {
      throw Error(MPI_ERR_ARG,
                  std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(list[i]) +
                      " is not a rank of the communicator (size " + std::to_string(c.size()) + ")");
    }
  }
}

bool isUnweighted(const int* w) { return w == MPI_UNWEIGHTED; }

/// A weights argument of n entries: MPI_UNWEIGHTED (false), or n non-negative weights (true),
/// MPI_WEIGHTS_EMPTY or NULL standing for none only when n is 0.
bool checkWeights(int n, const int* w, const char* what) {
  if (isUnweighted(w)) return false;
  if (n == 0) return true;
  if (w == MPI_WEIGHTS_EMPTY || w == nullptr) {
    throw Error(MPI_ERR_ARG, std::string(what) + " is " +
                                 (w == nullptr ? "NULL" : "MPI_WEIGHTS_EMPTY") + " for " +
                                 std::to_string(n) + " edges");
  }
  for (int i = 0; i < n; ++i) {
    if (w[i] < 0) {
      throw Error(MPI_ERR_ARG, std::string(what) + "[" + std::to_string(i) +
                                   "] = " + std::to_string(w[i]) + " is negative");
    }
  }
  return true;
}

std::vector<int> weightsOf(int n, const int* w, bool weighted) {
  if (!weighted || n == 0) return std::vector<int>(static_cast<std::size_t>(n), 1);
  return {w, w + n};
}

void checkInfo(MPI_Info info) {
  if (info != MPI_INFO_NULL) infoEntry(info);  // no key of it is used
}

/// Copies min(n, v.size()) entries of v to out (when out is a real array).
void copyOut(const std::vector<int>& v, int n, int* out) {
  const auto k = std::min(static_cast<std::size_t>(std::max(n, 0)), v.size());
  if (k > 0 && out != nullptr && out != MPI_UNWEIGHTED && out != MPI_WEIGHTS_EMPTY) {
    std::memcpy(out, v.data(), k * sizeof(int));
  }
}

/// MPI_Neighbor_alltoallw's datatypes, n of them (MPI_DATATYPE_NULL stays null: the collective
/// names it); NULL with n > 0 is MPI_ERR_ARG.
std::vector<const Datatype*> typesOf(std::size_t n, const MPI_Datatype* types, const char* what) {
  std::vector<const Datatype*> out;
  if (n == 0) return out;
  if (types == nullptr) throw Error(MPI_ERR_ARG, std::string(what) + " is NULL");
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (types[i] == MPI_DATATYPE_NULL) {
      out.push_back(nullptr);
      continue;
    }
    try {
      out.push_back(&datatype(types[i]));
    } catch (const Error& e) {
      throw Error(e.errorClass(), std::string(what) + "[" + std::to_string(i) + "]: " + e.what());
    }
  }
  return out;
}

/// A topology constructor's parent: an intracommunicator, its nonblocking collectives done.
CommEntry& topoParent(MPI_Comm comm) {
  requireIntra(comm, "a process topology");
  collComm(comm);
  return commEntry(comm);
}

/// A neighbourhood collective's prepare (coll_forms.hpp): its lists, kept alive with their
/// topology while the job runs (MPI_ERR_TOPOLOGY without one), and `run`, which calls the
/// algorithm with them.
template <class Run>
auto hoodJob(MPI_Comm comm, Run run) {
  return [comm, run](Target on) {
    topologyOf(comm);
    std::shared_ptr<const Topology> t = commEntry(comm).topo;
    return [on, t, run] { run(*on.c, coll::Neighborhood{t->in, t->out, t->kind == Kind::kCart}); };
  };
}

/// MPI_Neighbor_alltoallw's datatypes, held (a job keeps derived ones alive).
struct HoodTypes {
  std::vector<const Datatype*> ptrs;
  std::vector<std::shared_ptr<const Datatype>> keep;
};
HoodTypes hoodTypes(std::size_t n, const MPI_Datatype* types, const char* what) {
  HoodTypes out;
  out.ptrs = typesOf(n, types, what);
  for (std::size_t i = 0; i < out.ptrs.size(); ++i) {
    if (out.ptrs[i] != nullptr && !out.ptrs[i]->isPredefined())
      out.keep.push_back(typeArg(types[i]).keep);
  }
  return out;
}
/// The number of sources and destinations of `comm`'s topology (MPI_ERR_TOPOLOGY without one).
std::pair<std::size_t, std::size_t> degrees(MPI_Comm comm) {
  const Topology& t = topologyOf(comm);
  return {t.in.size(), t.out.size()};
}

}  // namespace
}  // namespace onesided::capi

namespace {
// What MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY point to: never read or written.
int unweightedMark = 0;
int weightsEmptyMark = 0;
}  // namespace
int* const MPI_UNWEIGHTED = &unweightedMark;
int* const MPI_WEIGHTS_EMPTY = &weightsEmptyMark;

using onesided::Error;
using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
namespace coll = onesided::coll;
using capi::Topology;

extern "C" {

int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  return call("MPI_Dims_create", On::none(), [&] {
    if (ndims < 0) throw Error(MPI_ERR_DIMS, "ndims " + std::to_string(ndims) + " is negative");
    if (ndims > 0) capi::requireArg(dims, "dims");
    capi::dimsCreate(nnodes, {dims, static_cast<std::size_t>(ndims)});
  });
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm* comm_cart) {
  (void)reorder;
  return call("MPI_Cart_create", On::comm(comm_old), [&] {
    auto& e = capi::topoParent(comm_old);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    const int nnodes = capi::checkGrid(*e.comm, ndims, dims, periods);
    capi::requireArg(comm_cart, "comm_cart");
    auto t = std::make_shared<Topology>();
    t->kind = Topology::Kind::kCart;
    t->dims.assign(dims, dims + ndims);
    for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] != 0);
    const int rank = e.comm->rank();
    const MPI_Errhandler eh = e.errhandler;
    *comm_cart = capi::addTopoComm(e.comm->split(rank < nnodes ? 0 : MPI_UNDEFINED, rank), eh, t);
  });
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  return call("MPI_Cart_map", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const int nnodes = capi::checkGrid(c, ndims, dims, periods);
    capi::requireArg(newrank, "newrank");
    *newrank = c.rank() < nnodes ? c.rank() : MPI_UNDEFINED;
  });
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
  return call("MPI_Topo_test", On::comm(comm), [&] {
    const auto& e = capi::commEntry(comm);
    capi::requireArg(status, "status");
    if (!e.topo) {
      *status = MPI_UNDEFINED;
      return;
    }
    switch (e.topo->kind) {
      case Topology::Kind::kCart:
        *status = MPI_CART;
        break;
      case Topology::Kind::kGraph:
        *status = MPI_GRAPH;
        break;
      case Topology::Kind::kDistGraph:
        *status = MPI_DIST_GRAPH;
        break;
    }
  });
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return call("MPI_Cartdim_get", On::comm(comm), [&] {
    const Topology& t = capi::cartOf(comm);
    capi::requireArg(ndims, "ndims");
    *ndims = static_cast<int>(t.dims.size());
  });
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return call("MPI_Cart_get", On::comm(comm), [&] {
    const Topology& t = capi::cartOf(comm);
    capi::checkNonNegative(maxdims, "maxdims");
    const int n = std::min(maxdims, static_cast<int>(t.dims.size()));
    if (n > 0) {
      capi::requireArg(dims, "dims");
      capi::requireArg(periods, "periods");
      capi::requireArg(coords, "coords");
    }
    const std::vector<int> c = t.coords(capi::comm(comm).rank());
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      dims[i] = t.dims[k];
      periods[i] = t.periods[k] ? 1 : 0;
      coords[i] = c[k];
    }
  });
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  return call("MPI_Cart_rank", On::comm(comm), [&] {
    const Topology& t = capi::cartOf(comm);
    if (!t.dims.empty()) capi::requireArg(coords, "coords");
    capi::requireArg(rank, "rank");
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      if (!t.periods[i] && (coords[i] < 0 || coords[i] >= t.dims[i])) {
        throw Error(MPI_ERR_ARG, "coords[" + std::to_string(i) +
                                     "] = " + std::to_string(coords[i]) +
                                     " is outside the non-periodic dimension of size " +
                                     std::to_string(t.dims[i]));
      }
    }
    *rank = t.rankAt({coords, t.dims.size()});
  });
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  return call("MPI_Cart_coords", On::comm(comm), [&] {
    const Topology& t = capi::cartOf(comm);
    const int size = capi::comm(comm).size();
    if (rank < 0 || rank >= size) {
      throw Error(MPI_ERR_RANK, "rank " + std::to_string(rank) +
                                    " is not a rank of the communicator (size " +
                                    std::to_string(size) + ")");
    }
    capi::checkNonNegative(maxdims, "maxdims");
    const int n = std::min(maxdims, static_cast<int>(t.dims.size()));
    if (n > 0) capi::requireArg(coords, "coords");
    const std::vector<int> c = t.coords(rank);
    if (n > 0) std::memcpy(coords, c.data(), static_cast<std::size_t>(n) * sizeof(int));
  });
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return call("MPI_Cart_shift", On::comm(comm), [&] {
    const Topology& t = capi::cartOf(comm);
    if (direction < 0 || direction >= static_cast<int>(t.dims.size())) {
      throw Error(MPI_ERR_DIMS, "direction " + std::to_string(direction) +
                                    " is not a dimension of the grid (ndims " +
                                    std::to_string(t.dims.size()) + ")");
    }
    capi::requireArg(rank_source, "rank_source");
    capi::requireArg(rank_dest, "rank_dest");
    t.shift(capi::comm(comm).rank(), direction, disp, *rank_source, *rank_dest);
  });
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return call("MPI_Cart_sub", On::comm(comm), [&] {
    auto& e = capi::topoParent(comm);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    const Topology& t = capi::cartOf(comm);
    if (!t.dims.empty()) capi::requireArg(remain_dims, "remain_dims");
    capi::requireArg(newcomm, "newcomm");
    // The members with the same coordinates in the dimensions dropped form one sub-grid; rank
    // order within it is the grid's, which is the sub-grid's row-major order.
    auto sub = std::make_shared<Topology>();
    sub->kind = Topology::Kind::kCart;
    const std::vector<int> c = t.coords(e.comm->rank());
    int color = 0;
    for (std::size_t i = 0; i < t.dims.size(); ++i) {
      if (remain_dims[i] != 0) {
        sub->dims.push_back(t.dims[i]);
        sub->periods.push_back(t.periods[i]);
      } else {
        color = color * t.dims[i] + c[i];
      }
    }
    const MPI_Errhandler eh = e.errhandler;
    *newcomm = capi::addTopoComm(e.comm->split(color, e.comm->rank()), eh, sub);
  });
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm* comm_graph) {
  (void)reorder;
  return call("MPI_Graph_create", On::comm(comm_old), [&] {
    auto& e = capi::topoParent(comm_old);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    capi::checkGraph(*e.comm, nnodes, index, edges);
    capi::requireArg(comm_graph, "comm_graph");
    auto t = std::make_shared<Topology>();
    t->kind = Topology::Kind::kGraph;
    if (nnodes > 0) {
      t->index.assign(index, index + nnodes);
      t->edges.assign(edges, edges + index[nnodes - 1]);
    }
    const int rank = e.comm->rank();
    const MPI_Errhandler eh = e.errhandler;
    *comm_graph = capi::addTopoComm(e.comm->split(rank < nnodes ? 0 : MPI_UNDEFINED, rank), eh, t);
  });
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  return call("MPI_Graph_map", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    capi::checkGraph(c, nnodes, index, edges);
    capi::requireArg(newrank, "newrank");
    *newrank = c.rank() < nnodes ? c.rank() : MPI_UNDEFINED;
  });
}

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return call("MPI_Graphdims_get", On::comm(comm), [&] {
    const Topology& t = capi::graphOf(comm);
    capi::requireArg(nnodes, "nnodes");
    capi::requireArg(nedges, "nedges");
    *nnodes = static_cast<int>(t.index.size());
    *nedges = static_cast<int>(t.edges.size());
  });
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  return call("MPI_Graph_get", On::comm(comm), [&] {
    const Topology& t = capi::graphOf(comm);
    capi::checkNonNegative(maxindex, "maxindex");
    capi::checkNonNegative(maxedges, "maxedges");
    if (maxindex > 0 && !t.index.empty()) capi::requireArg(index, "index");
    if (maxedges > 0 && !t.edges.empty()) capi::requireArg(edges, "edges");
    capi::copyOut(t.index, maxindex, index);
    capi::copyOut(t.edges, maxedges, edges);
  });
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return call("MPI_Graph_neighbors_count", On::comm(comm), [&] {
    const Topology& t = capi::graphOf(comm);
    if (rank < 0 || rank >= static_cast<int>(t.index.size())) {
      throw Error(MPI_ERR_RANK, "rank " + std::to_string(rank) +
                                    " is not a node of the graph (nnodes " +
                                    std::to_string(t.index.size()) + ")");
    }
    capi::requireArg(nneighbors, "nneighbors");
    *nneighbors = static_cast<int>(t.graphNeighbors(rank).size());
  });
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return call("MPI_Graph_neighbors", On::comm(comm), [&] {
    const Topology& t = capi::graphOf(comm);
    if (rank < 0 || rank >= static_cast<int>(t.index.size())) {
      throw Error(MPI_ERR_RANK, "rank " + std::to_string(rank) +
                                    " is not a node of the graph (nnodes " +
                                    std::to_string(t.index.size()) + ")");
    }
    capi::checkNonNegative(maxneighbors, "maxneighbors");
    const std::span<const int> n = t.graphNeighbors(rank);
    if (maxneighbors > 0 && !n.empty()) capi::requireArg(neighbors, "neighbors");
    capi::copyOut({n.begin(), n.end()}, maxneighbors, neighbors);
  });
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  (void)reorder;
  return call("MPI_Dist_graph_create_adjacent", On::comm(comm_old), [&] {
    auto& e = capi::topoParent(comm_old);
    const onesided::detail::Entry entry(e.comm->channel());  // counts the call if a check fails
    capi::checkNonNegative(indegree, "indegree");
    capi::checkNonNegative(outdegree, "outdegree");
    capi::checkRankList(*e.comm, indegree, sources, "sources");
    capi::checkRankList(*e.comm, outdegree, destinations, "destinations");
    const bool inWeighted = capi::checkWeights(indegree, sourceweights, "sourceweights");
    const bool outWeighted = capi::checkWeights(outdegree, destweights, "destweights");
    if (inWeighted != outWeighted) {
      throw Error(MPI_ERR_ARG, std::string(inWeighted ? "destweights" : "sourceweights") +
                                   " is MPI_UNWEIGHTED and the other weights are not");
    }
    capi::checkInfo(info);
    capi::requireArg(comm_dist_graph, "comm_dist_graph");
    auto t = std::make_shared<Topology>();
    t->kind = Topology::Kind::kDistGraph;
    t->weighted = inWeighted;
    t->sources.assign(sources, sources + indegree);
    t->destinations.assign(destinations, destinations + outdegree);
    t->sourceWeights = capi::weightsOf(indegree, sourceweights, inWeighted);
    t->destWeights = capi::weightsOf(outdegree, destweights, outWeighted);
    const MPI_Errhandler eh = e.errhandler;
    *comm_dist_graph = capi::addTopoComm(e.comm->dup(), eh, t);
  });
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  (void)reorder;
  return call("MPI_Dist_graph_create", On::comm(comm_old), [&] {
    auto& e = capi::topoParent(comm_old);
    onesided::Comm& c = *e.comm;
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    capi::checkNonNegative(n, "n");
    capi::checkRankList(c, n, sources, "sources");
    if (n > 0) capi::requireArg(degrees, "degrees");
    std::int64_t edges = 0;
    for (int i = 0; i < n; ++i) {
      if (degrees[i] < 0) {
        throw Error(MPI_ERR_ARG, "degrees[" + std::to_string(i) +
                                     "] = " + std::to_string(degrees[i]) + " is negative");
      }
      edges += degrees[i];
    }
    if (edges > std::numeric_limits<int>::max() / 3) {
      throw Error(MPI_ERR_ARG, std::to_string(edges) + " edges are too many");
    }
    const int m = static_cast<int>(edges);
    capi::checkRankList(c, m, destinations, "destinations");
    const bool weighted = capi::checkWeights(m, weights, "weights");
    capi::checkInfo(info);
    capi::requireArg(comm_dist_graph, "comm_dist_graph");

    // Each edge (s -> d, w) is told to both ends: to s as an out edge (1, d, w), to d as an in
    // edge (0, s, w). Every rank then reads its edges in the order of the ranks that gave them,
    // each rank's in the order it listed them.
    const int p = c.size();
    std::vector<std::vector<int>> to(static_cast<std::size_t>(p));
    int k = 0;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < degrees[i]; ++j, ++k) {
        const int w = weighted ? weights[k] : 1;
        auto& out = to[static_cast<std::size_t>(sources[i])];
        out.insert(out.end(), {1, destinations[k], w});
        auto& in = to[static_cast<std::size_t>(destinations[k])];
        in.insert(in.end(), {0, sources[i], w});
      }
    }
    std::vector<int> scounts(static_cast<std::size_t>(p)), sdispls(static_cast<std::size_t>(p));
    std::vector<int> rcounts(static_cast<std::size_t>(p)), rdispls(static_cast<std::size_t>(p));
    std::vector<int> flat;
    for (std::size_t r = 0; r < to.size(); ++r) {
      scounts[r] = static_cast<int>(to[r].size());
      sdispls[r] = static_cast<int>(flat.size());
      flat.insert(flat.end(), to[r].begin(), to[r].end());
    }
    const onesided::Datatype& intType = capi::datatype(MPI_INT);
    coll::alltoall(c, scounts.data(), 1, &intType, rcounts.data(), 1, &intType);
    std::int64_t total = 0;
    for (std::size_t r = 0; r < rcounts.size(); ++r) {
      rdispls[r] = static_cast<int>(total);
      total += rcounts[r];
      if (total > std::numeric_limits<int>::max()) {
        throw Error(MPI_ERR_ARG, "this rank has too many edges");
      }
    }
    std::vector<int> got(static_cast<std::size_t>(total));
    coll::alltoallv(c, flat.data(), scounts.data(), sdispls.data(), &intType, got.data(),
                    rcounts.data(), rdispls.data(), &intType);
    auto t = std::make_shared<Topology>();
    t->kind = Topology::Kind::kDistGraph;
    t->weighted = weighted;
    for (std::size_t i = 0; i + 2 < got.size(); i += 3) {
      if (got[i] == 1) {
        t->destinations.push_back(got[i + 1]);
        t->destWeights.push_back(got[i + 2]);
      } else {
        t->sources.push_back(got[i + 1]);
        t->sourceWeights.push_back(got[i + 2]);
      }
    }
    const MPI_Errhandler eh = e.errhandler;
    *comm_dist_graph = capi::addTopoComm(c.dup(), eh, t);
  });
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  return call("MPI_Dist_graph_neighbors_count", On::comm(comm), [&] {
    const Topology& t = capi::distGraphOf(comm);
    capi::requireArg(indegree, "indegree");
    capi::requireArg(outdegree, "outdegree");
    capi::requireArg(weighted, "weighted");
    *indegree = static_cast<int>(t.sources.size());
    *outdegree = static_cast<int>(t.destinations.size());
    *weighted = t.weighted ? 1 : 0;
  });
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]) {
  return call("MPI_Dist_graph_neighbors", On::comm(comm), [&] {
    const Topology& t = capi::distGraphOf(comm);
    capi::checkNonNegative(maxindegree, "maxindegree");
    capi::checkNonNegative(maxoutdegree, "maxoutdegree");
    if (maxindegree > 0 && !t.sources.empty()) capi::requireArg(sources, "sources");
    if (maxoutdegree > 0 && !t.destinations.empty()) capi::requireArg(destinations, "destinations");
    capi::copyOut(t.sources, maxindegree, sources);
    capi::copyOut(t.destinations, maxoutdegree, destinations);
    // Weights only for a weighted graph, and only into real arrays (MPI_UNWEIGHTED is not one).
    if (t.weighted) {
      capi::copyOut(t.sourceWeights, maxindegree, sourceweights);
      capi::copyOut(t.destWeights, maxoutdegree, destweights);
    }
  });
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_allgather", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                      onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAllgather(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcount, rt.ptr);
        }));
  });
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return call("MPI_Ineighbor_allgather", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ineighbor_allgather", comm, request,
        capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAllgather(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcount, rt.ptr);
        }));
  });
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_allgatherv", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                      onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAllgatherv(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcounts, displs,
                                   rt.ptr);
        }));
  });
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ineighbor_allgatherv", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ineighbor_allgatherv", comm, request,
        capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAllgatherv(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcounts, displs,
                                   rt.ptr);
        }));
  });
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_alltoall", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                      onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAlltoall(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcount, rt.ptr);
        }));
  });
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  return call("MPI_Ineighbor_alltoall", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ineighbor_alltoall", comm, request,
        capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAlltoall(c, nb, sendbuf, sendcount, st.ptr, recvbuf, recvcount, rt.ptr);
        }));
  });
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Neighbor_alltoallv", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                      onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAlltoallv(c, nb, sendbuf, sendcounts, sdispls, st.ptr, recvbuf, recvcounts,
                                  rdispls, rt.ptr);
        }));
  });
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return call("MPI_Ineighbor_alltoallv", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ineighbor_alltoallv", comm, request,
        capi::hoodJob(comm, [=, st = capi::typeArg(sendtype), rt = capi::typeArg(recvtype)](
                                onesided::Comm& c, const coll::Neighborhood& nb) {
          coll::neighborAlltoallv(c, nb, sendbuf, sendcounts, sdispls, st.ptr, recvbuf, recvcounts,
                                  rdispls, rt.ptr);
        }));
  });
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  return call("MPI_Neighbor_alltoallw", On::comm(comm), [&] {
    capi::blocking(
        comm,
        capi::hoodJob(comm,
                      [=, st = capi::hoodTypes(capi::degrees(comm).second, sendtypes, "sendtypes"),
                       rt = capi::hoodTypes(capi::degrees(comm).first, recvtypes, "recvtypes")](
                          onesided::Comm& c, const coll::Neighborhood& nb) {
                        coll::neighborAlltoallw(c, nb, sendbuf, sendcounts, sdispls, st.ptrs.data(),
                                                recvbuf, recvcounts, rdispls, rt.ptrs.data());
                      }));
  });
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  return call("MPI_Ineighbor_alltoallw", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ineighbor_alltoallw", comm, request,
        capi::hoodJob(comm,
                      [=, st = capi::hoodTypes(capi::degrees(comm).second, sendtypes, "sendtypes"),
                       rt = capi::hoodTypes(capi::degrees(comm).first, recvtypes, "recvtypes")](
                          onesided::Comm& c, const coll::Neighborhood& nb) {
                        coll::neighborAlltoallw(c, nb, sendbuf, sendcounts, sdispls, st.ptrs.data(),
                                                recvbuf, recvcounts, rdispls, rt.ptrs.data());
                      }));
  });
}

}  // extern "C"
