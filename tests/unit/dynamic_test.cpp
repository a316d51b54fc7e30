// SPDX-License-Identifier: BSD-3-Clause
// Dynamic windows with ranks as threads: attach / detach churn while others access the regions
// (origins re-read the attach tables when a lookup misses and once per epoch), accesses outside
// every attached region fail at the origin, and attach / detach errors.
#include <mpi.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Dynamic : public ::testing::TestWithParam<Param> {};

TEST_P(Dynamic, AttachDetachChurn) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kN = 16;
  constexpr int kRounds = 20;
  std::vector<std::uint64_t> addrs(static_cast<std::size_t>(n));  // threads share memory
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::createDynamic(ctx.world());
    EXPECT_EQ(win->flavor(), Flavor::kDynamic);
    EXPECT_EQ(win->size(), 0U);
    const int me = ctx.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    for (int round = 0; round < kRounds; ++round) {
      // Regions of several sizes, so addresses move from round to round.
      std::vector<std::int64_t> buf(static_cast<std::size_t>(kN + 1 + round), -1);
      win->attach(buf.data(), static_cast<std::int64_t>(buf.size() * 8));
      addrs[static_cast<std::size_t>(me)] = reinterpret_cast<std::uint64_t>(buf.data());
      ctx.world().barrier();
      const auto to = static_cast<std::int64_t>(addrs[static_cast<std::size_t>(next)]);
      std::vector<std::int64_t> src(kN);
      std::iota(src.begin(), src.end(), me * 1000 + round * 10);
      win->lockAll();
      win->put(std::span<const std::int64_t>(src), next, to);
      // One past the region: outside, at the origin, nothing sent.
      expectError(kErrRmaRange, [&] {
        win->put(std::span<const std::int64_t>(src.data(), 1), next,
                 to + static_cast<std::int64_t>((kN + 1 + round) * 8));
      });
      const std::int64_t one = 1;
      std::int64_t old = 0;
      win->fetchAndOp(&one, &old, *Datatype::predefined(MPI_INT64_T), next,
                      to + static_cast<std::int64_t>(kN * 8), Op::kSum);
      win->unlockAll();
      ctx.world().barrier();
      for (int i = 0; i < kN; ++i) {
        ASSERT_EQ(buf[static_cast<std::size_t>(i)], prev * 1000 + round * 10 + i)
            << "round " << round;
      }
      EXPECT_EQ(buf[kN], 0) << "the fetch_and_op: -1 + 1";
      ctx.world().barrier();
      win->detach(buf.data());
    }
    expectError(kErrRmaAttach, [&] { win->detach(addrs.data()); });
    std::vector<int> a(8);
    win->attach(a.data(), 32);
    expectError(kErrRmaAttach, [&] { win->attach(a.data() + 4, 32); });
    win->detach(a.data());
    ctx.world().barrier();
    win->free();
  });
}

INSTANTIATE_TEST_SUITE_P(All, Dynamic,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 4)),
                         [](const auto& p) {
                           return std::get<0>(p.param) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "ranks";
                         });

}  // namespace
}  // namespace onesided::test
