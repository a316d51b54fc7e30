// SPDX-License-Identifier: BSD-3-Clause
// Windows, put / get and fence with ranks as threads, over every transport of this build.
#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "balance.hpp"
#include "rank_test.hpp"

namespace onesided::test {
namespace {

/// How the window memory comes about: MPI_Win_allocate, MPI_Win_create over user memory, or
/// MPI_Win_create over MPI_Alloc_mem memory.
enum class Mem { kAllocate, kCreate, kCreateAllocMem };
using Param = std::tuple<std::string, int, std::size_t, Mem>;

class PutGet : public ::testing::TestWithParam<Param> {};

std::unique_ptr<Window> makeWindow(Comm& c, Mem m, std::size_t bytes,
                                   std::vector<std::byte>& storage) {
  if (m == Mem::kAllocate) return Window::allocate(c, static_cast<std::int64_t>(bytes), 1);
  void* base = nullptr;
  if (m == Mem::kCreateAllocMem) {
    base = c.context().allocMemory(bytes);
  } else {
    storage.assign(bytes, std::byte{0});
    base = bytes == 0 ? nullptr : storage.data();
  }
  return Window::create(c, base, static_cast<std::int64_t>(bytes), 1);
}

std::byte pattern(int rank, std::size_t i) {
  return static_cast<std::byte>((static_cast<std::size_t>(rank) * 131 + i * 7 + 1) & 0xff);
}

// Each rank puts `bytes` into the next rank's window, then reads the previous rank's back with
// a get; both checked byte for byte. Includes the target == self case at one rank.
TEST_P(PutGet, RingPutThenGet) {
  auto [transport, n, bytes, mem] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, bytes = bytes, mem = mem](Context& ctx) {
    std::vector<std::byte> storage;
    auto win = makeWindow(ctx.world(), mem, bytes, storage);
    const int me = ctx.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    std::vector<std::byte> src(bytes);
    for (std::size_t i = 0; i < bytes; ++i) src[i] = pattern(me, i);
    win->fence();
    win->put(std::span<const std::byte>(src), next, 0);
    win->fence();
    auto local = win->local();
    ASSERT_EQ(local.size(), bytes);
    for (std::size_t i = 0; i < bytes; ++i) {
      if (local[i] != pattern(prev, i)) FAIL() << "rank " << me << " byte " << i;
    }
    std::vector<std::byte> got(bytes, std::byte{0});
    win->get(std::span<std::byte>(got), next, 0);
    win->fence();
    for (std::size_t i = 0; i < bytes; ++i) {
      if (got[i] != pattern(me, i)) FAIL() << "rank " << me << " got byte " << i;
    }
    void* base = win->base();
    win->free();
    if (mem == Mem::kCreateAllocMem) {
      EXPECT_TRUE(ctx.freeMemory(base));
    }
  });
}

std::string name(const ::testing::TestParamInfo<Param>& p) {
  auto [t, n, b, f] = p.param;
  return t + "_" + std::to_string(n) + "ranks_" + std::to_string(b) + "B_" +
         (f == Mem::kAllocate ? "allocate"
          : f == Mem::kCreate ? "create"
                              : "create_allocmem");
}

INSTANTIATE_TEST_SUITE_P(
    Small, PutGet,
    ::testing::Combine(::testing::ValuesIn(transports()), ::testing::Values(1, 2, 3, 4, 8),
                       ::testing::Values(0, 1, 8, 4096),
                       ::testing::Values(Mem::kAllocate, Mem::kCreate, Mem::kCreateAllocMem)),
    name);
INSTANTIATE_TEST_SUITE_P(
    Large, PutGet,
    ::testing::Combine(::testing::ValuesIn(transports()), ::testing::Values(1, 2, 4, 8),
                       ::testing::Values(std::size_t{1} << 20, std::size_t{16} << 20),
                       ::testing::Values(Mem::kAllocate, Mem::kCreate, Mem::kCreateAllocMem)),
    name);

class Epochs : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

// 10,000 fence epochs in a row, each with one 8-byte put into the next rank: the value seen
// after every fence must be the one written in that epoch. Epochs alternate between two slots:
// once a rank has left fence e its neighbour may already put for epoch e + 1, so the slot
// read after fence e must not be the one epoch e + 1 writes (MPI-3.1 §11.7).
TEST_P(Epochs, TenThousandFences) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 2 * sizeof(std::uint64_t), sizeof(std::uint64_t));
    const int me = ctx.rank();
    win->fence(kModeNoprecede);
    for (std::uint64_t e = 1; e <= 10000; ++e) {
      std::uint64_t v = e * 1000 + static_cast<std::uint64_t>(me);
      const auto slot = static_cast<std::int64_t>(e % 2);
      win->put(std::span<const std::uint64_t>(&v, 1), (me + 1) % n, slot);
      win->fence();
      std::uint64_t seen = 0;
      std::memcpy(&seen, static_cast<std::uint64_t*>(win->base()) + slot, 8);
      const auto prev = static_cast<std::uint64_t>((me + n - 1) % n);
      if (seen != e * 1000 + prev) FAIL() << "epoch " << e << " rank " << me << " saw " << seen;
    }
    win->fence(kModeNosucceed);
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Epochs,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 8)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

class Reuse : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

// A freed create window's control region goes to the next create window of the context: its
// lock words, accumulate lock, inbox and sync slots start from zero again, so that locks,
// fetch-and-op, accumulate and fence on the new window give the serial answers. Peers that map
// it (UCX over shared memory) keep their mapping from one window to the next. A window that is
// destroyed without MPI_Win_free (as after a failure) leaves nothing for a later one: a peer may
// still write into its control region, and the next window's is new (a peer's kept mapping of
// the old one is used only where it shows the new window's nonce: where it reaches the new
// region, as a key of ranks in one process that maps by address does).
TEST_P(Reuse, FreedControlRegionsAreReused) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    const Datatype& i64 = datatypeOf<std::int64_t>();
    for (int round = 0; round < 4; ++round) {
      std::vector<std::int64_t> mem(3, 0);
      auto win = Window::create(ctx.world(), mem.data(),
                                static_cast<std::int64_t>(mem.size() * sizeof(std::int64_t)),
                                sizeof(std::int64_t));
      EXPECT_EQ(win->controlReused(), round > 0) << "round " << round;
      ctx.world().barrier();
      lockAndCountAtEveryTarget(*win, ctx.rank(), n);
      win->fence();
      const std::int64_t v = 1000 * round + ctx.rank();
      win->put(std::span<const std::int64_t>(&v, 1), (ctx.rank() + 1) % n, 2);
      win->fence();
      EXPECT_EQ(mem[0], n) << "round " << round;
      EXPECT_EQ(mem[1], static_cast<std::int64_t>(n) * (n + 1) / 2) << "round " << round;
      EXPECT_EQ(mem[2], 1000 * round + (ctx.rank() + n - 1) % n) << "round " << round;
      // Every peer's, over UCX on shared memory (not over tcp; and self keys are empty).
      EXPECT_EQ(win->controlKeysReused(), round > 0 ? win->mappedControls() : 0)
          << "round " << round;
      if (transport == "ucx" && std::getenv("UCX_TLS") == nullptr) {
        EXPECT_EQ(win->mappedControls(), n - 1) << "round " << round;
      }
      win->free();
    }
    std::vector<std::int64_t> mem(3, 0);
    const auto bytes = static_cast<std::int64_t>(mem.size() * sizeof(std::int64_t));
    {
      auto gone = Window::create(ctx.world(), mem.data(), bytes, sizeof(std::int64_t));
      EXPECT_TRUE(gone->controlReused());
      ctx.world().barrier();  // every rank has taken its kept region before any destroys one
    }
    auto win = Window::create(ctx.world(), mem.data(), bytes, sizeof(std::int64_t));
    EXPECT_FALSE(win->controlReused());
    const std::int64_t v = 7;
    win->fence();
    for (int t = 0; t < n; ++t) {
      win->accumulate(&v, 1, i64, t, 0, 1, i64, Op::kSum);
    }
    win->fence();
    EXPECT_EQ(mem[0], 7 * n);
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Reuse,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

class Checks : public ::testing::TestWithParam<std::string> {};

// Every bad argument fails at the origin with its class and leaves the target untouched.
TEST_P(Checks, BadArgumentsTouchNothing) {
  const std::string transport = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(2, transport, [&](Context& ctx) {
    constexpr std::size_t kInts = 16;
    auto win = Window::allocate(ctx.world(), kInts * sizeof(int), sizeof(int));
    auto* mine = static_cast<int*>(win->base());
    std::iota(mine, mine + kInts, 100 * ctx.rank());
    std::vector<int> src(kInts + 4, -1);
    const auto& tInt = datatypeOf<int>();
    const auto& tDouble = datatypeOf<double>();
    const int other = 1 - ctx.rank();
    // No epoch yet.
    expectError(kErrRmaSync, [&] { win->put(src.data(), 1, tInt, other, 0, 1, tInt); });
    win->fence();
    // Past the end, and crossing the end.
    expectError(kErrRmaRange, [&] { win->put(src.data(), 1, tInt, other, kInts, 1, tInt); });
    expectError(kErrRmaRange, [&] { win->put(src.data(), 4, tInt, other, kInts - 3, 4, tInt); });
    expectError(kErrRmaRange, [&] { win->get(src.data(), 4, tInt, other, kInts - 1, 4, tInt); });
    // A displacement whose byte offset overflows 64 bits.
    expectError(kErrRmaRange,
                [&] { win->put(src.data(), 1, tInt, other, std::int64_t{1} << 62, 1, tInt); });
    expectError(kErrDisp, [&] { win->put(src.data(), 1, tInt, other, -1, 1, tInt); });
    expectError(kErrRank, [&] { win->put(src.data(), 1, tInt, 2, 0, 1, tInt); });
    expectError(kErrRank, [&] { win->put(src.data(), 1, tInt, -5, 0, 1, tInt); });
    expectError(kErrCount, [&] { win->put(src.data(), -1, tInt, other, 0, -1, tInt); });
    expectError(kErrType, [&] { win->put(src.data(), 2, tInt, other, 0, 1, tDouble); });
    expectError(kErrType, [&] { win->put(src.data(), 2, tInt, other, 0, 1, tInt); });
    expectError(kErrBuffer, [&] { win->put(nullptr, 1, tInt, other, 0, 1, tInt); });
    expectError(kErrAssert, [&] { win->fence(kModeNocheck); });
    // MPI_PROC_NULL: accepted, does nothing.
    win->put(src.data(), 1, tInt, kProcNull, 0, 1, tInt);
    win->fence();
    for (std::size_t i = 0; i < kInts; ++i) {
      EXPECT_EQ(mine[i], 100 * ctx.rank() + static_cast<int>(i)) << "index " << i;
    }
    for (int v : src) EXPECT_EQ(v, -1);
    win->fence();  // the checks above read memory the next epoch's puts may write
    // NOPRECEDE with operations pending is a synchronisation error.
    win->put(src.data(), 1, tInt, other, 0, 1, tInt);
    expectError(kErrRmaSync, [&] { win->fence(kModeNoprecede); });
    win->fence();
    win->fence(kModeNosucceed);
    expectError(kErrRmaSync, [&] { win->get(src.data(), 1, tInt, other, 0, 1, tInt); });
    win->free();
    expectError(kErrWin, [&] { win->fence(); });
  });
}

// Creation arguments: an error on one rank fails the creation on every rank, nobody hangs.
TEST_P(Checks, CreationFailsTogether) {
  const std::string transport = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(3, transport, [&](Context& ctx) {
    const int unit = ctx.rank() == 1 ? 0 : 4;
    try {
      auto w = Window::allocate(ctx.world(), 64, unit);
      ADD_FAILURE() << "creation succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.errorClass(), ctx.rank() == 1 ? kErrDisp : kErrOther) << e.what();
    }
    try {
      auto w = Window::create(ctx.world(), nullptr, ctx.rank() == 2 ? -8 : 0, 1);
      ADD_FAILURE() << "creation succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.errorClass(), ctx.rank() == 2 ? kErrSize : kErrOther) << e.what();
    }
    // And the job goes on afterwards.
    auto w = Window::allocate(ctx.world(), 8, 8);
    w->fence();
    w->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Checks, ::testing::ValuesIn(transports()));

}  // namespace
}  // namespace onesided::test

namespace onesided::test {
namespace {

// Starting a rank with environment variable `var` set to `value` fails with MPI_ERR_ARG and a
// message that names both.
void expectRefused(const char* var, const char* value) {
  setenv(var, value, 1);
  try {
    spawn(1, "self", [](Context&) {});
    ADD_FAILURE() << var << "=" << value << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.errorClass(), kErrArg);
    const std::string said = std::string(var) + "=" + value;
    EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
  }
  unsetenv(var);
}

// ONESIDED_WAIT: spin (never yield or sleep) works like the default; a bad value is an error
// that names it.
TEST(WaitPolicy, SpinWorksAndBadValuesAreRejected) {
  setenv("ONESIDED_WAIT", "spin", 1);
  spawn(2, "self", [](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 8, 8);
    for (int i = 0; i < 100; ++i) win->fence();
    win->free();
  });
  unsetenv("ONESIDED_WAIT");
  expectRefused("ONESIDED_WAIT", "sometimes");
}

// The choice behind it: the last rank on a CPU with two more ranks than the least busy CPU
// it may use moves there, one rank at a time, and nobody moves on partial knowledge.
TEST(WaitPolicy, BalanceMovesTheLastRankOffACrowdedCpu) {
  auto target = [](std::vector<int> shown, std::size_t me, std::vector<int> allowed) {
    return detail::balanceTarget(shown, me, allowed);
  };
  const std::vector<int> two{0, 1};
  // 3 + 1: only the last of the three moves.
  EXPECT_EQ(target({0, 0, 0, 1}, 2, two), 1);
  for (std::size_t me : {0U, 1U, 3U}) EXPECT_EQ(target({0, 0, 0, 1}, me, two), -1) << me;
  EXPECT_EQ(target({1, 0, 1, 1}, 3, two), 0);
  // Even, or one apart: nobody moves.
  for (std::size_t me = 0; me < 4; ++me) EXPECT_EQ(target({0, 1, 1, 0}, me, two), -1) << me;
  for (std::size_t me = 0; me < 3; ++me) EXPECT_EQ(target({0, 0, 1}, me, two), -1) << me;
  EXPECT_EQ(target({0, 0, 0}, 2, two), 1);
  // 8 ranks, 6 + 2.
  EXPECT_EQ(target({0, 0, 1, 0, 0, 1, 0, 0}, 7, two), 1);
  EXPECT_EQ(target({0, 0, 1, 0, 0, 1, 0, 0}, 6, two), -1);
  // A rank whose CPU is unknown yet: nobody moves.
  EXPECT_EQ(target({0, -1, 0, 0}, 3, two), -1);
  // The least busy allowed CPU, the lowest on a tie, also an idle one; CPUs outside the set
  // count for nothing there.
  EXPECT_EQ(target({0, 0, 1, 1}, 1, {0, 1, 2, 3}), 2);
  EXPECT_EQ(target({5, 5, 5, 1}, 2, two), 0);
  EXPECT_EQ(target({0, 0, 0, 1}, 2, {0}), -1);
  EXPECT_EQ(target({0, 0}, 5, two), -1);
}

// Bad values of ONESIDED_BALANCE are refused (ranks as processes move in
// tests/mpi/spread_ranks.c; the choice is checked above).
TEST(WaitPolicy, BadBalanceValuesAreRejected) {
  expectRefused("ONESIDED_BALANCE", "2");
  expectRefused("ONESIDED_BALANCE", "yes");
}

}  // namespace
}  // namespace onesided::test
