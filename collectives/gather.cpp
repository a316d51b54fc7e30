// SPDX-License-Identifier: BSD-3-Clause
// MPI_Gather and MPI_Gatherv (MPI-3.1 §5.5). Linear: every rank writes its packed block into
// the root's scratch slot for it, and the root unpacks each block into its receive buffer with
// its own type map as soon as the block's counter says it is complete. Tree (small blocks,
// more than two ranks): a binomial tree where each member writes its whole subtree's blocks,
// concatenated, into its parent's scratch, so the root handles log2 p streams instead of p - 1.
// Gatherv's counts are known only at the root, so it is always linear.
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {
constexpr std::size_t kGatherTreeBelow = 8192;  // bytes per block

/// A linear gather's stream to its root.
SendOp toRoot(int p, int root, const Stream& s) {
  SendOp op{root, s, 0};
  op.byAttach = rootTakesOne(p);
  return op;
}
/// The root's receives, from root + 1 on.
template <class Block>
RecvList rootRecvs(int p, int root, Block&& block) {
  RecvList recvs;
  for (int d = 1; d < p; ++d) {
    const int r = (root + d) % p;
    recvs.emplace_back(r, block(r), nullptr);
  }
  return recvs;
}
}  // namespace

void gather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf, int rcount,
            const Datatype* rtype, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  const int p = comm.size();
  const int me = comm.rank();
  const bool isRoot = me == root;
  const bool inplace = inPlaceArg(sbuf);
  if (inplace && !isRoot) throw Error(kErrBuffer, "MPI_IN_PLACE is only allowed at the root");
  if (isRoot) checkNotInPlace(rbuf, "recvbuf", "the root's sendbuf");
  const Datatype* st = nullptr;
  if (!inplace) {
    checkCount(scount, "sendcount");
    st = &checkType(stype, "sendtype");
  }
  const Datatype* rt = nullptr;
  if (isRoot) {
    checkCount(rcount, "recvcount");
    rt = &checkType(rtype, "recvtype");
    if (!inplace) {
      std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
      widen(*st, 0, static_cast<std::size_t>(scount), slo, shi);
      widen(*rt, 0, static_cast<std::size_t>(p) * static_cast<std::size_t>(rcount), rlo, rhi);
      checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    }
  }
  const std::size_t bb = isRoot ? bytesOf(static_cast<std::size_t>(rcount), *rt)
                                : bytesOf(static_cast<std::size_t>(scount), *st);
  auto block = [&](int r) {
    return Stream{at(rbuf, *rt, static_cast<std::int64_t>(r) * rcount),
                  static_cast<std::size_t>(rcount), rt};
  };
  auto own = [&] {
    if (isRoot && !inplace) localCopy({sbuf, static_cast<std::size_t>(scount), st}, block(root));
  };
  if (p == 1) return own();
  auto& ch = comm.channel();
  Failure f;
  if (!useTree(forcedAlg(comm), p, bb, kGatherTreeBelow, kLinearUpTo)) {
    if (!isRoot) {
      const SendOp s = toRoot(p, root, {sbuf, static_cast<std::size_t>(scount), st});
      f.run(ch, {&s, 1}, {}, {}, wholeOf(s.src));
    } else {
      f.run(ch, {}, rootRecvs(p, root, block), ownCopy(f, bb, own));
    }
    f.rethrow();
    return;
  }
  // The root's own block: its error is the root's alone, raised once the others' are in.
  Failure ownError;
  ownError.attempt(own);
  Tree t(p, me, root);
  std::vector<std::byte> tmp(static_cast<std::size_t>(t.subtree()) * bb);
  const Datatype* sig = isRoot ? rt : st;  // what the packed blocks hold, as this rank sees it
  if (!isRoot) pack(sbuf, static_cast<std::size_t>(scount), *st, tmp.data(), bb);
  RecvList recvs;
  for (auto [v, sz] : t.children()) {
    recvs.emplace_back(t.real(v),
                       bytes(tmp.data() + static_cast<std::size_t>(v - t.vr) * bb,
                             static_cast<std::size_t>(sz) * bb, sig),
                       nullptr);
  }
  f.run(ch, {}, recvs);
  if (!isRoot) {
    SendOp s{t.parent(), bytes(tmp.data(), tmp.size(), sig), f.errorClass()};
    s.byAttach = rootTakesOne(p);  // else the parent takes several streams
    f.run(ch, {&s, 1}, {});
    f.rethrow();
    return;
  }
  f.rethrow();
  for (int v = 1; v < p; ++v) {
    const Stream b = block(t.real(v));
    unpack(tmp.data() + static_cast<std::size_t>(v) * bb, bb, const_cast<void*>(b.buf), b.count,
           *rt);
  }
  ownError.rethrow();
}

void gatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             const int* rcounts, const int* displs, const Datatype* rtype, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  const int p = comm.size();
  const int me = comm.rank();
  const bool isRoot = me == root;
  const bool inplace = inPlaceArg(sbuf);
  if (inplace && !isRoot) throw Error(kErrBuffer, "MPI_IN_PLACE is only allowed at the root");
  if (isRoot) checkNotInPlace(rbuf, "recvbuf", "the root's sendbuf");
  const Datatype* st = nullptr;
  if (!inplace) {
    checkCount(scount, "sendcount");
    st = &checkType(stype, "sendtype");
  }
  const Datatype* rt = nullptr;
  if (isRoot) {
    std::int64_t rlo = 0, rhi = 0;
    rt = &checkBlocks(p, rcounts, "recvcounts", displs, "displs", rtype, "recvtype", rlo, rhi);
    if (!inplace) {
      std::int64_t slo = 0, shi = 0;
      widen(*st, 0, static_cast<std::size_t>(scount), slo, shi);
      checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    }
  }
  auto block = [&](int r) {
    return Stream{at(rbuf, *rt, displs[r]), static_cast<std::size_t>(rcounts[r]), rt};
  };
  auto own = [&] {
    if (isRoot && !inplace) localCopy({sbuf, static_cast<std::size_t>(scount), st}, block(root));
  };
  if (p == 1) return own();
  Failure f;
  if (!isRoot) {
    const SendOp s = toRoot(p, root, {sbuf, static_cast<std::size_t>(scount), st});
    f.run(comm.channel(), {&s, 1}, {}, {}, wholeOf(s.src));
  } else {
    const std::size_t mine = inplace ? 0 : bytesOf(static_cast<std::size_t>(scount), *st);
    f.run(comm.channel(), {}, rootRecvs(p, root, block), ownCopy(f, mine, own));
  }
  f.rethrow();
}

}  // namespace onesided::coll
