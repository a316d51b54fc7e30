// SPDX-License-Identifier: BSD-3-Clause
// The synchronisation region behind MPI_Win_fence and MPI_Barrier: per rank, one cache line per
// dissemination round holding the last epoch number a peer wrote there. Round k of epoch e:
// write e into slot k at rank (r + 2^k) mod p, then wait until the own slot k holds >= e.
// Members that all share one node, 3 to kFlatUpTo of them, write e into slot r of every other
// member instead and wait once, for all p - 1 of their own slots: with more ranks than cores
// every wait that finds its flag missing costs a context switch, and log2 p waits in a row cost
// more than one (4 ranks on 2 cores: 1.2-1.8 us against 1.5-2.4 for the same stores and yields
// in dissemination order). Slots only grow, so no reset is needed between epochs and a fast
// peer that already wrote e+1 does not confuse a slow one still waiting for e.
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
  /// A slot no barrier writes (an int rank count needs 31 rounds at most, the flat barrier
  /// kFlatUpTo slots): in the world communicator's region, the CPU its rank runs on
  /// (Context::placementWord).
  static constexpr int kCpuSlot = kRounds - 1;
  static constexpr std::size_t kSlotStride = 64;
  /// Most members of a one-node region whose barrier is one flat exchange (see above).
  static constexpr int kFlatUpTo = 8;

  /// Where a member's slots are, as a host that reaches the member already sees them: its key
  /// (which the host keeps until this region is gone), their remote address, and their local
  /// address when they are on the load / store path (else null).
  struct Target {
    const transport::RemoteKey* key = nullptr;
    std::uint64_t addr = 0;
    std::uint64_t* direct = nullptr;
  };
  /// This rank's slots at `slots` (kBytes, zeroed, 8-byte aligned) in a region registered for
  /// remote writes that the caller keeps until this one is gone, and `resolve` tells where a
  /// member's are (called once per barrier partner: ceil(log2 p) of them, or flat p - 1): a
  /// communicator's lie in its collective channel's region, a window's next to its control words,
  /// in one registration with them, which the caller maps once for both (and may keep from one
  /// communicator or window to the next).
  SyncRegion(Context& ctx, const std::vector<int>& worldRanks, int me, std::byte* slots,
             std::function<Target(int member)> resolve);
  static constexpr std::size_t kBytes = static_cast<std::size_t>(kRounds) * kSlotStride;
  ~SyncRegion();
  SyncRegion(const SyncRegion&) = delete;
  SyncRegion& operator=(const SyncRegion&) = delete;

  /// One barrier (a new epoch): dissemination, or one flat exchange (see above).
  void barrier();
  /// Whether barrier() is the flat exchange (every member decides alike).
  [[nodiscard]] bool flat() const noexcept { return flat_; }

 private:
  struct Peer {
    int member = -1;  // set when resolved
    std::uint64_t base = 0;
    const transport::RemoteKey* key = nullptr;  // the caller's
    std::uint64_t* direct = nullptr;
    bool resolved = false;
  };
  /// The member this rank writes to in slot `k` of its peers' (dissemination: round k; flat:
  /// this rank's own index), resolved; peers_ holds one partner per round, or flat, per member.
  Peer& partner(std::size_t at, int member);
  std::uint64_t* slot(int k) const;
  /// Writes epoch e into slot k of `peer`'s region (outbox index `box`).
  void signal(Peer& peer, int k, std::size_t box, std::uint64_t e);

  Context& ctx_;
  const std::vector<int>* ranks_;
  int me_;
  std::byte* slots_;
  std::function<Target(int)> resolve_;
  std::vector<Peer> peers_;
  std::uint64_t epoch_ = 0;
  bool flat_ = false;
  // Source values of the flag puts of the two latest epochs (by parity): a transport put may
  // read its source after the call returns, and epoch e's flags are known to have landed once
  // every rank finished epoch e + 1.
  std::uint64_t outbox_[2][kRounds] = {};
};

}  // namespace onesided::detail
