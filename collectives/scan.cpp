// SPDX-License-Identifier: BSD-3-Clause
// MPI_Scan and MPI_Exscan (MPI-3.1 §5.11), and MPI_Reduce_local (§5.9.7). The scans are
// recursive doubling over the ranks in order (Hillis and Steele): in round k rank r writes the
// combination of ranks [r - 2^k + 1, r] it holds to rank r + 2^k and combines what rank r - 2^k
// writes, which covers the ranks just below, in front of it; after ceil(log2 p) rounds rank r
// holds ranks 0..r. The exclusive scan keeps a second vector, of what arrived only. Vectors
// move typed and combine in the datatype's layout (TypedBuffer), so user operations that do
// not commute get rank order and predefined ones take the same path (a scan's vectors are
// combined once per round at every rank, so packing them buys nothing).
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
    std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
    widen(t, 0, n, slo, shi);
    widen(t, 0, n, rlo, rhi);
    checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
  }
  const int p = comm.size();
  const int me = comm.rank();
  auto& ch = comm.channel();
  auto typed = [&](TypedBuffer& b) { return Stream{b.base(), n, &t}; };
  Failure f;
  // partial: ranks [me - 2^k + 1, me] combined; got: what the rank 2^k below wrote; excl: the
  // ranks below this one combined so far (exclusive scan).
  TypedBuffer partial(t, n);
  f.attempt([&] { localCopy({inplace ? rbuf : sbuf, n, &t}, typed(partial)); });
  std::optional<TypedBuffer> got;
  std::optional<TypedBuffer> excl;
  for (int mask = 1; mask < p; mask <<= 1) {
    SendList sends;
    RecvList recvs;
    if (me + mask < p) sends.push_back({me + mask, typed(partial), f.errorClass()});
    const bool receives = me - mask >= 0;
    if (receives) {
      if (!got) got.emplace(t, n);
      recvs.push_back({me - mask, typed(*got), nullptr});
    }
    f.run(ch, sends, recvs);
    if (!receives || f.errorClass() != 0) continue;
    f.attempt([&] {
      const bool more = me + 2 * mask < p;  // partial goes on to a later round
      if (exclusive) {
        if (!excl) {
          if (more) combineTyped(op, kind, t, got->base(), partial.base(), n);
          excl.emplace(std::move(*got));
          got.reset();
          return;
        }
        combineTyped(op, kind, t, got->base(), excl->base(), n);
      }
      if (more || !exclusive) combineTyped(op, kind, t, got->base(), partial.base(), n);
    });
  }
  if (f.errorClass() == 0) {
    if (!exclusive) {
      f.attempt([&] { localCopy(typed(partial), {rbuf, n, &t}); });
    } else if (excl) {
      f.attempt([&] { localCopy(typed(*excl), {rbuf, n, &t}); });
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
