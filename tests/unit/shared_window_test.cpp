// SPDX-License-Identifier: BSD-3-Clause
// Shared windows (Window::allocateShared) with ranks as threads: one segment mapped by every
// rank, parts contiguous (or page-aligned with alloc_shared_noncontig), written with stores and
// read with loads, and atomics through the transport on the same memory.
#include <mpi.h>

#include <cstring>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int, bool>;
class SharedWindow : public ::testing::TestWithParam<Param> {};

TEST_P(SharedWindow, StoresLoadsAndAtomics) {
  auto [transport, n, noncontig] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  spawn(n, transport, [&, n = n, noncontig = noncontig](Context& ctx) {
    const int me = ctx.rank();
    auto ints = [](int r) { return 8 * (r % 2 + 1); };
    WindowHints hints;
    hints.allocSharedNoncontig = noncontig;
    auto win = Window::allocateShared(ctx.world(), ints(me) * 8, 8, nullptr, hints);
    EXPECT_EQ(win->flavor(), Flavor::kShared);
    std::vector<std::int64_t*> parts(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      std::size_t size = 0;
      int unit = 0;
      void* base = nullptr;
      win->sharedQuery(r, size, unit, base);
      EXPECT_EQ(size, static_cast<std::size_t>(ints(r) * 8));
      EXPECT_EQ(unit, 8);
      parts[static_cast<std::size_t>(r)] = static_cast<std::int64_t*>(base);
      if (r > 0 && !noncontig) {
        EXPECT_EQ(parts[static_cast<std::size_t>(r)],
                  parts[static_cast<std::size_t>(r - 1)] + ints(r - 1));
      }
    }
    EXPECT_EQ(parts[static_cast<std::size_t>(me)], win->base());
    auto* mine = static_cast<std::int64_t*>(win->base());
    for (int i = 0; i < ints(me); ++i) mine[i] = me * 100 + i;
    mine[0] = 0;
    win->sync();
    ctx.world().barrier();
    win->lockAll();
    const std::int64_t one = 1;
    std::int64_t old = 0;
    for (int k = 0; k < 5; ++k) {
      for (int r = 0; r < n; ++r) {
        win->fetchAndOp(&one, &old, *Datatype::predefined(MPI_INT64_T), r, 0, Op::kSum);
      }
    }
    win->unlockAll();
    ctx.world().barrier();
    win->sync();
    for (int r = 0; r < n; ++r) {
      const auto* part = parts[static_cast<std::size_t>(r)];
      EXPECT_EQ(std::atomic_ref<const std::int64_t>(part[0]).load(), 5 * n) << "rank " << r;
      for (int i = 1; i < ints(r); ++i) EXPECT_EQ(part[i], r * 100 + i);
    }
    ctx.world().barrier();
    win->free();
  });
}

// Comm::splitShared (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) on ranks that believe they
// sit on nodes of `per` ranks: one communicator per node, ordered by key, over which a shared
// window works. (Over the world it works too: these ranks are threads, which can map each
// other's segment whatever node they believe they are on.)
class SplitShared : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(SplitShared, GivesTheNodesCommunicator) {
  auto [transport, per] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  const int ranks = 2 * per + 1;  // two full nodes and one rank alone on a third
  spawn(
      ranks, transport,
      [&, per = per](Context& ctx) {
        const int me = ctx.rank();
        const int first = me / per * per;
        const int last = std::min(first + per, ctx.size()) - 1;
        auto node = ctx.world().splitShared(-me);  // descending world ranks
        ASSERT_NE(node, nullptr);
        ASSERT_EQ(node->size(), last - first + 1);
        for (int r = 0; r < node->size(); ++r) EXPECT_EQ(node->worldRank(r), last - r);
        EXPECT_EQ(node->rank(), last - me);
        auto win = Window::allocateShared(*node, 8, 8, nullptr, {});
        auto* mine = static_cast<std::int64_t*>(win->base());
        *mine = 1000 + me;
        win->sync();
        node->barrier();
        win->sync();
        for (int r = 0; r < node->size(); ++r) {
          std::size_t size = 0;
          int unit = 0;
          void* base = nullptr;
          win->sharedQuery(r, size, unit, base);
          EXPECT_EQ(*static_cast<const std::int64_t*>(base), 1000 + node->worldRank(r));
        }
        node->barrier();
        win->free();
        node->free();
      },
      per);
}

INSTANTIATE_TEST_SUITE_P(All, SharedWindow,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 4), ::testing::Bool()),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks" +
                                  (std::get<2>(p.param) ? "_noncontig" : "");
                         });

INSTANTIATE_TEST_SUITE_P(All, SplitShared,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 4)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "pernode";
                         });

}  // namespace
}  // namespace onesided::test
