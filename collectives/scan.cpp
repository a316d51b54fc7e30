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
// the receive buffer.
#include <optional>
#include <string>
#include <utility>

#include "collectives/common.hpp"

namespace onesided::coll {
using namespace detail;

namespace {

void scanImpl(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
              const Reduction& op, bool exclusive) {
  onesided::detail::Collective guard(comm.channel());
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
  Failure f;
  // cur: ranks [me - 2^k + 1, me] combined, at first the input itself (sent as it is); partial:
  // where it is kept once combined; got: what the rank 2^k below wrote; excl: the ranks below
  // this one combined so far (exclusive scan).
  const void* cur = input;
  TypedBuffer partial(ch, 0, t, n);
  TypedBuffer got(ch, 1, t, me > 0 ? n : 0);
  TypedBuffer excl(ch, 2, t, exclusive && me > 0 ? n : 0);
  bool haveExcl = false;
  // dst = got op cur, where dst may be cur.
  auto fold = [&](void* dst) {
    if (dst != cur) localCopy({cur, n, &t}, {dst, n, &t});
    combineTyped(op, kind, t, got.base(), dst, n);
    cur = dst;
  };
  for (int mask = 1; mask < p; mask <<= 1) {
    SendList sends;
    RecvList recvs;
    if (me + mask < p) sends.push_back({me + mask, {cur, n, &t}, f.errorClass()});
    const bool receives = me - mask >= 0;
    if (receives) recvs.push_back({me - mask, got.stream(n, t), nullptr});
    f.run(ch, sends, recvs);
    if (!receives || f.errorClass() != 0) continue;
    f.attempt([&] {
      if (!exclusive) {
        // The last fold (no rank further below) lands in the receive buffer, whose input (in
        // place) is folded or sent by now; later rounds may still send it.
        fold(me - 2 * mask < 0 ? rbuf : partial.base());
        return;
      }
      if (me + 2 * mask < p) fold(partial.base());  // cur goes on to a later round
      if (!haveExcl) {
        std::swap(excl, got);
        haveExcl = true;
      } else {
        combineTyped(op, kind, t, got.base(), excl.base(), n);
      }
    });
  }
  if (f.errorClass() == 0) {
    if (!exclusive && cur != rbuf) {
      f.attempt([&] { localCopy({cur, n, &t}, {rbuf, n, &t}); });
    } else if (exclusive && haveExcl) {
      f.attempt([&] { localCopy(excl.stream(n, t), {rbuf, n, &t}); });
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
