// SPDX-License-Identifier: BSD-3-Clause
// Request-based operations' tickets (Window::ticket / done / wait) with ranks as threads: on the
// self_deferred transport, where transfers complete only at a flush as on a NIC, a ticket is
// pending until its target is flushed, a wait flushes that target only, and one flush completes
// every ticket to it.
#include <cstring>
#include <numeric>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Requests : public ::testing::TestWithParam<Param> {};

TEST_P(Requests, TicketsCompleteTheirTargetOnly) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kN = 32;
  spawn(n, transport, [&, n = n, transport = transport](Context& ctx) {
    std::vector<int> mem(2 * kN, -1);
    auto win = Window::create(ctx.world(), mem.data(), static_cast<std::int64_t>(2 * kN * 4), 4);
    const int me = ctx.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    std::iota(mem.begin(), mem.begin() + kN, me * 1000);
    ctx.world().barrier();
    EXPECT_THROW(win->requirePassiveEpoch("MPI_Rput"), Error);
    win->lockAll();
    win->requirePassiveEpoch("MPI_Rput");
    std::vector<int> src(kN);
    std::iota(src.begin(), src.end(), me * 1000 + 500);
    std::vector<int> got(kN, -1);
    win->put(std::span<const int>(src.data(), kN / 2), next, kN);
    const auto put1 = win->ticket(next);
    win->put(std::span<const int>(src.data() + kN / 2, kN / 2), next, kN + kN / 2);
    const auto put2 = win->ticket(next);
    win->get(std::span<int>(got), prev, 0);
    const auto get = win->ticket(prev);
    const bool deferred = transport == "self_deferred";
    if (deferred && n > 1) {
      EXPECT_FALSE(win->done(get));
      EXPECT_FALSE(win->done(put1));
    }
    win->waitFor(get);
    EXPECT_TRUE(win->done(get));
    for (int i = 0; i < kN; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], prev * 1000 + i);
    // Waiting for the get flushed its target only.
    if (deferred && n > 2) {
      EXPECT_FALSE(win->done(put1));
    }
    win->waitFor(put1);  // one flush completes both puts to next
    EXPECT_TRUE(win->done(put2));
    // A ticket issued after a flush waits for the next one.
    win->put(std::span<const int>(src.data(), 1), next, kN);
    const auto put3 = win->ticket(next);
    if (deferred && n > 1) {
      EXPECT_FALSE(win->done(put3));
    }
    win->flush(next);
    EXPECT_TRUE(win->done(put3));
    win->unlockAll();
    ctx.world().barrier();
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(mem[static_cast<std::size_t>(kN + i)], prev * 1000 + 500 + i) << "index " << i;
    }
    ctx.world().barrier();
    win->free();
    EXPECT_TRUE(win->done(put1));  // a freed window's requests are complete
  });
}

INSTANTIATE_TEST_SUITE_P(All, Requests,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

}  // namespace
}  // namespace onesided::test
