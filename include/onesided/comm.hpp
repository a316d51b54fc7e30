// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace onesided {

class Context;
namespace detail {
class SyncRegion;
}

/// A communicator: an ordered set of world ranks with this rank's place in it, and a registered
/// sync region for its barrier. Not thread-safe.
class Comm {
 public:
  /// Not collective by itself: the creator exchanges sync-region info (see Context) and calls
  /// connectSync. `worldRanks` must contain the calling rank.
  Comm(Context& ctx, std::vector<int> worldRanks);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] int worldRank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  Context& context() { return ctx_; }

  /// Every rank contributes a blob; all blobs in comm rank order. Collective.
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine);
  /// The dissemination barrier made of one-sided writes (ceil(log2 p) rounds). Collective.
  void barrier();

 private:
  friend class Context;
  void connectSync(const std::vector<std::vector<std::byte>>& infos);

  Context& ctx_;
  std::vector<int> ranks_;
  int rank_ = 0;
  std::unique_ptr<detail::SyncRegion> sync_;
};

}  // namespace onesided
