// SPDX-License-Identifier: BSD-3-Clause
// MPI_Comm_create_group (MPI-3.1 §6.4.2): a communicator made by its members alone. They cannot
// use the parent's collectives (its other members do not take part), so they talk by
// point-to-point messages on the parent: the group's first member (the leader) picks the new
// context and gathers and spreads the members' channel infos.
#include <algorithm>
#include <string>

#include "blobs.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "p2p/engine.hpp"

namespace onesided {
namespace {

// Mixed into the parent's context for these messages, so they never meet the program's.
constexpr std::uint64_t kCreateGroupSalt = 0x6372656174654772ULL;

/// Blocking blob messages between members, by their ranks in the parent.
class Wire {
 public:
  Wire(Comm& parent, int tag)
      : parent_(parent),
        engine_(parent.context().messages()),
        tag_(tag),
        context_(mixContext(parent.p2pContext(), kCreateGroupSalt)) {}
  void send(int to, const std::vector<std::byte>& blob) {
    std::uint64_t n = blob.size();
    p2p::Request a;
    p2p::Request b;
    engine_.send(a, &n, 1, datatypeOf<std::uint64_t>(), parent_.worldRank(to), context_,
                 parent_.rank(), tag_, false);
    engine_.send(b, blob.data(), blob.size(), datatypeOf<std::byte>(), parent_.worldRank(to),
                 context_, parent_.rank(), tag_, false);
    engine_.wait(a);
    engine_.wait(b);
  }
  std::vector<std::byte> recv(int from) {
    std::uint64_t n = 0;
    p2p::Request a;
    engine_.recv(a, &n, 1, datatypeOf<std::uint64_t>(), context_, from, tag_);
    engine_.wait(a);
    std::vector<std::byte> blob(n);
    p2p::Request b;
    engine_.recv(b, blob.data(), n, datatypeOf<std::byte>(), context_, from, tag_);
    engine_.wait(b);
    return blob;
  }

 private:
  Comm& parent_;
  p2p::Engine& engine_;
  int tag_;
  std::uint64_t context_;
};

}  // namespace

std::unique_ptr<Comm> Comm::createGroup(const Group& g, int tag) {
  std::vector<int> parentRank(static_cast<std::size_t>(g.size()));
  for (int i = 0; i < g.size(); ++i) {
    auto it = std::find(ranks_.begin(), ranks_.end(), g.worldRank(i));
    if (it == ranks_.end()) {
      throw Error(kErrGroup, "group member " + std::to_string(i) + " (world rank " +
                                 std::to_string(g.worldRank(i)) +
                                 ") is not a member of the communicator");
    }
    parentRank[static_cast<std::size_t>(i)] = static_cast<int>(it - ranks_.begin());
  }
  const int me = g.rankOf(ctx_.rank());
  if (me < 0) return nullptr;
  Wire wire(*this, tag);
  const int n = g.size();
  // The leader's (parent context, world rank, count) is unique to this creation.
  std::uint64_t context = 0;
  if (me == 0) {
    context =
        mixContext(mixContext(p2pContext_, static_cast<std::uint64_t>(ctx_.rank())), ++grouped_);
    std::vector<std::byte> blob;
    detail::put(blob, context);
    for (int i = 1; i < n; ++i) wire.send(parentRank[static_cast<std::size_t>(i)], blob);
  } else {
    const std::vector<std::byte> blob = wire.recv(parentRank[0]);
    std::size_t at = 0;
    context = detail::take<std::uint64_t>(blob, at);
  }
  const auto exchange = [&](std::span<const std::byte> info) {
    std::vector<std::vector<std::byte>> infos(static_cast<std::size_t>(n));
    infos[static_cast<std::size_t>(me)].assign(info.begin(), info.end());
    if (me == 0) {
      for (int i = 1; i < n; ++i) {
        infos[static_cast<std::size_t>(i)] = wire.recv(parentRank[static_cast<std::size_t>(i)]);
      }
      const std::vector<std::byte> all = detail::packBlobs(infos);
      for (int i = 1; i < n; ++i) wire.send(parentRank[static_cast<std::size_t>(i)], all);
      return infos;
    }
    wire.send(parentRank[0], infos[static_cast<std::size_t>(me)]);
    return detail::unpackBlobs(wire.recv(parentRank[0]));
  };
  return assemble(ctx_, g.worldRanks(), context, exchange);
}

}  // namespace onesided
