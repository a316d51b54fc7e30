// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/common.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "copy.hpp"

namespace onesided::coll::detail {

namespace {
/// Reduce is linear on up to kLinearUpTo ranks for vectors up to this size: the root folds
/// p - 1 vectors instead of waiting log2 p times (8 ranks, 2 KiB: 2.66-3.07 us against
/// 2.70-3.55 by the tree; 8-128 B: 0.38-0.79 against 0.70-3.21).
constexpr std::size_t kReduceLinearUpTo = 2048;
}  // namespace

bool useTree(Alg a, int p, std::size_t bytes, std::size_t treeBelow, int linearUpTo) {
  if (a == Alg::kLinear) return false;
  if (a == Alg::kTree) return true;
  return p > std::max(2, linearUpTo) && bytes < treeBelow;
}

void checkRoot(const Comm& c, int root) {
  if (root < 0 || root >= c.size()) {
    throw Error(kErrRoot, "root " + std::to_string(root) +
                              " is not a rank of the communicator (size " +
                              std::to_string(c.size()) + ")");
  }
}

void throwInPlace(const char* what, const char* allowed) {
  std::string m = std::string(what) + " is MPI_IN_PLACE, which ";
  m += allowed != nullptr ? std::string("this call allows only as ") + allowed
                          : std::string("this call does not take");
  throw Error(kErrBuffer, m);
}

void checkCount(int count, const char* what) {
  if (count < 0)
    throw Error(kErrCount, std::string(what) + " " + std::to_string(count) + " is negative");
}

const Datatype& checkType(const Datatype* t, const char* what) {
  if (t == nullptr) throw Error(kErrType, std::string(what) + " is MPI_DATATYPE_NULL");
  if (!t->committed()) {
    throw Error(kErrType, std::string(what) + " " + t->describe() + " is not committed");
  }
  return *t;
}

void widen(const Datatype& t, std::int64_t disp, std::size_t count, std::int64_t& lo,
           std::int64_t& hi) {
  widenBytes(t, disp * t.extent(), count, lo, hi);
}

void widenBytes(const Datatype& t, std::int64_t offset, std::size_t count, std::int64_t& lo,
                std::int64_t& hi) {
  std::int64_t l = 0;
  std::int64_t h = 0;
  if (count == 0) return;
  std::size_t bytes = 0;  // (a multiplication that overflows, not a division: this runs per call)
  if (t.contiguous() && !__builtin_mul_overflow(count, t.size(), &bytes) &&
      bytes <= static_cast<std::size_t>(INT64_MAX)) {
    h = static_cast<std::int64_t>(bytes);  // [0, count x size): no type map to walk
  } else if (!t.footprint(count, l, h) || l == h) {
    return;
  }
  l += offset;
  h += offset;
  if (lo == hi) {
    lo = l;
    hi = h;
    return;
  }
  lo = std::min(lo, l);
  hi = std::max(hi, h);
}

const Datatype& checkBlocks(int p, const int* counts, const char* countsName, const int* displs,
                            const char* displsName, const Datatype* t, const char* typeName,
                            std::int64_t& lo, std::int64_t& hi) {
  if (counts == nullptr) throw Error(kErrArg, std::string(countsName) + " is NULL");
  if (displs == nullptr) throw Error(kErrArg, std::string(displsName) + " is NULL");
  const Datatype& type = checkType(t, typeName);
  for (int r = 0; r < p; ++r) {
    if (counts[r] < 0) {
      throw Error(kErrCount, std::string(countsName) + "[" + std::to_string(r) + "] " +
                                 std::to_string(counts[r]) + " is negative");
    }
    widen(type, displs[r], static_cast<std::size_t>(counts[r]), lo, hi);
  }
  return type;
}

void checkBlocksW(int p, const int* counts, const char* countsName, const int* displs,
                  const char* displsName, const Datatype* const* types, const char* typesName,
                  std::int64_t& lo, std::int64_t& hi) {
  if (counts == nullptr) throw Error(kErrArg, std::string(countsName) + " is NULL");
  if (displs == nullptr) throw Error(kErrArg, std::string(displsName) + " is NULL");
  if (types == nullptr) throw Error(kErrArg, std::string(typesName) + " is NULL");
  // Names are built only for an error: this runs per call.
  auto named = [](const char* array, int r) {
    return std::string(array) + "[" + std::to_string(r) + "]";
  };
  for (int r = 0; r < p; ++r) {
    if (counts[r] < 0) checkCount(counts[r], named(countsName, r).c_str());
    const Datatype* given = types[r];
    const Datatype& t = given != nullptr && given->committed()
                            ? *given
                            : checkType(given, named(typesName, r).c_str());  // throws
    widenBytes(t, displs[r], static_cast<std::size_t>(counts[r]), lo, hi);
  }
}

void checkNoAlias(const void* a, std::int64_t alo, std::int64_t ahi, const void* b,
                  std::int64_t blo, std::int64_t bhi, const char* aName, const char* bName) {
  if (alo == ahi || blo == bhi) return;
  const auto pa = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(a));
  const auto pb = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(b));
  if (pa + alo < pb + bhi && pb + blo < pa + ahi) {
    throw Error(kErrBuffer, std::string(aName) + " and " + bName +
                                " overlap (use MPI_IN_PLACE to reuse the receive buffer)");
  }
}

namespace {
// The non-empty blocks block(r) = {start, bytes} as one WholeSend if they tile in rank order.
template <class Block>
WholeSend tiled(int p, const int* counts, Block block) {
  const std::byte* start = nullptr;
  std::size_t len = 0;
  for (int r = 0; r < p; ++r) {
    if (counts[r] == 0) continue;
    const auto [b, n] = block(r);
    if (start == nullptr) {
      start = b;
    } else if (b != start + len) {
      return {};
    }
    len += n;
  }
  return {start, len};
}
}  // namespace

WholeSend wholeOf(const void* buf, int p, const int* counts, const int* displs, const Datatype& t) {
  if (!t.contiguous()) return {};
  return tiled(p, counts, [&](int r) {
    return std::pair{static_cast<const std::byte*>(at(buf, t, displs[r])),
                     bytesOf(static_cast<std::size_t>(counts[r]), t)};
  });
}

WholeSend wholeOf(const void* buf, int p, const int* counts, const int* displs,
                  const Datatype* const* types) {
  for (int r = 0; r < p; ++r) {
    if (counts[r] != 0 && !types[r]->contiguous()) return {};
  }
  return tiled(p, counts, [&](int r) {
    return std::pair{static_cast<const std::byte*>(byteAt(buf, displs[r])),
                     bytesOf(static_cast<std::size_t>(counts[r]), *types[r])};
  });
}

Stream bytes(const void* p, std::size_t n, const Datatype* sig) {
  return {p, n, &datatypeOf<std::byte>(), sig};
}

void localCopy(const Stream& src, const Stream& dst) {
  const std::size_t n = bytesOf(src.count, *src.type);
  const std::size_t m = bytesOf(dst.count, *dst.type);
  if (n != m) {
    throw Error(n > m ? kErrTruncate : kErrCount, "this rank sends itself " + std::to_string(n) +
                                                      " bytes but receives " + std::to_string(m) +
                                                      " bytes");
  }
  if (n == 0) return;
  if (src.type->contiguous() && dst.type->contiguous()) {
    // Both streams are the bytes at buf (a contiguous type's layout starts there).
    std::memmove(const_cast<void*>(dst.buf), src.buf, n);
    return;
  }
  std::vector<std::byte> tmp(n);
  pack(src.buf, src.count, *src.type, tmp.data(), n);
  unpack(tmp.data(), n, const_cast<void*>(dst.buf), dst.count, *dst.type);
}

int reductionKind(const Datatype& t, Op op) {
  // Predefined types are their own element (the pair types of MINLOC / MAXLOC included).
  const int kind = t.isPredefined() ? t.id() : t.homogeneousKind();
  if (kind <= 0) {
    throw Error(kErrType,
                "reductions need one basic type throughout; " + t.describe() + " mixes several");
  }
  if (op == Op::kReplace || op == Op::kNoOp || !opAccepts(op, kind)) {
    throw Error(kErrOp,
                std::string(opName(static_cast<int>(op))) + " does not apply to " + t.describe());
  }
  return kind;
}

int reductionKind(const Datatype& t, const Reduction& op) {
  return op.isUser() ? 0 : reductionKind(t, op.op);
}

void combineTyped(const Reduction& op, int kind, const Datatype& t, const void* in, void* inout,
                  std::size_t count) {
  if (count == 0) return;
  if (op.isUser()) {
    // In calls of at most INT_MAX elements: the function's count is an int.
    constexpr std::size_t kMax = INT32_MAX;
    for (std::size_t done = 0; done < count; done += kMax) {
      const auto i = static_cast<std::int64_t>(done);
      op.user.combine(at(in, t, i), at(inout, t, i),
                      static_cast<int>(std::min(kMax, count - done)));
    }
    return;
  }
  const std::size_t n = bytesOf(count, t);
  const std::size_t elems = unitsIn(n, packedSize(kind));
  if (t.contiguous()) {  // both are the bytes at their address
    auto* io = static_cast<std::byte*>(inout);
    applyOp(op.op, kind, io, static_cast<const std::byte*>(in), io, elems);
    return;
  }
  std::vector<std::byte> a(n);
  std::vector<std::byte> b(n);
  pack(in, count, t, a.data(), n);
  pack(inout, count, t, b.data(), n);
  applyOp(op.op, kind, b.data(), a.data(), b.data(), elems);
  unpack(b.data(), n, inout, count, t);
}

void reduceInto(Op op, int kind, std::byte* acc, const std::byte* in, std::size_t n) {
  const std::size_t unit = packedSize(kind);
  applyOp(op, kind, acc, in, unit == 0 ? 0 : unitsIn(n, unit));
}

void bcastStream(Comm& c, const Stream& s, int root, Failure& f) {
  const int p = c.size();
  if (p == 1) return;
  Tree t(p, c.rank(), root);
  auto& ch = c.channel();
  const auto kids = t.children();
  if (t.vr != 0 && !kids.empty()) {
    // An inner node forwards each chunk to its children as soon as it has unpacked it (one
    // phase, the sends gated on the receive's progress), so a large broadcast costs about one
    // message time plus a chunk per level instead of a message time per level.
    std::uint64_t got = 0;
    int error = 0;
    RecvOp r{t.parent(), s, nullptr, &got, &error};
    SendList sends;
    for (auto [v, sz] : kids) sends.emplace_back(t.real(v), s, 0, &got, &error);
    f.run(ch, sends, {&r, 1});
    return;
  }
  if (t.vr != 0) {
    RecvOp r{t.parent(), s, nullptr};
    f.run(ch, {}, {&r, 1});
    return;
  }
  SendList sends;
  for (auto [v, sz] : kids) sends.emplace_back(t.real(v), s, f.errorClass());
  f.run(ch, sends, {});
}

const std::byte* packedInput(Channel& ch, const Stream& in, std::size_t slot) {
  if (in.type->contiguous()) return static_cast<const std::byte*>(in.buf);
  const std::size_t n = bytesOf(in.count, *in.type);
  std::byte* b = ch.buffer(slot, n);
  pack(in.buf, in.count, *in.type, b, n);
  return b;
}

RecvOp foldFrom(int peer, std::byte* dst, std::size_t n, const std::byte* base, Op op, int kind) {
  RecvOp r{peer, bytes(dst, n), nullptr};
  r.foldBase = base;
  r.foldOp = op;
  r.foldKind = kind;
  return r;
}

const std::byte* reducePacked(Comm& c, const Stream& in, int kind, Op op, int root,
                              std::byte* out) {
  const int p = c.size();
  const bool isRoot = c.rank() == root;
  const std::size_t n = bytesOf(in.count, *in.type);
  auto& ch = c.channel();
  // Buffers: 0 this rank's partial result, 1 the linear root's result, 2 the packed input,
  // 3.. what peers send (linear).
  const std::byte* mine = packedInput(ch, in, 2);
  Failure f;
  if (p > 2 && !useTree(forcedAlg(c), p, n, SIZE_MAX, n <= kReduceLinearUpTo ? kLinearUpTo : 2)) {
    // Linear: every rank writes its vector into the root's scratch; the root folds in rank
    // order.
    if (!isRoot) {
      SendOp s{root, bytes(mine, n), 0};
      s.byAttach = false;  // the root takes every stream
      f.run(ch, {&s, 1}, {});
      f.rethrow();
      return nullptr;
    }
    std::vector<const std::byte*> parts(static_cast<std::size_t>(p));
    RecvList recvs;
    for (int r = 0, k = 0; r < p; ++r) {
      if (r == root) continue;
      std::byte* b = ch.buffer(3 + static_cast<std::size_t>(k++), n);
      parts[static_cast<std::size_t>(r)] = b;
      recvs.emplace_back(r, bytes(b, n), nullptr);
    }
    f.run(ch, {}, recvs);
    f.rethrow();
    std::byte* res = ch.buffer(1, n);
    foldRankOrder(op, kind, res, p, n,
                  [&](int r) { return r == root ? mine : parts[static_cast<std::size_t>(r)]; });
    if (out == nullptr) return res;
    if (n != 0) onesided::detail::copyBytes(out, res, n);
    return out;
  }
  // Binomial tree (two ranks: the root folds the other's vector into its own, the same bits
  // as rank order since the predefined operations commute): each node folds its children's
  // partial results into its own as they arrive, then writes the result into its parent's
  // scratch. A leaf sends its input as it is.
  Tree t(p, c.rank(), root);
  const auto kids = t.children();
  std::byte* acc = isRoot && out != nullptr ? out : ch.buffer(0, n);
  if (kids.empty()) {
    if (!isRoot) {
      SendOp s{t.parent(), bytes(mine, n), 0};
      s.byAttach = rootTakesOne(p);  // else the parent folds it with others, from the ring
      f.run(ch, {&s, 1}, {});
      f.rethrow();
      return nullptr;
    }
    if (acc != mine && n != 0) onesided::detail::copyBytes(acc, mine, n);
    return acc;
  }
  RecvList recvs;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    recvs.push_back(foldFrom(t.real(kids[i].v), acc, n, i == 0 ? mine : acc, op, kind));
  }
  f.run(ch, {}, recvs);
  if (!isRoot) {
    SendOp s{t.parent(), bytes(acc, n), f.errorClass()};
    s.byAttach = false;  // the parent folds it
    f.run(ch, {&s, 1}, {});
    f.rethrow();
    return nullptr;
  }
  f.rethrow();
  return acc;
}

}  // namespace onesided::coll::detail
