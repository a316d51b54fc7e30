// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create's factorisation (capi::dimsCreate): the standard's examples, its errors, and
// against an exhaustive search over every split for small counts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "capi/topology.hpp"
#include "onesided/errors.hpp"

namespace {

using onesided::capi::dimsCreate;

std::vector<int> dims(int nnodes, std::vector<int> d) {
  dimsCreate(nnodes, d);
  return d;
}

int errorOf(int nnodes, std::vector<int> d) {
  try {
    dimsCreate(nnodes, d);
  } catch (const onesided::Error& e) {
    return e.errorClass();
  }
  return MPI_SUCCESS;
}

TEST(DimsCreate, StandardExamples) {
  // MPI-3.1 §7.5.2, Example 7.1.
  EXPECT_EQ(dims(6, {0, 0}), (std::vector<int>{3, 2}));
  EXPECT_EQ(dims(7, {0, 0}), (std::vector<int>{7, 1}));
  EXPECT_EQ(dims(6, {0, 3, 0}), (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(errorOf(7, {0, 3, 0}), MPI_ERR_DIMS);
}

TEST(DimsCreate, Balanced) {
  EXPECT_EQ(dims(12, {0, 0, 0}), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(dims(16, {0, 0, 0}), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(dims(24, {0, 3, 0}), (std::vector<int>{4, 3, 2}));
  EXPECT_EQ(dims(64, {0, 0, 0}), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(dims(1, {0, 0}), (std::vector<int>{1, 1}));
  EXPECT_EQ(dims(1 << 30, {0, 0}), (std::vector<int>{1 << 15, 1 << 15}));
  EXPECT_EQ(dims(2147483647, {0, 0}), (std::vector<int>{2147483647, 1}));  // a prime
  EXPECT_EQ(dims(6, {2, 3}), (std::vector<int>{2, 3}));
}

TEST(DimsCreate, Errors) {
  EXPECT_EQ(errorOf(6, {4, 0}), MPI_ERR_DIMS);
  EXPECT_EQ(errorOf(6, {2, 2}), MPI_ERR_DIMS);
  EXPECT_EQ(errorOf(4, {-1, 0}), MPI_ERR_DIMS);
  EXPECT_EQ(errorOf(0, {0}), MPI_ERR_DIMS);
  EXPECT_EQ(errorOf(4, {}), MPI_ERR_DIMS);  // no dimensions: a product of 1
  EXPECT_NO_THROW(dims(1, {}));
  EXPECT_EQ(errorOf(2147483647, {65536, 65536, 0}), MPI_ERR_DIMS);  // product past int
}

// Every non-increasing split of n into k factors: the least spread, then the least largest.
std::vector<int> bruteForce(int n, int k) {
  std::vector<int> best, cur;
  std::function<void(int, int, int)> go = [&](int m, int left, int cap) {
    if (left == 0) {
      if (m != 1) return;
      auto spread = [](const std::vector<int>& v) { return v.front() - v.back(); };
      if (best.empty() || spread(cur) < spread(best) ||
          (spread(cur) == spread(best) && cur.front() < best.front())) {
        best = cur;
      }
      return;
    }
    for (int d = 1; d <= std::min(m, cap); ++d) {
      if (m % d != 0) continue;
      cur.push_back(d);
      go(m / d, left - 1, d);
      cur.pop_back();
    }
  };
  go(n, k, n);
  return best;
}

TEST(DimsCreate, MatchesExhaustiveSearch) {
  for (int n = 1; n <= 200; ++n) {
    for (int k = 1; k <= 5; ++k) {
      EXPECT_EQ(dims(n, std::vector<int>(static_cast<std::size_t>(k), 0)), bruteForce(n, k))
          << n << " over " << k << " dimensions";
    }
  }
}

}  // namespace
