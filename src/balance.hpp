// SPDX-License-Identifier: BSD-3-Clause
// Which CPU an oversubscribed rank moves to (Context::balanceCores): with more ranks than CPUs
// the scheduler may leave the ranks of a node unevenly spread for a whole run, and the crowded
// CPU then sets the pace of every collective.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

#include "collectives/small_vec.hpp"

namespace onesided::detail {

/// `shown[i]`: the CPU node rank i runs on (-1: unknown); `me`: this rank's index in it;
/// `allowed`: the CPUs this rank may use, ascending. The CPU this rank moves to, or -1: it moves
/// when its CPU runs at least two more of the ranks than the least busy allowed CPU (the
/// lowest such on a tie) and no rank after it runs there (so that one rank moves at a time).
/// Nothing moves while any rank's CPU is unknown.
inline int balanceTarget(std::span<const int> shown, std::size_t me, std::span<const int> allowed) {
  if (me >= shown.size() || allowed.empty()) return -1;
  const int cpu = shown[me];
  if (cpu < 0) return -1;
  SmallVec<int, 16> count;
  for (std::size_t i = 0; i < allowed.size(); ++i) count.push_back(0);
  int here = 0;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const int c = shown[i];
    if (c < 0) return -1;
    if (c == cpu) {
      if (i > me) return -1;  // a later rank on this CPU is the one to move
      ++here;
    }
    const auto* at = std::lower_bound(allowed.data(), allowed.data() + allowed.size(), c);
    if (at != allowed.data() + allowed.size() && *at == c) {
      ++count[static_cast<std::size_t>(at - allowed.data())];
    }
  }
  std::size_t least = 0;
  for (std::size_t i = 1; i < allowed.size(); ++i) {
    if (count[i] < count[least]) least = i;
  }
  return allowed[least] != cpu && here >= count[least] + 2 ? allowed[least] : -1;
}

}  // namespace onesided::detail
