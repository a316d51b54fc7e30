// SPDX-License-Identifier: BSD-3-Clause
// Put and get with derived datatypes on both sides, ranks as threads, over every transport of
// this build. self_deferred takes the transport path (no load / store, completion at flush), so
// the cursor walk, the packed bounce-buffer transfers and the deferred unpacks of gets run there.
#include <cstring>
#include <numeric>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

const Datatype& dbl() { return datatypeOf<double>(); }

std::shared_ptr<Datatype> committed(std::shared_ptr<Datatype> t) {
  t->commit();
  return t;
}

double value(int rank, std::size_t i) { return rank * 1e6 + static_cast<double>(i) + 0.25; }

using Param = std::tuple<std::string, int, bool /*create*/>;
class DerivedRma : public ::testing::TestWithParam<Param> {};

std::unique_ptr<Window> makeWindow(Comm& c, bool create, std::size_t bytes,
                                   std::vector<double>& storage) {
  if (!create) return Window::allocate(c, static_cast<std::int64_t>(bytes), sizeof(double));
  storage.assign(bytes / sizeof(double), 0.0);
  return Window::create(c, storage.data(), static_cast<std::int64_t>(bytes), sizeof(double));
}

std::span<double> doubles(Window& w) {
  return {static_cast<double*>(w.base()), w.size() / sizeof(double)};
}

// Matrix columns (MPI_Type_vector) on both sides: every column of my matrix into the next
// column of my right neighbour's, then the left neighbour's columns back by get into
// contiguous buffers, and a transpose through a resized column type with count > 1.
TEST_P(DerivedRma, MatrixColumns) {
  auto [transport, n, create] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n, create = create](Context& ctx) {
    constexpr std::size_t kR = 64;
    constexpr std::size_t kC = 16;
    std::vector<double> storage;
    auto win = makeWindow(ctx.world(), create, kR * kC * sizeof(double), storage);
    const int me = ctx.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    auto column = committed(Datatype::vector(kR, 1, kC, dbl()));
    std::vector<double> mine(kR * kC);
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(me, i);

    win->fence();
    for (std::size_t c = 0; c < kC; ++c) {
      win->put(mine.data() + c, 1, *column, right, static_cast<std::int64_t>((c + 1) % kC), 1,
               *column);
    }
    win->fence();
    auto w = doubles(*win);
    for (std::size_t r = 0; r < kR; ++r) {
      for (std::size_t c = 0; c < kC; ++c) {
        ASSERT_EQ(w[r * kC + (c + 1) % kC], value(left, r * kC + c)) << "row " << r << " col " << c;
      }
    }
    // Columns of the left neighbour's window into contiguous buffers (target type derived).
    std::vector<double> got(kR * kC, -1.0);
    for (std::size_t c = 0; c < kC; ++c) {
      win->get(got.data() + c * kR, kR, dbl(), left, static_cast<std::int64_t>(c), 1, *column);
    }
    win->fence();
    const int leftOfLeft = (left + n - 1) % n;
    for (std::size_t c = 0; c < kC; ++c) {
      for (std::size_t r = 0; r < kR; ++r) {
        ASSERT_EQ(got[c * kR + r], value(leftOfLeft, r * kC + (c + kC - 1) % kC));
      }
    }
    // Transpose: kC x kR contiguous values into kC interleaved columns (element k of the
    // resized column type is column k: elements interleave without overlapping).
    auto col1 = committed(Datatype::resized(0, sizeof(double), *column));
    EXPECT_FALSE(col1->overlaps(kC));
    std::vector<double> rows(kR * kC);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = value(me, i) + 0.5;
    win->put(rows.data(), kR * kC, dbl(), right, 0, kC, *col1);
    win->fence();
    for (std::size_t r = 0; r < kR; ++r) {
      for (std::size_t k = 0; k < kC; ++k) {
        ASSERT_EQ(w[r * kC + k], value(left, k * kR + r) + 0.5);
      }
    }
    // And back: the right neighbour's window, contiguous, into interleaved columns here.
    std::vector<double> back(kR * kC, -1.0);
    win->get(back.data(), kC, *col1, right, 0, kR * kC, dbl());
    win->fence();
    for (std::size_t r = 0; r < kR; ++r) {
      for (std::size_t k = 0; k < kC; ++k) {
        const std::size_t i = k * kR + r;  // the target element column k, row r receives
        ASSERT_EQ(back[r * kC + k], value(me, (i % kC) * kR + i / kC) + 0.5);
      }
    }
    win->fence(kModeNosucceed);
    win->free();
  });
}

// Long strided transfers: 8-byte blocks every 16 bytes, more than the bounce buffer holds, so a
// packed put and a packed get go through it in several chunks.
TEST_P(DerivedRma, LongStridedThroughTheBounceBuffer) {
  auto [transport, n, create] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n > 4) GTEST_SKIP() << "memory: a few ranks are enough";
  spawn(n, transport, [&, n = n, create = create](Context& ctx) {
    constexpr std::size_t kN = 700000;  // 5.6 MB packed
    std::vector<double> storage;
    auto win = makeWindow(ctx.world(), create, kN * sizeof(double), storage);
    const int me = ctx.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    auto strided = committed(Datatype::vector(kN, 1, 2, dbl()));
    std::vector<double> src(2 * kN);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = value(me, i);
    win->fence();
    win->put(src.data(), 1, *strided, right, 0, kN, dbl());
    win->fence();
    auto w = doubles(*win);
    for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(w[i], value(left, 2 * i)) << i;
    // Back again into a strided origin; the odd elements stay untouched.
    std::vector<double> back(2 * kN, -1.0);
    win->get(back.data(), 1, *strided, right, 0, kN, dbl());
    win->fence();
    for (std::size_t i = 0; i < kN; ++i) {
      ASSERT_EQ(back[2 * i], value(me, 2 * i)) << i;
      ASSERT_EQ(back[2 * i + 1], -1.0) << i;
    }
    win->fence(kModeNosucceed);
    win->free();
  });
}

// A 3-D halo: the faces of a subarray on both sides, in C order, between neighbours.
TEST_P(DerivedRma, SubarrayFaces) {
  auto [transport, n, create] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n, create = create](Context& ctx) {
    const std::vector<std::int64_t> sizes{6, 7, 8};
    const std::size_t total = 6 * 7 * 8;
    std::vector<double> storage;
    auto win = makeWindow(ctx.world(), create, total * sizeof(double), storage);
    const int me = ctx.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    auto face = [&](std::int64_t axis, std::int64_t at) {
      std::vector<std::int64_t> sub = sizes;
      std::vector<std::int64_t> start{0, 0, 0};
      sub[static_cast<std::size_t>(axis)] = 1;
      start[static_cast<std::size_t>(axis)] = at;
      return committed(Datatype::subarray(sizes, sub, start, kOrderC, dbl()));
    };
    std::vector<double> a(total);
    for (std::size_t i = 0; i < total; ++i) a[i] = value(me, i);
    auto idx = [](std::size_t x, std::size_t y, std::size_t z) { return (x * 7 + y) * 8 + z; };
    auto w = doubles(*win);
    for (std::size_t i = 0; i < total; ++i) w[i] = value(me, i) + 0.5;
    win->fence();
    // My last z-plane into the right neighbour's first one (single 8-byte elements, strided),
    // then (another epoch: the planes share a line) my last x-plane (one long run) into its
    // first x-plane.
    win->put(a.data(), 1, *face(2, 7), right, 0, 1, *face(2, 0));
    win->fence();
    win->put(a.data(), 1, *face(0, 5), right, 0, 1, *face(0, 0));
    win->fence();
    for (std::size_t x = 0; x < 6; ++x) {
      for (std::size_t y = 0; y < 7; ++y) {
        if (x != 0) {
          ASSERT_EQ(w[idx(x, y, 0)], value(left, idx(x, y, 7)));
        } else {
          for (std::size_t z = 0; z < 8; ++z) {
            ASSERT_EQ(w[idx(0, y, z)], value(left, idx(5, y, z)));
          }
        }
      }
    }
    // A y-face of the neighbour into a contiguous buffer.
    std::vector<double> got(6 * 8, -1.0);
    win->get(got.data(), 6 * 8, dbl(), right, 0, 1, *face(1, 3));
    win->fence();
    for (std::size_t x = 1; x < 6; ++x) {
      for (std::size_t z = 1; z < 8; ++z) {
        ASSERT_EQ(got[x * 8 + z], value(right, idx(x, 3, z)) + 0.5) << x << " " << z;
      }
    }
    win->fence(kModeNosucceed);
    win->free();
  });
}

// Errors: each fails with its class before anything moves.
TEST_P(DerivedRma, ErrorsTouchNothing) {
  auto [transport, n, create] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n, create = create](Context& ctx) {
    std::vector<double> storage;
    auto win = makeWindow(ctx.world(), create, 32 * sizeof(double), storage);
    auto w = doubles(*win);
    std::fill(w.begin(), w.end(), 7.0);
    const int right = (ctx.rank() + 1) % n;
    std::vector<double> src(64, 1.0);
    std::vector<double> dst(64, 2.0);
    auto expectClass = [](int cls, auto&& fn) {
      try {
        fn();
        ADD_FAILURE() << "no error, expected class " << cls;
      } catch (const Error& e) {
        EXPECT_EQ(e.errorClass(), cls) << e.what();
      }
    };
    win->fence();
    auto raw = Datatype::vector(4, 1, 2, dbl());  // not committed
    expectClass(kErrType, [&] { win->put(src.data(), 1, *raw, right, 0, 4, dbl()); });
    expectClass(kErrType, [&] { win->get(dst.data(), 4, dbl(), right, 0, 1, *raw); });
    raw->commit();
    // Blocks of 2 every 1 element: the second block overlaps the first.
    auto over = committed(Datatype::vector(3, 2, 1, dbl()));
    expectClass(kErrType, [&] { win->put(src.data(), 6, dbl(), right, 0, 1, *over); });
    expectClass(kErrType, [&] { win->get(dst.data(), 1, *over, right, 0, 6, dbl()); });
    // A get from overlapping target entries is fine (it only reads them twice); in an epoch of
    // its own, since the puts below write what it reads.
    win->get(dst.data(), 6, dbl(), right, 0, 1, *over);
    win->fence();
    // Footprint: 4 columns of stride 10 reach element 31 (ok) / 41 (not), and a negative true
    // lower bound reaches below displacement 0.
    auto wide = committed(Datatype::vector(4, 1, 10, dbl()));
    win->put(src.data(), 4, dbl(), right, 1, 1, *wide);
    expectClass(kErrRmaRange, [&] { win->put(src.data(), 4, dbl(), right, 2, 1, *wide); });
    const std::int64_t one = 1;
    const std::int64_t below = -8;
    auto neg = committed(Datatype::hindexed({&one, 1}, {&below, 1}, dbl()));
    expectClass(kErrRmaRange, [&] { win->put(src.data(), 1, dbl(), right, 0, 1, *neg); });
    win->put(src.data(), 1, dbl(), right, 1, 1, *neg);  // lands on element 0
    // Signatures: 3 doubles into 4, and (double, int) into two doubles.
    expectClass(kErrType, [&] { win->put(src.data(), 3, dbl(), right, 0, 1, *raw); });
    const std::array<const Datatype*, 2> di{&dbl(), &datatypeOf<int>()};
    auto mixed = committed(
        Datatype::structType(std::vector<std::int64_t>{1, 2}, std::vector<std::int64_t>{0, 8}, di));
    expectClass(kErrType, [&] { win->put(src.data(), 1, *mixed, right, 0, 2, dbl()); });
    win->fence(kModeNosucceed);
    // Only the two accepted puts (and the get) happened.
    for (std::size_t i = 0; i < w.size(); ++i) {
      const bool written = i == 0 || i == 1 || i == 11 || i == 21 || i == 31;
      ASSERT_EQ(w[i], written ? 1.0 : 7.0) << "element " << i;
    }
    for (std::size_t i = 0; i < dst.size(); ++i) {
      ASSERT_EQ(dst[i], i < 6 ? 7.0 : 2.0) << "origin element " << i;
    }
    win->free();
  });
}

std::string name(const ::testing::TestParamInfo<Param>& p) {
  auto [t, n, create] = p.param;
  return t + "_" + std::to_string(n) + "ranks_" + (create ? "create" : "allocate");
}

INSTANTIATE_TEST_SUITE_P(All, DerivedRma,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(false, true)),
                         name);

}  // namespace
}  // namespace onesided::test
