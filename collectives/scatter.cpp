// SPDX-License-Identifier: BSD-3-Clause
// MPI_Scatter and MPI_Scatterv (MPI-3.1 §5.6). Linear: the root writes each member's packed
// block into that member's scratch, in a staggered order with a bounded number in flight, and
// each member unpacks it with its own type map. Tree (small blocks, more than two ranks): the
// root writes each child its whole subtree's blocks, and every member passes its children
// theirs. Scatterv's counts are known only at the root, so it is always linear.
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {
constexpr std::size_t kScatterTreeBelow = 8192;  // bytes per block
}

void scatter(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             int rcount, const Datatype* rtype, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  const int p = comm.size();
  const int me = comm.rank();
  const bool isRoot = me == root;
  const bool inplace = inPlaceArg(rbuf);
  if (inplace && !isRoot) throw Error(kErrBuffer, "MPI_IN_PLACE is only allowed at the root");
  if (isRoot) checkNotInPlace(sbuf, "sendbuf", "the root's recvbuf");
  const Datatype* rt = nullptr;
  if (!inplace) {
    checkCount(rcount, "recvcount");
    rt = &checkType(rtype, "recvtype");
  }
  const Datatype* st = nullptr;
  if (isRoot) {
    checkCount(scount, "sendcount");
    st = &checkType(stype, "sendtype");
    if (!inplace) {
      std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
      widen(*st, 0, static_cast<std::size_t>(p) * static_cast<std::size_t>(scount), slo, shi);
      widen(*rt, 0, static_cast<std::size_t>(rcount), rlo, rhi);
      checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    }
  }
  auto block = [&](int r) {
    return Stream{at(sbuf, *st, static_cast<std::int64_t>(r) * scount),
                  static_cast<std::size_t>(scount), st};
  };
  const Stream mine{rbuf, static_cast<std::size_t>(rcount), rt};
  // The root's own block, copied while the others' are on their way where they are large
  // (ownCopy): a receiver reading its block by attach need not wait for it.
  auto own = [&] {
    if (isRoot && !inplace) localCopy(block(root), mine);
  };
  if (p == 1) return own();
  const std::size_t bb = isRoot ? bytesOf(static_cast<std::size_t>(scount), *st)
                                : bytesOf(static_cast<std::size_t>(rcount), *rt);
  auto& ch = comm.channel();
  Failure f;
  if (!useTree(forcedAlg(comm), p, bb, kScatterTreeBelow, kLinearUpTo)) {
    if (isRoot) {
      SendList sends;
      for (int d = 1; d < p; ++d) sends.emplace_back((root + d) % p, block((root + d) % p), 0);
      f.run(ch, sends, {}, ownCopy(f, bb, own), wholeOf(sbuf, p, scount, *st));
    } else {
      RecvOp r{root, mine, nullptr};
      f.run(ch, {}, {&r, 1});
    }
    f.rethrow();
    return;
  }
  // The root's own block: its error is the root's alone (no poison for the others' blocks),
  // raised once they are sent.
  Failure ownError;
  ownError.attempt(own);
  Tree t(p, me, root);
  // The subtree's blocks in virtual-rank order: [vr, vr + subtree).
  std::vector<std::byte> tmp(static_cast<std::size_t>(t.subtree()) * bb);
  const Datatype* sig = isRoot ? st : rt;  // what the packed blocks hold, as this rank sees it
  if (isRoot) {
    for (int v = 1; v < p; ++v) {
      const Stream b = block(t.real(v));
      pack(b.buf, b.count, *st, tmp.data() + static_cast<std::size_t>(v) * bb, bb);
    }
  } else {
    RecvOp r{t.parent(), bytes(tmp.data(), tmp.size(), sig), nullptr};
    f.run(ch, {}, {&r, 1});
  }
  SendList sends;
  for (auto [v, sz] : t.children()) {
    sends.emplace_back(t.real(v),
                       bytes(tmp.data() + static_cast<std::size_t>(v - t.vr) * bb,
                             static_cast<std::size_t>(sz) * bb, sig),
                       f.errorClass());
  }
  f.run(ch, sends, {});
  f.rethrow();
  ownError.rethrow();
  if (!isRoot) unpack(tmp.data(), bb, rbuf, static_cast<std::size_t>(rcount), *rt);
}

void scatterv(Comm& comm, const void* sbuf, const int* scounts, const int* displs,
              const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  const int p = comm.size();
  const int me = comm.rank();
  const bool isRoot = me == root;
  const bool inplace = inPlaceArg(rbuf);
  if (inplace && !isRoot) throw Error(kErrBuffer, "MPI_IN_PLACE is only allowed at the root");
  if (isRoot) checkNotInPlace(sbuf, "sendbuf", "the root's recvbuf");
  const Datatype* rt = nullptr;
  if (!inplace) {
    checkCount(rcount, "recvcount");
    rt = &checkType(rtype, "recvtype");
  }
  const Datatype* st = nullptr;
  if (isRoot) {
    std::int64_t slo = 0, shi = 0;
    st = &checkBlocks(p, scounts, "sendcounts", displs, "displs", stype, "sendtype", slo, shi);
    if (!inplace) {
      std::int64_t rlo = 0, rhi = 0;
      widen(*rt, 0, static_cast<std::size_t>(rcount), rlo, rhi);
      checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    }
  }
  auto block = [&](int r) {
    return Stream{at(sbuf, *st, displs[r]), static_cast<std::size_t>(scounts[r]), st};
  };
  const Stream mine{rbuf, static_cast<std::size_t>(rcount), rt};
  auto own = [&] {
    if (isRoot && !inplace) localCopy(block(root), mine);
  };
  if (p == 1) return own();
  Failure f;
  if (isRoot) {
    SendList sends;
    for (int d = 1; d < p; ++d) sends.emplace_back((root + d) % p, block((root + d) % p), 0);
    const std::size_t n = inplace ? 0 : bytesOf(static_cast<std::size_t>(rcount), *rt);
    const WholeArgs args{sbuf, p, scounts, displs, st};
    f.run(comm.channel(), sends, {}, ownCopy(f, n, own), lazyWholeOf(args));
  } else {
    RecvOp r{root, mine, nullptr};
    f.run(comm.channel(), {}, {&r, 1});
  }
  f.rethrow();
}

}  // namespace onesided::coll
