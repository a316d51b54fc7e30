// SPDX-License-Identifier: BSD-3-Clause
// What the collective families share: argument checks, algorithm choice, binomial-tree
// arithmetic, local copies and the error carried through a tree.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/channel.hpp"
#include "collectives/small_vec.hpp"
#include "copy.hpp"
#include "onesided/collectives.hpp"
#include "onesided/comm.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"

namespace onesided::coll::detail {

using onesided::detail::Callback;
using onesided::detail::Channel;
using onesided::detail::kNoCallback;
using onesided::detail::kNoWhole;
using onesided::detail::RecvOp;
using onesided::detail::SendOp;
using onesided::detail::SmallVec;
using onesided::detail::Stream;
using onesided::detail::WholeSend;
/// A phase's operations (a few per call: kept inline, no allocation).
using SendList = SmallVec<SendOp, 8>;
using RecvList = SmallVec<RecvOp, 8>;

enum class Alg { kAuto, kLinear, kTree };
/// ONESIDED_COLL_ALG, as read when the communicator was made.
inline Alg forcedAlg(Comm& c) { return static_cast<Alg>(c.channel().algorithm()); }
/// Up to this many ranks the rooted collectives (gather, scatter, and reduce of small vectors)
/// are linear by default: one wait instead of log2 p. On 2 cores, 8 B to 2 KiB, linear against
/// binomial: 4 ranks gather 0.24-0.47 us against 0.41-0.91, scatter 0.24-0.41 against
/// 0.36-0.73, reduce 0.34-0.54 against 0.46-0.90; 8 ranks gather 0.21-2.5 against 0.70-5.7.
/// (Bcast keeps its tree: 0.22-0.37 against 0.34-0.42 at 4 ranks.)
constexpr int kLinearUpTo = 8;
/// The tree (binomial) algorithm for this call? `bytes` is the data one rank contributes; by
/// default a tree for fewer than `treeBelow` bytes on more than `linearUpTo` ranks.
bool useTree(Alg a, int p, std::size_t bytes, std::size_t treeBelow, int linearUpTo = 2);
/// Whether a gather's or reduce's streams to the root may go by cross-memory attach
/// (SendOp::byAttach): only when the root takes one stream, on 2 ranks. Then the root's single
/// copy beats the ring, whose sender writes cells the root has just read, and a folded stream
/// lands in the root's result (2 ranks, us ring / attach / Open MPI: gather 128 KiB 11.9-13.5 /
/// 8.9-10.2 / 8.4-8.9, 512 KiB 51-57 / 42-48 / 38-44; reduce 512 KiB 34-47 / 35-37 / 29-32).
/// With more ranks the root would make every copy itself (gather, 4 ranks, 512 KiB: 171-188 by
/// the ring, 203 by attach), and a fold among several stays one pass from the ring. (Having the
/// senders write into the root's buffer instead, process_vm_writev, was 3x faster in OSU-style
/// loops, whose root never touches its receive buffer, and 2x slower at 128 KiB when it reads
/// it between calls: the writes then take every line back from the root's cache.)
inline bool rootTakesOne(int p) { return p == 2; }

inline bool inPlaceArg(const void* p) { return p == inPlace(); }
[[noreturn]] void throwInPlace(const char* what, const char* allowed);
/// A buffer argument that the call does not let be MPI_IN_PLACE (a marker, not memory: using it
/// as an address would crash or write anywhere): MPI_ERR_BUFFER naming the argument and, if
/// any, where the call allows MPI_IN_PLACE (`allowed`, e.g. "sendbuf").
inline void checkNotInPlace(const void* buf, const char* what, const char* allowed) {
  if (inPlaceArg(buf)) [[unlikely]]
    throwInPlace(what, allowed);
}

void checkRoot(const Comm& c, int root);
void checkCount(int count, const char* what);
/// A significant datatype: present and committed.
const Datatype& checkType(const Datatype* t, const char* what);
/// MPI-3.1 §5.2.1: send and receive buffers of one rank must not overlap unless MPI_IN_PLACE.
void checkNoAlias(const void* a, std::int64_t alo, std::int64_t ahi, const void* b,
                  std::int64_t blo, std::int64_t bhi, const char* aName, const char* bName);
/// [lo, hi) bytes relative to buf that `count` elements at `disp` extents touch, widened.
void widen(const Datatype& t, std::int64_t disp, std::size_t count, std::int64_t& lo,
           std::int64_t& hi);
/// The same for a displacement of `offset` bytes (MPI_Alltoallw's).
void widenBytes(const Datatype& t, std::int64_t offset, std::size_t count, std::int64_t& lo,
                std::int64_t& hi);
/// One side of a v-collective: its counts and displacements (MPI_ERR_ARG for a NULL array,
/// MPI_ERR_COUNT naming a negative entry) and its datatype (checkType), in that order; `lo`,
/// `hi` are widened to the bytes the p blocks touch. Returns the datatype.
const Datatype& checkBlocks(int p, const int* counts, const char* countsName, const int* displs,
                            const char* displsName, const Datatype* t, const char* typeName,
                            std::int64_t& lo, std::int64_t& hi);
/// checkBlocks() for a datatype per block and displacements in bytes (MPI_Alltoallw): NULL
/// arrays (MPI_ERR_ARG), then per block its count (MPI_ERR_COUNT) and its datatype (checkType),
/// each named with its index.
void checkBlocksW(int p, const int* counts, const char* countsName, const int* displs,
                  const char* displsName, const Datatype* const* types, const char* typesName,
                  std::int64_t& lo, std::int64_t& hi);

/// Address of element `i` of a buffer of `t` (i extents on).
inline const void* at(const void* buf, const Datatype& t, std::int64_t i) {
  return reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf) +
                                       static_cast<std::uintptr_t>(i * t.extent()));
}
inline void* at(void* buf, const Datatype& t, std::int64_t i) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(buf) +
                                 static_cast<std::uintptr_t>(i * t.extent()));
}
/// Address `offset` bytes from buf (as at(): buf may be NULL for empty blocks).
inline const void* byteAt(const void* buf, std::int64_t offset) {
  return at(buf, datatypeOf<std::byte>(), offset);
}
inline std::size_t bytesOf(std::size_t count, const Datatype& t) { return count * t.size(); }

/// A send argument as one buffer (WholeSend), or {}: the p blocks of counts[r] elements of t
/// at displs[r] (extents) must tile it in rank order, so every byte of it is send data of the
/// call: t contiguous, each non-empty block starting where the one before ended.
WholeSend wholeOf(const void* buf, int p, const int* counts, const int* displs, const Datatype& t);
/// The same with a datatype per block and displacements in bytes (MPI_Alltoallw).
WholeSend wholeOf(const void* buf, int p, const int* counts, const int* displs,
                  const Datatype* const* types);
/// wholeOf's arguments, for a WholeSend found only when needed (WholeSend::find): `args` must
/// live until the phase ends. With `types`, displacements are in bytes and `t` is not used.
struct WholeArgs {
  const void* buf;
  int p;
  const int* counts;
  const int* displs;
  const Datatype* t;
  const Datatype* const* types = nullptr;
};
inline WholeSend lazyWholeOf(const WholeArgs& args) {
  return {nullptr, 0,
          [](const void* ctx) {
            const auto* a = static_cast<const WholeArgs*>(ctx);
            return a->types != nullptr ? wholeOf(a->buf, a->p, a->counts, a->displs, a->types)
                                       : wholeOf(a->buf, a->p, a->counts, a->displs, *a->t);
          },
          &args};
}
/// The same for p blocks of `count` elements one after the other (MPI_Alltoall, MPI_Scatter).
inline WholeSend wholeOf(const void* buf, int p, int count, const Datatype& t) {
  if (!t.contiguous() || count <= 0) return {};
  return {buf, bytesOf(static_cast<std::size_t>(p) * static_cast<std::size_t>(count), t)};
}
/// A send argument that is one stream (a gather's or allgather's own block, not in place).
inline WholeSend wholeOf(const Stream& s) {
  if (!s.type->contiguous() || s.count == 0) return {};
  return {s.buf, bytesOf(s.count, *s.type)};
}

/// This rank's own block: the packed stream of src unpacked into dst (signatures must agree in
/// size, else kErrTruncate / kErrCount).
void localCopy(const Stream& src, const Stream& dst);
/// A packed byte range as a stream; `sig`: the type whose elements the bytes hold, if known.
Stream bytes(const void* p, std::size_t n, const Datatype* sig = nullptr);

/// Binomial tree rooted at `root`: ranks relative to the root (vr), children and subtree sizes.
struct Tree {
  int p;
  int root;
  int vr;
  Tree(int size, int rank, int rootRank)
      : p(size), root(rootRank), vr((rank - rootRank + size) % size) {}
  [[nodiscard]] int real(int v) const { return (v + root) % p; }
  /// The lowest set bit of vr (the span of its subtree); for the root, the first power of two
  /// at or above p.
  [[nodiscard]] int span() const {
    if (vr == 0) {
      int m = 1;
      while (m < p) m <<= 1;
      return m;
    }
    return vr & -vr;
  }
  [[nodiscard]] int subtree() const { return std::min(span(), p - vr); }
  [[nodiscard]] int parent() const { return real(vr - span()); }
  struct Child {
    int v;     // virtual rank
    int size;  // of its subtree
  };
  /// Children, largest subtree first.
  [[nodiscard]] SmallVec<Child, 32> children() const {
    SmallVec<Child, 32> out;
    for (int m = span() >> 1; m >= 1; m >>= 1) {
      if (vr + m < p) out.push_back({vr + m, std::min(m, p - (vr + m))});
    }
    return out;
  }
};

/// The first error of a collective's phases, kept so the rank finishes the protocol (its peers
/// would wait otherwise) and throws at the end.
class Failure {
 public:
  /// Runs fn, keeping its error (a part of the collective that finished its own protocol).
  template <class F>
  void attempt(F&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      if (!err_) err_ = e;
    }
  }
  void run(Channel& ch, std::span<const SendOp> sends, std::span<const RecvOp> recvs,
           const Callback& meanwhile = kNoCallback, const WholeSend& whole = kNoWhole) {
    attempt([&] { ch.run(sends, recvs, meanwhile, whole); });
  }
  [[nodiscard]] int errorClass() const { return err_ ? err_->errorClass() : 0; }
  void rethrow() const {
    if (err_) throw *err_;
  }

 private:
  std::optional<Error> err_;
};

/// This rank's copy of its own block `own` (`bytes` of it) in a phase that moves the others':
/// from 32 KiB, returned to run while the phase waits (Channel::run's meanwhile), so that
/// streams read by attach need not wait for it; smaller, made now, since nothing there moves by
/// attach and a copy after the chunks are posted costs more (2 ranks, 8-byte scatter 0.078-0.090
/// us against 0.063-0.067). Its error is kept in f either way, and the phase still runs.
inline Callback ownCopy(Failure& f, std::size_t bytes, Callback own) {
  constexpr std::size_t kMeanwhileFrom = std::size_t{32} << 10;
  if (bytes >= kMeanwhileFrom) return own;
  f.attempt(own);
  return {};
}

/// Memory for `count` elements of `t` laid out as a program's buffer of them would be (gaps
/// included): what reductions with user operations and scans combine in, since a user function
/// takes the datatype's layout, not packed elements. For a contiguous type (whose layout is its
/// packed bytes) one of the channel's scratch buffers when a slot is given, else its own memory.
class TypedBuffer {
 public:
  TypedBuffer(const Datatype& t, std::size_t count) { allocate(t, count); }
  TypedBuffer(Channel& ch, std::size_t slot, const Datatype& t, std::size_t count) {
    if (count == 0) {
      base_ = this;  // nothing is read or written there; a real address for memcpy of 0 bytes
      return;
    }
    if (t.contiguous()) {
      base_ = ch.buffer(slot, bytesOf(count, t));
    } else {
      allocate(t, count);
    }
  }
  /// Where element 0 starts (its type map's offsets are relative to this).
  [[nodiscard]] void* base() const noexcept { return base_; }
  [[nodiscard]] Stream stream(std::size_t count, const Datatype& t) const {
    return {base_, count, &t};
  }

 private:
  void allocate(const Datatype& t, std::size_t count) {
    std::int64_t lo = 0, hi = 0;
    widen(t, 0, count, lo, hi);
    mem_.resize(static_cast<std::size_t>(hi - lo));
    base_ = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(mem_.data()) -  // NOLINT
                                    static_cast<std::uintptr_t>(lo));
  }
  std::vector<std::byte> mem_;  // moves keep its data where it is, so base_ stays valid
  void* base_ = nullptr;
};

/// The checks of a reduction's operation and type: for a predefined operation the kind it runs
/// over (reductionKind), for a user operation 0 (it takes any committed type).
int reductionKind(const Datatype& t, const Reduction& op);
/// inout = in op inout for `count` elements of `t` in its own layout (in rank order: `in` holds
/// the lower ranks' part). `kind` as reductionKind gave.
void combineTyped(const Reduction& op, int kind, const Datatype& t, const void* in, void* inout,
                  std::size_t count);

/// Reduction of packed element streams: n elements of `kind`.
void reduceInto(Op op, int kind, std::byte* acc, const std::byte* in, std::size_t bytes);
/// out = v0 op v1 op ... op v(p-1), packed vectors of n bytes where src(r) gives rank r's (out
/// may be src(0), no other): every rank that folds the same vectors gets the same bits.
template <class Src>
void foldRankOrder(Op op, int kind, std::byte* out, int p, std::size_t n, const Src& src) {
  if (n == 0) return;  // a buffer of 0 elements may be NULL
  onesided::detail::copyBytes(out, src(0), n);
  for (int r = 1; r < p; ++r) reduceInto(op, kind, out, src(r), n);
}
/// The kind a reduction runs over, after checking op and type (kErrOp, kErrType).
int reductionKind(const Datatype& t, Op op);
/// This rank's input to a reduction as packed bytes: the buffer itself when its type is
/// contiguous, else packed into the channel's buffer `slot`.
const std::byte* packedInput(Channel& ch, const Stream& in, std::size_t slot);
/// The tree reduce of count x t from every rank to `root`; returns the packed result at the
/// root (in `out` when given: n bytes, which may be the input itself; else in one of the
/// channel's buffers), null elsewhere. Children's vectors are folded straight from the scratch
/// ring as they arrive, in a fixed order. Throws after finishing the protocol.
const std::byte* reducePacked(Comm& c, const Stream& in, int kind, Op op, int root,
                              std::byte* out = nullptr);
/// A receive of a packed vector from `peer` folded into dst: dst = base op vector.
RecvOp foldFrom(int peer, std::byte* dst, std::size_t n, const std::byte* base, Op op, int kind);
/// Bcast of packed bytes used inside composite collectives; the root sends f's error, if any,
/// as poison (the receivers fail too, instead of using the bytes).
void bcastStream(Comm& c, const Stream& s, int root, Failure& f);

}  // namespace onesided::coll::detail
