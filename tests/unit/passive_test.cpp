// SPDX-License-Identifier: BSD-3-Clause
// Passive target (lock / unlock / lock_all / flush) and the accumulate family with ranks as
// threads, over every transport of this build. Results are compared with serial computations.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Passive : public ::testing::TestWithParam<Param> {};

const Datatype& type(int id) { return *Datatype::predefined(id); }

// Exclusive locks exclude each other: a read-modify-write of a counter by get + put under an
// exclusive lock loses no increment.
TEST_P(Passive, ExclusiveLocksSerialiseReadModifyWrite) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 30;
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 2 * sizeof(std::int64_t), sizeof(std::int64_t));
    std::memset(win->base(), 0, 16);
    ctx.world().barrier();
    for (int i = 0; i < kRounds; ++i) {
      const int target = i % n;
      win->lock(LockType::kExclusive, target);
      std::int64_t v[2] = {};
      win->get(std::span<std::int64_t>(v, 2), target, 0);
      win->flush(target);
      ASSERT_EQ(v[0], v[1]) << "a reader saw a half-done update";
      v[0] += 1;
      v[1] += 1;
      win->put(std::span<const std::int64_t>(&v[0], 1), target, 0);
      win->flush(target);
      win->put(std::span<const std::int64_t>(&v[1], 1), target, 1);
      win->unlock(target);
    }
    ctx.world().barrier();
    const auto* mine = static_cast<const std::int64_t*>(win->base());
    std::int64_t expected = 0;
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < kRounds; ++i) expected += i % n == ctx.rank() ? 1 : 0;
    }
    EXPECT_EQ(mine[0], expected);
    EXPECT_EQ(mine[1], expected);
    win->free();
  });
}

// Shared locks and lock_all readers never see an exclusive writer's half-done update.
TEST_P(Passive, SharedReadersAndExclusiveWriters) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 2 * sizeof(std::int64_t), sizeof(std::int64_t));
    std::memset(win->base(), 0, 16);
    ctx.world().barrier();
    const int me = ctx.rank();
    for (int i = 0; i < 20; ++i) {
      const int target = (me + i) % n;
      if ((me + i) % 3 == 0) {
        win->lock(LockType::kExclusive, target);
        const std::int64_t v = i + 1000 * me;
        win->put(std::span<const std::int64_t>(&v, 1), target, 0);
        win->flush(target);
        win->put(std::span<const std::int64_t>(&v, 1), target, 1);
        win->unlock(target);
      } else {
        const bool all = (me + i) % 3 == 1;
        if (all) {
          win->lockAll();
        } else {
          win->lock(LockType::kShared, target);
        }
        std::int64_t v[2] = {};
        win->get(std::span<std::int64_t>(v, 2), target, 0);
        if (all) {
          win->flushAll();
          win->unlockAll();
        } else {
          win->unlock(target);
        }
        ASSERT_EQ(v[0], v[1]) << "read under a shared lock saw a torn update";
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// Fetch-and-add from every rank: no increment lost, no value fetched twice. int64 (atomics)
// and int32 / double (read-modify-write under the accumulate lock).
TEST_P(Passive, FetchAndOpCountsExactly) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 25;
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 32, 1);
    std::memset(win->base(), 0, 32);
    ctx.world().barrier();
    win->lockAll();
    std::int64_t last64 = -1;
    int last32 = -1;
    double lastD = -1;
    for (int i = 0; i < kRounds; ++i) {
      const std::int64_t one64 = 1;
      std::int64_t got64 = -1;
      win->fetchAndOp(&one64, &got64, type(MPI_INT64_T), 0, 0, Op::kSum);
      ASSERT_GT(got64, last64);
      last64 = got64;
      const int one = 1;
      int got32 = -1;
      win->fetchAndOp(&one, &got32, type(MPI_INT), 0, 8, Op::kSum);
      ASSERT_GT(got32, last32);
      last32 = got32;
      const double oneD = 1;
      double gotD = -1;
      win->fetchAndOp(&oneD, &gotD, type(MPI_DOUBLE), 0, 16, Op::kSum);
      ASSERT_GT(gotD, lastD);
      lastD = gotD;
    }
    win->unlockAll();
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      std::int64_t v64 = 0;
      int v32 = 0;
      double vd = 0;
      std::memcpy(&v64, win->base(), 8);
      std::memcpy(&v32, static_cast<std::byte*>(win->base()) + 8, 4);
      std::memcpy(&vd, static_cast<std::byte*>(win->base()) + 16, 8);
      EXPECT_EQ(v64, n * kRounds);
      EXPECT_EQ(v32, n * kRounds);
      EXPECT_EQ(vd, n * kRounds);
    }
    ctx.world().barrier();  // rank 0's plain reads above end before anybody's next atomic
    // NO_OP reads atomically (a fetch-add of 0: a write, as far as the memory model goes).
    win->lock(LockType::kShared, 0);
    std::int64_t seen = -1;
    win->fetchAndOp(nullptr, &seen, type(MPI_INT64_T), 0, 0, Op::kNoOp);
    EXPECT_EQ(seen, n * kRounds);
    win->unlock(0);
    ctx.world().barrier();
    win->free();
  });
}

// Compare-and-swap: of all ranks racing to swap 0 -> rank + 1, exactly one wins.
TEST_P(Passive, CompareAndSwapHasOneWinner) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 16, 1);
    std::memset(win->base(), 0, 16);
    auto results = Window::allocate(ctx.world(), 2 * n * sizeof(int), sizeof(int));
    ctx.world().barrier();
    win->lockAll();
    const std::int64_t mine64 = ctx.rank() + 1;
    const std::int64_t zero64 = 0;
    std::int64_t old64 = -1;
    win->compareAndSwap(&mine64, &zero64, &old64, type(MPI_INT64_T), 0, 0);
    const int mine32 = ctx.rank() + 1;
    const int zero32 = 0;
    int old32 = -1;
    win->compareAndSwap(&mine32, &zero32, &old32, type(MPI_INT), 0, 8);
    win->unlockAll();
    // Everybody reports whether it won.
    results->fence();
    const int won[2] = {old64 == 0 ? 1 : 0, old32 == 0 ? 1 : 0};
    results->put(std::span<const int>(won, 2), 0, 2 * ctx.rank());
    results->fence();
    if (ctx.rank() == 0) {
      const auto* w = static_cast<const int*>(results->base());
      int winners64 = 0;
      int winners32 = 0;
      for (int r = 0; r < n; ++r) {
        winners64 += w[2 * r];
        winners32 += w[2 * r + 1];
      }
      EXPECT_EQ(winners64, 1);
      EXPECT_EQ(winners32, 1);
      std::int64_t v64 = 0;
      int v32 = 0;
      std::memcpy(&v64, win->base(), 8);
      std::memcpy(&v32, static_cast<std::byte*>(win->base()) + 8, 4);
      EXPECT_GE(v64, 1);
      EXPECT_LE(v64, n);
      EXPECT_GE(v32, 1);
      EXPECT_LE(v32, n);
    }
    results->fence(kModeNosucceed);
    results->free();
    win->free();
  });
}

/// Scalars compare bitwise; the (value, index) pairs field by field (not their padding).
template <class T>
bool same(const T& a, const T& b) {
  if constexpr (requires {
                  a.v;
                  a.i;
                }) {
    return a.v == b.v && a.i == b.i;
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

/// Every rank accumulates its values into every element of rank 0's window with `op`; the
/// result is compared with the serial fold of the initial values and every rank's operands
/// (the ops are commutative and associative on these inputs).
template <class T>
void accumulateAll(Context& ctx, int n, int typeId, Op op, T init, T (*value)(int rank, int i),
                   T (*fold)(T, T)) {
  constexpr int kElems = 7;
  auto win = Window::allocate(ctx.world(), kElems * sizeof(T), sizeof(T));
  auto* mine = static_cast<T*>(win->base());
  for (int i = 0; i < kElems; ++i) mine[i] = init;
  win->fence();
  std::vector<T> src(kElems);
  for (int i = 0; i < kElems; ++i) src[i] = value(ctx.rank(), i);
  win->accumulate(src.data(), kElems, type(typeId), 0, 0, kElems, type(typeId), op);
  win->fence();
  if (ctx.rank() == 0) {
    for (int i = 0; i < kElems; ++i) {
      T expect = init;
      for (int r = 0; r < n; ++r) expect = fold(expect, value(r, i));
      EXPECT_TRUE(same(mine[i], expect))
          << opName(static_cast<int>(op)) << " on " << type(typeId).name() << " element " << i;
    }
  }
  win->fence(kModeNosucceed);
  win->free();
}

TEST_P(Passive, AccumulateEveryOperation) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    using I64 = std::int64_t;
    accumulateAll<I64>(
        ctx, n, MPI_INT64_T, Op::kSum, 5, [](int r, int i) -> I64 { return r * 10 + i; },
        [](I64 a, I64 b) { return a + b; });
    accumulateAll<I64>(
        ctx, n, MPI_INT64_T, Op::kMax, -3,
        [](int r, int i) -> I64 { return (r * 7 + i * 3) % 11 - 5; },
        [](I64 a, I64 b) { return std::max(a, b); });
    accumulateAll<I64>(
        ctx, n, MPI_LONG, Op::kBxor, 0x55, [](int r, int i) -> I64 { return (r + 1) << i; },
        [](I64 a, I64 b) { return a ^ b; });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kSum, 1, [](int r, int i) { return r - i; },
        [](int a, int b) { return a + b; });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kMin, 100, [](int r, int i) { return (r * 5 + i) % 9; },
        [](int a, int b) { return std::min(a, b); });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kProd, 1, [](int r, int i) { return (r + i) % 3 + 1; },
        [](int a, int b) { return a * b; });
    accumulateAll<unsigned>(
        ctx, n, MPI_UNSIGNED, Op::kBand, ~0U, [](int r, int i) { return ~(1U << ((r + i) % 32)); },
        [](unsigned a, unsigned b) { return a & b; });
    accumulateAll<unsigned>(
        ctx, n, MPI_UNSIGNED, Op::kBor, 0U, [](int r, int i) { return 1U << ((r * 3 + i) % 32); },
        [](unsigned a, unsigned b) { return a | b; });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kLand, 1, [](int r, int i) { return (r + i) % 5; },
        [](int a, int b) { return static_cast<int>(a && b); });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kLor, 0, [](int r, int i) { return (r * i) % 2; },
        [](int a, int b) { return static_cast<int>(a || b); });
    accumulateAll<int>(
        ctx, n, MPI_INT, Op::kLxor, 0, [](int r, int i) { return (r + i) % 2 * 7; },
        [](int a, int b) { return static_cast<int>(!a != !b); });
    accumulateAll<double>(
        ctx, n, MPI_DOUBLE, Op::kSum, 0.5, [](int r, int i) { return r * 0.25 + i; },
        [](double a, double b) { return a + b; });
    accumulateAll<double>(
        ctx, n, MPI_DOUBLE, Op::kMax, -1e9,
        [](int r, int i) { return static_cast<double>((r * 13 + i) % 7); },
        [](double a, double b) { return std::max(a, b); });
    accumulateAll<float>(
        ctx, n, MPI_FLOAT, Op::kMin, 1e9F,
        [](int r, int i) { return static_cast<float>((r * 13 + i) % 7); },
        [](float a, float b) { return std::min(a, b); });
    accumulateAll<std::uint8_t>(
        ctx, n, MPI_BYTE, Op::kBxor, 0,
        [](int r, int i) { return static_cast<std::uint8_t>(r * 31 + i); },
        [](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(a ^ b); });
    // REPLACE on a single origin (rank 0's value lands; the others replace nothing).
    struct DI {
      double v;
      int i;
    };
    accumulateAll<DI>(
        ctx, n, MPI_DOUBLE_INT, Op::kMaxloc, DI{-1, 99},
        [](int r, int i) {
          return DI{static_cast<double>((r + i) % 3), r};
        },
        [](DI a, DI b) {
          if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
          return a;
        });
    struct II {
      int v;
      int i;
    };
    accumulateAll<II>(
        ctx, n, MPI_2INT, Op::kMinloc, II{1000, 99},
        [](int r, int i) {
          return II{(r * 3 + i) % 4, r};
        },
        [](II a, II b) {
          if (b.v < a.v || (b.v == a.v && b.i < a.i)) return b;
          return a;
        });
  });
}

// Get_accumulate returns the values before the update, element by element.
TEST_P(Passive, GetAccumulateReturnsOldValues) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 4 * sizeof(double) + 4 * sizeof(std::int64_t), 1);
    auto* d = static_cast<double*>(win->base());
    auto* l = reinterpret_cast<std::int64_t*>(d + 4);
    for (int i = 0; i < 4; ++i) {
      d[i] = 100.0 * ctx.rank() + i;
      l[i] = 100 * ctx.rank() + i;
    }
    ctx.world().barrier();
    const int target = (ctx.rank() + 1) % n;
    win->lock(LockType::kExclusive, target);
    const double addD[4] = {1, 2, 3, 4};
    double oldD[4] = {};
    win->getAccumulate(addD, 4, type(MPI_DOUBLE), oldD, 4, type(MPI_DOUBLE), target, 0, 4,
                       type(MPI_DOUBLE), Op::kSum);
    const std::int64_t rep[4] = {7, 8, 9, 10};
    std::int64_t oldL[4] = {};
    win->getAccumulate(rep, 4, type(MPI_INT64_T), oldL, 4, type(MPI_INT64_T), target,
                       4 * sizeof(double), 4, type(MPI_INT64_T), Op::kReplace);
    std::int64_t now[4] = {};
    win->getAccumulate(nullptr, 0, type(MPI_INT64_T), now, 4, type(MPI_INT64_T), target,
                       4 * sizeof(double), 4, type(MPI_INT64_T), Op::kNoOp);
    win->unlock(target);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(oldD[i], 100.0 * target + i);
      EXPECT_EQ(oldL[i], 100 * target + i);
      EXPECT_EQ(now[i], rep[i]);
    }
    ctx.world().barrier();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d[i], 100.0 * ctx.rank() + i + addD[i]);
    win->free();
  });
}

// Accumulate with derived types on both sides (ARMCI-MPI's strided accumulate): every rank adds
// a column of its contiguous origin into column `rank` of an 8 x 8 matrix of doubles on every
// target, and gets the old column back through a vector type with another stride.
TEST_P(Passive, AccumulateDerivedTypes) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    constexpr int kDim = 8;
    auto win = Window::allocate(ctx.world(), kDim * kDim * sizeof(double), sizeof(double));
    auto* m = static_cast<double*>(win->base());
    for (int i = 0; i < kDim * kDim; ++i) m[i] = i;
    auto column = Datatype::vector(kDim, 1, kDim, type(MPI_DOUBLE));  // one column
    column->commit();
    auto every2 = Datatype::vector(kDim, 1, 2, type(MPI_DOUBLE));  // every other double
    every2->commit();
    ctx.world().barrier();
    win->lockAll();
    const int col = ctx.rank() % kDim;
    std::vector<double> add(kDim);
    for (int i = 0; i < kDim; ++i) add[i] = 100.0 * (ctx.rank() + 1) + i;
    for (int t = 0; t < n; ++t) {
      win->accumulate(add.data(), kDim, type(MPI_DOUBLE), t, col, 1, *column, Op::kSum);
    }
    win->flushAll();
    win->unlockAll();
    ctx.world().barrier();
    for (int r = 0; r < kDim; ++r) {
      for (int c = 0; c < kDim; ++c) {
        double want = r * kDim + c;
        for (int o = 0; o < n; ++o) {
          if (o % kDim == c) want += 100.0 * (o + 1) + r;
        }
        ASSERT_EQ(m[r * kDim + c], want) << "row " << r << " column " << c;
      }
    }
    ctx.world().barrier();
    // Get_accumulate (REPLACE) of column 0 into every other double of the result.
    win->lock(LockType::kExclusive, 0);
    std::vector<double> old(2 * kDim, -1);
    std::vector<double> zeros(kDim, 0.0);
    win->getAccumulate(zeros.data(), kDim, type(MPI_DOUBLE), old.data(), 1, *every2, 0, 0, 1,
                       *column, Op::kReplace);
    win->unlock(0);
    if (n == 1) {
      for (int r = 0; r < kDim; ++r) {
        EXPECT_EQ(old[2 * r], r * kDim + 100.0 + r) << "row " << r;
        EXPECT_EQ(old[2 * r + 1], -1) << "the hole between the result's elements was written";
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// Synchronisation and argument errors: the right class, nothing changed.
TEST_P(Passive, ErrorsAreClassifiedAndTouchNothing) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 64, 1);
    std::memset(win->base(), 0, 64);
    ctx.world().barrier();
    const int other = (ctx.rank() + 1) % n;
    std::int64_t v = 42;
    std::int64_t r = 0;
    expectError(kErrRmaSync, [&] { win->unlock(other); });
    expectError(kErrRmaSync, [&] { win->flush(other); });
    expectError(kErrRmaSync, [&] { win->flushAll(); });
    expectError(kErrRmaSync, [&] { win->unlockAll(); });
    expectError(kErrLocktype, [&] { win->lock(static_cast<LockType>(1), other); });
    expectError(kErrRank, [&] { win->lock(LockType::kShared, n); });
    expectError(kErrAssert, [&] { win->lock(LockType::kShared, other, kModeNoput); });
    win->lock(LockType::kShared, other);
    expectError(kErrRmaSync, [&] { win->lock(LockType::kShared, other); });
    expectError(kErrRmaSync, [&] { win->lockAll(); });
    expectError(kErrRmaSync, [&] { win->fence(); });
    expectError(kErrRmaSync, [&] { win->free(); });
    if (n > 2) {
      const int notLocked = (ctx.rank() + 2) % n;
      expectError(kErrRmaSync,
                  [&] { win->put(&v, 1, type(MPI_INT64_T), notLocked, 0, 1, type(MPI_INT64_T)); });
      expectError(kErrRmaSync, [&] { win->flush(notLocked); });
      expectError(kErrRmaSync,
                  [&] { win->fetchAndOp(&v, &r, type(MPI_INT64_T), notLocked, 0, Op::kSum); });
      expectError(kErrRmaSync,
                  [&] { win->compareAndSwap(&v, &v, &r, type(MPI_INT64_T), notLocked, 0); });
    }
    expectError(kErrBuffer,
                [&] { win->fetchAndOp(&v, nullptr, type(MPI_INT64_T), other, 0, Op::kSum); });
    expectError(kErrBuffer,
                [&] { win->fetchAndOp(nullptr, &r, type(MPI_INT64_T), other, 0, Op::kSum); });
    expectError(kErrDisp, [&] { win->fetchAndOp(&v, &r, type(MPI_INT64_T), other, -8, Op::kSum); });
    expectError(kErrOp, [&] {
      win->accumulate(&v, 1, type(MPI_INT64_T), other, 0, 1, type(MPI_INT64_T), Op::kNoOp);
    });
    expectError(kErrOp, [&] {
      win->accumulate(&v, 1, type(MPI_DOUBLE), other, 0, 1, type(MPI_DOUBLE), Op::kBand);
    });
    expectError(kErrOp, [&] {
      win->accumulate(&v, 1, type(MPI_INT), other, 0, 1, type(MPI_INT), Op::kMaxloc);
    });
    expectError(kErrOp, [&] {
      win->accumulate(&v, 1, type(MPI_INT), other, 0, 1, type(MPI_INT), static_cast<Op>(99));
    });
    expectError(kErrType, [&] {
      win->accumulate(&v, 2, type(MPI_INT), other, 0, 1, type(MPI_INT64_T), Op::kSum);
    });
    expectError(kErrType, [&] { win->compareAndSwap(&v, &v, &r, type(MPI_DOUBLE), other, 0); });
    expectError(kErrRmaRange,
                [&] { win->fetchAndOp(&v, &r, type(MPI_INT64_T), other, 60, Op::kSum); });
    expectError(kErrRmaRange,
                [&] { win->compareAndSwap(&v, &v, &r, type(MPI_INT64_T), other, 64); });
    expectError(kErrBuffer, [&] {
      win->getAccumulate(&v, 1, type(MPI_INT64_T), nullptr, 1, type(MPI_INT64_T), other, 0, 1,
                         type(MPI_INT64_T), Op::kSum);
    });
    win->unlock(other);
    // MPI_PROC_NULL: a valid lock target; operations to it do nothing.
    win->lock(LockType::kExclusive, kProcNull);
    win->accumulate(&v, 1, type(MPI_INT64_T), kProcNull, 0, 1, type(MPI_INT64_T), Op::kSum);
    win->unlock(kProcNull);
    ctx.world().barrier();
    const auto* mine = static_cast<const std::byte*>(win->base());
    EXPECT_TRUE(std::all_of(mine, mine + 64, [](std::byte b) { return b == std::byte{0}; }));
    ctx.world().barrier();
    win->free();
  });
}

// MPI_MODE_NOCHECK: nothing is sent, the epoch still works.
TEST_P(Passive, NocheckLocks) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 8 * n, 8);
    std::memset(win->base(), 0, 8 * static_cast<std::size_t>(n));
    ctx.world().barrier();
    const std::int64_t v = ctx.rank() + 1;
    win->lockAll(kModeNocheck);
    for (int t = 0; t < n; ++t) win->put(std::span<const std::int64_t>(&v, 1), t, ctx.rank());
    win->unlockAll();
    ctx.world().barrier();
    const auto* mine = static_cast<const std::int64_t*>(win->base());
    for (int r = 0; r < n; ++r) EXPECT_EQ(mine[r], r + 1);
    ctx.world().barrier();
    win->free();
  });
}

// What each synchronisation costs in atomics on control words, at every size: lock_all and
// unlock_all one each (the counter at rank 0, not one per rank), a shared lock one each way, an
// exclusive lock two each way (rank 0's counter and the target's word), flushes none, NOCHECK
// none. Until the window's first lock_all an exclusive lock is one atomic each way (the target's
// word alone), and that first lock_all makes more, once: on a CPU-atomic window two (its wait
// for such locks), through the transport two and one per rank (it marks every lock word). Ranks
// take turns so that no lock is retried; 8 ranks too, for "the same at 8 as at 2".
TEST_P(Passive, SynchronisationCostsTheSameAtAnySize) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  for (const int ranks : {n, 2 * n}) {
    spawn(ranks, transport, [&, ranks = ranks](Context& ctx) {
      auto win = Window::allocate(ctx.world(), 8, 8);
      std::memset(win->base(), 0, 8);
      const std::int64_t v = 1;
      const int last = ranks - 1;
      auto ops = [&] { return win->controlOperations(); };
      for (int turn = 0; turn < ranks; ++turn) {
        ctx.world().barrier();
        if (turn != ctx.rank()) continue;
        const std::uint64_t before = ops();
        win->lock(LockType::kExclusive, last);
        win->put(std::span<const std::int64_t>(&v, 1), last, 0);
        win->unlock(last);
        EXPECT_EQ(ops() - before, 2U) << "exclusive lock, no lock_all yet";
      }
      for (int turn = 0; turn < ranks; ++turn) {
        ctx.world().barrier();
        if (turn != ctx.rank()) continue;
        std::uint64_t before = ops();
        win->lockAll();
        for (int t = 0; t < ranks; ++t) win->put(std::span<const std::int64_t>(&v, 1), t, 0);
        win->flushAll();
        win->unlockAll();
        const std::uint64_t once =
            turn != 0 ? 0U : (win->cpuAtomics() ? 2U : 2U + static_cast<std::uint64_t>(ranks));
        EXPECT_EQ(ops() - before, 2U + once)
            << "lock_all + puts to " << ranks << " ranks + unlock_all";
        before = ops();
        win->lock(LockType::kShared, last);
        win->flush(last);
        win->unlock(last);
        EXPECT_EQ(ops() - before, 2U) << "shared lock";
        before = ops();
        win->lock(LockType::kExclusive, last);
        win->unlock(last);
        EXPECT_EQ(ops() - before, 4U) << "exclusive lock";
        before = ops();
        win->lockAll(kModeNocheck);
        win->unlockAll();
        win->lock(LockType::kExclusive, last, kModeNocheck);
        win->unlock(last);
        EXPECT_EQ(ops() - before, 0U) << "MPI_MODE_NOCHECK";
      }
      ctx.world().barrier();
      win->free();
    });
  }
}

// One round of "a held lock makes the next locker wait": rank 1 takes a lock (hold), and 30 ms
// after every rank knows it holds, records `round + 1` in `released` and gives it back (drop);
// meanwhile rank 0 takes its own lock (take), which must not return before that, and gives it
// back (give). Every rank calls it.
template <class Hold, class Drop, class Take, class Give>
void heldThenTaken(Context& ctx, std::atomic<int>& released, int round, Hold hold, Drop drop,
                   Take take, Give give) {
  ctx.world().barrier();
  if (ctx.rank() == 1) {
    hold();
    ctx.world().barrier();  // held: rank 0 may try now
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    released.store(round + 1);
    drop();
  } else {
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      take();
      EXPECT_EQ(released.load(), round + 1) << "round " << round << ": taken while held";
      give();
    }
  }
}

// The first lock_all of a window waits for an exclusive lock taken before it (on CPU-atomic
// windows such a lock does not announce itself at rank 0): fresh windows, so each round is a
// first lock_all.
TEST_P(Passive, FirstLockAllWaitsForAnEarlierExclusiveLock) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs a holder and a locker";
  std::atomic<int> released{0};
  spawn(n, transport, [&](Context& ctx) {
    const int target = ctx.size() - 1;
    for (int round = 0; round < 2; ++round) {
      auto win = Window::allocate(ctx.world(), 8, 8);
      const int held = round == 0 ? target : 0;
      heldThenTaken(
          ctx, released, round, [&] { win->lock(LockType::kExclusive, held); },
          [&] { win->unlock(held); }, [&] { win->lockAll(); }, [&] { win->unlockAll(); });
      ctx.world().barrier();
      win->free();
    }
  });
}

// Exclusive writers and lock_all readers race from a window's creation on, so that the first
// lock_all meets exclusive locks in every state (before, during and after it begins): a reader
// never sees a pair half written under an exclusive lock.
TEST_P(Passive, ExclusiveLocksExcludeLockAllFromTheStart) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs a writer and a reader";
  constexpr int kWindows = 10;
  constexpr int kRounds = 20;
  spawn(n, transport, [&, n = n](Context& ctx) {
    for (int w = 0; w < kWindows; ++w) {
      auto win = Window::allocate(ctx.world(), 2 * sizeof(std::int64_t), sizeof(std::int64_t));
      std::memset(win->base(), 0, 16);
      const int target = w % n;
      ctx.world().barrier();
      for (int i = 0; i < kRounds; ++i) {
        if (ctx.rank() % 2 == 0) {
          const std::int64_t v = (ctx.rank() + 1) * 1000 + i;
          win->lock(LockType::kExclusive, target);
          win->put(std::span<const std::int64_t>(&v, 1), target, 0);
          win->flush(target);
          std::this_thread::yield();
          win->put(std::span<const std::int64_t>(&v, 1), target, 1);
          win->unlock(target);
        } else {
          std::int64_t pair[2] = {-1, -2};
          win->lockAll();
          win->get(std::span<std::int64_t>(pair, 2), target, 0);
          win->flushAll();
          win->unlockAll();
          EXPECT_EQ(pair[0], pair[1]) << "window " << w << " round " << i << ": half a write";
        }
      }
      ctx.world().barrier();
      win->free();
    }
  });
}

// A lock that is held makes the next one wait, whichever path each takes (the uncontended
// case is a few CPU atomics on one-node windows; a held lock word sends the locker down the
// general path, which must wait for it): an exclusive lock waits for a lock_all holder, a shared
// lock for an exclusive holder, an exclusive lock for a shared holder.
TEST_P(Passive, HeldLocksMakeTheNextLockerWait) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs a holder and a locker";
  std::atomic<int> released{0};
  spawn(n, transport, [&](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 8, 8);
    const int target = ctx.size() - 1;
    // Round 0: rank 1 holds lock_all, rank 0 locks `target` exclusively. Round 1: rank 1 holds
    // `target` exclusively, rank 0 locks it shared. Round 2: rank 1 holds it shared, rank 0
    // locks it exclusively.
    for (int round = 0; round < 3; ++round) {
      heldThenTaken(
          ctx, released, round,
          [&] {
            if (round == 0) {
              win->lockAll();
            } else {
              win->lock(round == 1 ? LockType::kExclusive : LockType::kShared, target);
            }
          },
          [&] {
            if (round == 0) {
              win->unlockAll();
            } else {
              win->unlock(target);
            }
          },
          [&] { win->lock(round == 1 ? LockType::kShared : LockType::kExclusive, target); },
          [&] { win->unlock(target); });
    }
    ctx.world().barrier();
    win->free();
  });
}

// An allocate window's control words (lock word, accumulate lock, fence slots) follow its memory
// in one registration: a put one byte past the end of a 5-byte window fails at the origin, and
// the locks and fences that use those words go on working.
TEST_P(Passive, ControlWordsAfterAnAllocateWindowAreOutOfReach) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 5, 1);
    auto* mine = static_cast<std::uint8_t*>(win->base());
    std::memset(mine, 0, 5);
    ctx.world().barrier();
    const std::uint8_t v[2] = {0xff, 0xff};
    const int right = (ctx.rank() + 1) % n;
    for (int round = 0; round < 3; ++round) {
      win->lock(LockType::kExclusive, right);
      expectError(kErrRmaRange, [&] { win->put(std::span<const std::uint8_t>(v, 2), right, 4); });
      expectError(kErrRmaRange, [&] { win->put(std::span<const std::uint8_t>(v, 1), right, 5); });
      win->put(std::span<const std::uint8_t>(v, 1), right, 4);
      win->unlock(right);
      win->fence();
      win->fence();
    }
    ctx.world().barrier();
    EXPECT_EQ(mine[4], 0xff);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(mine[i], 0) << "byte " << i;
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Passive,
                         ::testing::Combine(::testing::ValuesIn(transportsWithAm()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& p) {
                           return paramName(std::get<0>(p.param)) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

}  // namespace
}  // namespace onesided::test
