// SPDX-License-Identifier: BSD-3-Clause
// The local message mode (Window::localMessages): MPI_Win_create windows on one node whose
// memory has partial pages, so that peers cannot load and store into all of it. Every
// accumulate and atomic then goes as a message into the target's mapped inbox, 8-byte integers
// included, and the control words take CPU atomics. Ranks as threads; results against serial
// computations; bad input gets its error class and changes nothing.
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "onesided/collectives.hpp"
#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
/// Ranks as threads reach each other's memory as processes do (the UCX transport's test
/// switch): otherwise every window is on the CPU-atomic path and the mode never shows.
class LocalMessages : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { setenv("ONESIDED_UCX_THREAD_DIRECT", "0", 1); }
  void TearDown() override { unsetenv("ONESIDED_UCX_THREAD_DIRECT"); }
};

const Datatype& type(int id) { return *Datatype::predefined(id); }

/// The largest partial-page run that goes as one message (Window::kMessageBytes).
constexpr std::size_t kMessageBytesForTest = 4096 - 32 - 16;

/// `bytes` of window memory starting 40 bytes into a page (so the window's pages are partial),
/// zeroed, with the page-aligned allocation that holds it.
struct Unaligned {
  explicit Unaligned(std::size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes + 4096) != 0) throw std::bad_alloc();
    page.reset(static_cast<std::byte*>(p));
    std::memset(p, 0, bytes + 4096);
  }
  std::byte* at() const { return page.get() + 40; }
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> page;
};

/// Whether the mode must be on: UCX over shared memory (its default here) maps every control
/// area, and with two ranks or more the window's partial pages keep it off the CPU-atomic path.
bool modeExpected(const std::string& transport, int n) {
  return transport == "ucx" && n > 1 && std::getenv("UCX_TLS") == nullptr;
}

// Fetch-and-op on 8-byte and 4-byte integers and doubles from every rank to rank 0 and to the
// last rank: every fetched value is new, the totals are exact; NO_OP and REPLACE read and swap.
TEST_P(LocalMessages, FetchAndOpCountsExactly) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 40;
  spawn(n, transport, [&, n = n](Context& ctx) {
    Unaligned mem(64);
    auto win = Window::create(ctx.world(), mem.at(), 64, 1);
    if (modeExpected(transport, n)) {
      EXPECT_TRUE(win->localMessages()) << "cpu atomics " << win->cpuAtomics();
    }
    const int last = n - 1;
    ctx.world().barrier();
    win->lockAll();
    std::int64_t prev64[2] = {-1, -1};
    int prev32 = -1;
    double prevD = -1;
    for (int i = 0; i < kRounds; ++i) {
      for (int k = 0; k < 2; ++k) {
        const std::int64_t one = 1;
        std::int64_t got = -1;
        win->fetchAndOp(&one, &got, type(MPI_INT64_T), k == 0 ? 0 : last, k == 0 ? 0 : 32,
                        Op::kSum);
        win->flush(k == 0 ? 0 : last);
        ASSERT_GT(got, prev64[k]);
        ASSERT_LT(got, n * kRounds);
        prev64[k] = got;
      }
      const int one32 = 1;
      int got32 = -1;
      win->fetchAndOp(&one32, &got32, type(MPI_INT), 0, 8, Op::kSum);
      ASSERT_GT(got32, prev32);
      prev32 = got32;
      const double oneD = 1;
      double gotD = -1;
      win->fetchAndOp(&oneD, &gotD, type(MPI_DOUBLE), 0, 16, Op::kSum);
      ASSERT_GT(gotD, prevD);
      prevD = gotD;
    }
    win->flushAll();
    std::int64_t seen = -1;
    win->fetchAndOp(nullptr, &seen, type(MPI_INT64_T), last, 32, Op::kNoOp);
    EXPECT_GE(seen, prev64[1] + 1);
    win->unlockAll();
    ctx.world().barrier();
    std::int64_t v64 = 0;
    if (ctx.rank() == last) {
      std::memcpy(&v64, mem.at() + 32, 8);
      EXPECT_EQ(v64, std::int64_t{n} * kRounds);
    }
    if (ctx.rank() == 0) {
      std::memcpy(&v64, mem.at(), 8);
      EXPECT_EQ(v64, std::int64_t{n} * kRounds);
      int v32 = 0;
      double vd = 0;
      std::memcpy(&v32, mem.at() + 8, 4);
      std::memcpy(&vd, mem.at() + 16, 8);
      EXPECT_EQ(v32, n * kRounds);
      EXPECT_EQ(vd, n * kRounds);
    }
    ctx.world().barrier();
    // REPLACE swaps in the rank's tag, one rank at a time: each sees its predecessor's.
    for (int turn = 0; turn < n; ++turn) {
      if (turn == ctx.rank()) {
        win->lock(LockType::kShared, 0);
        const std::int64_t tag = 1000 + ctx.rank();
        std::int64_t old = -1;
        win->fetchAndOp(&tag, &old, type(MPI_INT64_T), 0, 24, Op::kReplace);
        win->unlock(0);
        EXPECT_EQ(old, turn == 0 ? 0 : 1000 + turn - 1);
      }
      ctx.world().barrier();
    }
    win->free();
  });
}

// A fetch from an origin with nothing else outstanding at its target goes through the origin's
// fetch box; one behind an accumulate still in the target's inbox must not overtake it. Every
// rank, on its own element at the last rank: accumulate +1, fetch (NO_OP: must see it), fetch
// +1 (the box: must see both), all in one epoch, while the others do the same beside it.
TEST_P(LocalMessages, FetchesBehindAccumulatesSeeThem) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 200;
  spawn(n, transport, [&, n = n](Context& ctx) {
    const std::size_t bytes = 8 * static_cast<std::size_t>(n);
    Unaligned mem(bytes);
    auto win = Window::create(ctx.world(), mem.at(), bytes, 8);
    const int last = n - 1;
    const std::int64_t disp = ctx.rank();
    ctx.world().barrier();
    win->lockAll();
    const std::int64_t one = 1;
    for (int i = 0; i < kRounds; ++i) {
      win->accumulate(&one, 1, type(MPI_INT64_T), last, disp, 1, type(MPI_INT64_T), Op::kSum);
      std::int64_t got = -1;
      win->fetchAndOp(nullptr, &got, type(MPI_INT64_T), last, disp, Op::kNoOp);
      ASSERT_EQ(got, 2 * i + 1) << "round " << i << ": the fetch overtook the accumulate";
      win->fetchAndOp(&one, &got, type(MPI_INT64_T), last, disp, Op::kSum);
      ASSERT_EQ(got, 2 * i + 1) << "round " << i;
    }
    win->unlockAll();
    ctx.world().barrier();
    if (ctx.rank() == last) {
      for (int r = 0; r < n; ++r) {
        std::int64_t v = 0;
        std::memcpy(&v, mem.at() + 8 * r, 8);
        EXPECT_EQ(v, 2 * kRounds) << "rank " << r << "'s element";
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// A mutex made of compare-and-swap on the last rank's window, guarding a get + put increment of
// a pair there: no increment lost, no torn pair; 4-byte compare-and-swap has one winner.
TEST_P(LocalMessages, CompareAndSwapMutexIsExact) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 15;
  spawn(n, transport, [&, n = n](Context& ctx) {
    Unaligned mem(48);
    auto win = Window::create(ctx.world(), mem.at(), 48, 8);
    const int home = n - 1;
    ctx.world().barrier();
    for (int i = 0; i < kRounds; ++i) {
      win->lock(LockType::kShared, home);
      const std::int64_t mine = ctx.rank() + 1;
      const std::int64_t free = 0;
      std::int64_t old = -1;
      do {
        win->compareAndSwap(&mine, &free, &old, type(MPI_INT64_T), home, 0);
        win->flush(home);
      } while (old != 0);
      std::int64_t pair[2] = {-1, -1};
      win->get(std::span<std::int64_t>(pair, 2), home, 1);
      win->flush(home);
      ASSERT_EQ(pair[0], pair[1]) << "torn pair";
      ++pair[0];
      ++pair[1];
      win->put(std::span<const std::int64_t>(pair, 2), home, 1);
      win->flush(home);
      std::int64_t back = -1;
      win->compareAndSwap(&free, &mine, &back, type(MPI_INT64_T), home, 0);
      win->unlock(home);
      ASSERT_EQ(back, mine) << "the mutex was not held by this rank";
    }
    ctx.world().barrier();
    if (ctx.rank() == home) {
      std::int64_t v[3];
      std::memcpy(v, mem.at(), sizeof v);
      EXPECT_EQ(v[0], 0);
      EXPECT_EQ(v[1], std::int64_t{n} * kRounds);
      EXPECT_EQ(v[2], std::int64_t{n} * kRounds);
    }
    ctx.world().barrier();
    // 4-byte compare-and-swap at disp 4 (unit 8 bytes: byte 32): one winner.
    win->lockAll();
    const int mine32 = ctx.rank() + 1;
    const int zero = 0;
    int old32 = -1;
    win->compareAndSwap(&mine32, &zero, &old32, type(MPI_INT), 0, 4);
    win->unlockAll();
    int wins = old32 == 0 ? 1 : 0;
    coll::allreduce(ctx.world(), coll::inPlace(), &wins, 1, &type(MPI_INT), Op::kSum);
    EXPECT_EQ(wins, 1);
    ctx.world().barrier();
    win->free();
  });
}

// Accumulate and get_accumulate of doubles and 8-byte integers (a derived type on the target
// side too) from every rank into every rank: exact sums, old values returned, the bytes around
// the elements untouched.
TEST_P(LocalMessages, AccumulateIntoEveryRankIsExact) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kElems = 9;
  spawn(n, transport, [&, n = n](Context& ctx) {
    constexpr std::size_t kBytes = 3 * kElems * 8;
    Unaligned mem(kBytes + 8);
    std::memset(mem.at() + kBytes, 0x5a, 8);  // past the window
    auto win = Window::create(ctx.world(), mem.at(), kBytes, 8);
    auto every2 = Datatype::vector(kElems, 1, 2, type(MPI_INT64_T));
    every2->commit();
    win->fence();
    std::vector<double> d(kElems);
    std::vector<std::int64_t> l(kElems);
    for (int i = 0; i < kElems; ++i) {
      d[i] = 0.5 * (ctx.rank() + 1) * (i + 1);
      l[i] = std::int64_t{1000} * (ctx.rank() + 1) + i;
    }
    for (int t = 0; t < n; ++t) {
      win->accumulate(d.data(), kElems, type(MPI_DOUBLE), t, 0, kElems, type(MPI_DOUBLE), Op::kSum);
      // The integers go every second word after the doubles: words 9, 11, ... 25 of 27.
      win->accumulate(l.data(), kElems, type(MPI_INT64_T), t, kElems, 1, *every2, Op::kSum);
    }
    win->fence();
    const double ranks = n * (n + 1) / 2.0;
    for (int i = 0; i < kElems; ++i) {
      double got = 0;
      std::int64_t gotL = 0;
      std::memcpy(&got, mem.at() + 8 * i, 8);
      std::memcpy(&gotL, mem.at() + 8 * (kElems + 2 * i), 8);
      EXPECT_EQ(got, 0.5 * ranks * (i + 1)) << "double " << i;
      EXPECT_EQ(gotL, std::int64_t{1000} * n * (n + 1) / 2 + std::int64_t{n} * i) << "int " << i;
      std::int64_t gap = -1;
      std::memcpy(&gap, mem.at() + 8 * (kElems + 2 * i + 1), 8);
      EXPECT_EQ(gap, 0) << "between the integers, word " << i;
    }
    for (int k = 0; k < 8; ++k) EXPECT_EQ(mem.at()[kBytes + k], std::byte{0x5a});
    win->fence();
    // get_accumulate NO_OP reads what accumulate made, from the next rank.
    const int right = (ctx.rank() + 1) % n;
    std::vector<double> back(kElems, -1);
    win->lock(LockType::kShared, right);
    win->getAccumulate(nullptr, 0, type(MPI_DOUBLE), back.data(), kElems, type(MPI_DOUBLE), right,
                       0, kElems, type(MPI_DOUBLE), Op::kNoOp);
    win->unlock(right);
    for (int i = 0; i < kElems; ++i) EXPECT_EQ(back[i], 0.5 * ranks * (i + 1)) << i;
    win->fence(kModeNosucceed);
    win->free();
  });
}

// Puts and gets on such a window: the partial pages at its ends go as messages (up to a slot),
// the whole pages between by loads and stores, larger runs on partial pages by the transport.
// Every size, contiguous and strided, under flush and fence: the bytes land exactly, the rest
// of the window and the bytes past it stay as they were.
TEST_P(LocalMessages, PutAndGetAcrossPartialPages) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    constexpr std::size_t kBytes = 3 * 4096;  // from byte 40 of a page: partial, 2 whole, partial
    Unaligned mem(kBytes + 64);
    std::memset(mem.at() + kBytes, 0x77, 64);
    auto win = Window::create(ctx.world(), mem.at(), kBytes, 1);
    if (modeExpected(transport, n)) {
      EXPECT_TRUE(win->localMessages());
    }
    const int right = (ctx.rank() + 1) % n;
    const int left = (ctx.rank() + n - 1) % n;
    auto pattern = [](int rank, std::size_t i, int round) {
      return static_cast<std::uint8_t>(rank * 31 + i * 7 + round * 13 + 1);
    };
    auto stride2 = Datatype::vector(50, 1, 2, *Datatype::predefined(MPI_BYTE));
    stride2->commit();
    const std::pair<std::size_t, std::size_t> cases[] = {{0, 1},
                                                         {5, 7},
                                                         {100, 1000},
                                                         {0, kMessageBytesForTest},
                                                         {10, kMessageBytesForTest + 1},
                                                         {4000, 300},
                                                         {0, kBytes},
                                                         {kBytes - 9, 9},
                                                         {8000, 4000}};
    int round = 0;
    for (const bool fence : {false, true}) {
      for (const auto& [off, len] : cases) {
        ++round;
        std::vector<std::uint8_t> src(len);
        for (std::size_t i = 0; i < len; ++i) src[i] = pattern(ctx.rank(), i, round);
        std::memset(mem.at(), 0, kBytes);
        ctx.world().barrier();
        if (fence) {
          win->fence();
        } else {
          win->lockAll();
        }
        win->put(src.data(), static_cast<std::int64_t>(len), type(MPI_BYTE), right,
                 static_cast<std::int64_t>(off), static_cast<std::int64_t>(len), type(MPI_BYTE));
        if (fence) {
          win->fence();
        } else {
          win->flush(right);
          win->unlockAll();
        }
        ctx.world().barrier();
        // What the left neighbour put, nothing else.
        for (std::size_t i = 0; i < kBytes; ++i) {
          const std::uint8_t want =
              i >= off && i < off + len ? pattern(left, i - off, round) : std::uint8_t{0};
          ASSERT_EQ(static_cast<std::uint8_t>(mem.at()[i]), want)
              << "byte " << i << " after a put of " << len << " at " << off;
        }
        ctx.world().barrier();
        // Read it back from the right neighbour: what this rank put there.
        std::vector<std::uint8_t> back(len, 0xee);
        win->lockAll();
        win->get(back.data(), static_cast<std::int64_t>(len), type(MPI_BYTE), right,
                 static_cast<std::int64_t>(off), static_cast<std::int64_t>(len), type(MPI_BYTE));
        win->unlockAll();
        ASSERT_EQ(back, src) << "get of " << len << " at " << off;
        ctx.world().barrier();
      }
    }
    // Strided target side: every second byte from 7, 50 bytes, then read back the same way.
    std::memset(mem.at(), 0, kBytes);
    ctx.world().barrier();
    std::uint8_t vals[50];
    for (int i = 0; i < 50; ++i) vals[i] = static_cast<std::uint8_t>(ctx.rank() + 2 * i + 1);
    win->lockAll();
    win->put(vals, 50, type(MPI_BYTE), right, 7, 1, *stride2);
    win->flush(right);
    std::uint8_t got[50] = {};
    win->get(got, 50, type(MPI_BYTE), right, 7, 1, *stride2);
    win->unlockAll();
    EXPECT_EQ(std::memcmp(got, vals, 50), 0);
    ctx.world().barrier();
    for (int i = 0; i < 100; ++i) {
      const auto b = static_cast<std::uint8_t>(mem.at()[7 + i]);
      EXPECT_EQ(b, i % 2 == 0 ? static_cast<std::uint8_t>(left + i + 1) : 0) << "byte " << 7 + i;
    }
    for (int k = 0; k < 64; ++k) EXPECT_EQ(mem.at()[kBytes + k], std::byte{0x77}) << k;
    ctx.world().barrier();
    win->free();
  });
}

// Bad input on this path: an element past the window, a type compare_and_swap does not take,
// an operation the type does not take, no epoch: each its error class, and nothing changes.
TEST_P(LocalMessages, ErrorsAreClassifiedAndTouchNothing) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    Unaligned mem(24);
    auto win = Window::create(ctx.world(), mem.at(), 24, 8);
    const int peer = n - 1 - ctx.rank();
    const std::int64_t one = 1;
    std::int64_t got = -7;
    expectError(kErrRmaSync,
                [&] { win->fetchAndOp(&one, &got, type(MPI_INT64_T), peer, 0, Op::kSum); });
    win->lockAll();
    expectError(kErrRmaRange,
                [&] { win->fetchAndOp(&one, &got, type(MPI_INT64_T), peer, 3, Op::kSum); });
    const double dv = 1;
    double dg = 0;
    expectError(kErrType, [&] { win->compareAndSwap(&dv, &dv, &dg, type(MPI_DOUBLE), peer, 0); });
    expectError(kErrOp, [&] { win->fetchAndOp(&dv, &dg, type(MPI_DOUBLE), peer, 0, Op::kBand); });
    expectError(kErrRank, [&] { win->fetchAndOp(&one, &got, type(MPI_INT64_T), n, 0, Op::kSum); });
    EXPECT_EQ(got, -7);
    win->unlockAll();
    ctx.world().barrier();
    for (int k = 0; k < 24; ++k) EXPECT_EQ(mem.at()[k], std::byte{0}) << "byte " << k;
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, LocalMessages,
                         ::testing::Combine(::testing::ValuesIn(transportsWithAm()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& p) {
                           return paramName(std::get<0>(p.param)) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

}  // namespace
}  // namespace onesided::test
