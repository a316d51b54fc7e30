// SPDX-License-Identifier: BSD-3-Clause
// MPI_Scan and MPI_Exscan (MPI-3.1 §5.11), and MPI_Reduce_local (§5.9.7). The scans are
// recursive doubling over the ranks in order (Hillis and Steele): in round k rank r writes the
// combination of ranks [r - 2^k + 1, r] it holds to rank r + 2^k and combines what rank r - 2^k
// writes, which covers the ranks just below, in front of it; after ceil(log2 p) rounds rank r
// holds ranks 0..r. The exclusive scan keeps a second vector, of what arrived only. Vectors
// move typed and combine in the datatype's layout (TypedBuffer: the channel's scratch for a
// contiguous type), so user operations that do not commute get rank order and predefined ones
// take the same path (a scan's vectors are combined once per round at every rank, so packing
// them buys nothing). The input is sent as it is, and the inclusive scan's last fold lands in
// the receive buffer, as does the exclusive scan's first vector. Large vectors go along the
// chain of ranks instead (scanChain).
#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {

/// From this many bytes the scans run along the chain of ranks: fewer vectors moved and
/// combined (p - 1 of each in all, against about p log2 p).
constexpr std::size_t kChainFrom = std::size_t{32} << 10;

/// The scans along the chain: rank r receives the combination of ranks 0..r - 1 from r - 1
/// (the exclusive scan's result: received into the receive buffer unless in place), combines
/// its input behind it, and sends that on to r + 1.
void scanChain(Comm& comm, const void* input, void* rbuf, std::size_t n, const Datatype& t,
               const Reduction& op, int kind, bool exclusive) {
  const int p = comm.size();
  const int me = comm.rank();
  auto& ch = comm.channel();
  const bool inplace = input == rbuf;
  const bool sends = me + 1 < p;
  Failure f;
  // out: ranks 0..me combined, for rank me + 1 (rank 0: its input as it is).
  const void* out = input;
  TypedBuffer partial(ch, 0, t, exclusive && me > 0 && sends ? n : 0);
  if (me > 0) {
    TypedBuffer got(ch, 1, t, exclusive && !inplace ? 0 : n);
    void* const below = exclusive && !inplace ? rbuf : got.base();
    RecvOp r{me - 1, {below, n, &t}, nullptr};
    f.run(ch, {}, {&r, 1});
    if (f.errorClass() == 0) {
      f.attempt([&] {
        if (!exclusive) {
          if (!inplace) localCopy({input, n, &t}, {rbuf, n, &t});
          combineTyped(op, kind, t, below, rbuf, n);
          out = rbuf;
          return;
        }
        if (sends) {
          localCopy({input, n, &t}, partial.stream(n, t));
          combineTyped(op, kind, t, below, partial.base(), n);
          out = partial.base();
        }
        if (inplace) localCopy({below, n, &t}, {rbuf, n, &t});
      });
    }
  }
  if (sends) {
    SendOp s{me + 1, {out, n, &t}, f.errorClass()};
    f.run(ch, {&s, 1}, {});
  }
  if (me == 0 && !exclusive && !inplace && f.errorClass() == 0) {
    f.attempt([&] { localCopy({input, n, &t}, {rbuf, n, &t}); });
  }
  f.rethrow();
}

void scanImpl(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
              const Reduction& op, bool exclusive) {
  onesided::detail::Collective guard(comm.channel());
  checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  checkCount(count, "count");
  const Datatype& t = checkType(type, "datatype");
  const int kind = reductionKind(t, op);
  const auto n = static_cast<std::size_t>(count);
  const bool inplace = inPlaceArg(sbuf);
  if (!inplace) {
    std::int64_t lo = 0, hi = 0;
    widen(t, 0, n, lo, hi);
    checkNoAlias(sbuf, lo, hi, rbuf, lo, hi, "sendbuf", "recvbuf");
  }
  const int p = comm.size();
  const int me = comm.rank();
  auto& ch = comm.channel();
  const void* input = inplace ? rbuf : sbuf;
  const Alg alg = forcedAlg(comm);
  if (p > 1 && (alg == Alg::kLinear || (alg == Alg::kAuto && bytesOf(n, t) >= kChainFrom))) {
    scanChain(comm, input, rbuf, n, t, op, kind, exclusive);
    return;
  }
  Failure f;
  // cur: ranks [me - 2^k + 1, me] combined, at first the input itself (sent as it is); partial:
  // where it is kept once combined; got: what the rank 2^k below wrote; excl: the ranks below
  // this one combined so far (exclusive scan), in the receive buffer unless in place (where it
  // holds the input, sent in later rounds).
  const void* cur = input;
  // Only the buffers a rank's rounds use are taken (at 2 ranks, none): partial holds a fold that
  // goes on to a later round, got what arrives after the exclusive scan's first vector.
  const bool folds = exclusive ? me >= 1 && me + 2 < p : me >= 2;
  const bool getsMore = exclusive ? me >= 2 : me >= 1;
  TypedBuffer partial(ch, 0, t, folds ? n : 0);
  TypedBuffer got(ch, 1, t, getsMore ? n : 0);
  TypedBuffer excl(ch, 2, t, exclusive && inplace && me > 0 ? n : 0);
  void* const exclAt = inplace ? excl.base() : rbuf;
  bool haveExcl = false;
  // dst = from op cur, where dst may be cur.
  auto fold = [&](const void* from, void* dst) {
    if (dst != cur) localCopy({cur, n, &t}, {dst, n, &t});
    combineTyped(op, kind, t, from, dst, n);
    cur = dst;
  };
  for (int mask = 1; mask < p; mask <<= 1) {
    SendList sends;
    RecvList recvs;
    if (me + mask < p) sends.emplace_back(me + mask, Stream{cur, n, &t}, f.errorClass());
    const bool receives = me - mask >= 0;
    // The exclusive scan's first vector is its excl.
    void* const into = exclusive && !haveExcl ? exclAt : got.base();
    if (receives) recvs.emplace_back(me - mask, Stream{into, n, &t}, nullptr);
    f.run(ch, sends, recvs);
    if (!receives || f.errorClass() != 0) continue;
    f.attempt([&] {
      if (!exclusive) {
        // The last fold (no rank further below) lands in the receive buffer, whose input (in
        // place) is folded or sent by now; later rounds may still send it.
        fold(into, me - 2 * mask < 0 ? rbuf : partial.base());
        return;
      }
      if (me + 2 * mask < p) fold(into, partial.base());  // cur goes on to a later round
      if (haveExcl) combineTyped(op, kind, t, into, exclAt, n);
      haveExcl = true;
    });
  }
  if (f.errorClass() == 0) {
    if (!exclusive && cur != rbuf) {
      f.attempt([&] { localCopy({cur, n, &t}, {rbuf, n, &t}); });
    } else if (exclusive && haveExcl && exclAt != rbuf) {
      f.attempt([&] { localCopy({exclAt, n, &t}, {rbuf, n, &t}); });
    }
  }
  f.rethrow();
}

}  // namespace

void scan(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
          const Reduction& op) {
  scanImpl(comm, sbuf, rbuf, count, type, op, false);
}

void exscan(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
            const Reduction& op) {
  scanImpl(comm, sbuf, rbuf, count, type, op, true);
}

void reduceLocal(const void* in, void* inout, int count, const Datatype* type,
                 const Reduction& op) {
  checkNotInPlace(in, "inbuf", nullptr);
  checkNotInPlace(inout, "inoutbuf", nullptr);
  checkCount(count, "count");
  const Datatype& t = checkType(type, "datatype");
  const int kind = reductionKind(t, op);
  const auto n = static_cast<std::size_t>(count);
  std::int64_t lo = 0, hi = 0;
  widen(t, 0, n, lo, hi);
  const auto a = reinterpret_cast<std::intptr_t>(in);
  const auto b = reinterpret_cast<std::intptr_t>(inout);
  if (lo != hi && a + lo < b + hi && b + lo < a + hi) {
    throw Error(kErrBuffer, "inbuf and inoutbuf overlap");
  }
  combineTyped(op, kind, t, in, inout, n);
}

}  // namespace onesided::coll
