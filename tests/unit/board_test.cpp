// SPDX-License-Identifier: BSD-3-Clause
// Window creation without an O(p) exchange: create and allocate windows publish their
// descriptors on the communicator's board, and a rank reads a target's descriptor when it first
// reaches it. Ranks as threads, over every transport; mostly "nodes" of one rank each, so
// windows span nodes (on one node a rank also maps two more targets at creation, to agree on CPU
// atomics).
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/channel.hpp"
#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Board : public ::testing::TestWithParam<Param> {};

/// The members `me` writes to in a fence's dissemination barrier (their fence slots are in their
/// control regions, so a fence reads their descriptors), and `me` itself.
std::vector<int> fenceKnown(int me, int p) {
  std::vector<int> known{me};
  for (int dist = 1; dist < p; dist <<= 1) known.push_back((me + dist) % p);
  return known;
}

// A window spanning nodes knows only its own descriptor after creation, after a fence its
// ceil(log2 p) barrier partners' too, and after an epoch with puts to every rank above it those
// ranks' as well: what a rank holds grows with the targets it reaches and log2 p, not with the
// size of the communicator.
TEST_P(Board, DescriptorsAreReadOnFirstUse) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(
      n, transport,
      [&, n = n](Context& ctx) {
        constexpr std::size_t kSlots = 8;  // one per origin rank
        auto win =
            Window::allocate(ctx.world(), kSlots * sizeof(std::int64_t), sizeof(std::int64_t));
        EXPECT_TRUE(win->onBoard());
        EXPECT_EQ(win->knownTargets(), 1U) << "descriptors read at creation";
        auto* mine = static_cast<std::int64_t*>(win->base());
        std::memset(mine, 0, kSlots * sizeof(std::int64_t));
        win->fence();
        std::vector<int> known = fenceKnown(ctx.rank(), n);
        EXPECT_EQ(win->knownTargets(), known.size()) << "the fence's partners";
        const std::int64_t v = 100 + ctx.rank();
        for (int t = ctx.rank() + 1; t < n; ++t) {
          win->put(std::span<const std::int64_t>(&v, 1), t, ctx.rank());
          known.push_back(t);
        }
        win->fence();
        for (int r = 0; r < ctx.rank(); ++r) EXPECT_EQ(mine[r], 100 + r) << "from rank " << r;
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        EXPECT_EQ(win->knownTargets(), known.size());
        win->free();
      },
      1);
}

// On one node an allocate window maps a constant number of targets at creation (itself, its
// right neighbour and rank 0) to agree on CPU atomics, and the others when first reached: every
// rank then locks, updates and unlocks every target (exclusive and shared locks, fetch-and-op
// and accumulate through the agreed path), and the sums come out whole.
TEST_P(Board, OnOneNodeAllocateWindowsMapTargetsOnFirstUse) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 2 * sizeof(std::int64_t), sizeof(std::int64_t));
    EXPECT_LE(win->knownTargets(), static_cast<std::size_t>(std::min(n, 3)))
        << "targets described at creation";
    auto* mine = static_cast<std::int64_t*>(win->base());
    mine[0] = 0;
    mine[1] = 0;
    ctx.world().barrier();
    lockAndCountAtEveryTarget(*win, ctx.rank(), n);
    ctx.world().barrier();
    EXPECT_EQ(mine[0], n);
    EXPECT_EQ(mine[1], static_cast<std::int64_t>(n) * (n + 1) / 2);
    EXPECT_EQ(win->knownTargets(), static_cast<std::size_t>(n));
    win->free();
  });
}

// Slots are reused: more windows one after another than the board has slots, and more live at
// once than it has (those beyond it gather their descriptors instead); every one works.
TEST_P(Board, ManyWindowsLiveAndInTurn) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kSlots = static_cast<int>(detail::Channel::kBoardSlots);
  constexpr int kLive = kSlots + 6;
  spawn(
      n, transport,
      [&, n = n](Context& ctx) {
        const int left = (ctx.rank() + n - 1) % n;
        const int right = (ctx.rank() + 1) % n;
        auto check = [&](Window& w, std::int64_t tag) {
          const std::int64_t v = tag * 1000 + ctx.rank();
          w.lockAll();
          w.put(std::span<const std::int64_t>(&v, 1), right, 0);
          w.unlockAll();
          ctx.world().barrier();
          EXPECT_EQ(*static_cast<std::int64_t*>(w.base()), tag * 1000 + left) << "window " << tag;
        };
        for (int i = 0; i < kLive; ++i) {  // in turn: each slot used again and again
          auto w = Window::allocate(ctx.world(), sizeof(std::int64_t), sizeof(std::int64_t));
          EXPECT_TRUE(w->onBoard()) << "window " << i;
          check(*w, i);
          w->free();
        }
        std::vector<std::unique_ptr<Window>> live;
        int gathered = 0;
        for (int i = 0; i < kLive; ++i) {
          live.push_back(Window::allocate(ctx.world(), sizeof(std::int64_t), sizeof(std::int64_t)));
          if (!live.back()->onBoard()) ++gathered;
        }
        EXPECT_EQ(gathered, kLive - kSlots) << "windows beyond the board's slots";
        for (int i = 0; i < kLive; ++i) check(*live[static_cast<std::size_t>(i)], i);
        for (auto& w : live) w->free();
      },
      1);
}

// Create windows of different sizes (one rank exposes nothing) on a sub-communicator: bounds
// are checked against each target's own size, read from its descriptor.
TEST_P(Board, CreateWindowsOfDifferentSizesOnASplit) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(
      n, transport,
      [&](Context& ctx) {
        auto half = ctx.world().split(ctx.rank() % 2, 0);
        const int p = half->size();
        const int me = half->rank();
        std::vector<std::int32_t> mem(static_cast<std::size_t>(me), -1);  // rank 0: none
        auto win = Window::create(*half, mem.data(), static_cast<std::int64_t>(mem.size() * 4), 4);
        EXPECT_TRUE(win->onBoard());
        win->fence();
        const std::int32_t v = me;
        // Rank t exposes t elements: ranks below it each write their own one (concurrent puts
        // to one location in an epoch would be erroneous).
        for (int t = me + 1; t < p; ++t) win->put(std::span<const std::int32_t>(&v, 1), t, me);
        // One element past a target's end fails at the origin, however large the others are.
        if (p > 1) {
          const int last = p - 1;
          expectError(kErrRmaRange,
                      [&] { win->put(std::span<const std::int32_t>(&v, 1), last, last); });
        }
        win->fence();
        for (int r = 0; r < me; ++r) EXPECT_EQ(mem[static_cast<std::size_t>(r)], r);
        // Itself, its fence partners and the ranks above it (the last one also by the refused
        // put).
        std::vector<int> known = fenceKnown(me, p);
        for (int t = me + 1; t < p; ++t) known.push_back(t);
        std::sort(known.begin(), known.end());
        known.erase(std::unique(known.begin(), known.end()), known.end());
        EXPECT_EQ(win->knownTargets(), known.size());
        win->free();
        half->free();
      },
      1);
}

// A false same_size / same_disp_unit promise fails the creation on every rank, whichever way the
// descriptors travel: on the board (allocate) or gathered (allocate_shared).
TEST_P(Board, FalsePromisesFailEveryRankOnBothPaths) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs two sizes";
  spawn(n, transport, [&](Context& ctx) {
    WindowHints sameSize;
    sameSize.sameSize = ctx.rank() == 1;  // one rank promises
    WindowHints sameDisp;
    sameDisp.sameDispUnit = true;
    const std::int64_t size = 8 * (ctx.rank() + 1);
    const int disp = ctx.rank() == 0 ? 4 : 8;
    expectError(kErrInfoValue, [&] { Window::allocate(ctx.world(), size, 8, nullptr, sameSize); });
    expectError(kErrInfoValue,
                [&] { Window::allocateShared(ctx.world(), size, 8, nullptr, sameSize); });
    expectError(kErrInfoValue, [&] { Window::allocate(ctx.world(), 8, disp, nullptr, sameDisp); });
    expectError(kErrInfoValue,
                [&] { Window::allocateShared(ctx.world(), 8, disp, nullptr, sameDisp); });
    // Kept promises: both work.
    auto a = Window::allocate(ctx.world(), 8, 8, nullptr, sameSize);
    auto b = Window::allocateShared(ctx.world(), 8, 8, nullptr, sameSize);
    EXPECT_TRUE(a->onBoard());
    EXPECT_FALSE(b->onBoard());
    a->free();
    b->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Board,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 5)),
                         [](const auto& p) {
                           return paramName(std::get<0>(p.param)) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

}  // namespace
}  // namespace onesided::test
