// SPDX-License-Identifier: BSD-3-Clause
// Accumulate by active message (src/window/am.cpp) with ranks as threads, over every transport
// of this build: exact results under contention, transfers larger than the whole inbox,
// replies, and progress while the target computes without calling into the runtime. (The
// passive-target suite runs again in this mode too: passive_test.cpp, "+am" parameters.)
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int>;
class Am : public ::testing::TestWithParam<Param> {};

const Datatype& type(int id) { return *Datatype::predefined(id); }

double scale() {
  const char* s = std::getenv("ONESIDED_TEST_TIME_SCALE");
  return s != nullptr ? std::max(1.0, std::atof(s)) : 1.0;
}

// Every rank adds into the same elements of rank 0 (int, float, double and a strided double
// vector) for many rounds, flushing now and then: the sums are exact.
TEST_P(Am, ConcurrentAccumulatesAreExact) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 150;
  constexpr int kLen = 16;
  spawn(n, transport, [&, n = n](Context& ctx) {
    const std::size_t bytes = kLen * (sizeof(int) + sizeof(float) + 2 * sizeof(double));
    auto win = Window::allocate(ctx.world(), static_cast<std::int64_t>(bytes), 1);
    std::memset(win->base(), 0, bytes);
    auto column = Datatype::vector(kLen / 2, 1, 2, type(MPI_DOUBLE));
    column->commit();
    ctx.world().barrier();
    std::vector<int> ints(kLen);
    std::vector<float> floats(kLen);
    std::vector<double> doubles(kLen);
    win->lockAll();
    for (int r = 0; r < kRounds; ++r) {
      for (int i = 0; i < kLen; ++i) {
        ints[static_cast<std::size_t>(i)] = i + 1;
        floats[static_cast<std::size_t>(i)] = static_cast<float>(i % 3);
        doubles[static_cast<std::size_t>(i)] = 0.5 * i;
      }
      const std::int64_t fOff = kLen * sizeof(int);
      const std::int64_t dOff = fOff + kLen * sizeof(float);
      const std::int64_t vOff = dOff + kLen * sizeof(double);
      win->accumulate(ints.data(), kLen, type(MPI_INT), 0, 0, kLen, type(MPI_INT), Op::kSum);
      win->accumulate(floats.data(), kLen, type(MPI_FLOAT), 0, fOff, kLen, type(MPI_FLOAT),
                      Op::kSum);
      win->accumulate(doubles.data(), kLen, type(MPI_DOUBLE), 0, dOff, kLen, type(MPI_DOUBLE),
                      Op::kSum);
      win->accumulate(doubles.data(), kLen / 2, type(MPI_DOUBLE), 0, vOff, 1, *column, Op::kSum);
      if (r % 7 == 0) win->flush(0);
    }
    win->unlockAll();
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      const auto* mem = static_cast<const std::byte*>(win->base());
      for (int i = 0; i < kLen; ++i) {
        int iv = 0;
        float fv = 0;
        double dv = 0;
        double vv = 0;
        std::memcpy(&iv, mem + i * sizeof(int), sizeof iv);
        std::memcpy(&fv, mem + kLen * sizeof(int) + i * sizeof(float), sizeof fv);
        std::memcpy(&dv, mem + kLen * (sizeof(int) + sizeof(float)) + i * sizeof(double),
                    sizeof dv);
        std::memcpy(
            &vv, mem + kLen * (sizeof(int) + sizeof(float) + sizeof(double)) + i * sizeof(double),
            sizeof vv);
        EXPECT_EQ(iv, n * kRounds * (i + 1)) << "int " << i;
        EXPECT_EQ(fv, static_cast<float>(n * kRounds * (i % 3))) << "float " << i;
        EXPECT_EQ(dv, n * kRounds * 0.5 * i) << "double " << i;
        // The column takes every other element, values 0, 0.5, 1, ... in order.
        EXPECT_EQ(vv, i % 2 == 0 ? n * kRounds * 0.5 * (i / 2) : 0.0) << "column " << i;
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// One accumulate much larger than the inbox (hundreds of slots' worth) from every rank at once,
// then a get_accumulate of all of it: split, flow-controlled, exact.
TEST_P(Am, TransfersLargerThanTheInbox) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr std::size_t kCount = 60000;  // 480 KB of doubles: about 120 slots of 4 KiB
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), kCount * sizeof(double), sizeof(double));
    std::memset(win->base(), 0, kCount * sizeof(double));
    ctx.world().barrier();
    std::vector<double> v(kCount);
    for (std::size_t i = 0; i < kCount; ++i) v[i] = static_cast<double>(i % 1000);
    const int target = n - 1;
    win->lockAll();
    win->accumulate(v.data(), kCount, type(MPI_DOUBLE), target, 0, kCount, type(MPI_DOUBLE),
                    Op::kSum);
    win->flushAll();
    win->unlockAll();
    ctx.world().barrier();
    if (ctx.rank() == target) {
      const auto* mem = static_cast<const double*>(win->base());
      for (std::size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(mem[i], n * static_cast<double>(i % 1000)) << "element " << i << " at target";
      }
    }
    if (ctx.rank() == 0) {
      std::vector<double> got(kCount, -1);
      win->lock(LockType::kShared, target);
      win->getAccumulate(nullptr, 0, type(MPI_DOUBLE), got.data(), kCount, type(MPI_DOUBLE), target,
                         0, kCount, type(MPI_DOUBLE), Op::kNoOp);
      win->unlock(target);
      for (std::size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(got[i], n * static_cast<double>(i % 1000)) << "element " << i;
      }
    }
    ctx.world().barrier();
    win->free();
  });
}

// Replies: fetch_and_op on a 32-bit counter hands out every ticket exactly once, and a 32-bit
// compare-and-swap mutex guards a plain read-modify-write.
TEST_P(Am, RepliesTicketsAndMutex) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  constexpr int kRounds = 40;
  std::mutex mu;
  std::set<int> tickets;
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 3 * sizeof(int), sizeof(int));
    std::memset(win->base(), 0, 3 * sizeof(int));
    ctx.world().barrier();
    const int one = 1;
    const int me = ctx.rank() + 1;
    const int zero = 0;
    win->lockAll();
    for (int r = 0; r < kRounds; ++r) {
      int t = -1;
      win->fetchAndOp(&one, &t, type(MPI_INT), 0, 0, Op::kSum);
      win->flush(0);
      {
        std::lock_guard<std::mutex> l(mu);
        EXPECT_TRUE(tickets.insert(t).second) << "ticket " << t << " twice";
      }
      // Mutex at element 1, counter at element 2 (get + put while holding it).
      for (int prev = -1; prev != 0;) {
        win->compareAndSwap(&me, &zero, &prev, type(MPI_INT), 0, 1);
        win->flush(0);
      }
      int c = 0;
      win->get(&c, 1, type(MPI_INT), 0, 2, 1, type(MPI_INT));
      win->flush(0);
      ++c;
      win->put(&c, 1, type(MPI_INT), 0, 2, 1, type(MPI_INT));
      win->flush(0);
      int prev = -1;
      win->compareAndSwap(&zero, &me, &prev, type(MPI_INT), 0, 1);
      win->flush(0);
      EXPECT_EQ(prev, me) << "the mutex was not ours";
    }
    win->unlockAll();
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      const int* mem = static_cast<const int*>(win->base());
      EXPECT_EQ(mem[0], n * kRounds);
      EXPECT_EQ(mem[2], n * kRounds);
    }
    ctx.world().barrier();
    win->free();
  });
  EXPECT_EQ(tickets.size(), static_cast<std::size_t>(n * kRounds));
}

// Rank 0 spins for a compare-and-swap mutex in its own window while rank 1 holds it and
// releases it by active message: each of rank 0's attempts must also move the transport, since
// without a progress thread, over a transport that runs puts at the target (UCX over tcp,
// unit_ucx_over_tcp), rank 1's release reaches rank 0's inbox only when rank 0's worker runs.
TEST_P(Am, OwnerSpinningOnItsOwnWindowLetsOthersIn) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs an owner and a holder";
  spawn(n, transport, [&](Context& ctx) {
    auto win = Window::allocate(ctx.world(), sizeof(int), sizeof(int));
    *static_cast<int*>(win->base()) = 0;
    ctx.world().barrier();
    const int me = ctx.rank() + 1;
    const int zero = 0;
    int prev = -1;
    win->lockAll();
    if (ctx.rank() == 1) {
      win->compareAndSwap(&me, &zero, &prev, type(MPI_INT), 0, 0);
      win->flush(0);
      EXPECT_EQ(prev, 0);
    }
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      unsigned attempts = 0;
      for (prev = -1; prev != 0; ++attempts) {
        win->compareAndSwap(&me, &zero, &prev, type(MPI_INT), 0, 0);
        win->flush(0);
      }
      EXPECT_GT(attempts, 0U);
      win->compareAndSwap(&zero, &me, &prev, type(MPI_INT), 0, 0);
      win->flush(0);
      EXPECT_EQ(prev, me);
    } else if (ctx.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // rank 0 spins meanwhile
      win->compareAndSwap(&zero, &me, &prev, type(MPI_INT), 0, 0);
      win->flush(0);
      EXPECT_EQ(prev, me) << "the mutex was not rank 1's";
    }
    win->unlockAll();
    ctx.world().barrier();
    win->free();
  });
}

// The target computes and never calls into the runtime while the others accumulate into it
// and flush: its progress thread applies their messages, so they finish. (Without the thread
// they would wait until the target's next call: the "-nothread" parameter checks that case
// through a barrier instead.)
TEST_P(Am, TargetComputingDoesNotStallOrigins) {
  auto [transport, n] = GetParam();
  if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
  if (n < 2) GTEST_SKIP() << "needs a target and an origin";
  const bool thread = !transport.ends_with("-nothread");
  std::atomic<int> finished{0};
  spawn(n, transport, [&, n = n](Context& ctx) {
    auto win = Window::allocate(ctx.world(), 8 * sizeof(double), sizeof(double));
    std::memset(win->base(), 0, 8 * sizeof(double));
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      if (thread) {
        // "Computing": no call into the runtime until every origin is done or time is up.
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(30 * scale());
        while (finished.load() < n - 1 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        EXPECT_EQ(finished.load(), n - 1) << "origins stalled while the target computed";
      }
    } else {
      const double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      win->lock(LockType::kShared, 0);
      for (int r = 0; r < 20; ++r) {
        win->accumulate(v, 8, type(MPI_DOUBLE), 0, 0, 8, type(MPI_DOUBLE), Op::kSum);
        win->flush(0);
      }
      double old[8];
      win->getAccumulate(v, 8, type(MPI_DOUBLE), old, 8, type(MPI_DOUBLE), 0, 0, 8,
                         type(MPI_DOUBLE), Op::kSum);
      win->unlock(0);
      // The reply (from the progress thread, or pushed by the target when it serves its inbox
      // itself) is the elements as one message found them: k * (i + 1) for one k, at least this
      // origin's 20 accumulates and at most everybody's 21 operations but this one.
      const double k = old[0];
      EXPECT_GE(k, 20.0);
      EXPECT_LE(k, 21.0 * (n - 1) - 1);
      for (int i = 0; i < 8; ++i) EXPECT_EQ(old[i], k * (i + 1)) << "old value of element " << i;
      ++finished;
    }
    ctx.world().barrier();
    if (ctx.rank() == 0) {
      const auto* mem = static_cast<const double*>(win->base());
      for (int i = 0; i < 8; ++i) EXPECT_EQ(mem[i], (n - 1) * 21.0 * (i + 1)) << "element " << i;
    }
    ctx.world().barrier();
    win->free();
  });
}

std::vector<std::string> amTransports() {
  std::vector<std::string> t;
  for (const auto& name : transports()) {
    t.push_back(name + "+am");
    t.push_back(name + "+am-nothread");
  }
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    All, Am, ::testing::Combine(::testing::ValuesIn(amTransports()), ::testing::Values(1, 2, 3, 4)),
    [](const auto& p) {
      return paramName(std::get<0>(p.param)) + "_" + std::to_string(std::get<1>(p.param)) + "ranks";
    });

TEST(AmOptions, BadValuesAreRefused) {
  for (const char* bad : {"fast", "AM"}) {
    try {
      Options o;
      o.transport = "self";
      o.accumulate = bad;
      auto boots = bootstrap::makeInprocGroup(1);
      auto ctx = Context::create(std::move(boots[0]), o);
      ADD_FAILURE() << "accumulate=" << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.errorClass(), kErrArg) << e.what();
    }
  }
}

}  // namespace
}  // namespace onesided::test
