// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/inter.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "blobs.hpp"
#include "collectives/common.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "p2p/engine.hpp"

namespace onesided::coll {
namespace {

// The kinds of the collectives' messages (their tags, on the intercommunicator's own context).
enum Tag : int {
  kTagSwap = 1,
  kTagBcast,
  kTagGather,
  kTagScatter,
  kTagAllgather,
  kTagAlltoall,
  kTagReduce,
  kTagAllreduce,
};

const Datatype& bytes() { return datatypeOf<std::byte>(); }

/// Point-to-point operations between the groups, waited for together.
class Batch {
 public:
  explicit Batch(Inter& ic) : ic_(ic), context_(ic.collContext()) {}
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch() {
    for (auto& r : reqs_) {
      if (!r->complete) engine().forget(*r);
    }
  }
  void send(const void* buf, std::size_t count, const Datatype& t, int r, int tag) {
    auto& req = *reqs_.emplace_back(std::make_unique<p2p::Request>());
    engine().send(req, buf, count, t, ic_.remote()[static_cast<std::size_t>(r)], context_,
                  ic_.local().rank(), tag, false);
  }
  void recv(void* buf, std::size_t count, const Datatype& t, int r, int tag) {
    auto& req = *reqs_.emplace_back(std::make_unique<p2p::Request>());
    engine().recv(req, buf, count, t, context_, r, tag);
  }
  /// Waits for all; a message of another size than its receive expected is an error.
  void wait() {
    for (auto& r : reqs_) engine().wait(*r);
    for (auto& r : reqs_) {
      const p2p::Status& st = r->status;
      if (st.error != 0 || (r->kind == p2p::Request::Kind::kRecv && st.sent != st.bytes)) {
        throw Error(st.error != 0 ? st.error : kErrTruncate,
                    "remote rank " + std::to_string(st.source) + " sent " +
                        std::to_string(st.sent) + " bytes where " + std::to_string(st.bytes) +
                        " were expected");
      }
      if (r->kind == p2p::Request::Kind::kRecv) {
        const std::uint64_t want = r->count * r->type->size();
        if (st.bytes != want) {
          throw Error(kErrCount, "remote rank " + std::to_string(st.source) + " sent " +
                                     std::to_string(st.bytes) + " bytes where " +
                                     std::to_string(want) + " were expected");
        }
      }
    }
  }

 private:
  p2p::Engine& engine() { return ic_.local().context().messages(); }
  Inter& ic_;
  std::uint64_t context_;
  std::vector<std::unique_ptr<p2p::Request>> reqs_;
};

/// Memory for `count` elements of `t` laid out as the type lays them (the reductions' partial
/// results).
class Scratch {
 public:
  Scratch(const Datatype& t, int count) {
    if (count <= 0) return;
    const auto n = static_cast<std::ptrdiff_t>(count);
    mem_.resize(static_cast<std::size_t>((n - 1) * t.extent() + t.trueExtent()));
    at_ = mem_.data() - t.trueLb();
  }
  [[nodiscard]] void* at() const noexcept { return at_; }

 private:
  std::vector<std::byte> mem_;
  std::byte* at_ = nullptr;
};

std::byte* offset(void* buf, const Datatype& t, std::int64_t elements) {
  return static_cast<std::byte*>(buf) + elements * t.extent();
}
const std::byte* offset(const void* buf, const Datatype& t, std::int64_t elements) {
  return static_cast<const std::byte*>(buf) + elements * t.extent();
}

void noInPlace(const void* buf, const char* what) {
  if (buf == inPlace()) {
    throw Error(kErrBuffer,
                std::string(what) + " is MPI_IN_PLACE, which intercommunicators do not take");
  }
}

/// Where a rooted collective's `root` puts this rank.
enum class Part : std::uint8_t { kRoot, kIdle, kOther };
Part partOf(const Inter& ic, int root) {
  if (root == kRoot) return Part::kRoot;
  if (root == kProcNull) return Part::kIdle;
  if (root < 0 || root >= ic.remoteSize()) {
    throw Error(kErrRoot, "root " + std::to_string(root) +
                              " is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote "
                              "group (of " +
                              std::to_string(ic.remoteSize()) + ")");
  }
  return Part::kOther;
}

void bcastBlob(Comm& c, std::vector<std::byte>& blob, int root) {
  std::uint64_t n = blob.size();
  bcast(c, &n, 1, &datatypeOf<std::uint64_t>(), root);
  blob.resize(n);
  if (n > 0) bcast(c, blob.data(), static_cast<int>(n), &bytes(), root);
}

using onesided::detail::put;
using onesided::detail::take;

/// Equal blocks, one per remote rank: counts and displacements for the v forms.
struct Blocks {
  std::vector<int> counts;
  std::vector<int> displs;
  Blocks(int n, int count) : counts(static_cast<std::size_t>(n), count), displs(counts.size()) {
    for (std::size_t r = 0; r < displs.size(); ++r) displs[r] = static_cast<int>(r) * count;
  }
};

}  // namespace

Inter::Inter(std::unique_ptr<Comm> local, std::vector<int> remote, std::uint64_t context)
    : local_(std::move(local)),
      remote_(std::move(remote)),
      context_(context),
      collContext_(mixContext(context, 0)) {}

Inter::~Inter() = default;

std::uint64_t Inter::deriveContext() { return mixContext(context_, ++derived_); }

void Inter::send(const void* buf, std::size_t count, const Datatype& t, int r, int tag) {
  Batch b(*this);
  b.send(buf, count, t, r, tag);
  b.wait();
}

void Inter::recv(void* buf, std::size_t count, const Datatype& t, int r, int tag) {
  Batch b(*this);
  b.recv(buf, count, t, r, tag);
  b.wait();
}

std::vector<std::byte> Inter::swapThroughLeaders(std::span<const std::byte> mine) {
  std::vector<std::byte> theirs;
  if (local_->rank() == 0) {
    std::uint64_t n = mine.size();
    std::uint64_t m = 0;
    {
      Batch b(*this);
      b.recv(&m, 1, datatypeOf<std::uint64_t>(), 0, kTagSwap);
      b.send(&n, 1, datatypeOf<std::uint64_t>(), 0, kTagSwap);
      b.wait();
    }
    theirs.resize(m);
    Batch b(*this);
    b.recv(theirs.data(), m, bytes(), 0, kTagSwap);
    b.send(mine.data(), n, bytes(), 0, kTagSwap);
    b.wait();
  }
  bcastBlob(*local_, theirs, 0);
  return theirs;
}

std::unique_ptr<Inter> interCreate(Comm& localComm, int localLeader, Comm* peer, int remoteLeader,
                                   int tag) {
  if (localLeader < 0 || localLeader >= localComm.size()) {
    throw Error(kErrRank, "local_leader " + std::to_string(localLeader) +
                              " is not a rank of local_comm (of " +
                              std::to_string(localComm.size()) + ")");
  }
  std::unique_ptr<Comm> local = localComm.dup();  // the same ranks, in the same order
  // The leader swaps (its group's context, its members) with the remote leader over `peer`.
  // A bad argument there is everyone's error: an empty record tells the group.
  std::vector<std::byte> remote;
  std::string why;
  if (local->rank() == localLeader) {
    if (peer == nullptr) {
      why = "peer_comm is MPI_COMM_NULL at the local leader";
    } else if (remoteLeader < 0 || remoteLeader >= peer->size()) {
      why = "remote_leader " + std::to_string(remoteLeader) + " is not a rank of peer_comm (of " +
            std::to_string(peer->size()) + ")";
    } else if (peer->worldRank(remoteLeader) == local->context().rank()) {
      why = "remote_leader " + std::to_string(remoteLeader) + " is the local leader itself";
    }
    if (why.empty()) {
      std::vector<std::byte> mine;
      put(mine, local->p2pContext());
      for (int w : local->worldRanks()) put(mine, static_cast<std::int32_t>(w));
      p2p::Engine& e = local->context().messages();
      const int world = peer->worldRank(remoteLeader);
      std::uint64_t n = mine.size();
      std::uint64_t m = 0;
      p2p::Request rs;
      p2p::Request rr;
      e.recv(rr, &m, 1, datatypeOf<std::uint64_t>(), peer->p2pContext(), remoteLeader, tag);
      e.send(rs, &n, 1, datatypeOf<std::uint64_t>(), world, peer->p2pContext(), peer->rank(), tag,
             false);
      e.wait(rr);
      e.wait(rs);
      remote.resize(m);
      p2p::Request ds;
      p2p::Request dr;
      e.recv(dr, remote.data(), m, bytes(), peer->p2pContext(), remoteLeader, tag);
      e.send(ds, mine.data(), n, bytes(), world, peer->p2pContext(), peer->rank(), tag, false);
      e.wait(dr);
      e.wait(ds);
    }
  }
  bcastBlob(*local, remote, localLeader);
  if (remote.empty()) {
    if (why.empty()) why = "the local leader's arguments are bad (see its error)";
    throw Error(kErrArg, why);
  }
  std::size_t at = 0;
  const auto theirContext = take<std::uint64_t>(remote, at);
  std::vector<int> worlds;
  while (at < remote.size()) worlds.push_back(take<std::int32_t>(remote, at));
  for (int w : worlds) {
    const auto& mine = local->worldRanks();
    if (std::find(mine.begin(), mine.end(), w) != mine.end()) {
      throw Error(kErrComm, "the groups overlap: world rank " + std::to_string(w) +
                                " is in both (an intercommunicator's groups are disjoint)");
    }
  }
  const std::uint64_t a = local->p2pContext();
  const std::uint64_t ctx = mixContext(std::min(a, theirContext), std::max(a, theirContext));
  return std::make_unique<Inter>(std::move(local), std::move(worlds), ctx);
}

std::unique_ptr<Comm> interMerge(Inter& ic, bool high) {
  Comm& l = ic.local();
  const std::byte mine{static_cast<unsigned char>(high ? 1 : 0)};
  const std::vector<std::byte> theirs = ic.swapThroughLeaders({&mine, 1});
  const bool remoteHigh = !theirs.empty() && theirs[0] != std::byte{0};
  const bool first = high != remoteHigh ? !high : l.worldRank(0) < ic.remote()[0];
  std::vector<int> members = first ? l.worldRanks() : ic.remote();
  const std::vector<int>& second = first ? ic.remote() : l.worldRanks();
  members.insert(members.end(), second.begin(), second.end());
  const std::uint64_t ctx = ic.deriveContext();
  const auto exchange = [&](std::span<const std::byte> info) {
    auto local = l.allgather(info);
    auto remote =
        onesided::detail::unpackBlobs(ic.swapThroughLeaders(onesided::detail::packBlobs(local)));
    if (remote.size() != ic.remote().size()) {
      throw Error(kErrIntern, "the remote group sent " + std::to_string(remote.size()) +
                                  " infos for " + std::to_string(ic.remote().size()) + " members");
    }
    auto& front = first ? local : remote;
    auto& back = first ? remote : local;
    front.insert(front.end(), std::make_move_iterator(back.begin()),
                 std::make_move_iterator(back.end()));
    return std::move(front);
  };
  return Comm::assemble(l.context(), std::move(members), ctx, exchange);
}

std::unique_ptr<Inter> interDup(Inter& ic) {
  std::unique_ptr<Comm> local = ic.local().dup();
  return std::make_unique<Inter>(std::move(local), ic.remote(), ic.deriveContext());
}

std::unique_ptr<Inter> interSplit(Inter& ic, int color, int key) {
  Comm& l = ic.local();
  std::unique_ptr<Comm> local = l.split(color, key);  // checks the color
  std::vector<std::byte> mine;
  put(mine, static_cast<std::int32_t>(color));
  put(mine, static_cast<std::int32_t>(key));
  const auto remote = onesided::detail::unpackBlobs(
      ic.swapThroughLeaders(onesided::detail::packBlobs(l.allgather(mine))));
  const std::uint64_t ctx = ic.deriveContext();
  std::vector<std::tuple<int, int, int>> same;  // (key, remote rank, world rank)
  for (std::size_t r = 0; r < remote.size(); ++r) {
    std::size_t at = 0;
    const auto c = take<std::int32_t>(remote[r], at);
    const auto k = take<std::int32_t>(remote[r], at);
    if (color != kUndefined && c == color) {
      same.emplace_back(k, static_cast<int>(r), ic.remote()[r]);
    }
  }
  if (!local) return nullptr;
  if (same.empty()) {
    local->free();  // every member of `local` sees the same remote side
    return nullptr;
  }
  std::sort(same.begin(), same.end());
  std::vector<int> worlds;
  worlds.reserve(same.size());
  for (auto& [k, r, w] : same) worlds.push_back(w);
  return std::make_unique<Inter>(std::move(local), std::move(worlds), ctx);
}

// ---- collectives ----

void interBarrier(Inter& ic) {
  // Every member of this group is in (local barrier) before the leader tells the other group,
  // and none leaves before the other group's leader told this one (the broadcast).
  ic.local().barrier();
  ic.swapThroughLeaders({});
}

void interBcast(Inter& ic, void* buf, int count, const Datatype* type, int root) {
  const Part part = partOf(ic, root);
  if (part == Part::kIdle) return;
  detail::checkCount(count, "count");
  const Datatype& t = detail::checkType(type, "datatype");
  const auto n = static_cast<std::size_t>(count);
  if (part == Part::kRoot) {
    ic.send(buf, n, t, 0, kTagBcast);  // to the remote group's leader, which spreads it there
    return;
  }
  if (ic.local().rank() == 0) ic.recv(buf, n, t, root, kTagBcast);
  bcast(ic.local(), buf, count, &t, 0);
}

void interGatherv(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                  const int* rcounts, const int* displs, const Datatype* rtype, int root) {
  const Part part = partOf(ic, root);
  if (part == Part::kIdle) return;
  if (part == Part::kOther) {
    detail::checkCount(scount, "sendcount");
    const Datatype& st = detail::checkType(stype, "sendtype");
    noInPlace(sbuf, "sendbuf");
    ic.send(sbuf, static_cast<std::size_t>(scount), st, root, kTagGather);
    return;
  }
  const Datatype& rt = detail::checkType(rtype, "recvtype");
  noInPlace(rbuf, "recvbuf");
  if (rcounts == nullptr || displs == nullptr) {
    throw Error(kErrArg, "recvcounts or displs is NULL at the root");
  }
  Batch b(ic);
  for (int r = 0; r < ic.remoteSize(); ++r) {
    detail::checkCount(rcounts[r], ("recvcounts[" + std::to_string(r) + "]").c_str());
    b.recv(offset(rbuf, rt, displs[r]), static_cast<std::size_t>(rcounts[r]), rt, r, kTagGather);
  }
  b.wait();
}

void interGather(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                 int rcount, const Datatype* rtype, int root) {
  if (partOf(ic, root) != Part::kRoot) {
    interGatherv(ic, sbuf, scount, stype, rbuf, nullptr, nullptr, rtype, root);
    return;
  }
  detail::checkCount(rcount, "recvcount");
  const Blocks r(ic.remoteSize(), rcount);
  interGatherv(ic, sbuf, scount, stype, rbuf, r.counts.data(), r.displs.data(), rtype, root);
}

void interScatterv(Inter& ic, const void* sbuf, const int* scounts, const int* displs,
                   const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype, int root) {
  const Part part = partOf(ic, root);
  if (part == Part::kIdle) return;
  if (part == Part::kOther) {
    detail::checkCount(rcount, "recvcount");
    const Datatype& rt = detail::checkType(rtype, "recvtype");
    noInPlace(rbuf, "recvbuf");
    ic.recv(rbuf, static_cast<std::size_t>(rcount), rt, root, kTagScatter);
    return;
  }
  const Datatype& st = detail::checkType(stype, "sendtype");
  noInPlace(sbuf, "sendbuf");
  if (scounts == nullptr || displs == nullptr) {
    throw Error(kErrArg, "sendcounts or displs is NULL at the root");
  }
  Batch b(ic);
  for (int r = 0; r < ic.remoteSize(); ++r) {
    detail::checkCount(scounts[r], ("sendcounts[" + std::to_string(r) + "]").c_str());
    b.send(offset(sbuf, st, displs[r]), static_cast<std::size_t>(scounts[r]), st, r, kTagScatter);
  }
  b.wait();
}

void interScatter(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                  int rcount, const Datatype* rtype, int root) {
  if (partOf(ic, root) != Part::kRoot) {
    interScatterv(ic, sbuf, nullptr, nullptr, stype, rbuf, rcount, rtype, root);
    return;
  }
  detail::checkCount(scount, "sendcount");
  const Blocks s(ic.remoteSize(), scount);
  interScatterv(ic, sbuf, s.counts.data(), s.displs.data(), stype, rbuf, rcount, rtype, root);
}

void interAlltoallv(Inter& ic, const void* sbuf, const int* scounts, const int* sdispls,
                    const Datatype* stype, void* rbuf, const int* rcounts, const int* rdispls,
                    const Datatype* rtype) {
  noInPlace(sbuf, "sendbuf");
  const Datatype& st = detail::checkType(stype, "sendtype");
  const Datatype& rt = detail::checkType(rtype, "recvtype");
  if (scounts == nullptr || sdispls == nullptr || rcounts == nullptr || rdispls == nullptr) {
    throw Error(kErrArg, "a count or displacement array is NULL");
  }
  Batch b(ic);
  for (int r = 0; r < ic.remoteSize(); ++r) {
    detail::checkCount(rcounts[r], ("recvcounts[" + std::to_string(r) + "]").c_str());
    detail::checkCount(scounts[r], ("sendcounts[" + std::to_string(r) + "]").c_str());
    b.recv(offset(rbuf, rt, rdispls[r]), static_cast<std::size_t>(rcounts[r]), rt, r, kTagAlltoall);
  }
  for (int r = 0; r < ic.remoteSize(); ++r) {
    b.send(offset(sbuf, st, sdispls[r]), static_cast<std::size_t>(scounts[r]), st, r, kTagAlltoall);
  }
  b.wait();
}

void interAlltoall(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                   int rcount, const Datatype* rtype) {
  detail::checkCount(scount, "sendcount");
  detail::checkCount(rcount, "recvcount");
  const Blocks s(ic.remoteSize(), scount);
  const Blocks r(ic.remoteSize(), rcount);
  interAlltoallv(ic, sbuf, s.counts.data(), s.displs.data(), stype, rbuf, r.counts.data(),
                 r.displs.data(), rtype);
}

void interAllgatherv(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                     const int* rcounts, const int* displs, const Datatype* rtype) {
  // Every member's block to every remote member: alltoallv with one send block, repeated.
  detail::checkCount(scount, "sendcount");
  const Blocks s(ic.remoteSize(), scount);
  std::vector<int> zero(s.counts.size(), 0);
  interAlltoallv(ic, sbuf, s.counts.data(), zero.data(), stype, rbuf, rcounts, displs, rtype);
}

void interAllgather(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                    int rcount, const Datatype* rtype) {
  detail::checkCount(rcount, "recvcount");
  const Blocks r(ic.remoteSize(), rcount);
  interAllgatherv(ic, sbuf, scount, stype, rbuf, r.counts.data(), r.displs.data(), rtype);
}

void interReduce(Inter& ic, const void* sbuf, void* rbuf, int count, const Datatype* type,
                 const Reduction& op, int root) {
  const Part part = partOf(ic, root);
  if (part == Part::kIdle) return;
  detail::checkCount(count, "count");
  const Datatype& t = detail::checkType(type, "datatype");
  const auto n = static_cast<std::size_t>(count);
  if (part == Part::kRoot) {
    noInPlace(rbuf, "recvbuf");
    ic.recv(rbuf, n, t, 0, kTagReduce);  // the remote group's result, from its leader
    return;
  }
  noInPlace(sbuf, "sendbuf");
  const Scratch partial(t, count);
  reduce(ic.local(), sbuf, partial.at(), count, &t, op, 0);
  if (ic.local().rank() == 0) ic.send(partial.at(), n, t, root, kTagReduce);
}

void interAllreduce(Inter& ic, const void* sbuf, void* rbuf, int count, const Datatype* type,
                    const Reduction& op) {
  detail::checkCount(count, "count");
  const Datatype& t = detail::checkType(type, "datatype");
  noInPlace(sbuf, "sendbuf");
  noInPlace(rbuf, "recvbuf");
  const auto n = static_cast<std::size_t>(count);
  // Each group reduces to its leader; the leaders swap the results; each spreads the other's.
  const Scratch partial(t, count);
  reduce(ic.local(), sbuf, partial.at(), count, &t, op, 0);
  if (ic.local().rank() == 0) {
    Batch b(ic);
    b.recv(rbuf, n, t, 0, kTagAllreduce);
    b.send(partial.at(), n, t, 0, kTagAllreduce);
    b.wait();
  }
  bcast(ic.local(), rbuf, count, &t, 0);
}

}  // namespace onesided::coll
