// SPDX-License-Identifier: BSD-3-Clause
// The synchronisation region behind MPI_Win_fence and MPI_Barrier: per rank, one cache line per
// dissemination round holding the last epoch number a peer wrote there. Round k of epoch e:
// write e into slot k at rank (r + 2^k) mod p, then wait until the own slot k holds >= e.
// Slots only grow, so no reset is needed between epochs and a fast peer that already wrote e+1
// does not confuse a slow one still waiting for e.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

namespace onesided {
class Context;
}

namespace onesided::detail {

/// A registered region as its peers learn of it: an address in it (`at`; its base when null)
/// and its packed remote key in one blob (the sync region's, a collective channel's).
std::vector<std::byte> regionInfo(const transport::MemoryRegion& r, const void* at = nullptr);
/// The length of the regionInfo blob at the front of `in`.
std::size_t regionInfoSize(const std::byte* in);
/// The base and packed key of a regionInfo blob.
void parseRegionInfo(const std::vector<std::byte>& in, std::uint64_t& base,
                     std::vector<std::byte>& packedKey);

class SyncRegion {
 public:
  static constexpr int kRounds = 32;  // enough for 2^32 ranks
  static constexpr std::size_t kSlotStride = 64;

  /// This rank's slots in `host` at `offset` (kBytes there, zeroed, 8-byte aligned), a region
  /// the caller registered for remote writes and keeps until this one is gone: a window puts
  /// them next to its control words, one registration (and one shared-memory segment) instead
  /// of two. The members' slots are learnt through localInfo() / connect().
  SyncRegion(Context& ctx, const std::vector<int>& worldRanks, int me,
             const transport::MemoryRegion& host, std::size_t offset);
  /// Where a member's slots are, as a host that reaches the member already sees them: its key
  /// (which the host keeps until this region is gone), their remote address, and their local
  /// address when they are on the load / store path (else null).
  struct Target {
    const transport::RemoteKey* key = nullptr;
    std::uint64_t addr = 0;
    std::uint64_t* direct = nullptr;
  };
  /// This rank's slots at `slots` (kBytes, zeroed, 8-byte aligned) in a region that hosts every
  /// member's slots at the same offset, and `resolve` tells where a member's are: a
  /// communicator's lie in its collective channel's region, which the channel maps once for
  /// both (and keeps from one communicator to the next). No localInfo / connect.
  SyncRegion(Context& ctx, const std::vector<int>& worldRanks, int me, std::byte* slots,
             std::function<Target(int member)> resolve);
  static constexpr std::size_t kBytes = static_cast<std::size_t>(kRounds) * kSlotStride;
  ~SyncRegion();
  SyncRegion(const SyncRegion&) = delete;
  SyncRegion& operator=(const SyncRegion&) = delete;

  /// The bytes the other members need (address and key); exchanged by the creator's allgather.
  [[nodiscard]] std::vector<std::byte> localInfo() const;
  /// Takes every member's localInfo (in member order). Keys are unpacked lazily, for the
  /// ceil(log2 p) peers this rank ever writes to.
  void connect(const std::vector<std::vector<std::byte>>& infos);
  /// Like connect(), for members whose infos are fetched on first use (a member's, once): this
  /// rank then holds state for its ceil(log2 p) barrier partners only.
  void connectLazily(std::function<std::vector<std::byte>(int)> info);

  /// One dissemination barrier (a new epoch).
  void barrier();

 private:
  struct Peer {
    int member = -1;  // set when resolved
    std::uint64_t base = 0;
    std::vector<std::byte> packedKey;
    std::unique_ptr<transport::RemoteKey> own;  // unpacked here (connect / connectLazily)
    const transport::RemoteKey* key = nullptr;  // own, or the host's (resolve_)
    std::uint64_t* direct = nullptr;
    bool resolved = false;
  };
  /// The member this rank writes to in dissemination round `round`, resolved (peers_ holds
  /// every member after connect(), the partners by round after connectLazily()).
  Peer& partner(int round, int member);
  /// Sizes peers_ for one partner per dissemination round: ceil(log2 p) of them.
  void peersByRound();
  std::uint64_t* slot(int round) const;

  Context& ctx_;
  const std::vector<int>* ranks_;
  int me_;
  const transport::MemoryRegion* region_ = nullptr;  // the host (null with resolve_)
  std::byte* slots_;
  std::function<std::vector<std::byte>(int)> lazyInfo_;  // connectLazily()
  std::function<Target(int)> resolve_;
  std::vector<Peer> peers_;
  std::uint64_t epoch_ = 0;
  // Source values of the flag puts of the two latest epochs (by parity): a transport put may
  // read its source after the call returns, and epoch e's flags are known to have landed once
  // every rank finished epoch e + 1.
  std::uint64_t outbox_[2][kRounds] = {};
};

}  // namespace onesided::detail
