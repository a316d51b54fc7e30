// SPDX-License-Identifier: BSD-3-Clause
// General active target (MPI_Win_post / start / complete / wait / test) with ranks as threads,
// over every transport of this build: matching across many epochs, groups of every shape, and
// every misuse refused with its error class.
#include <mpi.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Pscw : public ::testing::TestWithParam<Param> {};

const Datatype& int64Type() { return *Datatype::predefined(MPI_INT64_T); }

// Each rank exposes its window to its left neighbour and writes into its right neighbour's, for
// many epochs in a row: a notice is never counted in the wrong epoch, and the data of every
// epoch is there when MPI_Win_wait returns.
TEST_P(Pscw, RingOfEpochsDeliversEveryRound) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 60;
  spawn(n, transport, [&, n = n](Context& ctx) {
    const int me = ctx.rank();
    const int left = (me + n - 1) % n;
    const int right = (me + 1) % n;
    auto win = Window::allocate(ctx.world(), 4 * sizeof(std::int64_t), sizeof(std::int64_t));
    auto* mem = static_cast<std::int64_t*>(win->base());
    std::memset(mem, 0, 4 * sizeof(std::int64_t));
    for (int round = 0; round < kRounds; ++round) {
      const int origins[] = {left};
      const int targets[] = {right};
      win->post(origins);
      win->start(targets);
      const std::int64_t v[2] = {me * 1000 + round, -round};
      win->put(v, 2, int64Type(), right, round % 3, 2, int64Type());
      win->completeAccess();
      if (round % 2 == 0) {
        win->wait();
      } else {
        while (!win->test()) {
        }
      }
      ASSERT_EQ(mem[round % 3], left * 1000 + round) << "round " << round;
      ASSERT_EQ(mem[round % 3 + 1], -round) << "round " << round;
    }
    ctx.world().barrier();
    win->free();
  });
}

// Rank 0 exposes to everybody else, who each add into it; then the roles turn: everybody else
// exposes to rank 0, which gets from each. Groups of size p - 1 and 1, and accumulates inside
// an epoch.
TEST_P(Pscw, OneTargetManyOriginsAndBack) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 20;
  spawn(n, transport, [&, n = n](Context& ctx) {
    const int me = ctx.rank();
    auto win = Window::allocate(ctx.world(), 8 * sizeof(std::int64_t), sizeof(std::int64_t));
    auto* mem = static_cast<std::int64_t*>(win->base());
    std::memset(mem, 0, 8 * sizeof(std::int64_t));
    std::vector<int> others(static_cast<std::size_t>(n - 1));
    std::iota(others.begin(), others.end(), 1);
    const int zero[] = {0};
    std::int64_t expected = 0;
    for (int round = 0; round < kRounds; ++round) {
      if (me == 0) {
        win->post(others);
        win->wait();
        expected += (n - 1) * round;
        ASSERT_EQ(mem[0], expected) << "round " << round;
        // Rank 0 now reads each one's slot 1.
        win->start(others);
        std::vector<std::int64_t> got(static_cast<std::size_t>(n), -1);
        for (int r = 1; r < n; ++r) {
          win->get(&got[static_cast<std::size_t>(r)], 1, int64Type(), r, 1, 1, int64Type());
        }
        win->completeAccess();
        for (int r = 1; r < n; ++r) {
          ASSERT_EQ(got[static_cast<std::size_t>(r)], r * 100 + round) << "rank " << r;
        }
      } else {
        win->start(zero);
        const std::int64_t add = round;
        win->accumulate(&add, 1, int64Type(), 0, 0, 1, int64Type(), Op::kSum);
        win->completeAccess();
        mem[1] = me * 100 + round;  // our own memory, before exposing it
        win->post(zero);
        win->wait();
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// A rank in both roles at once with itself: post to self, start on self, put, complete, wait.
// And MPI_MODE_NOCHECK on both sides, with the program's own synchronisation (a barrier).
TEST_P(Pscw, SelfAndNocheck) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    const int me = ctx.rank();
    auto win = Window::allocate(ctx.world(), 2 * sizeof(std::int64_t), sizeof(std::int64_t));
    auto* mem = static_cast<std::int64_t*>(win->base());
    mem[0] = mem[1] = 0;
    const int self[] = {me};
    win->post(self);
    win->start(self);
    const std::int64_t v = 42 + me;
    win->put(&v, 1, int64Type(), me, 0, 1, int64Type());
    win->completeAccess();
    win->wait();
    EXPECT_EQ(mem[0], 42 + me);

    const int right[] = {(me + 1) % n};
    const int left[] = {(me + n - 1) % n};
    win->post(left, kModeNocheck);
    ctx.world().barrier();  // every post is done before any start
    win->start(right, kModeNocheck);
    const std::int64_t w = 7 * me;
    win->put(&w, 1, int64Type(), right[0], 1, 1, int64Type());
    win->completeAccess();
    win->wait();
    EXPECT_EQ(mem[1], 7 * left[0]);
    ctx.world().barrier();
    win->free();
  });
}

// Empty groups are valid and end at once.
TEST_P(Pscw, EmptyGroups) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 8, 8);
    win->post({});
    win->start({});
    win->completeAccess();
    EXPECT_TRUE(win->test());
    ctx.world().barrier();
    win->free();
  });
}

// Every misuse fails with its class and leaves the window usable.
TEST_P(Pscw, MisuseIsRefused) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    const int me = ctx.rank();
    auto win = Window::allocate(ctx.world(), 16, 8);
    const std::int64_t v = 1;
    const int self[] = {me};
    const int outside[] = {n};
    const int negative[] = {-1};
    const int twice[] = {me, me};
    expectError(kErrRmaSync, [&] { win->completeAccess(); });
    expectError(kErrRmaSync, [&] { win->wait(); });
    expectError(kErrRmaSync, [&] { win->test(); });
    expectError(kErrRank, [&] { win->post(outside); });
    expectError(kErrRank, [&] { win->start(negative); });
    expectError(kErrGroup, [&] { win->post(twice); });
    expectError(kErrAssert, [&] { win->post(self, kModeNoprecede); });
    expectError(kErrAssert, [&] { win->start(self, kModeNoput); });

    win->post(self);
    expectError(kErrRmaSync, [&] { win->post(self); });
    expectError(kErrRmaSync, [&] { win->fence(); });
    expectError(kErrRmaSync, [&] { win->free(); });
    win->start(self);
    expectError(kErrRmaSync, [&] { win->start(self); });
    expectError(kErrRmaSync, [&] { win->lock(LockType::kShared, me); });
    expectError(kErrRmaSync, [&] { win->lockAll(); });
    expectError(kErrRmaSync, [&] { win->fence(); });
    if (n > 1) {  // a rank outside the start group
      expectError(kErrRmaSync,
                  [&] { win->put(&v, 1, int64Type(), (me + 1) % n, 0, 1, int64Type()); });
    }
    win->put(&v, 1, int64Type(), me, 0, 1, int64Type());
    win->completeAccess();
    expectError(kErrRmaSync, [&] { win->put(&v, 1, int64Type(), me, 0, 1, int64Type()); });
    win->wait();
    EXPECT_EQ(static_cast<std::int64_t*>(win->base())[0], 1);

    // Usable afterwards, with the other kinds of epoch.
    win->fence();
    win->put(&v, 1, int64Type(), me, 1, 1, int64Type());
    win->fence(kModeNosucceed);
    win->lockAll();
    expectError(kErrRmaSync, [&] { win->start(self); });
    win->unlockAll();
    ctx.world().barrier();
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(
    All, Pscw, ::testing::Combine(::testing::ValuesIn(transports()), ::testing::Values(1, 2, 3, 4)),
    [](const auto& p) {
      return std::get<0>(p.param) + "_" + std::to_string(std::get<1>(p.param)) + "ranks";
    });

}  // namespace
}  // namespace onesided::test
