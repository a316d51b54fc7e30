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

// More regions than the table first holds (it grows, while origins keep reading it), attached
// as adjacent pieces of one buffer out of address order, and accesses across many of them: a
// put, a get, an accumulate of int64 (atomics, a key per region) and of doubles.
TEST_P(Dynamic, ManyAdjacentRegions) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRegions = 300;
  constexpr int kPer = 4;  // int64 per region
  std::vector<std::uint64_t> addrs(static_cast<std::size_t>(n));
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::createDynamic(ctx.world());
    const int me = ctx.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    std::vector<std::int64_t> buf(kRegions * kPer, 0);
    for (int k = 0; k < kRegions; ++k) {
      const int r = (k * 7) % kRegions;  // 7 and 300 are coprime: every region once
      win->attach(buf.data() + r * kPer, kPer * 8);
    }
    addrs[static_cast<std::size_t>(me)] = reinterpret_cast<std::uint64_t>(buf.data());
    ctx.world().barrier();
    const auto to = static_cast<std::int64_t>(addrs[static_cast<std::size_t>(next)]);
    constexpr int kSpan = 50 * kPer;
    std::vector<std::int64_t> src(kSpan);
    std::iota(src.begin(), src.end(), me * 10000);
    const Datatype& i64 = *Datatype::predefined(MPI_INT64_T);
    win->lockAll();
    win->put(std::span<const std::int64_t>(src), next, to + 3 * 8);
    win->flush(next);
    std::vector<std::int64_t> got(kSpan, 0);
    win->get(std::span<std::int64_t>(got), next, to + 3 * 8);
    win->flush(next);
    EXPECT_EQ(got, src);
    win->accumulate(src.data(), kSpan, i64, next, to + 250 * 8, kSpan, i64, Op::kSum);
    win->unlockAll();
    ctx.world().barrier();
    for (int i = 0; i < kSpan; ++i) {
      ASSERT_EQ(buf[static_cast<std::size_t>(3 + i)], prev * 10000 + i) << i;
      ASSERT_EQ(buf[static_cast<std::size_t>(250 + i)], prev * 10000 + i) << i;
    }
    // One region detached: an access over it fails at the origin.
    ctx.world().barrier();
    win->detach(buf.data() + 10 * kPer);
    ctx.world().barrier();
    win->lockAll();
    expectError(kErrRmaRange, [&] {
      win->put(std::span<const std::int64_t>(src.data(), 8), next, to + (10 * kPer - 2) * 8);
    });
    win->unlockAll();
    ctx.world().barrier();
    for (int k = 0; k < kRegions; ++k) {
      if (k != 10) win->detach(buf.data() + k * kPer);
    }
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
