// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/group.hpp"

#include <algorithm>
#include <climits>
#include <unordered_set>
#include <utility>

#include "onesided/errors.hpp"

namespace onesided {
namespace {

std::string str(int v) { return std::to_string(v); }

}  // namespace

int Group::rankOf(int worldRank) const noexcept {
  auto it = std::find(ranks_.begin(), ranks_.end(), worldRank);
  return it == ranks_.end() ? -1 : static_cast<int>(it - ranks_.begin());
}

std::vector<int> Group::ranksOf(std::span<const int> worldRanks) const {
  std::vector<std::pair<int, int>> index(ranks_.size());  // (world rank, rank here), sorted
  for (std::size_t r = 0; r < ranks_.size(); ++r) index[r] = {ranks_[r], static_cast<int>(r)};
  std::sort(index.begin(), index.end());
  std::vector<int> out;
  out.reserve(worldRanks.size());
  for (int w : worldRanks) {
    auto it = std::lower_bound(index.begin(), index.end(), std::pair<int, int>{w, INT_MIN});
    out.push_back(it != index.end() && it->first == w ? it->second : -1);
  }
  return out;
}

Group Group::incl(std::span<const int> ranks) const {
  std::vector<int> out;
  out.reserve(ranks.size());
  std::vector<bool> seen(ranks_.size(), false);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size()) {
      throw Error(kErrRank, "ranks[" + std::to_string(i) + "] = " + str(r) +
                                " is not a rank of the group (size " + str(size()) + ")");
    }
    if (seen[static_cast<std::size_t>(r)]) {
      throw Error(kErrRank, "ranks[" + std::to_string(i) + "] = " + str(r) + " is listed twice");
    }
    seen[static_cast<std::size_t>(r)] = true;
    out.push_back(worldRank(r));
  }
  return Group(std::move(out));
}

Group Group::excl(std::span<const int> ranks) const {
  std::vector<bool> drop(ranks_.size(), false);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size()) {
      throw Error(kErrRank, "ranks[" + std::to_string(i) + "] = " + str(r) +
                                " is not a rank of the group (size " + str(size()) + ")");
    }
    if (drop[static_cast<std::size_t>(r)]) {
      throw Error(kErrRank, "ranks[" + std::to_string(i) + "] = " + str(r) + " is listed twice");
    }
    drop[static_cast<std::size_t>(r)] = true;
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    if (!drop[i]) out.push_back(ranks_[i]);
  }
  return Group(std::move(out));
}

std::vector<int> Group::expandRanges(std::span<const int> t, const char* call) const {
  std::vector<int> out;
  std::vector<bool> seen(ranks_.size(), false);
  if (t.size() % 3 != 0) throw Error(kErrArg, "ranges are not triplets");
  for (std::size_t i = 0; i + 3 <= t.size(); i += 3) {
    const int first = t[i], last = t[i + 1], stride = t[i + 2];
    const std::string which = std::string(call) + "range " + std::to_string(i / 3) + " (" +
                              str(first) + ", " + str(last) + ", " + str(stride) + ")";
    if (stride == 0) throw Error(kErrArg, which + ": stride 0");
    if (first < 0 || first >= size() || last < 0 || last >= size()) {
      throw Error(kErrRank, which + ": rank out of the group (size " + str(size()) + ")");
    }
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
      throw Error(kErrArg, which + ": the stride goes away from the last rank");
    }
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (seen[static_cast<std::size_t>(r)]) {
        throw Error(kErrRank, which + ": rank " + std::to_string(r) + " is named twice");
      }
      seen[static_cast<std::size_t>(r)] = true;
      out.push_back(static_cast<int>(r));
    }
  }
  return out;
}

Group Group::rangeIncl(std::span<const int> triplets) const {
  auto r = expandRanges(triplets, "");
  return incl(r);
}

Group Group::rangeExcl(std::span<const int> triplets) const {
  auto r = expandRanges(triplets, "");
  return excl(r);
}

Group Group::unite(const Group& a, const Group& b) {
  std::vector<int> out = a.ranks_;
  std::unordered_set<int> in(a.ranks_.begin(), a.ranks_.end());
  for (int w : b.ranks_) {
    if (in.insert(w).second) out.push_back(w);
  }
  return Group(std::move(out));
}

Group Group::intersect(const Group& a, const Group& b) {
  std::unordered_set<int> inB(b.ranks_.begin(), b.ranks_.end());
  std::vector<int> out;
  for (int w : a.ranks_) {
    if (inB.count(w) != 0) out.push_back(w);
  }
  return Group(std::move(out));
}

Group Group::difference(const Group& a, const Group& b) {
  std::unordered_set<int> inB(b.ranks_.begin(), b.ranks_.end());
  std::vector<int> out;
  for (int w : a.ranks_) {
    if (inB.count(w) == 0) out.push_back(w);
  }
  return Group(std::move(out));
}

Compare Group::compare(const Group& a, const Group& b) {
  if (a.ranks_ == b.ranks_) return Compare::kIdent;
  if (a.ranks_.size() != b.ranks_.size()) return Compare::kUnequal;
  auto sa = a.ranks_, sb = b.ranks_;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? Compare::kSimilar : Compare::kUnequal;
}

}  // namespace onesided
