// SPDX-License-Identifier: BSD-3-Clause
// The type engine against a naive reference that expands every type map fully: each
// constructor by hand-computed values, then random type trees (depth up to 4, fixed seeds).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "datatype/loop.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"

namespace onesided {
namespace {

using Ptr = std::shared_ptr<Datatype>;

const Datatype& P(int id) { return *Datatype::predefined(id); }

// ---- the reference: type maps as explicit lists ---------------------------------------------

struct Entry {
  std::int64_t disp;
  int kind;
  std::int64_t size;
};

/// A type map written out in full, with bounds computed copy by copy as the MPI-2.2 rules say
/// (sticky markers; a struct's extent padded to its alignment unless an MPI_UB fixes it).
struct Ref {
  std::vector<Entry> entries;
  bool any = false;  // any entry or marker
  bool markLb = false, markUb = false;
  std::int64_t lb = 0, ub = 0;
  std::int64_t align = 1;

  [[nodiscard]] std::int64_t extent() const { return ub - lb; }
  [[nodiscard]] std::int64_t size() const {
    std::int64_t s = 0;
    for (const auto& e : entries) s += e.size;
    return s;
  }
  [[nodiscard]] std::int64_t trueLb() const {
    std::int64_t v = entries.empty() ? 0 : entries[0].disp;
    for (const auto& e : entries) v = std::min(v, e.disp);
    return v;
  }
  [[nodiscard]] std::int64_t trueUb() const {
    std::int64_t v = entries.empty() ? 0 : entries[0].disp + entries[0].size;
    for (const auto& e : entries) v = std::max(v, e.disp + e.size);
    return v;
  }
  /// Byte offsets of `count` elements, in packed order.
  [[nodiscard]] std::vector<std::int64_t> bytes(std::size_t count) const {
    std::vector<std::int64_t> out;
    for (std::size_t k = 0; k < count; ++k) {
      for (const auto& e : entries) {
        for (std::int64_t b = 0; b < e.size; ++b) {
          out.push_back(static_cast<std::int64_t>(k) * extent() + e.disp + b);
        }
      }
    }
    return out;
  }
  [[nodiscard]] std::vector<int> kinds(std::size_t count) const {
    std::vector<int> out;
    for (std::size_t k = 0; k < count; ++k) {
      for (const auto& e : entries) out.push_back(e.kind);
    }
    return out;
  }
};

Ref refBasic(int id) {
  Ref r;
  const Datatype& d = P(id);
  r.any = true;
  r.ub = d.extent();
  if (id == MPI_DOUBLE_INT) {
    struct DI {
      double d;
      int i;
    };
    r.entries = {{0, MPI_DOUBLE, 8}, {static_cast<std::int64_t>(offsetof(DI, i)), MPI_INT, 4}};
    r.align = alignof(DI);
  } else if (id == MPI_LB || id == MPI_UB) {
    r.markLb = id == MPI_LB;
    r.markUb = id == MPI_UB;
  } else {
    r.entries = {{0, id, static_cast<std::int64_t>(d.size())}};
    r.align = static_cast<std::int64_t>(d.size());
  }
  return r;
}

/// Concatenates copies (child, displacement) in type-map order.
Ref refCopies(const std::vector<std::pair<const Ref*, std::int64_t>>& copies, bool pad) {
  Ref r;
  std::int64_t lo = 0, hi = 0, mlb = 0, mub = 0;
  for (const auto& [c, d] : copies) {
    for (const auto& e : c->entries) r.entries.push_back({e.disp + d, e.kind, e.size});
    r.align = std::max(r.align, c->align);
    if (!c->any) continue;
    lo = r.any ? std::min(lo, d + c->lb) : d + c->lb;
    hi = r.any ? std::max(hi, d + c->ub) : d + c->ub;
    r.any = true;
    if (c->markLb) {
      mlb = r.markLb ? std::min(mlb, d + c->lb) : d + c->lb;
      r.markLb = true;
    }
    if (c->markUb) {
      mub = r.markUb ? std::max(mub, d + c->ub) : d + c->ub;
      r.markUb = true;
    }
  }
  r.lb = r.markLb ? mlb : lo;
  r.ub = r.markUb ? mub : hi;
  if (pad && !r.markUb && (r.ub - r.lb) % r.align != 0) {
    r.ub += r.align - (r.ub - r.lb) % r.align;
  }
  return r;
}

Ref refContiguous(std::int64_t n, const Ref& c) {
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back({&c, i * c.extent()});
  return refCopies(v, false);
}
Ref refHvector(std::int64_t n, std::int64_t bl, std::int64_t strideBytes, const Ref& c) {
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < bl; ++j) v.push_back({&c, i * strideBytes + j * c.extent()});
  }
  return refCopies(v, false);
}
Ref refHindexed(const std::vector<std::int64_t>& bl, const std::vector<std::int64_t>& byteDispls,
                const Ref& c) {
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  for (std::size_t i = 0; i < bl.size(); ++i) {
    for (std::int64_t j = 0; j < bl[i]; ++j) v.push_back({&c, byteDispls[i] + j * c.extent()});
  }
  return refCopies(v, false);
}
Ref refStruct(const std::vector<std::int64_t>& bl, const std::vector<std::int64_t>& displs,
              const std::vector<const Ref*>& cs) {
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  for (std::size_t i = 0; i < bl.size(); ++i) {
    for (std::int64_t j = 0; j < bl[i]; ++j) v.push_back({cs[i], displs[i] + j * cs[i]->extent()});
  }
  return refCopies(v, true);
}
Ref refResized(std::int64_t lb, std::int64_t extent, const Ref& c) {
  Ref r = c;
  r.any = r.markLb = r.markUb = true;
  r.lb = lb;
  r.ub = lb + extent;
  return r;
}

/// Subarray type map straight from its definition: the elements of the sub-block, in the
/// array's storage order, at their offsets in the whole array; extent = the whole array.
Ref refSubarray(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& subs,
                const std::vector<std::int64_t>& starts, int order, const Ref& c) {
  const std::size_t n = sizes.size();
  std::vector<std::int64_t> idx(n, 0);
  Ref elem = c;
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  for (;;) {
    // Linear index of starts + idx in the given order.
    std::int64_t lin = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t d = order == MPI_ORDER_C ? k : n - 1 - k;  // slowest first
      lin = lin * sizes[d] + starts[d] + idx[d];
    }
    v.push_back({&elem, lin * c.extent()});
    // Advance the fastest dimension first.
    std::size_t k = 0;
    for (; k < n; ++k) {
      const std::size_t d = order == MPI_ORDER_C ? n - 1 - k : k;
      if (++idx[d] < subs[d]) break;
      idx[d] = 0;
    }
    if (k == n) break;
  }
  Ref r = refCopies(v, false);
  std::int64_t total = c.extent();
  for (auto s : sizes) total *= s;
  return refResized(0, total, r);
}

/// Darray type map from its definition: the elements this process owns, in the order of its
/// local array (stored in `order`), at their offsets in the global array.
Ref refDarray(int size, int rank, const std::vector<std::int64_t>& g, const std::vector<int>& dist,
              const std::vector<int>& darg, const std::vector<std::int64_t>& ps, int order,
              const Ref& c) {
  (void)size;
  const std::size_t n = g.size();
  std::vector<std::int64_t> coord(n);
  std::int64_t left = size, r = rank;
  for (std::size_t i = 0; i < n; ++i) {
    left /= ps[i];
    coord[i] = r / left;
    r %= left;
  }
  // Owned global indices per dimension, in local order.
  std::vector<std::vector<std::int64_t>> own(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < g[i]; ++k) {
      bool mine = false;
      if (dist[i] == MPI_DISTRIBUTE_NONE) {
        mine = true;
      } else if (dist[i] == MPI_DISTRIBUTE_BLOCK) {
        const std::int64_t b =
            darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g[i] + ps[i] - 1) / ps[i] : darg[i];
        mine = k / b == coord[i];
      } else {
        const std::int64_t b = darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[i];
        mine = (k / b) % ps[i] == coord[i];
      }
      if (mine) own[i].push_back(k);
    }
  }
  std::vector<std::pair<const Ref*, std::int64_t>> v;
  bool empty = false;
  for (const auto& o : own) empty = empty || o.empty();
  if (!empty) {
    std::vector<std::size_t> idx(n, 0);
    for (;;) {
      std::int64_t lin = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t d = order == MPI_ORDER_C ? k : n - 1 - k;
        lin = lin * g[d] + own[d][idx[d]];
      }
      v.push_back({&c, lin * c.extent()});
      std::size_t k = 0;
      for (; k < n; ++k) {
        const std::size_t d = order == MPI_ORDER_C ? n - 1 - k : k;
        if (++idx[d] < own[d].size()) break;
        idx[d] = 0;
      }
      if (k == n) break;
    }
  }
  Ref rr = refCopies(v, false);
  std::int64_t total = c.extent();
  for (auto s : g) total *= s;
  return refResized(0, total, rr);
}

// ---- comparing an engine type with its reference --------------------------------------------

/// A buffer covering [lo, hi) relative to a base pointer, filled with a byte pattern.
struct Buffer {
  std::vector<std::byte> mem;
  std::int64_t lo;
  Buffer(std::int64_t l, std::int64_t h, unsigned seed)
      : mem(static_cast<std::size_t>(h - l + 1)), lo(l) {
    std::mt19937 g(seed);
    for (auto& b : mem) b = static_cast<std::byte>(g());
  }
  std::byte* base() { return mem.data() - lo; }
};

void expectSame(const Datatype& t, const Ref& r, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(static_cast<std::int64_t>(t.size()), r.size());
  EXPECT_EQ(t.lb(), r.lb);
  EXPECT_EQ(t.extent(), r.extent());
  EXPECT_EQ(t.trueLb(), r.trueLb());
  EXPECT_EQ(t.trueExtent(), r.trueUb() - r.trueLb());
  EXPECT_EQ(t.basicCount(), r.entries.size());
  EXPECT_EQ(t.stickyLb(), r.markLb);
  EXPECT_EQ(t.stickyUb(), r.markUb);
  if (!t.committed()) return;
  for (std::size_t count : {1U, 2U, 3U}) {
    SCOPED_TRACE("count " + std::to_string(count));
    const auto offs = r.bytes(count);
    std::int64_t lo = 0, hi = 0;
    ASSERT_TRUE(t.footprint(count, lo, hi));
    if (!offs.empty()) {
      EXPECT_EQ(lo, *std::min_element(offs.begin(), offs.end()));
      EXPECT_EQ(hi, *std::max_element(offs.begin(), offs.end()) + 1);
    }
    // Pack against the reference.
    Buffer in(std::min<std::int64_t>(lo, 0), std::max<std::int64_t>(hi, 1), 7);
    std::vector<std::byte> packed(offs.size());
    pack(in.base(), count, t, packed.data(), packed.size());
    for (std::size_t i = 0; i < offs.size(); ++i) {
      ASSERT_EQ(packed[i], in.base()[offs[i]]) << "packed byte " << i << " from offset " << offs[i];
    }
    // Unpack: exactly the type's bytes change (with distinct values where bytes repeat, the
    // last write wins, as the reference's order says).
    Buffer out(std::min<std::int64_t>(lo, 0), std::max<std::int64_t>(hi, 1), 9);
    Buffer want = out;
    std::vector<std::byte> src(offs.size());
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 31 + 5);
    for (std::size_t i = 0; i < offs.size(); ++i) want.base()[offs[i]] = src[i];
    unpack(src.data(), src.size(), out.base(), count, t);
    ASSERT_TRUE(out.mem == want.mem) << "unpack differs from the reference";
    // The cursor from a few positions, segment lengths capped: the same offsets.
    for (std::size_t start : {std::size_t{0}, offs.size() / 3, offs.size() / 2, offs.size()}) {
      detail::Cursor c(t, count);
      ASSERT_EQ(c.total(), offs.size());
      c.seek(start);
      std::size_t k = start;
      Datatype::Segment s{};
      const std::size_t cap = 1 + start % 5;
      while (c.next(cap, s)) {
        ASSERT_LE(s.len, cap);
        for (std::size_t b = 0; b < s.len; ++b, ++k) {
          ASSERT_LT(k, offs.size());
          ASSERT_EQ(s.offset + static_cast<std::ptrdiff_t>(b), offs[k]) << "stream byte " << k;
        }
      }
      EXPECT_EQ(k, offs.size());
      EXPECT_EQ(c.position(), offs.size());
    }
    // Overlap: exact against the reference.
    auto sorted = offs;
    std::sort(sorted.begin(), sorted.end());
    const bool dup = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    EXPECT_EQ(t.overlaps(count), dup);
  }
}

template <class Fn>
void expectError(int cls, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error, expected class " << cls;
  } catch (const Error& e) {
    EXPECT_EQ(e.errorClass(), cls) << e.what();
  }
}

// ---- each constructor ------------------------------------------------------------------------

TEST(DatatypeEngine, Contiguous) {
  auto t = Datatype::contiguous(3, P(MPI_INT));
  t->commit();
  EXPECT_EQ(t->size(), 12U);
  EXPECT_EQ(t->extent(), 12);
  EXPECT_TRUE(t->contiguous());
  EXPECT_EQ(t->combiner(), Combiner::kContiguous);
  EXPECT_EQ(t->ints(), std::vector<std::int64_t>{3});
  ASSERT_EQ(t->types().size(), 1U);
  EXPECT_EQ(t->types()[0].get(), &P(MPI_INT));
  expectSame(*t, refContiguous(3, refBasic(MPI_INT)), "contiguous(3, int)");
  auto e = Datatype::contiguous(0, P(MPI_INT));
  e->commit();
  EXPECT_EQ(e->size(), 0U);
  EXPECT_EQ(e->extent(), 0);
  expectError(kErrCount, [] { Datatype::contiguous(-1, P(MPI_INT)); });
}

TEST(DatatypeEngine, VectorAndHvector) {
  auto v = Datatype::vector(3, 2, 4, P(MPI_INT));
  v->commit();
  EXPECT_EQ(v->size(), 24U);
  EXPECT_EQ(v->extent(), 40);
  EXPECT_FALSE(v->contiguous());
  EXPECT_EQ(v->ints(), (std::vector<std::int64_t>{3, 2, 4}));
  // Kept as one strided descriptor, never one entry per block.
  ASSERT_NE(v->loop(), nullptr);
  EXPECT_TRUE(v->loop()->isByteVector());
  EXPECT_EQ(v->loop()->count, 3U);
  EXPECT_EQ(v->loop()->blocklen, 8U);
  expectSame(*v, refHvector(3, 2, 16, refBasic(MPI_INT)), "vector(3,2,4,int)");
  auto neg = Datatype::vector(3, 1, -2, P(MPI_INT));
  neg->commit();
  EXPECT_EQ(neg->lb(), -16);
  EXPECT_EQ(neg->extent(), 20);
  expectSame(*neg, refHvector(3, 1, -8, refBasic(MPI_INT)), "vector(3,1,-2,int)");
  auto h = Datatype::hvector(2, 3, 100, P(MPI_SHORT));
  h->commit();
  EXPECT_EQ(h->aints(), std::vector<std::int64_t>{100});
  EXPECT_EQ(h->ints(), (std::vector<std::int64_t>{2, 3}));
  expectSame(*h, refHvector(2, 3, 100, refBasic(MPI_SHORT)), "hvector(2,3,100,short)");
  // A million blocks is still one node.
  auto big = Datatype::vector(1000000, 1, 2, P(MPI_DOUBLE));
  big->commit();
  EXPECT_TRUE(big->loop()->isByteVector());
  EXPECT_EQ(big->size(), 8000000U);
  // Stride equal to the block: contiguous after all.
  auto flat = Datatype::vector(4, 2, 2, P(MPI_INT));
  flat->commit();
  EXPECT_TRUE(flat->contiguous());
  expectError(kErrCount, [] { Datatype::vector(-2, 1, 1, P(MPI_INT)); });
  expectError(kErrArg, [] { Datatype::vector(2, -1, 1, P(MPI_INT)); });
}

TEST(DatatypeEngine, IndexedFamilies) {
  const std::vector<std::int64_t> bl{2, 1, 3};
  const std::vector<std::int64_t> ds{4, 0, 7};
  auto t = Datatype::indexed(bl, ds, P(MPI_INT));
  t->commit();
  EXPECT_EQ(t->size(), 24U);
  EXPECT_EQ(t->lb(), 0);
  EXPECT_EQ(t->extent(), 40);
  EXPECT_EQ(t->ints(), (std::vector<std::int64_t>{3, 2, 1, 3, 4, 0, 7}));
  expectSame(*t, refHindexed(bl, {16, 0, 28}, refBasic(MPI_INT)), "indexed");
  auto h = Datatype::hindexed(bl, std::vector<std::int64_t>{-8, 40, 3}, P(MPI_CHAR));
  h->commit();
  EXPECT_EQ(h->aints(), (std::vector<std::int64_t>{-8, 40, 3}));
  expectSame(*h, refHindexed(bl, {-8, 40, 3}, refBasic(MPI_CHAR)), "hindexed");
  auto ib = Datatype::indexedBlock(2, std::vector<std::int64_t>{5, 1, 9}, P(MPI_DOUBLE));
  ib->commit();
  EXPECT_EQ(ib->ints(), (std::vector<std::int64_t>{3, 2, 5, 1, 9}));
  expectSame(*ib, refHindexed({2, 2, 2}, {40, 8, 72}, refBasic(MPI_DOUBLE)), "indexed_block");
  auto hb = Datatype::hindexedBlock(1, std::vector<std::int64_t>{0, 12, 24}, P(MPI_INT));
  hb->commit();
  EXPECT_EQ(hb->ints(), (std::vector<std::int64_t>{3, 1}));
  // A regular list of equal blocks is a strided descriptor.
  EXPECT_TRUE(hb->loop()->isByteVector());
  expectSame(*hb, refHindexed({1, 1, 1}, {0, 12, 24}, refBasic(MPI_INT)), "hindexed_block");
  // Adjacent blocks merge.
  auto adj = Datatype::indexed(std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{0, 1},
                               P(MPI_INT));
  adj->commit();
  EXPECT_TRUE(adj->contiguous());
  // Zero-length blocks are no entries and no bounds.
  auto z = Datatype::indexed(std::vector<std::int64_t>{0, 1}, std::vector<std::int64_t>{-5, 2},
                             P(MPI_INT));
  z->commit();
  EXPECT_EQ(z->lb(), 8);
  expectError(kErrArg, [] {
    Datatype::indexed(std::vector<std::int64_t>{1, -1}, std::vector<std::int64_t>{0, 1},
                      P(MPI_INT));
  });
}

// Accumulate counts elements of the predefined type a derived type is made of: a pair type of
// MINLOC / MAXLOC stays whole (its signature is two basic elements, MPI_2INT's even one kind).
TEST(DatatypeEngine, AccumulateKindKeepsPairTypesWhole) {
  for (int pair : {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
                   MPI_LONG_DOUBLE_INT}) {
    const Datatype& p = P(pair);
    EXPECT_EQ(p.accumulateKind(), pair) << p.name();
    auto v = Datatype::vector(3, 2, 5, p);
    auto c = Datatype::contiguous(2, *v);
    auto r = Datatype::resized(0, 7 * p.extent(), p);
    const std::array<const Datatype*, 2> ts{c.get(), r.get()};
    auto s = Datatype::structType(std::vector<std::int64_t>{1, 2},
                                  std::vector<std::int64_t>{0, 1000}, ts);
    auto ix =
        Datatype::indexed(std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{4, 0}, p);
    for (const auto* t : {v.get(), c.get(), r.get(), s.get(), ix.get()}) {
      EXPECT_EQ(t->accumulateKind(), pair) << p.name() << " " << t->describe();
    }
    // Mixed with another type: no one kind.
    const std::array<const Datatype*, 2> mixed{&p, &P(MPI_INT)};
    auto m = Datatype::structType(std::vector<std::int64_t>{1, 1}, std::vector<std::int64_t>{0, 64},
                                  mixed);
    EXPECT_EQ(m->accumulateKind(), -1) << p.name();
  }
  EXPECT_EQ(Datatype::vector(2, 1, 2, P(MPI_2INT))->homogeneousKind(), MPI_INT);
  EXPECT_EQ(Datatype::vector(2, 1, 2, P(MPI_INT))->accumulateKind(), MPI_INT);
  EXPECT_EQ(Datatype::contiguous(0, P(MPI_INT))->accumulateKind(), -1);
}

TEST(DatatypeEngine, StructPaddingAndMarkers) {
  const std::array<const Datatype*, 3> ts{&P(MPI_INT), &P(MPI_DOUBLE), &P(MPI_CHAR)};
  auto s = Datatype::structType(std::vector<std::int64_t>{1, 1, 1},
                                std::vector<std::int64_t>{0, 8, 16}, ts);
  s->commit();
  EXPECT_EQ(s->size(), 13U);
  EXPECT_EQ(s->extent(), 24);  // padded to double's alignment, as the C struct
  EXPECT_EQ(s->trueExtent(), 17);
  EXPECT_EQ(s->homogeneousKind(), -1);
  {
    Ref ri = refBasic(MPI_INT), rd = refBasic(MPI_DOUBLE), rc = refBasic(MPI_CHAR);
    expectSame(*s, refStruct({1, 1, 1}, {0, 8, 16}, {&ri, &rd, &rc}), "struct");
  }
  // The seed's gather example (MPI-2.2 §5.5, Example 5.10): one int with the extent of a row of
  // 150 ints, through an MPI_UB marker.
  const std::array<const Datatype*, 2> tu{&P(MPI_INT), &P(MPI_UB)};
  auto row = Datatype::structType(std::vector<std::int64_t>{1, 1},
                                  std::vector<std::int64_t>{0, 150 * 4}, tu);
  row->commit();
  EXPECT_EQ(row->size(), 4U);
  EXPECT_EQ(row->lb(), 0);
  EXPECT_EQ(row->extent(), 600);
  EXPECT_TRUE(row->stickyUb());
  // 100 of them walk a column.
  auto segs = detail::segments(*row, 100);
  ASSERT_EQ(segs.size(), 100U);
  EXPECT_EQ(segs[99].offset, 99 * 600);
  // The same with create_resized (the MPI-3 way) gives the same layout.
  auto rs = Datatype::resized(0, 600, P(MPI_INT));
  rs->commit();
  EXPECT_EQ(detail::segments(*rs, 100).back().offset, 99 * 600);
  // Sticky: an LB marker below the data stays the lower bound through further constructors.
  const std::array<const Datatype*, 2> tl{&P(MPI_LB), &P(MPI_INT)};
  auto lbt =
      Datatype::structType(std::vector<std::int64_t>{1, 1}, std::vector<std::int64_t>{-4, 0}, tl);
  lbt->commit();
  EXPECT_EQ(lbt->lb(), -4);
  EXPECT_EQ(lbt->extent(), 8);
  auto c2 = Datatype::contiguous(2, *lbt);
  c2->commit();
  EXPECT_EQ(c2->lb(), -4);
  EXPECT_EQ(c2->extent(), 16);
  {
    Ref rl = refBasic(MPI_LB), ri = refBasic(MPI_INT);
    Ref rlbt = refStruct({1, 1}, {-4, 0}, {&rl, &ri});
    expectSame(*lbt, rlbt, "struct(LB, int)");
    expectSame(*c2, refContiguous(2, rlbt), "contiguous(2, struct(LB, int))");
  }
  // An UB marker wins over data beyond it (MPI-2.2 §4.1.6), and no padding is added.
  const std::array<const Datatype*, 2> td{&P(MPI_DOUBLE), &P(MPI_UB)};
  auto cut =
      Datatype::structType(std::vector<std::int64_t>{2, 1}, std::vector<std::int64_t>{0, 4}, td);
  cut->commit();
  EXPECT_EQ(cut->extent(), 4);
  EXPECT_EQ(cut->trueExtent(), 16);
  // Envelope / contents.
  EXPECT_EQ(s->combiner(), Combiner::kStruct);
  EXPECT_EQ(s->ints(), (std::vector<std::int64_t>{3, 1, 1, 1}));
  EXPECT_EQ(s->aints(), (std::vector<std::int64_t>{0, 8, 16}));
  ASSERT_EQ(s->types().size(), 3U);
  EXPECT_EQ(s->types()[1].get(), &P(MPI_DOUBLE));
}

TEST(DatatypeEngine, ResizedAndDup) {
  auto r = Datatype::resized(-4, 12, P(MPI_INT));
  r->commit();
  EXPECT_EQ(r->lb(), -4);
  EXPECT_EQ(r->extent(), 12);
  EXPECT_EQ(r->trueLb(), 0);
  EXPECT_EQ(r->trueExtent(), 4);
  EXPECT_EQ(r->aints(), (std::vector<std::int64_t>{-4, 12}));
  expectSame(*r, refResized(-4, 12, refBasic(MPI_INT)), "resized");
  // Interleaved elements: a column resized to one element's extent, count > 1, no overlap.
  auto col = Datatype::vector(3, 1, 4, P(MPI_INT));
  auto colr = Datatype::resized(0, 4, *col);
  colr->commit();
  EXPECT_FALSE(colr->overlaps(4));
  EXPECT_TRUE(colr->overlaps(5));  // the fifth column is the first again, one row down
  auto d = Datatype::dup(*colr);
  EXPECT_TRUE(d->committed());  // a dup of a committed type is committed
  EXPECT_EQ(d->combiner(), Combiner::kDup);
  EXPECT_EQ(d->extent(), colr->extent());
  EXPECT_TRUE(signaturesMatch(*d, 3, *colr, 3));
}

TEST(DatatypeEngine, SubarrayBothOrders) {
  const std::vector<std::int64_t> sizes{4, 5, 6}, subs{2, 3, 2}, starts{1, 1, 3};
  for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
    auto t = Datatype::subarray(sizes, subs, starts, order, P(MPI_DOUBLE));
    t->commit();
    EXPECT_EQ(t->combiner(), Combiner::kSubarray);
    EXPECT_EQ(t->ints(), (std::vector<std::int64_t>{3, 4, 5, 6, 2, 3, 2, 1, 1, 3, order}));
    EXPECT_EQ(t->lb(), 0);
    EXPECT_EQ(t->extent(), 4 * 5 * 6 * 8);
    expectSame(*t, refSubarray(sizes, subs, starts, order, refBasic(MPI_DOUBLE)),
               order == MPI_ORDER_C ? "subarray C" : "subarray Fortran");
  }
  // One face of a 3-D array (a plane at x = 0): whole rows, merged into long runs.
  auto face = Datatype::subarray(sizes, std::vector<std::int64_t>{1, 5, 6},
                                 std::vector<std::int64_t>{2, 0, 0}, MPI_ORDER_C, P(MPI_DOUBLE));
  face->commit();
  EXPECT_EQ(detail::segments(*face, 1).size(), 1U);
  expectError(kErrArg, [&] {
    Datatype::subarray(sizes, std::vector<std::int64_t>{2, 6, 2}, starts, MPI_ORDER_C, P(MPI_INT));
  });
  expectError(kErrArg, [&] {
    Datatype::subarray(sizes, subs, std::vector<std::int64_t>{3, 0, 0}, MPI_ORDER_C, P(MPI_INT));
  });
  expectError(kErrArg, [&] { Datatype::subarray(sizes, subs, starts, 7, P(MPI_INT)); });
}

TEST(DatatypeEngine, DarrayAgainstItsDefinition) {
  struct Case {
    std::vector<std::int64_t> g;
    std::vector<int> dist;
    std::vector<int> darg;
    std::vector<std::int64_t> ps;
  };
  const int kDflt = MPI_DISTRIBUTE_DFLT_DARG;
  const std::vector<Case> cases = {
      {{10}, {MPI_DISTRIBUTE_BLOCK}, {kDflt}, {3}},
      {{10}, {MPI_DISTRIBUTE_CYCLIC}, {kDflt}, {3}},
      {{11}, {MPI_DISTRIBUTE_CYCLIC}, {2}, {3}},
      {{7, 9}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, {kDflt, 2}, {2, 2}},
      {{7, 9}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, {3, kDflt}, {2, 3}},
      {{4, 6, 5},
       {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC},
       {kDflt, kDflt, kDflt},
       {2, 1, 2}},
      {{8, 3}, {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK}, {3, 2}, {3, 2}},
  };
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    std::int64_t procs = 1;
    for (auto p : c.ps) procs *= p;
    for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
      for (int rank = 0; rank < procs; ++rank) {
        std::vector<std::int64_t> dist(c.dist.begin(), c.dist.end());
        std::vector<std::int64_t> darg(c.darg.begin(), c.darg.end());
        auto t = Datatype::darray(procs, rank, c.g, dist, darg, c.ps, order, P(MPI_INT));
        t->commit();
        expectSame(*t,
                   refDarray(static_cast<int>(procs), rank, c.g, c.dist, c.darg, c.ps, order,
                             refBasic(MPI_INT)),
                   "darray case " + std::to_string(ci) + " order " + std::to_string(order) +
                       " rank " + std::to_string(rank));
      }
    }
  }
  expectError(kErrArg, [] {
    Datatype::darray(4, 0, std::vector<std::int64_t>{10},
                     std::vector<std::int64_t>{MPI_DISTRIBUTE_BLOCK}, std::vector<std::int64_t>{2},
                     std::vector<std::int64_t>{4}, MPI_ORDER_C,
                     P(MPI_INT));  // 2 x 4 < 10
  });
}

TEST(DatatypeEngine, SignaturesInRunLengthForm) {
  auto vec = Datatype::vector(1000, 1, 2, P(MPI_INT));
  auto con = Datatype::contiguous(1000, P(MPI_INT));
  EXPECT_TRUE(signaturesMatch(*vec, 3, *con, 3));
  EXPECT_TRUE(signaturesMatch(*vec, 1, P(MPI_INT), 1000));
  EXPECT_FALSE(signaturesMatch(*vec, 1, P(MPI_FLOAT), 1000));
  const std::array<const Datatype*, 2> id{&P(MPI_INT), &P(MPI_DOUBLE)};
  const std::array<const Datatype*, 2> di{&P(MPI_DOUBLE), &P(MPI_INT)};
  auto s1 =
      Datatype::structType(std::vector<std::int64_t>{1, 1}, std::vector<std::int64_t>{0, 8}, id);
  auto s2 = Datatype::contiguous(2, *s1);
  auto s3 =
      Datatype::structType(std::vector<std::int64_t>{1, 1}, std::vector<std::int64_t>{0, 8}, di);
  EXPECT_TRUE(signaturesMatch(*s1, 1000, *s2, 500));
  EXPECT_FALSE(signaturesMatch(*s1, 1000, *s3, 1000));
  // Huge counts cost no more than one period: (int, double) x 10^12 elements.
  const std::size_t huge = 1000000000000ULL;
  EXPECT_TRUE(signaturesMatch(*s1, 2 * huge, *s2, huge));
  EXPECT_FALSE(signaturesMatch(*s1, 2 * huge, *s3, 2 * huge));
  // Equal first elements, different later ones: (int, double, int) against (int, int, double),
  // and a period that only differs in its second element.
  const std::array<const Datatype*, 3> idi{&P(MPI_INT), &P(MPI_DOUBLE), &P(MPI_INT)};
  const std::array<const Datatype*, 3> iid{&P(MPI_INT), &P(MPI_INT), &P(MPI_DOUBLE)};
  auto a = Datatype::structType(std::vector<std::int64_t>{1, 1, 1},
                                std::vector<std::int64_t>{0, 8, 16}, idi);
  auto b = Datatype::structType(std::vector<std::int64_t>{1, 1, 1},
                                std::vector<std::int64_t>{0, 4, 8}, iid);
  EXPECT_FALSE(signaturesMatch(*a, 7, *b, 7));
  auto a2 = Datatype::contiguous(2, *a);
  auto b2 = Datatype::contiguous(2, *b);
  EXPECT_FALSE(signaturesMatch(*a2, huge, *b2, huge));
  const std::array<const Datatype*, 2> ab{a.get(), b.get()};
  auto ab1 =
      Datatype::structType(std::vector<std::int64_t>{1, 1}, std::vector<std::int64_t>{0, 100}, ab);
  auto aa1 = Datatype::contiguous(2, *a);
  EXPECT_FALSE(signaturesMatch(*ab1, 3, *aa1, 3));
  EXPECT_TRUE(signaturesMatch(*aa1, 3, *a, 6));
  // MPI_PACKED matches any signature of the same size; MPI_BYTE only bytes.
  EXPECT_TRUE(signaturesMatch(P(MPI_PACKED), 12, *s1, 1));
  EXPECT_FALSE(signaturesMatch(P(MPI_BYTE), 12, *s1, 1));
}

TEST(DatatypeEngine, PackTruncatesAndNeedsCommit) {
  auto v = Datatype::vector(2, 1, 2, P(MPI_INT));
  int in[4] = {1, 2, 3, 4};
  std::byte out[8];
  expectError(kErrType, [&] { pack(in, 1, *v, out, sizeof out); });
  v->commit();
  expectError(kErrTruncate, [&] { pack(in, 2, *v, out, sizeof out); });
  pack(in, 1, *v, out, sizeof out);
  int got[2];
  std::memcpy(got, out, sizeof got);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 3);
  int back[4] = {0, 0, 0, 0};
  expectError(kErrTruncate, [&] { unpack(out, 4, back, 1, *v); });
  EXPECT_EQ(back[0], 0);  // nothing written
  unpack(out, 8, back, 1, *v);
  EXPECT_EQ(back[2], 3);
}

TEST(DatatypeEngine, ElementsAndCounts) {
  const std::array<const Datatype*, 2> id{&P(MPI_INT), &P(MPI_DOUBLE)};
  auto s = Datatype::structType(std::vector<std::int64_t>{2, 1}, std::vector<std::int64_t>{0, 8},
                                id);  // int, int, double: 16 bytes of data
  std::uint64_t n = 0;
  EXPECT_TRUE(elementsIn(*s, 32, n));
  EXPECT_EQ(n, 6U);
  EXPECT_TRUE(elementsIn(*s, 16 + 4, n));
  EXPECT_EQ(n, 4U);
  EXPECT_FALSE(elementsIn(*s, 16 + 10, n));  // ends inside the double
  EXPECT_EQ(bytesOfElements(*s, 4), 20U);
  EXPECT_EQ(bytesOfElements(*s, 6), 32U);
}

// ---- random type trees -----------------------------------------------------------------------

struct Gen {
  std::mt19937 rng;
  std::vector<Ptr> keep;  // engine types built so far (the tree holds them anyway)
  explicit Gen(unsigned seed) : rng(seed) {}

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  /// A random type of depth <= depth, with its reference; `what` describes it.
  std::pair<const Datatype*, Ref> make(int depth, std::string& what) {
    if (depth == 0 || pick(0, 7) == 0) {
      static const int kBasics[] = {MPI_CHAR,   MPI_SHORT,      MPI_INT,
                                    MPI_DOUBLE, MPI_DOUBLE_INT, MPI_FLOAT};
      const int id = kBasics[pick(0, 5)];
      what += P(id).name();
      return {&P(id), refBasic(id)};
    }
    const int kind = pick(0, 10);
    std::string inner;
    auto [c, rc] = make(depth - 1, inner);
    Ptr t;
    Ref r;
    const std::int64_t e = rc.extent();
    switch (kind) {
      case 0: {
        const int n = pick(0, 3);
        t = Datatype::contiguous(n, *c);
        r = refContiguous(n, rc);
        what += "contiguous(" + std::to_string(n);
        break;
      }
      case 1: {
        const int n = pick(0, 3), bl = pick(0, 3), st = pick(-4, 4);
        t = Datatype::vector(n, bl, st, *c);
        r = refHvector(n, bl, st * e, rc);
        what += "vector(" + std::to_string(n) + "," + std::to_string(bl) + "," + std::to_string(st);
        break;
      }
      case 2: {
        const int n = pick(1, 3), bl = pick(1, 2), st = pick(-40, 40);
        t = Datatype::hvector(n, bl, st, *c);
        r = refHvector(n, bl, st, rc);
        what +=
            "hvector(" + std::to_string(n) + "," + std::to_string(bl) + "," + std::to_string(st);
        break;
      }
      case 3:
      case 4: {
        const int n = pick(0, 3);
        std::vector<std::int64_t> bl, ds, bytes;
        for (int i = 0; i < n; ++i) {
          bl.push_back(pick(0, 3));
          ds.push_back(pick(-5, 8));
          bytes.push_back(ds.back() * e);
        }
        if (kind == 3) {
          t = Datatype::indexed(bl, ds, *c);
          r = refHindexed(bl, bytes, rc);
          what += "indexed(" + std::to_string(n);
        } else {
          for (auto& d : ds) d = d * 3 + pick(0, 2);
          t = Datatype::hindexed(bl, ds, *c);
          r = refHindexed(bl, ds, rc);
          what += "hindexed(" + std::to_string(n);
        }
        break;
      }
      case 5:
      case 6: {
        const int n = pick(1, 3);
        const int bl = pick(0, 2);
        std::vector<std::int64_t> ds, bytes;
        for (int i = 0; i < n; ++i) {
          ds.push_back(pick(-4, 6));
          bytes.push_back(ds.back() * e);
        }
        if (kind == 5) {
          t = Datatype::indexedBlock(bl, ds, *c);
          r = refHindexed(std::vector<std::int64_t>(ds.size(), bl), bytes, rc);
          what += "indexed_block(" + std::to_string(n);
        } else {
          t = Datatype::hindexedBlock(bl, bytes, *c);
          r = refHindexed(std::vector<std::int64_t>(ds.size(), bl), bytes, rc);
          what += "hindexed_block(" + std::to_string(n);
        }
        break;
      }
      case 7: {
        // A struct of this child, another random one, and sometimes a marker.
        std::string other;
        auto [c2, rc2] = make(depth - 1, other);
        std::vector<const Datatype*> ts{c, c2};
        std::vector<Ref> refs{rc, rc2};
        if (pick(0, 2) == 0) {
          const int m = pick(0, 1) == 0 ? MPI_LB : MPI_UB;
          ts.push_back(&P(m));
          refs.push_back(refBasic(m));
          inner += m == MPI_LB ? ",LB" : ",UB";
        }
        std::vector<std::int64_t> bl, ds;
        std::vector<const Ref*> rp;
        for (std::size_t i = 0; i < ts.size(); ++i) {
          bl.push_back(pick(0, 2));
          ds.push_back(pick(-24, 48));
          rp.push_back(&refs[i]);
        }
        t = Datatype::structType(bl, ds, ts);
        r = refStruct(bl, ds, rp);
        what += "struct(" + other;
        break;
      }
      case 8: {
        const int lb = pick(-16, 16), ext = pick(0, 32);
        t = Datatype::resized(lb, ext, *c);
        r = refResized(lb, ext, rc);
        what += "resized(" + std::to_string(lb) + "," + std::to_string(ext);
        break;
      }
      case 9: {
        t = Datatype::dup(*c);
        r = rc;
        what += "dup(";
        break;
      }
      default: {
        const int nd = pick(1, 2);
        std::vector<std::int64_t> sz, sub, st;
        for (int i = 0; i < nd; ++i) {
          sz.push_back(pick(1, 4));
          sub.push_back(pick(1, static_cast<int>(sz.back())));
          st.push_back(pick(0, static_cast<int>(sz.back() - sub.back())));
        }
        const int order = pick(0, 1) == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        t = Datatype::subarray(sz, sub, st, order, *c);
        r = refSubarray(sz, sub, st, order, rc);
        what += "subarray(" + std::to_string(nd);
        break;
      }
    }
    what += ", " + inner + ")";
    keep.push_back(t);
    return {t.get(), r};
  }
};

TEST(DatatypeEngine, RandomTreesAgainstTheReference) {
  int nontrivial = 0;  // the generator must really make fragmented types
  for (unsigned seed = 1; seed <= 1000; ++seed) {
    Gen g(seed);
    std::string what;
    auto [t, r] = g.make(1 + static_cast<int>(seed % 4), what);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + what);
    auto* mut = const_cast<Datatype*>(t);
    if (!t->isPredefined()) mut->commit();
    expectSame(*t, r, what);
    if (HasFatalFailure()) return;
    nontrivial += detail::segments(*t, 2).size() > 2 ? 1 : 0;
    // Signatures: the type against a contiguous copy of itself, and against another random type
    // by the reference's verdict.
    auto twice = Datatype::contiguous(2, *t);
    EXPECT_TRUE(signaturesMatch(*t, 4, *twice, 2));
    std::string w2;
    auto [u, ru] = g.make(2, w2);
    for (std::size_t a = 1; a <= 2; ++a) {
      for (std::size_t b = 1; b <= 2; ++b) {
        EXPECT_EQ(signaturesMatch(*t, a, *u, b), r.kinds(a) == ru.kinds(b))
            << "against " << w2 << " counts " << a << ", " << b;
      }
    }
  }
  EXPECT_GT(nontrivial, 300);
}

}  // namespace
}  // namespace onesided
