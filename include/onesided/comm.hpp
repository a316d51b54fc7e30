// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "onesided/group.hpp"

namespace onesided {

class Context;

/// splitmix64 of (a, b): how a derived communicator's context is made from its parent's and a
/// count, so that different derivations get different contexts.
std::uint64_t mixContext(std::uint64_t a, std::uint64_t b) noexcept;
namespace detail {
class SyncRegion;
class Channel;
}  // namespace detail

/// MPI_UNDEFINED, the color of ranks that join no communicator in split.
constexpr int kUndefined = -32766;

/// A communicator: an ordered set of world ranks with this rank's place in it and a registered
/// scratch region (detail::Channel) that its collectives move data through, which also holds the
/// slots of its barrier (detail::SyncRegion). Not thread-safe.
class Comm {
 public:
  /// Not collective by itself: the creator exchanges localInfo() (see Context, derive) and
  /// calls connect or connectLazily. `worldRanks` must contain the calling rank.
  Comm(Context& ctx, std::vector<int> worldRanks);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] int worldRank(int r) const { return ranks_[static_cast<std::size_t>(r)]; }
  Context& context() { return ctx_; }

  [[nodiscard]] const std::vector<int>& worldRanks() const noexcept { return ranks_; }
  /// MPI_Comm_group: the members as a group.
  [[nodiscard]] Group group() const { return Group(ranks_); }

  /// Every rank contributes a blob; all blobs in comm rank order, moved by one-sided writes into
  /// the members' scratch regions. Collective.
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine);
  /// The dissemination barrier made of one-sided writes (ceil(log2 p) rounds). Collective.
  void barrier();

  /// MPI_Comm_dup: the same members, new regions. Collective.
  std::unique_ptr<Comm> dup();
  /// MPI_Comm_split: members of the same color, ordered by (key, rank here); nullptr for
  /// kUndefined. Collective over this communicator.
  std::unique_ptr<Comm> split(int color, int key);
  /// MPI_Comm_split_type with MPI_COMM_TYPE_SHARED: the members on this rank's node (those that
  /// can share memory, what Window::allocateShared needs), ordered by (key, rank here).
  /// Collective over this communicator.
  std::unique_ptr<Comm> splitShared(int key);
  /// MPI_Comm_create: the members of `g` (a subgroup of this communicator, the same on every
  /// rank), nullptr on ranks outside it. Collective over this communicator.
  std::unique_ptr<Comm> create(const Group& g);
  /// A context for a communicator made from this one by other means than dup / split / create
  /// (an intercommunicator, say): the next derivation's, so every member must ask at the same
  /// point of its calls on this communicator.
  std::uint64_t deriveContext();
  /// Every member's info blob, in member order, for assemble(); moved as the caller likes.
  using Exchange =
      std::function<std::vector<std::vector<std::byte>>(std::span<const std::byte> mine)>;
  /// A communicator of `worldRanks` (in that order; this rank among them) with point-to-point
  /// context `p2pContext`, made without a parent communicator that holds every member
  /// (MPI_Intercomm_merge, MPI_Comm_create_group): `exchange` moves the members' info blobs.
  /// Collective over the members.
  static std::unique_ptr<Comm> assemble(Context& ctx, std::vector<int> worldRanks,
                                        std::uint64_t p2pContext, const Exchange& exchange);

  /// MPI_Comm_create_group: the members of `g` (a subgroup of this communicator), made by them
  /// alone (the others do not call it; nullptr for a rank outside `g`). Their messages carry
  /// `tag` on a context of this communicator's kept for them, so concurrent creations on
  /// overlapping groups tell theirs apart by the tag. Collective over `g`.
  std::unique_ptr<Comm> createGroup(const Group& g, int tag);

  /// MPI_Comm_free's collective part: completes this rank's writes into the others' regions and
  /// synchronises, so the regions can go away. The object is destroyed afterwards. `reuse`:
  /// nothing uses the communicator after this (no window over it), so its collective scratch
  /// region goes to the context for the next communicator of its size (Context::keepScratch).
  void free(bool reuse = true);

  /// Names this communicator in point-to-point messages (src/p2p/): the same on every member,
  /// and different from every other communicator a member belongs to (the world's is 1,
  /// MPI_COMM_SELF's 2, a derived one's is mixed from its parent's and the parent's count of
  /// derivations, which every member of the parent makes in the same order).
  [[nodiscard]] std::uint64_t p2pContext() const noexcept { return p2pContext_; }

  /// The scratch region the collectives use (collectives/).
  detail::Channel& channel() { return *channel_; }

 private:
  friend class Context;
  /// This rank's scratch region info, for the creator's exchange.
  [[nodiscard]] std::vector<std::byte> localInfo() const;
  void connect(const std::vector<std::vector<std::byte>>& infos);
  /// Like connect(), with each member's info fetched on first use (the world communicator's,
  /// from the bootstrap: start-up reads only the peers a rank talks to).
  void connectLazily(std::function<std::vector<std::byte>(int)> info);
  /// Builds the communicator of `members` (world ranks, in order; empty when this rank is not
  /// one) and connects it through an allgather over this communicator.
  std::unique_ptr<Comm> derive(const std::vector<int>& members);

  Context& ctx_;
  std::vector<int> ranks_;
  int rank_ = 0;
  std::uint64_t p2pContext_ = 1;
  std::uint64_t derived_ = 0;  // communicators derived from this one so far
  std::uint64_t grouped_ = 0;  // communicators createGroup made with this rank leading
  std::unique_ptr<detail::Channel> channel_;
  std::unique_ptr<detail::SyncRegion> sync_;  // in channel_'s region: goes first
};

}  // namespace onesided
