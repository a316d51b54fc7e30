// SPDX-License-Identifier: BSD-3-Clause
// Topology arithmetic (topology.hpp): Cartesian coordinates and shifts, graph adjacency, the
// neighbourhood lists, and MPI_Dims_create's factorisation.
#include "capi/topology.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "onesided/errors.hpp"

namespace onesided::capi {

std::vector<int> Topology::coords(int rank) const {
  std::vector<int> out(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    out[i] = rank % dims[i];
    rank /= dims[i];
  }
  return out;
}

int Topology::rankAt(std::span<const int> c) const {
  int rank = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    int x = c[i];
    if (x < 0 || x >= dims[i]) {
      if (!periods[i]) return -1;
      x %= dims[i];
      if (x < 0) x += dims[i];
    }
    rank = rank * dims[i] + x;
  }
  return rank;
}

void Topology::shift(int rank, int direction, int disp, int& source, int& dest) const {
  std::vector<int> c = coords(rank);
  const auto d = static_cast<std::size_t>(direction);
  const int at = c[d];
  // In 64 bits: a displacement near INT_MAX must not wrap into the grid.
  auto moved = [&](std::int64_t by) {
    const std::int64_t x = at + by;
    const int n = dims[d];
    if (x < 0 || x >= n) {
      if (!periods[d]) return MPI_PROC_NULL;
      c[d] = static_cast<int>(((x % n) + n) % n);
    } else {
      c[d] = static_cast<int>(x);
    }
    return rankAt(c);
  };
  dest = moved(disp);
  source = moved(-static_cast<std::int64_t>(disp));
}

std::span<const int> Topology::graphNeighbors(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  const int begin = r == 0 ? 0 : index[r - 1];
  return {edges.data() + begin, static_cast<std::size_t>(index[r] - begin)};
}

void Topology::neighbors(int rank, std::vector<int>& in, std::vector<int>& out) const {
  in.clear();
  out.clear();
  switch (kind) {
    case Kind::kCart:
      for (std::size_t d = 0; d < dims.size(); ++d) {
        int source = 0, dest = 0;
        shift(rank, static_cast<int>(d), 1, source, dest);
        in.push_back(source);
        in.push_back(dest);
      }
      out = in;
      return;
    case Kind::kGraph: {
      const std::span<const int> n = graphNeighbors(rank);
      in.assign(n.begin(), n.end());
      out = in;
      return;
    }
    case Kind::kDistGraph:
      in = sources;
      out = destinations;
      return;
  }
}

namespace {

/// The best split of m into k non-increasing factors, each at most `cap`, after the factors
/// chosen so far (`cur`): a depth-first search over m's divisors, largest factor first.
struct Search {
  std::vector<int> divisors;  // of the whole, ascending
  std::vector<int> cur;
  std::vector<int> best;
  std::int64_t bestDiff = INT64_MAX;
  std::int64_t bestMax = INT64_MAX;

  void run(std::int64_t m, std::size_t k, std::int64_t cap) {
    if (k == 0) {
      if (m != 1) return;
      const std::int64_t hi = cur.front();
      const std::int64_t diff = hi - cur.back();
      if (diff < bestDiff || (diff == bestDiff && hi < bestMax)) {
        bestDiff = diff;
        bestMax = hi;
        best = cur;
      }
      return;
    }
    if (m == 1) {  // the rest are ones
      const std::size_t n = cur.size();
      cur.resize(n + k, 1);
      run(1, 0, 1);
      cur.resize(n);
      return;
    }
    for (const int d : divisors) {
      if (d > cap) break;
      if (m % d != 0) continue;
      // k factors of at most d must reach m.
      std::int64_t reach = 1;
      for (std::size_t i = 0; i < k && reach < m; ++i) reach *= d;
      if (reach < m) continue;
      // The factors from here are at most d, so the spread is at least front - d.
      if (!cur.empty() && cur.front() - d > bestDiff) continue;
      cur.push_back(d);
      run(m / d, k - 1, d);
      cur.pop_back();
    }
  }
};

}  // namespace

void dimsCreate(int nnodes, std::span<int> dims) {
  if (nnodes <= 0) {
    throw Error(MPI_ERR_DIMS, "nnodes " + std::to_string(nnodes) + " is not positive");
  }
  std::int64_t fixed = 1;
  std::size_t free = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      throw Error(MPI_ERR_DIMS,
                  "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + " is negative");
    }
    if (dims[i] == 0) {
      ++free;
    } else {
      fixed *= dims[i];
      if (fixed > nnodes) break;  // cannot divide; also keeps the product in range
    }
  }
  if (fixed > nnodes || nnodes % fixed != 0) {
    throw Error(MPI_ERR_DIMS,
                "the nonzero entries of dims do not divide nnodes " + std::to_string(nnodes));
  }
  const std::int64_t m = nnodes / fixed;
  if (free == 0) {
    if (m != 1) {
      throw Error(MPI_ERR_DIMS,
                  "dims has no zero entry and its product is not nnodes " + std::to_string(nnodes));
    }
    return;
  }
  Search s;
  for (std::int64_t d = 1; d * d <= m; ++d) {
    if (m % d != 0) continue;
    s.divisors.push_back(static_cast<int>(d));
    if (d * d != m) s.divisors.push_back(static_cast<int>(m / d));
  }
  std::sort(s.divisors.begin(), s.divisors.end());
  s.run(m, free, m);
  std::size_t next = 0;
  for (int& d : dims) {
    if (d == 0) d = s.best[next++];
  }
}

}  // namespace onesided::capi
