// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <span>
#include <string>
#include <vector>

namespace onesided {

/// MPI_IDENT / MPI_CONGRUENT / MPI_SIMILAR / MPI_UNEQUAL, as <mpi.h> numbers them.
enum class Compare : int { kIdent = 0, kCongruent = 1, kSimilar = 2, kUnequal = 3 };

/// An ordered set of world ranks (MPI-3.1 §6.3). A value type: the operations are local and
/// return new groups. Every bad argument throws Error with its MPI class and a message naming the
/// value (kErrRank for ranks out of range or repeated, kErrArg for bad ranges or counts).
class Group {
 public:
  Group() = default;
  explicit Group(std::vector<int> worldRanks) : ranks_(std::move(worldRanks)) {}

  [[nodiscard]] int size() const noexcept { return static_cast<int>(ranks_.size()); }
  /// The rank of world rank `worldRank` in this group, or -1 (MPI_UNDEFINED is the caller's).
  [[nodiscard]] int rankOf(int worldRank) const noexcept;
  /// rankOf() of each world rank, through one sorted index: O((n + p) log p), not a search of
  /// the group per rank.
  [[nodiscard]] std::vector<int> ranksOf(std::span<const int> worldRanks) const;
  [[nodiscard]] int worldRank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  [[nodiscard]] const std::vector<int>& worldRanks() const noexcept { return ranks_; }

  /// MPI_Group_incl: members ranks[0], ranks[1], ... in that order.
  [[nodiscard]] Group incl(std::span<const int> ranks) const;
  /// MPI_Group_excl: the members not listed, in their order here.
  [[nodiscard]] Group excl(std::span<const int> ranks) const;
  /// MPI_Group_range_incl / excl: triplets (first, last, stride).
  [[nodiscard]] Group rangeIncl(std::span<const int> triplets) const;
  [[nodiscard]] Group rangeExcl(std::span<const int> triplets) const;
  /// MPI_Group_union / intersection / difference (order: this group's first, MPI-3.1 §6.3.2).
  [[nodiscard]] static Group unite(const Group& a, const Group& b);
  [[nodiscard]] static Group intersect(const Group& a, const Group& b);
  [[nodiscard]] static Group difference(const Group& a, const Group& b);
  /// MPI_Group_compare.
  [[nodiscard]] static Compare compare(const Group& a, const Group& b);

 private:
  // The ranks a range list names, in order; `call` names the MPI call in messages.
  [[nodiscard]] std::vector<int> expandRanges(std::span<const int> triplets,
                                              const char* call) const;
  std::vector<int> ranks_;
};

}  // namespace onesided
