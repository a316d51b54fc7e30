// SPDX-License-Identifier: BSD-3-Clause
#include "window/sync.hpp"

#include <atomic>
#include <cstring>

#include "bootstrap/bootstrap.hpp"
#include "hang.hpp"
#include "log.hpp"
#include "onesided/context.hpp"
#include "onesided/errors.hpp"

namespace onesided::detail {
namespace {

struct InfoHeader {
  std::uint64_t base;
  std::uint64_t keyLen;
};

}  // namespace

SyncRegion::SyncRegion(Context& ctx, const std::vector<int>& worldRanks, int me, std::byte* slots,
                       std::function<Target(int member)> resolve)
    : ctx_(ctx), ranks_(&worldRanks), me_(me), slots_(slots), resolve_(std::move(resolve)) {
  const std::size_t p = ranks_->size();
  flat_ = p > 2 && p <= static_cast<std::size_t>(kFlatUpTo) && ctx_.sameNode(*ranks_);
  std::size_t rounds = 0;
  while ((std::size_t{1} << rounds) < p) ++rounds;
  peers_.resize(flat_ ? p : rounds);
}

SyncRegion::~SyncRegion() {
  // The last barrier's puts to peers reached through the transport may still be in flight (a
  // barrier does not wait for its own puts, only for the others'): they read this region's
  // outbox and use the peers' keys, so they complete before either goes away. Without this a
  // rank leaving MPI_Win_free first unmapped its outbox under a queued put (UCX over rc_verbs),
  // and the peer waited in that barrier forever.
  for (const Peer& p : peers_) {
    if (!p.resolved || p.direct != nullptr || p.member == me_) continue;
    const int world = (*ranks_)[static_cast<std::size_t>(p.member)];
    try {
      ctx_.endpoint(world).flush();
    } catch (const std::exception& e) {
      log::core().warn("completing the last barrier's put to rank {}: {}", world, e.what());
    }
  }
}

std::vector<std::byte> regionInfo(const transport::MemoryRegion& r, const void* at) {
  auto key = r.packRkey();
  InfoHeader h{reinterpret_cast<std::uint64_t>(at != nullptr ? at : r.base()), key.size()};
  std::vector<std::byte> out(sizeof h + key.size());
  std::memcpy(out.data(), &h, sizeof h);
  if (!key.empty()) std::memcpy(out.data() + sizeof h, key.data(), key.size());
  return out;
}

std::size_t regionInfoSize(const std::byte* in) {
  InfoHeader h{};
  std::memcpy(&h, in, sizeof h);
  return sizeof h + h.keyLen;
}

void parseRegionInfo(const std::vector<std::byte>& in, std::uint64_t& base,
                     std::vector<std::byte>& packedKey) {
  InfoHeader h{};
  std::memcpy(&h, in.data(), sizeof h);
  base = h.base;
  packedKey.assign(in.begin() + sizeof h,
                   in.begin() + static_cast<std::ptrdiff_t>(sizeof h + h.keyLen));
}

SyncRegion::Peer& SyncRegion::partner(std::size_t at, int member) {
  Peer& p = peers_[at];
  if (!p.resolved) {
    p.member = member;
    if (member == me_) {
      p.direct = slot(0);
    } else {
      const Target t = resolve_(member);
      p.key = t.key;
      p.base = t.addr;
      p.direct = t.direct;
    }
    p.resolved = true;
    SPDLOG_LOGGER_DEBUG(&log::core(), "sync peer {} (world {}): {}", member,
                        (*ranks_)[static_cast<std::size_t>(member)],
                        p.direct != nullptr ? "direct" : "transport");
  }
  return p;
}

std::uint64_t* SyncRegion::slot(int round) const {
  return reinterpret_cast<std::uint64_t*>(slots_ + static_cast<std::size_t>(round) * kSlotStride);
}

void SyncRegion::signal(Peer& peer, int k, std::size_t box, std::uint64_t e) {
  if (peer.direct != nullptr) {
    std::uint64_t* dst = peer.direct + static_cast<std::size_t>(k) * (kSlotStride / 8);
    std::atomic_ref<std::uint64_t>(*dst).store(e, std::memory_order_release);
    return;
  }
  std::uint64_t* out = &outbox_[e & 1U][box];
  *out = e;
  transport::Iov iov{out, sizeof(std::uint64_t)};
  auto& ep = ctx_.endpoint((*ranks_)[static_cast<std::size_t>(peer.member)]);
  (void)ep.put({&iov, 1}, peer.base + static_cast<std::uint64_t>(k) * kSlotStride, *peer.key);
  ep.post();  // the peer waits for it: no batching
}

void SyncRegion::barrier() {
  const int p = static_cast<int>(ranks_->size());
  if (p == 1) return;
  const std::uint64_t e = ++epoch_;
  if (flat_) {
    // Slot me_ of every other member: a line of its own for each writer.
    for (int d = 1; d < p; ++d) {
      const int to = (me_ + d) % p;
      signal(partner(static_cast<std::size_t>(to), to), me_, static_cast<std::size_t>(to), e);
    }
    int seen = 1;   // the flags found so far, from the previous member back
    int shown = 1;  // the one the hang report names
    const hang::Waiting waiting(hang::For::kRank,
                                (*ranks_)[static_cast<std::size_t>((me_ + p - 1) % p)]);
    ctx_.waitUntil([&] {
      for (; seen < p; ++seen) {
        std::atomic_ref<std::uint64_t> from(*slot((me_ + p - seen) % p));
        if (from.load(std::memory_order_acquire) < e) {
          if (seen != shown) {  // name the member now waited for (once per member)
            shown = seen;
            hang::Waiting::set(hang::For::kRank,
                               (*ranks_)[static_cast<std::size_t>((me_ + p - seen) % p)]);
          }
          return false;
        }
      }
      return true;
    });
    return;
  }
  for (int k = 0, dist = 1; dist < p; ++k, dist <<= 1) {
    const int to = (me_ + dist) % p;
    signal(partner(static_cast<std::size_t>(k), to), k, static_cast<std::size_t>(k), e);
    std::atomic_ref<std::uint64_t> mine(*slot(k));
    const int from = (me_ + p - dist) % p;  // the member that signals slot k
    const hang::Waiting waiting(hang::For::kRank, (*ranks_)[static_cast<std::size_t>(from)]);
    ctx_.waitUntil([&] { return mine.load(std::memory_order_acquire) >= e; });
  }
}

}  // namespace onesided::detail
