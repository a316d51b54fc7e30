// SPDX-License-Identifier: BSD-3-Clause
// MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw (MPI-3.1 §5.8): block j of rank i lands in
// block i of rank j.
// Staggered: rank i writes to i + 1, i + 2, ... (mod p), so in each step every member is the
// target of exactly one writer, with at most ONESIDED_COLL_INFLIGHT writes in flight per rank;
// each member unpacks the blocks written into its scratch as their counters arrive. In place,
// the receive buffer is packed first (its blocks are both the data sent and the destination).
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {

template <class Src, class Dst>
void exchange(Comm& comm, const Src& src, const Dst& dst, WholeSend whole = {}) {
  const int p = comm.size();
  const int me = comm.rank();
  // This rank's own block, copied while the others' are on their way where they are large
  // (ownCopy), not before its streams are offered.
  auto own = [&] { localCopy(src(me), dst(me)); };
  if (p == 1) return own();
  SendList sends;
  RecvList recvs;
  for (int d = 1; d < p; ++d) {
    const int to = (me + d) % p;
    const int from = (me - d + p) % p;
    sends.emplace_back(to, src(to), 0);
    recvs.emplace_back(from, dst(from), nullptr);
  }
  Failure f;
  const Stream mine = src(me);
  f.run(comm.channel(), sends, recvs, ownCopy(f, bytesOf(mine.count, *mine.type), own), whole);
  f.rethrow();
}

// In place: the receive buffer's blocks are both the data sent and the destination, so they
// are packed first.
template <class Dst>
void exchangeInPlace(Comm& comm, const Dst& dst) {
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::size_t> off(p + 1, 0);
  for (std::size_t i = 0; i < p; ++i) {
    const Stream d = dst(static_cast<int>(i));
    off[i + 1] = off[i] + bytesOf(d.count, *d.type);
  }
  std::vector<std::byte> copy(off.back());
  for (std::size_t i = 0; i < p; ++i) {
    const Stream d = dst(static_cast<int>(i));
    pack(d.buf, d.count, *d.type, copy.data() + off[i], off[i + 1] - off[i]);
  }
  exchange(
      comm,
      [&](int r) {
        const auto i = static_cast<std::size_t>(r);
        return bytes(copy.data() + off[i], off[i + 1] - off[i], dst(r).type);
      },
      dst);
}

}  // namespace

void alltoall(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
              int rcount, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  const int p = comm.size();
  const bool inplace = inPlaceArg(sbuf);
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  checkCount(rcount, "recvcount");
  const Datatype& rt = checkType(rtype, "recvtype");
  auto dst = [&](int r) {
    return Stream{at(rbuf, rt, static_cast<std::int64_t>(r) * rcount),
                  static_cast<std::size_t>(rcount), &rt};
  };
  if (inplace) return exchangeInPlace(comm, dst);
  checkCount(scount, "sendcount");
  const Datatype& st = checkType(stype, "sendtype");
  std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
  widen(st, 0, static_cast<std::size_t>(p) * static_cast<std::size_t>(scount), slo, shi);
  widen(rt, 0, static_cast<std::size_t>(p) * static_cast<std::size_t>(rcount), rlo, rhi);
  checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
  exchange(
      comm,
      [&](int r) {
        return Stream{at(sbuf, st, static_cast<std::int64_t>(r) * scount),
                      static_cast<std::size_t>(scount), &st};
      },
      dst, wholeOf(sbuf, p, scount, st));
}

void alltoallv(Comm& comm, const void* sbuf, const int* scounts, const int* sdispls,
               const Datatype* stype, void* rbuf, const int* rcounts, const int* rdispls,
               const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  const int p = comm.size();
  const bool inplace = inPlaceArg(sbuf);
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  std::int64_t rlo = 0, rhi = 0;
  const Datatype& rt =
      checkBlocks(p, rcounts, "recvcounts", rdispls, "rdispls", rtype, "recvtype", rlo, rhi);
  auto dst = [&](int r) {
    return Stream{at(rbuf, rt, rdispls[r]), static_cast<std::size_t>(rcounts[r]), &rt};
  };
  if (inplace) return exchangeInPlace(comm, dst);
  std::int64_t slo = 0, shi = 0;
  const Datatype& st =
      checkBlocks(p, scounts, "sendcounts", sdispls, "sdispls", stype, "sendtype", slo, shi);
  checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
  const WholeArgs args{sbuf, p, scounts, sdispls, &st};
  exchange(
      comm,
      [&](int r) {
        return Stream{at(sbuf, st, sdispls[r]), static_cast<std::size_t>(scounts[r]), &st};
      },
      dst, lazyWholeOf(args));
}

void alltoallw(Comm& comm, const void* sbuf, const int* scounts, const int* sdispls,
               const Datatype* const* stypes, void* rbuf, const int* rcounts, const int* rdispls,
               const Datatype* const* rtypes) {
  onesided::detail::Collective guard(comm.channel());
  const int p = comm.size();
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  std::int64_t rlo = 0, rhi = 0;
  checkBlocksW(p, rcounts, "recvcounts", rdispls, "rdispls", rtypes, "recvtypes", rlo, rhi);
  // Displacements in bytes, each block with its own datatype.
  auto dst = [&](int r) {
    return Stream{byteAt(rbuf, rdispls[r]), static_cast<std::size_t>(rcounts[r]), rtypes[r]};
  };
  if (inPlaceArg(sbuf)) return exchangeInPlace(comm, dst);
  std::int64_t slo = 0, shi = 0;
  checkBlocksW(p, scounts, "sendcounts", sdispls, "sdispls", stypes, "sendtypes", slo, shi);
  checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
  const WholeArgs args{sbuf, p, scounts, sdispls, nullptr, stypes};
  exchange(
      comm,
      [&](int r) {
        return Stream{byteAt(sbuf, sdispls[r]), static_cast<std::size_t>(scounts[r]), stypes[r]};
      },
      dst, lazyWholeOf(args));
}

}  // namespace onesided::coll
