// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/comm.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "collectives/channel.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "window/sync.hpp"

namespace onesided {

Comm::Comm(Context& ctx, std::vector<int> worldRanks) : ctx_(ctx), ranks_(std::move(worldRanks)) {
  auto it = std::find(ranks_.begin(), ranks_.end(), ctx_.rank());
  if (it == ranks_.end()) throw Error(kErrIntern, "communicator does not contain this rank");
  rank_ = static_cast<int>(it - ranks_.begin());
  channel_ = std::make_unique<detail::Channel>(ctx_, ranks_, rank_);
  sync_ = std::make_unique<detail::SyncRegion>(
      ctx_, ranks_, rank_, channel_->syncSlots(),
      [c = channel_.get()](int member) { return c->syncTarget(member); });
}

Comm::~Comm() = default;

std::vector<std::byte> Comm::localInfo() const { return channel_->localInfo(); }

void Comm::connect(const std::vector<std::vector<std::byte>>& infos) { channel_->connect(infos); }

void Comm::connectLazily(std::function<std::vector<std::byte>(int)> info) {
  channel_->connectLazily(size(), std::move(info));
}

std::vector<std::vector<std::byte>> Comm::allgather(std::span<const std::byte> mine) {
  detail::Collective guard(*channel_);
  const int p = size();
  std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(p));
  out[static_cast<std::size_t>(rank_)].assign(mine.begin(), mine.end());
  if (p == 1) return out;
  // Every member writes its blob into every other member's scratch, starting with the next
  // rank (staggered, so no member is everyone's first target).
  std::vector<detail::SendOp> sends;
  std::vector<detail::RecvOp> recvs;
  const detail::Stream src{mine.data(), mine.size(), &datatypeOf<std::byte>()};
  for (int d = 1; d < p; ++d) {
    const int to = (rank_ + d) % p;
    const int from = (rank_ - d + p) % p;
    sends.push_back({to, src});
    recvs.push_back({from, {}, &out[static_cast<std::size_t>(from)]});
  }
  channel_->run(sends, recvs);
  return out;
}

void Comm::barrier() { sync_->barrier(); }

std::unique_ptr<Comm> Comm::derive(const std::vector<int>& members) {
  detail::Collective guard(*channel_);
  std::unique_ptr<Comm> child;
  const std::uint64_t n = ++derived_;
  if (!members.empty()) {
    child = std::make_unique<Comm>(ctx_, members);
    // Siblings of one derivation share a context, but have no member in common, so their
    // messages cannot meet.
    child->p2pContext_ = mixContext(p2pContext_, n);
  }
  const std::vector<std::byte> info = child ? child->localInfo() : std::vector<std::byte>{};
  auto all = allgather(info);
  if (!child) return nullptr;
  std::vector<std::vector<std::byte>> infos;
  infos.reserve(members.size());
  for (int w : members) {
    auto it = std::find(ranks_.begin(), ranks_.end(), w);
    auto& blob = all[static_cast<std::size_t>(it - ranks_.begin())];
    if (blob.empty()) {
      throw Error(kErrIntern, "world rank " + std::to_string(w) +
                                  " did not join the new communicator it belongs to");
    }
    infos.push_back(std::move(blob));
  }
  child->connect(infos);
  return child;
}

std::unique_ptr<Comm> Comm::dup() { return derive(ranks_); }

std::uint64_t mixContext(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t z = a * 0x9E3779B97F4A7C15ULL + b;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (z ^ (z >> 31)) | 4;  // never 1 or 2 (world, self)
}

std::uint64_t Comm::deriveContext() { return mixContext(p2pContext_, ++derived_); }

std::unique_ptr<Comm> Comm::assemble(Context& ctx, std::vector<int> worldRanks,
                                     std::uint64_t p2pContext, const Exchange& exchange) {
  auto c = std::make_unique<Comm>(ctx, std::move(worldRanks));
  c->p2pContext_ = p2pContext;
  auto infos = exchange(c->localInfo());
  if (infos.size() != c->ranks_.size()) {
    throw Error(kErrIntern, "assembling a communicator of " + std::to_string(c->ranks_.size()) +
                                " members from " + std::to_string(infos.size()) + " infos");
  }
  c->connect(infos);
  return c;
}

std::unique_ptr<Comm> Comm::split(int color, int key) {
  detail::Collective guard(*channel_);
  if (color < 0 && color != kUndefined) {
    throw Error(kErrArg, "color " + std::to_string(color) + " is negative (and not MPI_UNDEFINED)");
  }
  std::int32_t mine[2] = {color, key};
  auto all = allgather({reinterpret_cast<const std::byte*>(mine), sizeof mine});
  std::vector<std::tuple<int, int, int>> same;  // (key, rank here, world rank)
  if (color != kUndefined) {
    for (int r = 0; r < size(); ++r) {
      std::int32_t v[2];
      std::memcpy(v, all[static_cast<std::size_t>(r)].data(), sizeof v);
      if (v[0] == color) same.emplace_back(v[1], r, worldRank(r));
    }
    std::sort(same.begin(), same.end());
  }
  std::vector<int> members;
  members.reserve(same.size());
  for (auto& [k, r, w] : same) members.push_back(w);
  return derive(members);
}

std::unique_ptr<Comm> Comm::splitShared(int key) {
  // A node's colour is its lowest world rank: every rank there has the same list of them.
  return split(ctx_.nodePeers().front(), key);
}

std::unique_ptr<Comm> Comm::create(const Group& g) {
  detail::Collective guard(*channel_);
  for (int i = 0; i < g.size(); ++i) {
    if (std::find(ranks_.begin(), ranks_.end(), g.worldRank(i)) == ranks_.end()) {
      throw Error(kErrGroup, "group member " + std::to_string(i) + " (world rank " +
                                 std::to_string(g.worldRank(i)) +
                                 ") is not a member of the communicator");
    }
  }
  const bool in = g.rankOf(ctx_.rank()) >= 0;
  return derive(in ? g.worldRanks() : std::vector<int>{});
}

void Comm::free(bool reuse) {
  channel_->quiesce();
  barrier();
  if (reuse) channel_->reusable();
}

}  // namespace onesided
