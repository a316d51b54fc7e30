// SPDX-License-Identifier: BSD-3-Clause
// MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block and MPI_Reduce_scatter (MPI-3.1 §5.9,
// §5.10). With a predefined operation the input is packed (a homogeneous type packs to a dense
// array of its basic elements, which the reduction kernels of window/ops take), partial results
// move through the scratch channel up a binomial tree (default) or straight to the root (linear,
// the root folding in rank order), and the result is unpacked with the receive type. Allreduce is
// a direct exchange for small vectors on up to 8 ranks (forced by `linear`), otherwise
// recursive doubling on a power-of-two number of ranks and a reduce to rank 0 and a broadcast
// on others; reduce_scatter(_block) one exchange of blocks on up to 8 ranks (and for large
// blocks beyond), a reduce to rank 0 and a scatter otherwise (or forced by `tree`).
//
// A user operation (MPI_Op_create) takes the datatype's own layout, so its vectors move typed
// (the channel packs and unpacks them) and combine in TypedBuffers, up a binomial tree over the
// ranks as they are, rooted at rank 0: each node's vector covers ranks [r, r + span) and it
// combines its children's, which follow it, in rank order, as an operation that does not
// commute needs (§5.9.5); the result goes on to the root, to every rank (a broadcast) or in
// blocks (a scatter). Commutative ones take the same path.
#include "collectives/common.hpp"
#include "copy.hpp"

#include <optional>
#include <string>
#include <vector>

namespace onesided::coll {
using namespace detail;

namespace {

struct Checked {
  const Datatype* type;
  int kind;
  Stream in;
};

Checked checkReduce(const void* sbuf, const void* rbuf, std::size_t inCount, std::size_t outCount,
                    const Datatype* type, const Reduction& op, bool rbufMatters) {
  if (rbufMatters) checkNotInPlace(rbuf, "recvbuf", "sendbuf");
  const Datatype& t = checkType(type, "datatype");
  const int kind = reductionKind(t, op);
  const bool inplace = inPlaceArg(sbuf);
  if (!inplace && rbufMatters) {
    std::int64_t slo = 0, shi = 0, rlo = 0, rhi = 0;
    widen(t, 0, inCount, slo, shi);
    widen(t, 0, outCount, rlo, rhi);
    checkNoAlias(sbuf, slo, shi, rbuf, rlo, rhi, "sendbuf", "recvbuf");
  }
  return {&t, kind, Stream{inplace ? rbuf : sbuf, inCount, &t}};
}

/// From this many bytes per rank allreduce on a power-of-two number of ranks beyond 2 halves:
/// each rank folds and sends (p - 1) / p of the vector in all instead of log2 p whole vectors.
/// On 2 ranks both move the same bytes, and halving takes two phases to doubling's one, its
/// second reading the halves the partner has just folded (and will overwrite next call).
/// 2 ranks, us, halving / doubling (by the ring, below) / Open MPI, with the input rewritten
/// before every call as a program computes it (the rewrite's 5-39 us included): 64 KiB
/// 31-36 / 18-19 / 29-32, 128 KiB 48-51 / 36-37 / 45-47, 512 KiB 151-153 / 128-142 /
/// 160-171; OSU-style (the same input every call): 64 KiB 19-31 / 13 / 28-52, 128 KiB 33-47 /
/// 24-25 / 35-46, 512 KiB 106-141 / 86-96 / 112-125.
constexpr std::size_t kHalvingFrom = std::size_t{64} * 1024;

/// Up to this many bytes per rank and this many ranks (beyond 2), allreduce is one exchange:
/// every rank writes its vector to every other and folds all p in rank order. One phase
/// instead of log2 p rounds: with more ranks than cores each round waits for the partner to be
/// scheduled (4 ranks on 2 cores, 8 bytes: 11 us by recursive doubling, against Open MPI's 8).
constexpr std::size_t kDirectBelow = 256;
constexpr int kDirectMaxRanks = 8;

/// Whether an allreduce of `bytes` per rank goes by that one exchange (forced by `linear`):
/// the predefined operations' and the user operations' choice alike.
bool allreduceByExchange(Alg alg, int p, std::size_t bytes) {
  return p > 2 && (alg == Alg::kLinear ||
                   (alg == Alg::kAuto && p <= kDirectMaxRanks && bytes <= kDirectBelow));
}

/// Allreduce by direct exchange (above). Every rank folds the same vectors in the same order,
/// so all end with the same bits.
void allreduceDirect(Comm& comm, const Stream& input, int kind, Op op, std::size_t bytesN,
                     void* rbuf, std::size_t n, const Datatype& type, std::byte* direct) {
  const int p = comm.size();
  const int me = comm.rank();
  auto& ch = comm.channel();
  const std::byte* mine = packedInput(ch, input, 2);
  std::byte* const parts = ch.buffer(3, static_cast<std::size_t>(p) * bytesN);
  auto part = [&](int r) { return parts + static_cast<std::size_t>(r) * bytesN; };
  SendList sends;
  RecvList recvs;
  for (int d = 1; d < p; ++d) {
    const int to = (me + d) % p;
    const int from = (me - d + p) % p;
    sends.emplace_back(to, bytes(mine, bytesN), 0);
    recvs.emplace_back(from, bytes(part(from), bytesN), nullptr);
  }
  Failure f;
  f.run(ch, sends, recvs);
  f.rethrow();
  std::byte* out = direct != nullptr ? direct : ch.buffer(0, bytesN);
  if (mine == out && bytesN != 0) {  // in place: the result overwrites this rank's input
    onesided::detail::copyBytes(part(me), mine, bytesN);
    mine = part(me);
  }
  foldRankOrder(op, kind, out, p, bytesN, [&](int r) { return r == me ? mine : part(r); });
  if (out != direct) unpack(out, bytesN, rbuf, n, type);
}

/// Allreduce by recursive halving, then recursive doubling (Rabenseifner): in round k of the
/// first half every rank sends the half of its current range that rank ^ 2^k keeps and folds
/// the other half, so it ends with 1 / p of the result; the second half retraces the rounds
/// and swaps finished ranges until every rank has all of it. Each element is folded by one rank
/// alone, so every rank ends with the same bits. The receive buffer is written in the last
/// round only, and only when nothing failed before it.
void allreduceHalving(Comm& comm, const Stream& input, int kind, Op op, std::size_t n,
                      std::size_t bytesN, void* rbuf, const Datatype& type, std::byte* direct) {
  struct Range {
    std::size_t lo, hi;  // elements
  };
  const int p = comm.size();
  const int me = comm.rank();
  auto& ch = comm.channel();
  const std::size_t e = bytesN / n;  // packed element size
  auto span = [&](const std::byte* b, Range r) { return bytes(b + r.lo * e, (r.hi - r.lo) * e); };
  std::byte* const acc = ch.buffer(0, bytesN);
  const std::byte* base = packedInput(ch, input, 2);
  std::vector<Range> path;  // the range before each halving, innermost last
  Range mine{0, n};
  Failure f;
  // Rounds pair with rank ^ 1 first, as recursive doubling does: should ranks disagree on the
  // count (an erroneous program) across the threshold, the first exchange sees other sizes.
  for (int mask = 1; mask < p; mask <<= 1) {
    const std::size_t mid = mine.lo + (mine.hi - mine.lo) / 2;
    const bool lower = (me & mask) == 0;
    const Range keep = lower ? Range{mine.lo, mid} : Range{mid, mine.hi};
    const Range give = lower ? Range{mid, mine.hi} : Range{mine.lo, mid};
    SendOp s{me ^ mask, span(base, give), f.errorClass()};
    s.byAttach = false;  // the partner folds it
    RecvOp r = foldFrom(me ^ mask, acc + keep.lo * e, (keep.hi - keep.lo) * e, base + keep.lo * e,
                        op, kind);
    f.run(ch, {&s, 1}, {&r, 1});
    path.push_back(mine);
    mine = keep;
    base = acc;
  }
  std::byte* out = acc;
  for (int mask = p >> 1; mask >= 1; mask >>= 1) {
    const Range whole = path.back();
    path.pop_back();
    const Range theirs = mine.lo == whole.lo ? Range{mine.hi, whole.hi} : Range{whole.lo, mine.lo};
    if (mask == 1 && direct != nullptr && f.errorClass() == 0) out = direct;
    SendOp s{me ^ mask, span(acc, mine), f.errorClass()};
    // Just folded here, and measured slower by attach (2 ranks, 64 KiB: 19.8 us, 13.5 by the
    // ring).
    s.byAttach = false;
    RecvOp r{me ^ mask, span(out, theirs), nullptr};
    f.run(ch, {&s, 1}, {&r, 1});
    if (out == direct && f.errorClass() == 0) {
      onesided::detail::copyBytes(direct + mine.lo * e, acc + mine.lo * e, (mine.hi - mine.lo) * e);
    }
    mine = whole;
  }
  f.rethrow();
  if (out != direct) unpack(out, bytesN, rbuf, n, type);
}

/// count x t of every rank (`in`) combined in rank order at rank 0 (the tree above); the result
/// is in `acc` at rank 0 (which starts as the channel's scratch 0), and errors are in f (every
/// rank finishes the protocol).
void reduceTypedToZero(Comm& comm, const Stream& in, const Reduction& op, TypedBuffer& acc,
                       Failure& f) {
  const int p = comm.size();
  const int me = comm.rank();
  const Datatype& t = *in.type;
  const std::size_t n = in.count;
  auto& ch = comm.channel();
  f.attempt([&] { localCopy(in, acc.stream(n, t)); });
  TypedBuffer child(ch, 1, t, (me & 1) == 0 && me + 1 < p ? n : 0);
  for (int mask = 1; mask < p; mask <<= 1) {
    if ((me & mask) != 0) {
      SendOp s{me - mask, acc.stream(n, t), f.errorClass()};
      f.run(ch, {&s, 1}, {});
      return;
    }
    if (me + mask >= p) continue;
    RecvOp r{me + mask, child.stream(n, t), nullptr};
    f.run(ch, {}, {&r, 1});
    if (f.errorClass() == 0) {
      // child = mine op child: the result lands in the later ranks' buffer.
      f.attempt([&] { combineTyped(op, 0, t, acc.base(), child.base(), n); });
      std::swap(acc, child);
    }
  }
}

/// MPI_Reduce with a user operation.
void reduceUser(Comm& comm, const Stream& in, const Reduction& op, void* rbuf, int root) {
  const int me = comm.rank();
  const Datatype& t = *in.type;
  TypedBuffer acc(comm.channel(), 0, t, in.count);
  Failure f;
  reduceTypedToZero(comm, in, op, acc, f);
  if (root == 0) {
    if (me == 0 && f.errorClass() == 0) {
      f.attempt([&] { localCopy(acc.stream(in.count, t), {rbuf, in.count, &t}); });
    }
  } else {
    comm.channel().nextCall();
    if (me == 0) {
      SendOp s{root, acc.stream(in.count, t), f.errorClass()};
      f.run(comm.channel(), {&s, 1}, {});
    } else if (me == root) {
      RecvOp r{0, {rbuf, in.count, &t}, nullptr};
      f.run(comm.channel(), {}, {&r, 1});
    }
  }
  f.rethrow();
}

/// Block r of `in`: counts[r] elements at displs[r] extents.
Stream blockOf(const Stream& in, std::span<const int> counts, std::span<const std::size_t> displs,
               int r) {
  const auto k = static_cast<std::size_t>(r);
  return {at(in.buf, *in.type, static_cast<std::int64_t>(displs[k])),
          static_cast<std::size_t>(counts[k]), in.type};
}

/// One exchange of typed vectors combined in rank order (user operations): this rank writes
/// sendTo(r) to every other rank r (a staggered schedule: rank i starts at i + 1) and receives
/// theirs, of mine.count elements of mine's type, into the channel's scratch; then out = v0 op
/// (v1 op (... op v(p-1))), v(me) being `mine`, combined from the top down, each in front of
/// the rest. `out` is written only once the exchange is over, so it may be `mine`'s place.
template <class SendTo>
void exchangeCombine(Comm& comm, const SendTo& sendTo, const Stream& mine, const Reduction& op,
                     void* out) {
  const int p = comm.size();
  const int me = comm.rank();
  const Datatype& t = *mine.type;
  const std::size_t n = mine.count;
  auto& ch = comm.channel();
  SendList sends;
  RecvList recvs;
  std::vector<TypedBuffer> parts;
  parts.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r)
    parts.emplace_back(ch, 3 + static_cast<std::size_t>(r), t, r == me ? 0 : n);
  for (int d = 1; d < p; ++d) {
    const int from = (me - d + p) % p;
    sends.emplace_back((me + d) % p, sendTo((me + d) % p), 0);
    recvs.emplace_back(from, parts[static_cast<std::size_t>(from)].stream(n, t), nullptr);
  }
  Failure f;
  f.run(ch, sends, recvs);
  f.rethrow();
  TypedBuffer acc(ch, 0, t, n);
  auto part = [&](int r) {
    return r == me ? mine : parts[static_cast<std::size_t>(r)].stream(n, t);
  };
  localCopy(part(p - 1), acc.stream(n, t));
  for (int r = p - 2; r >= 0; --r) combineTyped(op, 0, t, part(r).buf, acc.base(), n);
  localCopy(acc.stream(n, t), {out, n, &t});
}

/// Reduce_scatter with a user operation: every rank writes block r of its input to rank r and
/// combines the p blocks of its own in rank order into `out` (which may be the block's place
/// in the input: allreduceUser in place).
void reduceScatterUser(Comm& comm, const Stream& in, std::span<const int> counts,
                       std::span<const std::size_t> displs, const Reduction& op, void* out) {
  exchangeCombine(
      comm, [&](int r) { return blockOf(in, counts, displs, r); },
      blockOf(in, counts, displs, comm.rank()), op, out);
}

/// From this many bytes a user operation's allreduce on more than 2 ranks is a reduce_scatter
/// and an allgather.
constexpr std::size_t kUserSplitFrom = std::size_t{16} << 10;

/// MPI_Allreduce with a user operation. Large vectors on more than 2 ranks: a reduce_scatter
/// and an allgather. Small vectors on 3 to 8 ranks (as the predefined operations) go by one
/// exchange, every rank combining all p in rank order: one wait instead of log2 p rounds, each
/// a wait on a partner that may not be running (4 ranks on 2 cores: 17.6 us against 26.0 us
/// by recursive doubling, medians of 5 interleaved runs). Otherwise, on 2 ranks or a
/// power-of-two number, recursive doubling: in round k a rank swaps its vector (ranks
/// [b, b + 2^k) combined) with rank ^ 2^k, whose vector covers the ranks next to them, and
/// both combine the lower ranks' vector in front, so every rank ends with the same bits in
/// rank order, after log2 p exchanges; the rest is a reduce to rank 0 and a broadcast.
void allreduceUser(Comm& comm, const Stream& in, const Reduction& op, void* rbuf) {
  const int p = comm.size();
  const int me = comm.rank();
  const Datatype& t = *in.type;
  const std::size_t n = in.count;
  auto& ch = comm.channel();
  const Alg alg = forcedAlg(comm);
  if (p > 2 && n >= static_cast<std::size_t>(p) && alg == Alg::kAuto &&
      bytesOf(n, t) >= kUserSplitFrom) {
    // Blocks of n / p elements combined in rank order at their ranks, then gathered by all:
    // each rank sends and receives 2 (p - 1) / p of a vector, against log2 p vectors.
    std::vector<int> counts(static_cast<std::size_t>(p));
    std::vector<int> displs(static_cast<std::size_t>(p));
    std::vector<std::size_t> offs(static_cast<std::size_t>(p));
    for (std::size_t r = 0, off = 0; r < counts.size(); ++r) {
      counts[r] = static_cast<int>(n / counts.size() + (r < n % counts.size() ? 1 : 0));
      displs[r] = static_cast<int>(off);
      offs[r] = off;
      off += static_cast<std::size_t>(counts[r]);
    }
    reduceScatterUser(comm, in, counts, offs, op,
                      at(rbuf, t, displs[static_cast<std::size_t>(me)]));
    ch.nextCall();
    allgatherv(comm, inPlace(), 0, nullptr, rbuf, counts.data(), displs.data(), &t);
    return;
  }
  if (allreduceByExchange(alg, p, bytesOf(n, t))) {
    exchangeCombine(
        comm, [&](int) { return in; }, in, op, rbuf);
    return;
  }
  Failure f;
  const bool powerOfTwo = (p & (p - 1)) == 0;
  if (powerOfTwo) {
    // cur: this rank's combined vector, at first the input itself (sent as it is); the two
    // buffers hold it once combined and what the partner sends. In the last round (not in
    // place) a lower rank receives straight into the receive buffer and combines there.
    const void* cur = in.buf;
    TypedBuffer mine(ch, 0, t, p > 1 ? n : 0);
    TypedBuffer theirs(ch, 1, t, p > 1 ? n : 0);
    const bool inplace = in.buf == rbuf;
    for (int mask = 1; mask < p; mask <<= 1) {
      const int partner = me ^ mask;
      const bool last = mask << 1 >= p;
      void* into = last && !inplace && partner > me ? rbuf : theirs.base();
      SendOp s{partner, {cur, n, &t}, f.errorClass()};
      RecvOp r{partner, {into, n, &t}, nullptr};
      f.run(ch, {&s, 1}, {&r, 1});
      if (f.errorClass() != 0) continue;
      f.attempt([&] {
        if (partner > me) {  // into = cur op theirs
          combineTyped(op, 0, t, cur, into, n);
          cur = into;
          if (into == theirs.base()) std::swap(mine, theirs);
          return;
        }
        // cur = theirs op cur, combined where cur's values are copied unless it is there
        // (the receive buffer's input, in place, was sent in the first round).
        void* dst = last ? rbuf : mine.base();
        if (dst != cur) localCopy({cur, n, &t}, {dst, n, &t});
        combineTyped(op, 0, t, into, dst, n);
        cur = dst;
      });
    }
    if (f.errorClass() == 0 && cur != rbuf) {
      f.attempt([&] { localCopy({cur, n, &t}, {rbuf, n, &t}); });
    }
    f.rethrow();
    return;
  }
  TypedBuffer acc(ch, 0, t, n);
  reduceTypedToZero(comm, in, op, acc, f);
  comm.channel().nextCall();
  const bool zero = me == 0;
  bcastStream(comm, {zero ? acc.base() : rbuf, n, &t}, 0, f);
  if (zero && f.errorClass() == 0) {
    f.attempt([&] { localCopy(acc.stream(n, t), {rbuf, n, &t}); });
  }
  f.rethrow();
}

/// Reduce_scatter with a predefined operation is one exchange (every rank writes block r to rank
/// r, which folds the p blocks), up to kDirectMaxRanks ranks at any size and from this many bytes
/// per block (on average) beyond; below that on more ranks, a reduce to rank 0 and a scatter:
/// fewer, larger messages, where each of the exchange's p - 1 streams per rank waits for its
/// sender to be scheduled when ranks share cores. Since the exchange became the allreduce's
/// (one phase), it won up to 8 ranks on 2 cores too (2026-12-04, 4 interleaved rounds, medians,
/// blocks of 8 B / 2 KiB / 8 KiB; reduce + scatter first): 3 ranks 4.5 / 4.7 / 5.0 us against
/// 3.1 / 3.6 / 5.1; 4 ranks 5.8 / 6.2 / 8.1 against 2.6 / 3.0 / 5.3; 8 ranks 11.9 / 21 / 27
/// against 10.8 / 12.4 / 27. (Before: 4 ranks, 8 B - 2 KiB, 7.3-14.6 us against 11.1-17.2.)
constexpr std::size_t kScatterDirectFrom = std::size_t{8} << 10;

/// Reduce_scatter with a predefined operation as a reduce of the whole vector to rank 0 and a
/// scatter of its blocks (packed).
void reduceThenScatter(Comm& comm, const Stream& in, int kind, Op op, std::span<const int> counts,
                       std::span<const std::size_t> displs, void* rbuf) {
  const int p = comm.size();
  const Datatype& t = *in.type;
  const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(comm.rank())]);
  Failure f;
  const std::byte* out = nullptr;
  f.attempt([&] { out = reducePacked(comm, in, kind, op, 0); });
  const std::size_t es = t.size();  // packed bytes of one element
  comm.channel().nextCall();
  if (comm.rank() == 0) {
    // A failed reduce still scatters (poisoned, from scratch), so the others fail, not wait.
    if (out == nullptr) out = comm.channel().buffer(0, bytesOf(in.count, t));
    if (f.errorClass() == 0) unpack(out, n * es, rbuf, n, t);
    SendList sends;
    for (int r = 1; r < p; ++r) {
      const auto k = static_cast<std::size_t>(r);
      sends.emplace_back(r, bytes(out + displs[k] * es, static_cast<std::size_t>(counts[k]) * es),
                         f.errorClass());
    }
    f.run(comm.channel(), sends, {});
  } else {
    RecvOp r{0, {rbuf, n, &t}, nullptr};
    f.run(comm.channel(), {}, {&r, 1});
  }
  f.rethrow();
}

/// MPI_Reduce_scatter(_block): counts[r] elements to rank r, the input being their sum. One
/// exchange: every rank writes block r of its input to rank r (a staggered schedule: rank i
/// starts at i + 1) and combines the p blocks of its own, so each rank sends and receives
/// (p - 1) / p of a vector, in one phase, and combines the blocks in rank order (packed for a
/// predefined operation, typed for a user one).
/// (Small blocks of a predefined operation on more than 2 ranks: reduceThenScatter.)
void reduceScatterImpl(Comm& comm, const void* sbuf, void* rbuf, std::span<const int> counts,
                       const Datatype* type, const Reduction& op) {
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::size_t> displs(static_cast<std::size_t>(p));
  std::size_t all = 0;
  for (int r = 0; r < p; ++r) {
    displs[static_cast<std::size_t>(r)] = all;
    all += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  }
  const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(me)]);
  auto c = checkReduce(sbuf, rbuf, all, n, type, op, true);
  const Datatype& t = *c.type;
  auto& ch = comm.channel();
  auto block = [&](int r) { return blockOf(c.in, counts, displs, r); };
  const Alg alg = forcedAlg(comm);
  if (!op.isUser() && p > 2 &&
      (alg == Alg::kTree || (alg == Alg::kAuto && p > kDirectMaxRanks &&
                             bytesOf(all, t) / static_cast<std::size_t>(p) < kScatterDirectFrom))) {
    reduceThenScatter(comm, c.in, c.kind, op.op, counts, displs, rbuf);
    return;
  }
  if (!op.isUser()) {
    SendList sends;
    for (int d = 1; d < p; ++d) sends.emplace_back((me + d) % p, block((me + d) % p), 0);
    // The blocks land whole and are folded after, in rank order: folding them from the ring
    // as they arrive would need every sender's stream under way at once (a phase's folds write
    // nothing until all have checked their senders), and a sender has only
    // ONESIDED_COLL_INFLIGHT of its p - 1 streams under way.
    const std::size_t bytesN = bytesOf(n, t);
    std::byte* const parts = ch.buffer(3, static_cast<std::size_t>(p) * bytesN);
    auto part = [&](int r) { return parts + static_cast<std::size_t>(r) * bytesN; };
    RecvList recvs;
    for (int d = 1; d < p; ++d) {
      const int from = (me - d + p) % p;
      recvs.emplace_back(from, bytes(part(from), bytesN), nullptr);
    }
    Failure f;
    f.run(ch, sends, recvs);
    f.rethrow();
    if (bytesN == 0) return;
    std::byte* const acc = ch.buffer(0, bytesN);
    const std::byte* own = packedInput(ch, block(me), 2);
    foldRankOrder(op.op, c.kind, acc, p, bytesN, [&](int r) { return r == me ? own : part(r); });
    unpack(acc, bytesN, rbuf, n, t);
    return;
  }
  reduceScatterUser(comm, c.in, counts, displs, op, rbuf);
}

}  // namespace

void reduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
            const Reduction& op, int root) {
  onesided::detail::Collective guard(comm.channel());
  checkRoot(comm, root);
  checkCount(count, "count");
  const bool isRoot = comm.rank() == root;
  if (inPlaceArg(sbuf) && !isRoot)
    throw Error(kErrBuffer, "MPI_IN_PLACE is only allowed at the root");
  const auto n = static_cast<std::size_t>(count);
  auto c = checkReduce(sbuf, rbuf, n, n, type, op, isRoot);
  if (op.isUser()) {
    reduceUser(comm, c.in, op, rbuf, root);
    return;
  }
  // The root's result lands in its receive buffer when that is one run of packed elements.
  auto* direct = isRoot && c.type->contiguous() ? static_cast<std::byte*>(rbuf) : nullptr;
  const std::byte* out = reducePacked(comm, c.in, c.kind, op.op, root, direct);
  if (isRoot && out != direct) unpack(out, bytesOf(n, *c.type), rbuf, n, *c.type);
}

void allreduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
               const Reduction& red) {
  onesided::detail::Collective guard(comm.channel());
  checkCount(count, "count");
  const auto n = static_cast<std::size_t>(count);
  auto c = checkReduce(sbuf, rbuf, n, n, type, red, true);
  if (red.isUser()) {
    allreduceUser(comm, c.in, red, rbuf);
    return;
  }
  const Op op = red.op;
  const int p = comm.size();
  auto& ch = comm.channel();
  const std::size_t bytesN = bytesOf(n, *c.type);
  // Where the result goes: straight into the receive buffer when it is one run of packed
  // elements.
  auto* direct = c.type->contiguous() ? static_cast<std::byte*>(rbuf) : nullptr;
  const Alg alg = forcedAlg(comm);
  if (allreduceByExchange(alg, p, bytesN)) {
    allreduceDirect(comm, c.in, c.kind, op, bytesN, rbuf, n, *c.type, direct);
    return;
  }
  const bool powerOfTwo = p > 1 && (p & (p - 1)) == 0;
  if (powerOfTwo && p > 2 && bytesN >= kHalvingFrom && n >= static_cast<std::size_t>(p)) {
    allreduceHalving(comm, c.in, c.kind, op, n, bytesN, rbuf, *c.type, direct);
    return;
  }
  if (powerOfTwo) {
    // Recursive doubling: in round k every rank swaps its partial result with rank ^ 2^k and
    // folds the partner's in as it arrives, so after log2 p rounds (one write each way per
    // round, instead of a reduce's and a broadcast's 2 log2 p in sequence) every rank holds
    // the result. The predefined operations commute, so every rank ends with the same bits.
    // Each round sends one buffer and folds into another (the input itself is sent first).
    std::byte* const scratch[2] = {ch.buffer(0, bytesN), ch.buffer(1, bytesN)};
    const std::byte* cur = packedInput(ch, c.in, 2);
    Failure f;
    for (int mask = 1; mask < p; mask <<= 1) {
      const bool last = mask << 1 >= p;
      // The receive buffer is written only by a last round with no error before it.
      std::byte* next = last && direct != nullptr && direct != cur && f.errorClass() == 0 ? direct
                        : cur == scratch[0] ? scratch[1]
                                            : scratch[0];
      const int partner = comm.rank() ^ mask;
      SendOp s{partner, bytes(cur, bytesN), f.errorClass()};
      s.byAttach = false;  // the partner folds it
      // By the ring, not read from this rank's memory: both partners fold what the other
      // sends, and a program rewrites its input between calls; where the partner had read it
      // in place, every line of that rewrite waited for the partner's copy to be invalidated
      // (2 ranks, input rewritten before every call, us, shared pages / ring / Open MPI:
      // 32 KiB 18-23 / 8-11 / 19, 128 KiB 47-63 / 36-37 / 46; 4 ranks 32 KiB 41 / 33 / 66).
      // With the same input every call (OSU-style) the shared pages were faster (2 ranks
      // 128 KiB 5.8 / 24 / 35-46) only because nothing rewrote it.
      s.byShare = false;
      RecvOp r = foldFrom(partner, next, bytesN, cur, op, c.kind);
      f.run(ch, {&s, 1}, {&r, 1});
      cur = next;
    }
    f.rethrow();
    if (cur != direct) unpack(cur, bytesN, rbuf, n, *c.type);
    return;
  }
  // Reduce to rank 0, then a broadcast of the result (poisoned if the reduce failed at the
  // root, so that every rank fails rather than waits).
  Failure f;
  const std::byte* res = nullptr;
  f.attempt([&] { res = reducePacked(comm, c.in, c.kind, op, 0, direct); });
  std::byte* out = nullptr;
  if (res != nullptr) {
    out = const_cast<std::byte*>(res);  // rank 0: the result
  } else if (direct != nullptr && f.errorClass() == 0) {
    out = direct;
  } else {
    out = ch.buffer(0, bytesN);
  }
  comm.channel().nextCall();
  bcastStream(comm, bytes(out, bytesN), 0, f);
  f.rethrow();
  if (out != direct) unpack(out, bytesN, rbuf, n, *c.type);
}

void reduceScatterBlock(Comm& comm, const void* sbuf, void* rbuf, int rcount, const Datatype* type,
                        const Reduction& op) {
  onesided::detail::Collective guard(comm.channel());
  checkCount(rcount, "recvcount");
  const std::vector<int> counts(static_cast<std::size_t>(comm.size()), rcount);
  reduceScatterImpl(comm, sbuf, rbuf, counts, type, op);
}

void reduceScatter(Comm& comm, const void* sbuf, void* rbuf, const int* rcounts,
                   const Datatype* type, const Reduction& op) {
  onesided::detail::Collective guard(comm.channel());
  if (rcounts == nullptr) throw Error(kErrArg, "recvcounts is NULL");
  const auto p = static_cast<std::size_t>(comm.size());
  for (std::size_t r = 0; r < p; ++r) {
    if (rcounts[r] < 0) {
      throw Error(kErrCount, "recvcounts[" + std::to_string(r) + "] " + std::to_string(rcounts[r]) +
                                 " is negative");
    }
  }
  reduceScatterImpl(comm, sbuf, rbuf, {rcounts, p}, type, op);
}

}  // namespace onesided::coll
