// SPDX-License-Identifier: BSD-3-Clause
// MPI_Allgather and MPI_Allgatherv (MPI-3.1 §5.7). Linear (the default): every member writes
// its block into every other member's scratch, starting with the next rank (a staggered
// schedule, a bounded number in flight), and unpacks the blocks written into its own. Tree:
// a binomial gather to rank 0 and a binomial broadcast of the whole buffer, for many small
// blocks where p^2 small writes cost more than 2 log2 p larger ones.
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {
constexpr std::size_t kAllgatherTreeBelow = 256;  // bytes per block, with more than 8 ranks

/// `own`: this rank's copy of its own block, made while the others' are on their way; `whole`:
/// the send argument, when mine is one (not in place: the receive buffer changes meanwhile).
template <class Block>
void exchange(Comm& comm, const Stream& mine, const Block& block, Callback own,
              const WholeSend& whole) {
  const int p = comm.size();
  const int me = comm.rank();
  SendList sends;
  RecvList recvs;
  for (int d = 1; d < p; ++d) {
    sends.emplace_back((me + d) % p, mine, 0);
    const int from = (me - d + p) % p;
    recvs.emplace_back(from, block(from), nullptr);
  }
  Failure f;
  f.run(comm.channel(), sends, recvs, ownCopy(f, bytesOf(mine.count, *mine.type), own), whole);
  f.rethrow();
}
}  // namespace

void allgather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
               int rcount, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  const int p = comm.size();
  const int me = comm.rank();
  const bool inplace = inPlaceArg(sbuf);
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  checkCount(rcount, "recvcount");
  const Datatype& rt = checkType(rtype, "recvtype");
  const Datatype* st = nullptr;
  auto block = [&](int r) {
    return Stream{at(rbuf, rt, static_cast<std::int64_t>(r) * rcount),
                  static_cast<std::size_t>(rcount), &rt};
  };
  Stream mine = block(me);
  if (!inplace) {
    checkCount(scount, "sendcount");
    st = &checkType(stype, "sendtype");
    std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
    widen(*st, 0, static_cast<std::size_t>(scount), slo, shi);
    widen(rt, 0, static_cast<std::size_t>(p) * static_cast<std::size_t>(rcount), rlo, rhi);
    checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    mine = Stream{sbuf, static_cast<std::size_t>(scount), st};
  }
  auto own = [&] {
    if (!inplace) localCopy(mine, block(me));
  };
  const Alg a = forcedAlg(comm);
  const bool tree = a == Alg::kTree || (a == Alg::kAuto && p > 8 &&
                                        bytesOf(mine.count, *mine.type) < kAllgatherTreeBelow);
  if (p > 1 && !tree) {
    exchange(comm, mine, block, own, inplace ? WholeSend{} : wholeOf(mine));
    return;
  }
  // Rank 0's block must be in place before the tree's gather. An error (here, or the gather's
  // at rank 0) goes on with the broadcast, which carries it to every rank.
  Failure f;
  f.attempt(own);
  if (p == 1) return f.rethrow();
  // Gather to 0 (0 in place: its block is already there), then broadcast the whole buffer.
  f.attempt([&] {
    if (me == 0) {
      gather(comm, inPlace(), 0, nullptr, rbuf, rcount, &rt, 0);
    } else {
      gather(comm, mine.buf, static_cast<int>(mine.count), mine.type, nullptr, 0, nullptr, 0);
    }
  });
  comm.channel().nextCall();
  bcastStream(comm, {rbuf, static_cast<std::size_t>(p) * static_cast<std::size_t>(rcount), &rt}, 0,
              f);
  f.rethrow();
}

void allgatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                const int* rcounts, const int* displs, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  const int p = comm.size();
  const int me = comm.rank();
  const bool inplace = inPlaceArg(sbuf);
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  std::int64_t rlo = 0, rhi = 0;
  const Datatype& rt =
      checkBlocks(p, rcounts, "recvcounts", displs, "displs", rtype, "recvtype", rlo, rhi);
  auto block = [&](int r) {
    return Stream{at(rbuf, rt, displs[r]), static_cast<std::size_t>(rcounts[r]), &rt};
  };
  Stream mine = block(me);
  if (!inplace) {
    checkCount(scount, "sendcount");
    const Datatype& st = checkType(stype, "sendtype");
    std::int64_t slo = 0, shi = 0;
    widen(st, 0, static_cast<std::size_t>(scount), slo, shi);
    checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
    mine = Stream{sbuf, static_cast<std::size_t>(scount), &st};
  }
  auto own = [&] {
    if (!inplace) localCopy(mine, block(me));
  };
  if (p == 1) return own();
  exchange(comm, mine, block, own, inplace ? WholeSend{} : wholeOf(mine));
}

}  // namespace onesided::coll
