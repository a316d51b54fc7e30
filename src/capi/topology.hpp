// SPDX-License-Identifier: BSD-3-Clause
// A communicator's process topology (MPI-3.1 chapter 7): a Cartesian grid, a graph, or a
// distributed graph, and what the topology calls and the neighbourhood collectives ask of it.
// Immutable once made, so MPI_Comm_dup shares it (the CommEntry holds it by shared_ptr).
#pragma once

#include <span>
#include <vector>

namespace onesided::capi {

struct Topology {
  enum class Kind { kCart, kGraph, kDistGraph };
  Kind kind = Kind::kCart;

  // Cartesian: the grid's extents and periodicity, row-major rank order.
  std::vector<int> dims;
  std::vector<bool> periods;

  // Graph (MPI_Graph_create): index[i] is the end of node i's edges in `edges`, cumulative.
  std::vector<int> index;
  std::vector<int> edges;

  // Distributed graph: this rank's in and out edges, as comm ranks, and their weights (all 1
  // when unweighted).
  std::vector<int> sources;
  std::vector<int> sourceWeights;
  std::vector<int> destinations;
  std::vector<int> destWeights;
  bool weighted = false;

  /// This rank's neighbourhood lists (neighbors()), made once when the communicator is: the
  /// neighbourhood collectives read them at every call.
  std::vector<int> in;
  std::vector<int> out;

  /// Cartesian: the coordinates of `rank` (in range).
  [[nodiscard]] std::vector<int> coords(int rank) const;
  /// Cartesian: the rank at `coords`, periodic dimensions wrapped; -1 when a coordinate of a
  /// non-periodic dimension is out of range.
  [[nodiscard]] int rankAt(std::span<const int> coords) const;
  /// Cartesian: MPI_Cart_shift's pair (MPI_PROC_NULL off a non-periodic edge).
  void shift(int rank, int direction, int disp, int& source, int& dest) const;
  /// Graph: node `rank`'s neighbours, in the order given at creation.
  [[nodiscard]] std::span<const int> graphNeighbors(int rank) const;

  /// The neighbourhood collectives' lists for `rank` (MPI-3.1 §7.6): the ranks it receives
  /// from and sends to, MPI_PROC_NULL where a Cartesian shift leaves the grid. Cartesian: for
  /// each dimension the -1 then the +1 neighbour, both lists; graph: the neighbours, both lists;
  /// distributed graph: the sources and the destinations.
  void neighbors(int rank, std::vector<int>& in, std::vector<int>& out) const;
};

/// MPI_Dims_create's balancing: fills the zero entries of `dims` so that their product times
/// the nonzero ones' is `nnodes`, as close to each other as possible (the least difference
/// between the largest and the smallest, then the least largest), in non-increasing order.
/// Throws Error MPI_ERR_DIMS when nnodes is not positive, an entry is negative, or the nonzero
/// entries' product does not divide nnodes (or, without zero entries, is not nnodes).
void dimsCreate(int nnodes, std::span<int> dims);

}  // namespace onesided::capi
