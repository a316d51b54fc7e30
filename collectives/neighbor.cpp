// SPDX-License-Identifier: BSD-3-Clause
// The neighbourhood collectives (MPI-3.1 §7.6): MPI_Neighbor_allgather(v) and
// MPI_Neighbor_alltoall(v/w), one exchange over a sparse set of peers. Each rank writes its
// blocks into its destinations' scratch rings and reads those of its sources; members that are
// not neighbours take no part. A channel phase holds at most one stream per peer each way, so
// a peer that appears several times (a periodic dimension of size 1 or 2, a repeated graph
// edge) takes one phase per appearance: phase r moves the r-th block to and from each such
// peer, in the order Neighborhood defines. Streams between a pair stay in order across phases,
// and both sides agree on each pair's phases, so ranks with different numbers of phases never
// wait for each other's extra ones. Blocks a rank sends to itself are copied locally.
#include <algorithm>

#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {

/// The neighbour lists' ranks: MPI_ERR_RANK naming an entry that is neither a member nor null.
void checkRanks(const Comm& comm, std::span<const int> list, const char* what) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] >= comm.size()) {
      throw Error(kErrRank, std::string(what) + "[" + std::to_string(i) +
                                "] = " + std::to_string(list[i]) +
                                " is not a rank of the communicator (size " +
                                std::to_string(comm.size()) + ")");
    }
  }
}

/// One block's place in the exchange: the list entry it is and the phase it moves in.
struct Slot {
  int peer;
  std::size_t block;
  std::size_t phase = 0;
};

/// The blocks of a list to members other than null, in matching order (`order(i)` is the i-th
/// block to take), with each block's phase: its appearance count among the earlier blocks for
/// the same peer. A stable sort by peer: degree log degree, nothing per member.
std::vector<Slot> slots(std::span<const int> list, bool swapPairs) {
  std::vector<Slot> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    // Cartesian sends go in the order (+1, -1) per dimension, so that the block sent towards
    // -1 matches the receiver's block from +1 when both neighbours are the same rank.
    const std::size_t b = swapPairs ? (i ^ 1U) : i;
    if (b < list.size() && list[b] >= 0) out.push_back({list[b], b});
  }
  std::vector<std::size_t> byPeer(out.size());
  for (std::size_t i = 0; i < byPeer.size(); ++i) byPeer[i] = i;
  std::stable_sort(byPeer.begin(), byPeer.end(),
                   [&](std::size_t a, std::size_t b) { return out[a].peer < out[b].peer; });
  for (std::size_t i = 1; i < byPeer.size(); ++i) {
    const Slot& prev = out[byPeer[i - 1]];
    Slot& s = out[byPeer[i]];
    if (s.peer == prev.peer) s.phase = prev.phase + 1;
  }
  return out;
}

template <class Src, class Dst>
void exchange(Comm& comm, const Neighborhood& nb, const Src& src, const Dst& dst,
              const WholeSend& whole = kNoWhole) {
  const int me = comm.rank();
  const std::vector<Slot> sends = slots(nb.destinations, nb.cartesian);
  const std::vector<Slot> recvs = slots(nb.sources, false);
  Failure f;
  // Blocks to itself: the k-th sent to this rank is the k-th received from it.
  SmallVec<std::size_t, 8> selfSends;
  SmallVec<std::size_t, 8> selfRecvs;
  std::size_t phases = 0;
  std::size_t selfBytes = 0;
  for (const Slot& s : sends) {
    if (s.peer == me) {
      selfSends.push_back(s.block);
      const Stream b = src(s.block);
      selfBytes += bytesOf(b.count, *b.type);
    } else {
      phases = std::max(phases, s.phase + 1);
    }
  }
  for (const Slot& r : recvs) {
    if (r.peer == me) {
      selfRecvs.push_back(r.block);
    } else {
      phases = std::max(phases, r.phase + 1);
    }
  }
  auto own = [&] {
    if (selfSends.size() != selfRecvs.size()) {
      throw Error(kErrTopology, "this rank sends " + std::to_string(selfSends.size()) +
                                    " blocks to itself and receives " +
                                    std::to_string(selfRecvs.size()) + " from itself");
    }
    for (std::size_t i = 0; i < selfSends.size(); ++i) {
      localCopy(src(selfSends[i]), dst(selfRecvs[i]));
    }
  };
  Callback meanwhile = ownCopy(f, selfBytes, own);
  for (std::size_t phase = 0; phase < phases; ++phase) {
    SendList sl;
    RecvList rl;
    for (const Slot& s : sends) {
      if (s.peer != me && s.phase == phase) sl.emplace_back(s.peer, src(s.block), 0);
    }
    for (const Slot& r : recvs) {
      if (r.peer != me && r.phase == phase) rl.emplace_back(r.peer, dst(r.block), nullptr);
    }
    f.run(comm.channel(), sl, rl, phase == 0 ? meanwhile : kNoCallback, whole);
  }
  if (phases == 0 && meanwhile) f.attempt(meanwhile);
  f.rethrow();
}

void checkLists(const Comm& comm, const Neighborhood& nb) {
  checkRanks(comm, nb.sources, "sources");
  checkRanks(comm, nb.destinations, "destinations");
}

/// checkBlocks() for a neighbourhood side of n blocks: the arrays may be NULL when n is 0.
const Datatype& checkSide(std::size_t n, const int* counts, const char* countsName,
                          const int* displs, const char* displsName, const Datatype* t,
                          const char* typeName) {
  if (n == 0) return checkType(t, typeName);
  std::int64_t lo = 0, hi = 0;
  return checkBlocks(static_cast<int>(n), counts, countsName, displs, displsName, t, typeName, lo,
                     hi);
}

/// The same with a datatype per block and byte displacements of MPI_Aint.
void checkSideW(std::size_t n, const int* counts, const char* countsName,
                const std::intptr_t* displs, const char* displsName, const Datatype* const* types,
                const char* typesName) {
  if (n == 0) return;
  if (counts == nullptr) throw Error(kErrArg, std::string(countsName) + " is NULL");
  if (displs == nullptr) throw Error(kErrArg, std::string(displsName) + " is NULL");
  if (types == nullptr) throw Error(kErrArg, std::string(typesName) + " is NULL");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    checkCount(counts[i], (countsName + at).c_str());
    checkType(types[i], (typesName + at).c_str());
  }
}

}  // namespace

void neighborAllgather(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                       const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(sbuf, "sendbuf", nullptr);
  checkNotInPlace(rbuf, "recvbuf", nullptr);
  checkCount(scount, "sendcount");
  const Datatype& st = checkType(stype, "sendtype");
  checkCount(rcount, "recvcount");
  const Datatype& rt = checkType(rtype, "recvtype");
  checkLists(comm, nb);
  const Stream mine{sbuf, static_cast<std::size_t>(scount), &st};
  exchange(
      comm, nb, [&](std::size_t) { return mine; },
      [&](std::size_t k) {
        return Stream{at(rbuf, rt, static_cast<std::int64_t>(k) * rcount),
                      static_cast<std::size_t>(rcount), &rt};
      },
      wholeOf(mine));
}

void neighborAllgatherv(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                        const Datatype* stype, void* rbuf, const int* rcounts, const int* displs,
                        const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(sbuf, "sendbuf", nullptr);
  checkNotInPlace(rbuf, "recvbuf", nullptr);
  checkCount(scount, "sendcount");
  const Datatype& st = checkType(stype, "sendtype");
  const Datatype& rt =
      checkSide(nb.sources.size(), rcounts, "recvcounts", displs, "displs", rtype, "recvtype");
  checkLists(comm, nb);
  const Stream mine{sbuf, static_cast<std::size_t>(scount), &st};
  exchange(
      comm, nb, [&](std::size_t) { return mine; },
      [&](std::size_t k) {
        return Stream{at(rbuf, rt, displs[k]), static_cast<std::size_t>(rcounts[k]), &rt};
      },
      wholeOf(mine));
}

void neighborAlltoall(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                      const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(sbuf, "sendbuf", nullptr);
  checkNotInPlace(rbuf, "recvbuf", nullptr);
  checkCount(scount, "sendcount");
  const Datatype& st = checkType(stype, "sendtype");
  checkCount(rcount, "recvcount");
  const Datatype& rt = checkType(rtype, "recvtype");
  checkLists(comm, nb);
  exchange(
      comm, nb,
      [&](std::size_t k) {
        return Stream{at(sbuf, st, static_cast<std::int64_t>(k) * scount),
                      static_cast<std::size_t>(scount), &st};
      },
      [&](std::size_t k) {
        return Stream{at(rbuf, rt, static_cast<std::int64_t>(k) * rcount),
                      static_cast<std::size_t>(rcount), &rt};
      },
      wholeOf(sbuf, static_cast<int>(nb.destinations.size()), scount, st));
}

void neighborAlltoallv(Comm& comm, const Neighborhood& nb, const void* sbuf, const int* scounts,
                       const int* sdispls, const Datatype* stype, void* rbuf, const int* rcounts,
                       const int* rdispls, const Datatype* rtype) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(sbuf, "sendbuf", nullptr);
  checkNotInPlace(rbuf, "recvbuf", nullptr);
  const Datatype& st = checkSide(nb.destinations.size(), scounts, "sendcounts", sdispls, "sdispls",
                                 stype, "sendtype");
  const Datatype& rt =
      checkSide(nb.sources.size(), rcounts, "recvcounts", rdispls, "rdispls", rtype, "recvtype");
  checkLists(comm, nb);
  exchange(
      comm, nb,
      [&](std::size_t k) {
        return Stream{at(sbuf, st, sdispls[k]), static_cast<std::size_t>(scounts[k]), &st};
      },
      [&](std::size_t k) {
        return Stream{at(rbuf, rt, rdispls[k]), static_cast<std::size_t>(rcounts[k]), &rt};
      });
}

void neighborAlltoallw(Comm& comm, const Neighborhood& nb, const void* sbuf, const int* scounts,
                       const std::intptr_t* sdispls, const Datatype* const* stypes, void* rbuf,
                       const int* rcounts, const std::intptr_t* rdispls,
                       const Datatype* const* rtypes) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(sbuf, "sendbuf", nullptr);
  checkNotInPlace(rbuf, "recvbuf", nullptr);
  checkSideW(nb.destinations.size(), scounts, "sendcounts", sdispls, "sdispls", stypes,
             "sendtypes");
  checkSideW(nb.sources.size(), rcounts, "recvcounts", rdispls, "rdispls", rtypes, "recvtypes");
  checkLists(comm, nb);
  exchange(
      comm, nb,
      [&](std::size_t k) {
        return Stream{byteAt(sbuf, sdispls[k]), static_cast<std::size_t>(scounts[k]), stypes[k]};
      },
      [&](std::size_t k) {
        return Stream{byteAt(rbuf, rdispls[k]), static_cast<std::size_t>(rcounts[k]), rtypes[k]};
      });
}

}  // namespace onesided::coll
