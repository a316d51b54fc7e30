// SPDX-License-Identifier: BSD-3-Clause
// The type engine: predefined types, the MPI type constructors (bounds, size and signature at
// construction; the compact layout at commit), signature matching, pack and unpack.
#include "onesided/datatype.hpp"

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstring>
#include <numeric>
#include <utility>

#include "datatype/loop.hpp"
#include "onesided/errors.hpp"

namespace onesided {

struct Datatype::Private {};

namespace {

// The handle values of <mpi.h> (checked against it in src/capi/types.cpp).
enum Id : int {
  kChar = 1,
  kSignedChar,
  kUnsignedChar,
  kByte,
  kWchar,
  kShort,
  kUnsignedShort,
  kInt,
  kUnsigned,
  kLong,
  kUnsignedLong,
  kLongLong,
  kUnsignedLongLong,
  kFloat,
  kDouble,
  kLongDouble,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kCBool,
  kCFloatComplex,
  kCDoubleComplex,
  kCLongDoubleComplex,
  kAint,
  kOffset,
  kCount,
  kPacked,
  kFloatInt,
  kDoubleInt,
  kLongInt,
  k2Int,
  kShortInt,
  kLongDoubleInt,
  kLb,
  kUb,
  kCxxBool,
  kCxxFloatComplex,
  kCxxDoubleComplex,
  kCxxLongDoubleComplex,
  kNumPredefined
};
static_assert(kPacked == kTypePacked && kLb == kTypeLb && kUb == kTypeUb &&
              kNumPredefined == kNumPredefinedTypes);

using i128 = __int128;

std::string str(i128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  std::string s;
  while (v != 0) {
    const int d = static_cast<int>(v % 10);
    s.push_back(static_cast<char>('0' + (d < 0 ? -d : d)));
    v /= 10;
  }
  if (neg) s.push_back('-');
  return {s.rbegin(), s.rend()};
}

const char* combinerName(Combiner c) {
  switch (c) {
    case Combiner::kNamed:
      return "named";
    case Combiner::kDup:
      return "dup";
    case Combiner::kContiguous:
      return "contiguous";
    case Combiner::kVector:
      return "vector";
    case Combiner::kHvector:
      return "hvector";
    case Combiner::kIndexed:
      return "indexed";
    case Combiner::kHindexed:
      return "hindexed";
    case Combiner::kIndexedBlock:
      return "indexed_block";
    case Combiner::kHindexedBlock:
      return "hindexed_block";
    case Combiner::kStruct:
      return "struct";
    case Combiner::kSubarray:
      return "subarray";
    case Combiner::kDarray:
      return "darray";
    case Combiner::kResized:
      return "resized";
  }
  return "derived";
}

}  // namespace

// ---- construction ---------------------------------------------------------------------------

/// Builds derived types: accumulates the bounds of the copies of constituent types (with
/// __int128, so overflow is found rather than wrapped), the size and the signature.
struct DatatypeBuilder {
  std::shared_ptr<Datatype> t;
  const char* call;
  // Bounds over all entries (copies' lb / ub), markers, and data.
  bool any = false;
  i128 lo = 0, hi = 0;
  bool markLb = false, markUb = false;
  i128 mlb = 0, mub = 0;
  bool data = false;
  i128 tlo = 0, thi = 0;
  i128 size = 0;
  i128 nbasic = 0;
  std::size_t align = 1;

  DatatypeBuilder(Combiner c, const char* callName)
      : t(std::make_shared<Datatype>(Datatype::Private{})), call(callName) {
    t->combiner_ = c;
  }

  [[noreturn]] void overflow(const std::string& what) const {
    throw Error(kErrCount, std::string(call) + ": " + what + " overflows the address range");
  }

  /// n1 x n2 copies of `c` at d + i * s1 + j * s2 (i < n1, j < n2).
  void copies(const Datatype& c, i128 d, i128 n1, i128 s1, i128 n2 = 1, i128 s2 = 0) {
    if (n1 == 0 || n2 == 0) return;
    const i128 minOff = d + std::min<i128>(0, (n1 - 1) * s1) + std::min<i128>(0, (n2 - 1) * s2);
    const i128 maxOff = d + std::max<i128>(0, (n1 - 1) * s1) + std::max<i128>(0, (n2 - 1) * s2);
    const i128 reps = n1 * n2;
    size += reps * static_cast<i128>(c.size());
    nbasic += reps * static_cast<i128>(c.basicCount());
    if (size > PTRDIFF_MAX) overflow("the type's size");
    align = std::max(align, c.align_);
    if (!c.hasEntries_) return;
    const i128 clo = minOff + c.lb();
    const i128 chi = maxOff + c.ub();
    lo = any ? std::min(lo, clo) : clo;
    hi = any ? std::max(hi, chi) : chi;
    any = true;
    if (c.markLb_) {
      mlb = markLb ? std::min(mlb, clo) : clo;
      markLb = true;
    }
    if (c.markUb_) {
      mub = markUb ? std::max(mub, chi) : chi;
      markUb = true;
    }
    if (c.size() > 0) {
      const i128 a = minOff + c.trueLb();
      const i128 b = maxOff + c.trueUb();
      tlo = data ? std::min(tlo, a) : a;
      thi = data ? std::max(thi, b) : b;
      data = true;
    }
    if (std::max({lo < 0 ? -lo : lo, hi < 0 ? -hi : hi, tlo < 0 ? -tlo : tlo,
                  thi < 0 ? -thi : thi}) > PTRDIFF_MAX / 2) {
      overflow("a bound of the type");
    }
  }

  void sig(const Datatype& c, i128 reps) {
    if (reps == 0 || c.basicCount() == 0) return;
    auto& items = t->sig_;
    if (!items.empty() && items.back().type == &c) {
      items.back().reps += static_cast<std::uint64_t>(reps);
    } else {
      items.push_back({&c, -1, static_cast<std::uint64_t>(reps)});
    }
  }

  std::vector<std::int64_t>& ints() { return t->ints_; }
  std::vector<std::int64_t>& aints() { return t->aints_; }
  static void setInner(Datatype& d, Datatype::Ptr inner) { d.inner_ = std::move(inner); }

  /// Holds `c` (constituent types stay alive with the new type) and records it for
  /// get_contents.
  void type(const Datatype& c) { t->types_.push_back(c.hold()); }

  /// Sets the bounds; `pad`: a struct's extent is rounded up to its alignment (the ε of
  /// MPI-3.1 §4.1.6) unless an MPI_UB marker fixes the upper bound.
  std::shared_ptr<Datatype> finish(bool pad = false) {
    Datatype& d = *t;
    i128 l = markLb ? mlb : (any ? lo : 0);
    i128 u = markUb ? mub : (any ? hi : 0);
    if (pad && !markUb && align > 1) {
      const i128 ext = u - l;
      const i128 r = ext % static_cast<i128>(align);
      if (r != 0) u += static_cast<i128>(align) - r;
    }
    if (u - l > PTRDIFF_MAX || l - u > PTRDIFF_MAX) overflow("the extent");
    d.lb_ = static_cast<std::ptrdiff_t>(l);
    d.ub_ = static_cast<std::ptrdiff_t>(u);
    d.markLb_ = markLb;
    d.markUb_ = markUb;
    d.hasEntries_ = any;
    d.trueLb_ = data ? static_cast<std::ptrdiff_t>(tlo) : 0;
    d.trueUb_ = data ? static_cast<std::ptrdiff_t>(thi) : 0;
    d.size_ = static_cast<std::size_t>(size);
    d.nbasic_ = static_cast<std::uint64_t>(nbasic);
    d.align_ = align;
    // Homogeneous: every item's basic kind is the same.
    int kind = -2;
    for (const auto& it : d.sig_) {
      const int k = it.type->homogeneousKind();
      if (kind == -2) {
        kind = k;
      } else if (kind != k) {
        kind = -1;
      }
    }
    d.kind_ = kind < 0 ? -1 : kind;
    // The accumulate element: the constituents' one, when they agree (pair types stay whole).
    int acc = -2;
    for (const auto& it : d.sig_) {
      const int k = it.type->accumulateKind();
      acc = acc == -2 || acc == k ? k : -1;
    }
    d.accKind_ = acc < 0 ? -1 : acc;
    return t;
  }
};

namespace {

void requireCount(std::int64_t v, const char* call, const char* what) {
  if (v < 0)
    throw Error(kErrCount, std::string(call) + ": " + what + " " + str(v) + " is negative");
}
void requireNonNegative(std::int64_t v, const char* call, const char* what) {
  if (v < 0) throw Error(kErrArg, std::string(call) + ": " + what + " " + str(v) + " is negative");
}
void requireSameLength(std::size_t a, std::size_t b, const char* call) {
  if (a != b) {
    throw Error(kErrArg, std::string(call) + ": " + std::to_string(a) + " block lengths but " +
                             std::to_string(b) + " displacements");
  }
}

}  // namespace

Datatype::Datatype(const Private& /*unused*/) {}
Datatype::~Datatype() = default;
Datatype::Datatype(Datatype&&) noexcept = default;

std::shared_ptr<Datatype> Datatype::contiguous(std::int64_t count, const Datatype& old) {
  const char* call = "MPI_Type_contiguous";
  requireCount(count, call, "count");
  DatatypeBuilder b(Combiner::kContiguous, call);
  b.copies(old, 0, count, old.extent());
  b.sig(old, count);
  b.ints() = {count};
  b.type(old);
  return b.finish();
}

namespace {

std::shared_ptr<Datatype> makeVector(Combiner c, const char* call, std::int64_t count,
                                     std::int64_t blocklen, i128 strideBytes, std::int64_t stride,
                                     const Datatype& old) {
  requireCount(count, call, "count");
  requireNonNegative(blocklen, call, "blocklength");
  DatatypeBuilder b(c, call);
  b.copies(old, 0, count, strideBytes, blocklen, old.extent());
  b.sig(old, static_cast<i128>(count) * blocklen);
  if (c == Combiner::kVector) {
    b.ints() = {count, blocklen, stride};
  } else {
    b.ints() = {count, blocklen};
    b.aints() = {stride};
  }
  b.type(old);
  return b.finish();
}

}  // namespace

std::shared_ptr<Datatype> Datatype::vector(std::int64_t count, std::int64_t blocklen,
                                           std::int64_t stride, const Datatype& old) {
  return makeVector(Combiner::kVector, "MPI_Type_vector", count, blocklen,
                    static_cast<i128>(stride) * old.extent(), stride, old);
}

std::shared_ptr<Datatype> Datatype::hvector(std::int64_t count, std::int64_t blocklen,
                                            std::int64_t strideBytes, const Datatype& old) {
  return makeVector(Combiner::kHvector, "MPI_Type_create_hvector", count, blocklen, strideBytes,
                    strideBytes, old);
}

namespace {

/// indexed, hindexed, indexed_block and hindexed_block: blocks of old at displacements in
/// units of `unit` bytes (old's extent, or 1).
std::shared_ptr<Datatype> makeIndexed(Combiner c, const char* call,
                                      std::span<const std::int64_t> blocklens, bool oneBlocklen,
                                      std::span<const std::int64_t> displs, bool bytes,
                                      const Datatype& old) {
  const auto n = static_cast<std::int64_t>(displs.size());
  requireCount(n, call, "count");
  for (std::size_t i = 0; i < blocklens.size(); ++i) {
    if (blocklens[i] < 0) {
      throw Error(kErrArg, std::string(call) + ": blocklength " + str(blocklens[i]) +
                               (oneBlocklen ? "" : " of block " + std::to_string(i)) +
                               " is negative");
    }
  }
  DatatypeBuilder b(c, call);
  const i128 unit = bytes ? 1 : old.extent();
  i128 total = 0;
  for (std::size_t i = 0; i < displs.size(); ++i) {
    const std::int64_t bl = oneBlocklen ? blocklens[0] : blocklens[i];
    b.copies(old, static_cast<i128>(displs[i]) * unit, bl, old.extent());
    total += bl;
  }
  b.sig(old, total);
  auto& ints = b.ints();
  ints.push_back(n);
  if (oneBlocklen) {
    ints.push_back(blocklens[0]);
  } else {
    ints.insert(ints.end(), blocklens.begin(), blocklens.end());
  }
  if (bytes) {
    b.aints().assign(displs.begin(), displs.end());
  } else {
    ints.insert(ints.end(), displs.begin(), displs.end());
  }
  b.type(old);
  return b.finish();
}

}  // namespace

std::shared_ptr<Datatype> Datatype::indexed(std::span<const std::int64_t> blocklens,
                                            std::span<const std::int64_t> displs,
                                            const Datatype& old) {
  requireSameLength(blocklens.size(), displs.size(), "MPI_Type_indexed");
  return makeIndexed(Combiner::kIndexed, "MPI_Type_indexed", blocklens, false, displs, false, old);
}

std::shared_ptr<Datatype> Datatype::hindexed(std::span<const std::int64_t> blocklens,
                                             std::span<const std::int64_t> byteDispls,
                                             const Datatype& old) {
  requireSameLength(blocklens.size(), byteDispls.size(), "MPI_Type_create_hindexed");
  return makeIndexed(Combiner::kHindexed, "MPI_Type_create_hindexed", blocklens, false, byteDispls,
                     true, old);
}

std::shared_ptr<Datatype> Datatype::indexedBlock(std::int64_t blocklen,
                                                 std::span<const std::int64_t> displs,
                                                 const Datatype& old) {
  return makeIndexed(Combiner::kIndexedBlock, "MPI_Type_create_indexed_block", {&blocklen, 1}, true,
                     displs, false, old);
}

std::shared_ptr<Datatype> Datatype::hindexedBlock(std::int64_t blocklen,
                                                  std::span<const std::int64_t> byteDispls,
                                                  const Datatype& old) {
  return makeIndexed(Combiner::kHindexedBlock, "MPI_Type_create_hindexed_block", {&blocklen, 1},
                     true, byteDispls, true, old);
}

std::shared_ptr<Datatype> Datatype::structType(std::span<const std::int64_t> blocklens,
                                               std::span<const std::int64_t> byteDispls,
                                               std::span<const Datatype* const> types) {
  const char* call = "MPI_Type_create_struct";
  requireSameLength(blocklens.size(), byteDispls.size(), call);
  requireSameLength(blocklens.size(), types.size(), call);
  DatatypeBuilder b(Combiner::kStruct, call);
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (blocklens[i] < 0) {
      throw Error(kErrArg, std::string(call) + ": blocklength " + str(blocklens[i]) + " of block " +
                               std::to_string(i) + " is negative");
    }
    if (types[i] == nullptr) {
      throw Error(kErrType, std::string(call) + ": type of block " + std::to_string(i) +
                                " is MPI_DATATYPE_NULL");
    }
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    b.copies(*types[i], byteDispls[i], blocklens[i], types[i]->extent());
    b.sig(*types[i], blocklens[i]);
    b.type(*types[i]);
  }
  auto& ints = b.ints();
  ints.push_back(static_cast<std::int64_t>(types.size()));
  ints.insert(ints.end(), blocklens.begin(), blocklens.end());
  b.aints().assign(byteDispls.begin(), byteDispls.end());
  return b.finish(/*pad=*/true);
}

std::shared_ptr<Datatype> Datatype::resized(std::int64_t lb, std::int64_t extent,
                                            const Datatype& old) {
  const char* call = "MPI_Type_create_resized";
  DatatypeBuilder b(Combiner::kResized, call);
  b.copies(old, 0, 1, 0);
  b.sig(old, 1);
  // MPI-2.2 §4.1.7: the old markers are erased and new ones put at lb and lb + extent.
  b.markLb = b.markUb = b.any = true;
  b.mlb = lb;
  b.mub = static_cast<i128>(lb) + extent;
  if (b.mub > PTRDIFF_MAX || b.mub < PTRDIFF_MIN) b.overflow("lb + extent");
  b.aints() = {lb, extent};
  b.type(old);
  return b.finish();
}

std::shared_ptr<Datatype> Datatype::dup(const Datatype& old) {
  DatatypeBuilder b(Combiner::kDup, "MPI_Type_dup");
  b.copies(old, 0, 1, 0);
  b.sig(old, 1);
  b.type(old);
  auto t = b.finish(false);
  // A duplicate has the same bounds exactly (padding included) and is committed if old was.
  t->lb_ = old.lb_;
  t->ub_ = old.ub_;
  t->align_ = old.align_;
  if (old.committed()) t->commit();
  return t;
}

namespace {

/// The subarray or darray type's layout and bounds come from a type built of simpler
/// constructors (as MPICH builds them); the result keeps the user's arguments for
/// get_contents.
std::shared_ptr<Datatype> wrapInner(Combiner c, const char* call, const Datatype& old,
                                    std::shared_ptr<Datatype> inner,
                                    std::vector<std::int64_t> ints) {
  DatatypeBuilder b(c, call);
  b.copies(*inner, 0, 1, 0);
  b.sig(*inner, 1);
  b.ints() = std::move(ints);
  b.type(old);
  b.finish();
  DatatypeBuilder::setInner(*b.t, std::move(inner));
  return b.t;
}

}  // namespace

std::shared_ptr<Datatype> Datatype::subarray(std::span<const std::int64_t> sizes,
                                             std::span<const std::int64_t> subsizes,
                                             std::span<const std::int64_t> starts, int order,
                                             const Datatype& old) {
  const char* call = "MPI_Type_create_subarray";
  const auto ndims = static_cast<std::int64_t>(sizes.size());
  if (ndims <= 0)
    throw Error(kErrArg, std::string(call) + ": ndims " + str(ndims) + " is not positive");
  if (subsizes.size() != sizes.size() || starts.size() != sizes.size()) {
    throw Error(kErrArg, std::string(call) + ": array lengths differ");
  }
  if (order != kOrderC && order != kOrderFortran) {
    throw Error(kErrArg, std::string(call) + ": order " + str(order) +
                             " is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string dim = " of dimension " + std::to_string(i);
    if (sizes[i] <= 0)
      throw Error(kErrArg,
                  std::string(call) + ": size " + str(sizes[i]) + dim + " is not positive");
    if (subsizes[i] <= 0 || subsizes[i] > sizes[i]) {
      throw Error(kErrArg, std::string(call) + ": subsize " + str(subsizes[i]) + dim +
                               " is not in 1 .. " + str(sizes[i]));
    }
    if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i]) {
      throw Error(kErrArg, std::string(call) + ": start " + str(starts[i]) + dim +
                               " is not in 0 .. " + str(sizes[i] - subsizes[i]));
    }
  }
  // Dimensions from the fastest-varying outwards: the last in C order, the first in Fortran.
  const auto n = static_cast<std::size_t>(ndims);
  auto dimAt = [&](std::size_t k) { return order == kOrderC ? n - 1 - k : k; };
  const i128 extent = old.extent();
  std::shared_ptr<Datatype> t = Datatype::contiguous(subsizes[dimAt(0)], old);
  i128 stride = extent * sizes[dimAt(0)];
  i128 disp = static_cast<i128>(starts[dimAt(0)]) * extent;
  for (std::size_t k = 1; k < n; ++k) {
    const std::size_t d = dimAt(k);
    if (stride > PTRDIFF_MAX || stride < PTRDIFF_MIN) {
      throw Error(kErrCount, std::string(call) + ": the array's size overflows the address range");
    }
    t = Datatype::hvector(subsizes[d], 1, static_cast<std::int64_t>(stride), *t);
    disp += static_cast<i128>(starts[d]) * stride;
    stride *= sizes[d];
  }
  if (stride > PTRDIFF_MAX || stride < PTRDIFF_MIN) {
    throw Error(kErrCount, std::string(call) + ": the array's size overflows the address range");
  }
  const std::int64_t one = 1;
  const auto d64 = static_cast<std::int64_t>(disp);
  t = Datatype::hindexed({&one, 1}, {&d64, 1}, *t);
  t = Datatype::resized(0, static_cast<std::int64_t>(stride), *t);
  std::vector<std::int64_t> ints{ndims};
  ints.insert(ints.end(), sizes.begin(), sizes.end());
  ints.insert(ints.end(), subsizes.begin(), subsizes.end());
  ints.insert(ints.end(), starts.begin(), starts.end());
  ints.push_back(order);
  return wrapInner(Combiner::kSubarray, call, old, t, std::move(ints));
}

std::shared_ptr<Datatype> Datatype::darray(std::int64_t size, std::int64_t rank,
                                           std::span<const std::int64_t> gsizes,
                                           std::span<const std::int64_t> distribs,
                                           std::span<const std::int64_t> dargs,
                                           std::span<const std::int64_t> psizes, int order,
                                           const Datatype& old) {
  const char* call = "MPI_Type_create_darray";
  const std::string c(call);
  const auto ndims = static_cast<std::int64_t>(gsizes.size());
  if (size <= 0) throw Error(kErrArg, c + ": size " + str(size) + " is not positive");
  if (rank < 0 || rank >= size) {
    throw Error(kErrRank, c + ": rank " + str(rank) + " is not in 0 .. " + str(size - 1));
  }
  if (ndims <= 0) throw Error(kErrArg, c + ": ndims " + str(ndims) + " is not positive");
  if (distribs.size() != gsizes.size() || dargs.size() != gsizes.size() ||
      psizes.size() != gsizes.size()) {
    throw Error(kErrArg, c + ": array lengths differ");
  }
  if (order != kOrderC && order != kOrderFortran) {
    throw Error(kErrArg,
                c + ": order " + str(order) + " is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
  }
  i128 procs = 1;
  for (std::size_t i = 0; i < gsizes.size(); ++i) {
    const std::string dim = " of dimension " + std::to_string(i);
    if (gsizes[i] <= 0)
      throw Error(kErrArg, c + ": gsize " + str(gsizes[i]) + dim + " is not positive");
    if (psizes[i] <= 0)
      throw Error(kErrArg, c + ": psize " + str(psizes[i]) + dim + " is not positive");
    if (distribs[i] != kDistributeBlock && distribs[i] != kDistributeCyclic &&
        distribs[i] != kDistributeNone) {
      throw Error(kErrArg, c + ": distribution " + str(distribs[i]) + dim + " is not valid");
    }
    if (distribs[i] == kDistributeNone && psizes[i] != 1) {
      throw Error(kErrArg,
                  c + ": MPI_DISTRIBUTE_NONE" + dim + " needs psize 1, got " + str(psizes[i]));
    }
    if (dargs[i] != kDistributeDfltDarg && dargs[i] <= 0) {
      throw Error(kErrArg, c + ": darg " + str(dargs[i]) + dim + " is not positive");
    }
    if (distribs[i] == kDistributeBlock && dargs[i] != kDistributeDfltDarg &&
        static_cast<i128>(dargs[i]) * psizes[i] < gsizes[i]) {
      throw Error(kErrArg, c + ": block size " + str(dargs[i]) + " x " + str(psizes[i]) +
                               " processes" + dim + " does not cover gsize " + str(gsizes[i]));
    }
    procs *= psizes[i];
  }
  if (procs != size) {
    throw Error(kErrArg,
                c + ": the process grid has " + str(procs) + " processes, not size " + str(size));
  }
  // This process's coordinates: the grid is numbered in C (row-major) order (MPI-3.1 §4.1.4).
  const auto n = static_cast<std::size_t>(ndims);
  std::vector<std::int64_t> coords(n);
  {
    std::int64_t left = size;
    std::int64_t r = rank;
    for (std::size_t i = 0; i < n; ++i) {
      left /= psizes[i];
      coords[i] = r / left;
      r %= left;
    }
  }
  // As MPICH (MPIR_Type_block / MPIR_Type_cyclic): dimension after dimension from the
  // fastest-varying, each a vector over the previous type, resized to the whole dimension.
  const i128 extent = old.extent();
  std::shared_ptr<Datatype> t;
  const Datatype* prev = &old;
  std::vector<i128> offsets(n, 0);  // start of this process's part, in elements of the dimension
  const std::int64_t one = 1;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t dim = order == kOrderC ? n - 1 - k : k;
    const std::int64_t g = gsizes[dim];
    // Bytes between consecutive indices of this dimension.
    i128 stride = extent;
    if (order == kOrderFortran) {
      for (std::size_t i = 0; i < dim; ++i) stride *= gsizes[i];
    } else {
      for (std::size_t i = n - 1; i > dim; --i) stride *= gsizes[i];
    }
    if (stride > PTRDIFF_MAX / 4) throw Error(kErrCount, c + ": the array's size overflows");
    const bool none = distribs[dim] == kDistributeNone;
    const std::int64_t p = none ? 1 : psizes[dim];
    const std::int64_t r = none ? 0 : coords[dim];
    const i128 prevExtent = prev->extent();
    if (distribs[dim] == kDistributeCyclic) {
      const std::int64_t blk = dargs[dim] == kDistributeDfltDarg ? 1 : dargs[dim];
      const i128 st = static_cast<i128>(r) * blk;
      const i128 end = g - 1;
      i128 local = 0;
      if (end >= st) {
        local = ((end - st + 1) / (static_cast<i128>(p) * blk)) * blk;
        local += std::min<i128>((end - st + 1) % (static_cast<i128>(p) * blk), blk);
      }
      const auto count = static_cast<std::int64_t>(local / blk);
      const auto rem = static_cast<std::int64_t>(local % blk);
      const i128 cstride = static_cast<i128>(p) * blk * stride;
      t = Datatype::hvector(count, blk, static_cast<std::int64_t>(cstride), *prev);
      if (rem != 0) {
        const std::array<std::int64_t, 2> bl{1, rem};
        const std::array<std::int64_t, 2> ds{0, static_cast<std::int64_t>(count * cstride)};
        const std::array<const Datatype*, 2> ts{t.get(), prev};
        t = Datatype::structType(bl, ds, ts);
      }
      offsets[dim] = local == 0 ? 0 : st;
    } else {
      const std::int64_t blk = dargs[dim] == kDistributeDfltDarg ? (g + p - 1) / p : dargs[dim];
      const i128 mysize = std::max<i128>(0, std::min<i128>(blk, g - static_cast<i128>(blk) * r));
      if (k == 0) {
        t = Datatype::contiguous(static_cast<std::int64_t>(mysize), *prev);
      } else {
        t = Datatype::hvector(static_cast<std::int64_t>(mysize), 1,
                              static_cast<std::int64_t>(stride), *prev);
      }
      offsets[dim] = mysize == 0 ? 0 : static_cast<i128>(blk) * r;
    }
    // The next dimension steps over whole copies of this one.
    t = Datatype::resized(0, static_cast<std::int64_t>(g * prevExtent), *t);
    prev = t.get();
  }
  // Displacement of this process's first element, then the whole array as the extent.
  i128 disp = 0;
  i128 total = extent;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t dim = order == kOrderC ? n - 1 - k : k;
    disp += offsets[dim] * total;
    total *= gsizes[dim];
    if (total > PTRDIFF_MAX / 2) throw Error(kErrCount, c + ": the array's size overflows");
  }
  const auto d64 = static_cast<std::int64_t>(disp);
  t = Datatype::hindexed({&one, 1}, {&d64, 1}, *t);
  t = Datatype::resized(0, static_cast<std::int64_t>(total), *t);
  std::vector<std::int64_t> ints{size, rank, ndims};
  ints.insert(ints.end(), gsizes.begin(), gsizes.end());
  ints.insert(ints.end(), distribs.begin(), distribs.end());
  ints.insert(ints.end(), dargs.begin(), dargs.end());
  ints.insert(ints.end(), psizes.begin(), psizes.end());
  ints.push_back(order);
  return wrapInner(Combiner::kDarray, call, old, t, std::move(ints));
}

// ---- layout and commit ----------------------------------------------------------------------

std::shared_ptr<const detail::Loop> layoutOf(const Datatype& t) {
  if (t.loop_) return t.loop_;
  if (t.layout_) return t.layout_;
  using detail::BlockSpec;
  std::shared_ptr<const detail::Loop> l;
  const auto& ints = t.ints_;
  const auto& aints = t.aints_;
  switch (t.combiner_) {
    case Combiner::kNamed:
      break;  // predefined types have theirs from the start
    case Combiner::kDup:
    case Combiner::kResized:
      l = layoutOf(*t.types_[0]);  // the same bytes; only the bounds differ
      break;
    case Combiner::kSubarray:
    case Combiner::kDarray:
      l = layoutOf(*t.inner_);
      break;
    case Combiner::kContiguous: {
      const Datatype& old = *t.types_[0];
      l = detail::makeStrided(static_cast<std::size_t>(ints[0]), old.extent(), 0, layoutOf(old));
      break;
    }
    case Combiner::kVector:
    case Combiner::kHvector: {
      const Datatype& old = *t.types_[0];
      const std::ptrdiff_t stride = t.combiner_ == Combiner::kVector
                                        ? static_cast<std::ptrdiff_t>(ints[2]) * old.extent()
                                        : static_cast<std::ptrdiff_t>(aints[0]);
      auto block =
          detail::makeStrided(static_cast<std::size_t>(ints[1]), old.extent(), 0, layoutOf(old));
      l = detail::makeStrided(static_cast<std::size_t>(ints[0]), stride, 0, std::move(block));
      break;
    }
    case Combiner::kIndexed:
    case Combiner::kHindexed:
    case Combiner::kIndexedBlock:
    case Combiner::kHindexedBlock: {
      const Datatype& old = *t.types_[0];
      const auto n = static_cast<std::size_t>(ints[0]);
      const bool one =
          t.combiner_ == Combiner::kIndexedBlock || t.combiner_ == Combiner::kHindexedBlock;
      const bool bytes =
          t.combiner_ == Combiner::kHindexed || t.combiner_ == Combiner::kHindexedBlock;
      auto child = layoutOf(old);
      std::vector<BlockSpec> specs;
      specs.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t bl = one ? ints[1] : ints[1 + i];
        const std::int64_t d = bytes ? aints[i] : ints[(one ? 2 : 1 + n) + i];
        specs.push_back(
            {bytes ? static_cast<std::ptrdiff_t>(d) : static_cast<std::ptrdiff_t>(d) * old.extent(),
             static_cast<std::size_t>(bl), child, old.extent()});
      }
      l = detail::makeBlocks(specs);
      break;
    }
    case Combiner::kStruct: {
      const auto n = static_cast<std::size_t>(ints[0]);
      std::vector<BlockSpec> specs;
      specs.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        const Datatype& c = *t.types_[i];
        specs.push_back({static_cast<std::ptrdiff_t>(aints[i]),
                         static_cast<std::size_t>(ints[1 + i]), layoutOf(c), c.extent()});
      }
      l = detail::makeBlocks(specs);
      break;
    }
  }
  // Memoised: a type used in many places (a struct's member type) is laid out once.
  t.layout_ = l;
  return l;
}

void Datatype::commit() {
  if (loop_) return;
  auto l = layoutOf(*this);
  if (!l) l = std::make_shared<const detail::Loop>();  // no data: an empty layout
  contiguous_ =
      size_ > 0 && l->isRun() && l->offset == 0 && extent() == static_cast<std::ptrdiff_t>(size_);
  loop_ = std::move(l);
}

double Datatype::runsPerElement() const noexcept { return loop_ ? loop_->runs : 0; }

bool Datatype::footprint(std::size_t count, std::int64_t& lo, std::int64_t& hi) const noexcept {
  lo = hi = 0;
  if (count == 0 || size_ == 0) return true;
  const i128 last = static_cast<i128>(count - 1) * extent();
  const i128 l = static_cast<i128>(trueLb_) + std::min<i128>(0, last);
  const i128 h = static_cast<i128>(trueUb_) + std::max<i128>(0, last);
  if (l < INT64_MIN || h > INT64_MAX) return false;
  lo = static_cast<std::int64_t>(l);
  hi = static_cast<std::int64_t>(h);
  return true;
}

bool Datatype::overlaps(std::size_t count) const {
  if (!loop_ || size_ == 0 || count == 0) return false;
  const std::ptrdiff_t ext = extent();
  const bool apart = count == 1 || (ext >= 0 ? ext : -ext) >= trueExtent();
  if (loop_->disjoint && apart) return false;
  // Interleaved elements or a layout the structural check could not clear: look at every
  // byte range once.
  auto segs = detail::segments(*this, count);
  std::sort(segs.begin(), segs.end(),
            [](const Segment& a, const Segment& b) { return a.offset < b.offset; });
  for (std::size_t i = 1; i < segs.size(); ++i) {
    if (segs[i].offset < segs[i - 1].offset + static_cast<std::ptrdiff_t>(segs[i - 1].len)) {
      return true;
    }
  }
  return false;
}

Datatype::Ptr Datatype::hold() const {
  if (isPredefined()) return Ptr(Ptr(), this);  // lives for the whole process
  return shared_from_this();
}

std::string Datatype::describe() const {
  if (!name_.empty()) return name_;
  return std::string("derived ") + combinerName(combiner_) + " datatype";
}

// ---- predefined types -----------------------------------------------------------------------

struct PredefinedFactory {
  static Datatype make(int id, const char* name, std::size_t size, std::ptrdiff_t extent,
                       std::size_t align, std::vector<Datatype::Segment> blocks,
                       std::vector<Datatype::SigRun> sig) {
    Datatype d{Datatype::Private{}};
    d.id_ = id;
    d.accKind_ = size > 0 ? id : -1;
    d.name_ = name;
    d.size_ = size;
    d.lb_ = 0;
    d.ub_ = extent;
    d.hasEntries_ = true;
    d.align_ = align;
    if (!blocks.empty()) {
      d.trueLb_ = blocks.front().offset;
      d.trueUb_ = blocks.back().offset + static_cast<std::ptrdiff_t>(blocks.back().len);
    }
    int kind = -2;
    for (const auto& r : sig) {
      d.sig_.push_back({nullptr, r.kind, r.count});
      d.nbasic_ += r.count;
      kind = kind == -2 || kind == r.kind ? r.kind : -1;
    }
    d.kind_ = kind < 0 ? -1 : kind;
    std::vector<detail::BlockSpec> specs;
    for (const auto& b : blocks) {
      specs.push_back({b.offset, 1, detail::makeRun(0, b.len), static_cast<std::ptrdiff_t>(b.len)});
    }
    auto l = detail::makeBlocks(specs);
    if (!l) l = std::make_shared<const detail::Loop>();
    d.layout_ = l;
    d.loop_ = l;
    d.contiguous_ =
        size > 0 && l->isRun() && l->offset == 0 && extent == static_cast<std::ptrdiff_t>(size);
    return d;
  }
  static void markers(Datatype& d, bool lb, bool ub) {
    d.markLb_ = lb;
    d.markUb_ = ub;
  }
};

namespace {

template <class T>
Datatype basic(int id, const char* name) {
  return PredefinedFactory::make(id, name, sizeof(T), sizeof(T), alignof(T), {{0, sizeof(T)}},
                                 {{id, 1}});
}

// C++'s bool and complex types (MPI_CXX_*): their C twins under another handle and name. They
// take the twin's id, so every path keyed by a predefined type's id (the operations, the
// accumulate fast paths, external32) treats them as the twin; only the name is their own.
template <class T>
Datatype cxx(const char* name, int twin) {
  return PredefinedFactory::make(twin, name, sizeof(T), sizeof(T), alignof(T), {{0, sizeof(T)}},
                                 {{twin, 1}});
}

// MPI's pair types are C structs {value; int}: two blocks with the struct's padding between.
template <class V>
Datatype pair(int id, const char* name, int valueKind) {
  struct P {
    V v;
    int i;
  };
  std::vector<Datatype::Segment> blocks{{0, sizeof(V)},
                                        {static_cast<std::ptrdiff_t>(offsetof(P, i)), sizeof(int)}};
  if (offsetof(P, i) == sizeof(V)) blocks = {{0, sizeof(V) + sizeof(int)}};
  return PredefinedFactory::make(id, name, sizeof(V) + sizeof(int), sizeof(P), alignof(P),
                                 std::move(blocks), {{valueKind, 1}, {kInt, 1}});
}

std::vector<Datatype> makeTable() {
  std::vector<Datatype> t;
  t.reserve(kNumPredefined);
  t.push_back(PredefinedFactory::make(0, "MPI_DATATYPE_NULL", 0, 0, 1, {}, {}));
  t.push_back(basic<char>(kChar, "MPI_CHAR"));
  t.push_back(basic<signed char>(kSignedChar, "MPI_SIGNED_CHAR"));
  t.push_back(basic<unsigned char>(kUnsignedChar, "MPI_UNSIGNED_CHAR"));
  t.push_back(basic<unsigned char>(kByte, "MPI_BYTE"));
  t.push_back(basic<wchar_t>(kWchar, "MPI_WCHAR"));
  t.push_back(basic<short>(kShort, "MPI_SHORT"));
  t.push_back(basic<unsigned short>(kUnsignedShort, "MPI_UNSIGNED_SHORT"));
  t.push_back(basic<int>(kInt, "MPI_INT"));
  t.push_back(basic<unsigned>(kUnsigned, "MPI_UNSIGNED"));
  t.push_back(basic<long>(kLong, "MPI_LONG"));
  t.push_back(basic<unsigned long>(kUnsignedLong, "MPI_UNSIGNED_LONG"));
  t.push_back(basic<long long>(kLongLong, "MPI_LONG_LONG"));
  t.push_back(basic<unsigned long long>(kUnsignedLongLong, "MPI_UNSIGNED_LONG_LONG"));
  t.push_back(basic<float>(kFloat, "MPI_FLOAT"));
  t.push_back(basic<double>(kDouble, "MPI_DOUBLE"));
  t.push_back(basic<long double>(kLongDouble, "MPI_LONG_DOUBLE"));
  t.push_back(basic<std::int8_t>(kInt8, "MPI_INT8_T"));
  t.push_back(basic<std::int16_t>(kInt16, "MPI_INT16_T"));
  t.push_back(basic<std::int32_t>(kInt32, "MPI_INT32_T"));
  t.push_back(basic<std::int64_t>(kInt64, "MPI_INT64_T"));
  t.push_back(basic<std::uint8_t>(kUint8, "MPI_UINT8_T"));
  t.push_back(basic<std::uint16_t>(kUint16, "MPI_UINT16_T"));
  t.push_back(basic<std::uint32_t>(kUint32, "MPI_UINT32_T"));
  t.push_back(basic<std::uint64_t>(kUint64, "MPI_UINT64_T"));
  t.push_back(basic<bool>(kCBool, "MPI_C_BOOL"));
  t.push_back(basic<std::complex<float>>(kCFloatComplex, "MPI_C_FLOAT_COMPLEX"));
  t.push_back(basic<std::complex<double>>(kCDoubleComplex, "MPI_C_DOUBLE_COMPLEX"));
  t.push_back(basic<std::complex<long double>>(kCLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX"));
  t.push_back(basic<std::intptr_t>(kAint, "MPI_AINT"));
  t.push_back(basic<long long>(kOffset, "MPI_OFFSET"));
  t.push_back(basic<long long>(kCount, "MPI_COUNT"));
  t.push_back(basic<unsigned char>(kPacked, "MPI_PACKED"));
  t.push_back(pair<float>(kFloatInt, "MPI_FLOAT_INT", kFloat));
  t.push_back(pair<double>(kDoubleInt, "MPI_DOUBLE_INT", kDouble));
  t.push_back(pair<long>(kLongInt, "MPI_LONG_INT", kLong));
  t.push_back(PredefinedFactory::make(k2Int, "MPI_2INT", 2 * sizeof(int), 2 * sizeof(int),
                                      alignof(int), {{0, 2 * sizeof(int)}}, {{kInt, 2}}));
  t.push_back(pair<short>(kShortInt, "MPI_SHORT_INT", kShort));
  t.push_back(pair<long double>(kLongDoubleInt, "MPI_LONG_DOUBLE_INT", kLongDouble));
  // MPI-2.2's bound markers: no data, size and extent 0; in a type map they fix the bounds.
  t.push_back(PredefinedFactory::make(kLb, "MPI_LB", 0, 0, 1, {}, {}));
  PredefinedFactory::markers(t.back(), true, false);
  t.push_back(PredefinedFactory::make(kUb, "MPI_UB", 0, 0, 1, {}, {}));
  PredefinedFactory::markers(t.back(), false, true);
  t.push_back(cxx<bool>("MPI_CXX_BOOL", kCBool));
  t.push_back(cxx<std::complex<float>>("MPI_CXX_FLOAT_COMPLEX", kCFloatComplex));
  t.push_back(cxx<std::complex<double>>("MPI_CXX_DOUBLE_COMPLEX", kCDoubleComplex));
  t.push_back(cxx<std::complex<long double>>("MPI_CXX_LONG_DOUBLE_COMPLEX", kCLongDoubleComplex));
  return t;
}

const std::vector<Datatype>& table() {
  static const std::vector<Datatype> t = makeTable();
  return t;
}

}  // namespace

Datatype::PredefinedTable Datatype::predefinedTable() noexcept {
  static const PredefinedTable t{table().data(), static_cast<int>(table().size())};
  return t;
}

// ---- signatures -----------------------------------------------------------------------------

bool signaturesMatch(const Datatype& o, std::size_t ocount, const Datatype& t, std::size_t tcount) {
  const i128 obytes = static_cast<i128>(o.size()) * ocount;
  if (obytes != static_cast<i128>(t.size()) * tcount) return false;
  if (obytes == 0) return true;
  // MPI_PACKED matches anything at the other end (MPI-3.1 §3.3.1).
  if (o.id() == kPacked || t.id() == kPacked) return true;
  if (&o == &t) return ocount == tcount;
  const i128 total = static_cast<i128>(o.basicCount()) * ocount;
  if (total != static_cast<i128>(t.basicCount()) * tcount) return false;
  if (o.homogeneousKind() >= 0 || t.homogeneousKind() >= 0) {
    return o.homogeneousKind() == t.homogeneousKind();
  }
  // Once both streams have matched over a common multiple L of the two element lengths, o^i
  // equals t^j as words, so o and t are powers of one word and the rest (of equal length)
  // matches too: compare at most lcm(|o|, |t|) basic elements, however large the counts.
  const std::uint64_t a = o.basicCount();
  const std::uint64_t b = t.basicCount();
  const i128 lcm = static_cast<i128>(a / std::gcd(a, b)) * b;
  const auto limit = static_cast<std::uint64_t>(std::min(lcm, total));
  std::vector<Datatype::SigRun> runs;
  std::uint64_t got = 0;
  o.forEachSigRun(ocount, [&](int kind, std::uint64_t n) {
    runs.push_back({kind, n});
    got += n;
    return got < limit;
  });
  std::size_t ri = 0;
  std::uint64_t used = 0;
  std::uint64_t done = 0;
  bool ok = true;
  t.forEachSigRun(tcount, [&](int kind, std::uint64_t n) {
    while (n > 0 && done < limit) {
      if (ri >= runs.size() || runs[ri].kind != kind) {
        ok = false;
        return false;
      }
      const std::uint64_t take = std::min<std::uint64_t>(n, runs[ri].count - used);
      n -= take;
      used += take;
      done += take;
      if (used == runs[ri].count) {
        ++ri;
        used = 0;
      }
    }
    return done < limit;
  });
  return ok && done >= limit;
}

// ---- pack / unpack / elements ---------------------------------------------------------------

namespace {

std::size_t packedBytes(const Datatype& t, std::size_t count, const char* call) {
  if (!t.committed()) {
    throw Error(kErrType, std::string(call) + ": " + t.describe() + " is not committed");
  }
  const i128 bytes = static_cast<i128>(t.size()) * count;
  if (bytes > PTRDIFF_MAX) {
    throw Error(kErrCount, std::string(call) + ": " + std::to_string(count) + " x " + t.describe() +
                               " is more than the address range");
  }
  return static_cast<std::size_t>(bytes);
}

}  // namespace

void pack(const void* in, std::size_t count, const Datatype& t, std::byte* out,
          std::size_t outLen) {
  const std::size_t bytes = packedBytes(t, count, "pack");
  if (bytes > outLen) {
    throw Error(kErrTruncate, std::to_string(count) + " x " + t.describe() + " is " +
                                  std::to_string(bytes) + " bytes, but only " +
                                  std::to_string(outLen) + " bytes of output are left");
  }
  const auto* src = static_cast<const std::byte*>(in);
  if (t.contiguous()) {
    if (bytes != 0) detail::copyBytes(out, src, bytes);
    return;
  }
  // uintptr arithmetic: `in` may be MPI_BOTTOM with absolute displacements in the type.
  const auto base = reinterpret_cast<std::uintptr_t>(src);
  detail::Strided st;
  if (detail::asStrided(t, count, st)) {
    for (std::size_t i = 0; i < st.count; ++i) {
      const auto off = st.offset + static_cast<std::ptrdiff_t>(i) * st.stride;
      detail::copyRun(out,
                      reinterpret_cast<const std::byte*>(base + static_cast<std::uintptr_t>(off)),
                      st.blocklen);
      out += st.blocklen;
    }
    return;
  }
  detail::Cursor c(t, count);
  Datatype::Segment s{};
  while (c.next(SIZE_MAX, s)) {
    detail::copyBytes(
        out, reinterpret_cast<const std::byte*>(base + static_cast<std::uintptr_t>(s.offset)),
        s.len);
    out += s.len;
  }
}

void unpack(const std::byte* in, std::size_t inLen, void* out, std::size_t count,
            const Datatype& t) {
  const std::size_t bytes = packedBytes(t, count, "unpack");
  if (bytes > inLen) {
    throw Error(kErrTruncate, std::to_string(count) + " x " + t.describe() + " needs " +
                                  std::to_string(bytes) + " bytes, but only " +
                                  std::to_string(inLen) + " bytes of input are left");
  }
  auto* dst = static_cast<std::byte*>(out);
  if (t.contiguous()) {
    if (bytes != 0) detail::copyBytes(dst, in, bytes);
    return;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(dst);
  detail::Strided st;
  if (detail::asStrided(t, count, st)) {
    for (std::size_t i = 0; i < st.count; ++i) {
      const auto off = st.offset + static_cast<std::ptrdiff_t>(i) * st.stride;
      detail::copyRun(reinterpret_cast<std::byte*>(base + static_cast<std::uintptr_t>(off)), in,
                      st.blocklen);
      in += st.blocklen;
    }
    return;
  }
  detail::Cursor c(t, count);
  Datatype::Segment s{};
  while (c.next(SIZE_MAX, s)) {
    detail::copyBytes(reinterpret_cast<std::byte*>(base + static_cast<std::uintptr_t>(s.offset)),
                      in, s.len);
    in += s.len;
  }
}

namespace {

std::size_t kindSize(int kind) {
  const Datatype* d = Datatype::predefined(kind);
  return d == nullptr ? 1 : d->size();
}

}  // namespace

bool elementsIn(const Datatype& t, std::uint64_t bytes, std::uint64_t& elements) {
  elements = 0;
  if (t.size() == 0) return bytes == 0;
  elements = bytes / t.size() * t.basicCount();
  std::uint64_t rem = bytes % t.size();
  if (rem == 0) return true;
  t.forEachSigRun(1, [&](int kind, std::uint64_t n) {
    const std::uint64_t sz = kindSize(kind);
    if (rem >= n * sz) {
      elements += n;
      rem -= n * sz;
      return rem > 0;
    }
    elements += rem / sz;
    rem %= sz;
    return false;
  });
  return rem == 0;
}

std::uint64_t bytesOfElements(const Datatype& t, std::uint64_t elements) {
  if (t.basicCount() == 0) return 0;
  std::uint64_t bytes = elements / t.basicCount() * t.size();
  std::uint64_t rem = elements % t.basicCount();
  if (rem == 0) return bytes;
  t.forEachSigRun(1, [&](int kind, std::uint64_t n) {
    const std::uint64_t take = std::min(n, rem);
    bytes += take * kindSize(kind);
    rem -= take;
    return rem > 0;
  });
  return bytes;
}

// ---- the typed C++ API ----------------------------------------------------------------------

template <>
const Datatype& datatypeOf<char>() {
  return table()[kChar];
}
template <>
const Datatype& datatypeOf<signed char>() {
  return table()[kSignedChar];
}
template <>
const Datatype& datatypeOf<unsigned char>() {
  return table()[kUnsignedChar];
}
template <>
const Datatype& datatypeOf<std::byte>() {
  return table()[kByte];
}
template <>
const Datatype& datatypeOf<wchar_t>() {
  return table()[kWchar];
}
template <>
const Datatype& datatypeOf<short>() {
  return table()[kShort];
}
template <>
const Datatype& datatypeOf<unsigned short>() {
  return table()[kUnsignedShort];
}
template <>
const Datatype& datatypeOf<int>() {
  return table()[kInt];
}
template <>
const Datatype& datatypeOf<unsigned>() {
  return table()[kUnsigned];
}
template <>
const Datatype& datatypeOf<long>() {
  return table()[kLong];
}
template <>
const Datatype& datatypeOf<unsigned long>() {
  return table()[kUnsignedLong];
}
template <>
const Datatype& datatypeOf<long long>() {
  return table()[kLongLong];
}
template <>
const Datatype& datatypeOf<unsigned long long>() {
  return table()[kUnsignedLongLong];
}
template <>
const Datatype& datatypeOf<float>() {
  return table()[kFloat];
}
template <>
const Datatype& datatypeOf<double>() {
  return table()[kDouble];
}
template <>
const Datatype& datatypeOf<long double>() {
  return table()[kLongDouble];
}
template <>
const Datatype& datatypeOf<bool>() {
  return table()[kCBool];
}
template <>
const Datatype& datatypeOf<std::complex<float>>() {
  return table()[kCFloatComplex];
}
template <>
const Datatype& datatypeOf<std::complex<double>>() {
  return table()[kCDoubleComplex];
}

}  // namespace onesided
