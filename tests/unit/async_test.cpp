// SPDX-License-Identifier: BSD-3-Clause
// The nonblocking collectives' queue (collectives/async.hpp) with the call lock: jobs run in
// posting order under the lock, while another thread holds and releases the lock as a program
// thread's calls do; errors come back through the op; drain and the destructor wait.
#include "collectives/async.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "call_lock.hpp"

namespace onesided::coll {
namespace {

TEST(AsyncQueue, RunsJobsInOrderUnderTheCallLock) {
  detail::CallLock lock;
  std::vector<int> order;  // written by the jobs, read by this thread under the lock
  int shared = 0;          // touched by both threads, only under the lock
  std::vector<std::shared_ptr<AsyncOp>> ops;
  {
    AsyncQueue q(lock);
    const std::lock_guard g(lock);  // posting happens inside a call, holding the lock
    for (int i = 0; i < 50; ++i) {
      ops.push_back(q.post([&, i] {
        order.push_back(i);
        ++shared;
        lock.yield();  // as a collective's wait lets other calls in
      }));
      ++shared;  // this thread's own calls meanwhile
      if (i % 7 == 0) {
        const detail::CallLock::Released r(&lock);
        std::this_thread::yield();
      }
    }
    ops.back()->wait(&lock);
    EXPECT_TRUE(q.idle());
    EXPECT_EQ(shared, 100);
  }
  ASSERT_EQ(order.size(), 50U);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(AsyncQueue, ReportsAJobsErrorAndGoesOn) {
  detail::CallLock lock;
  AsyncQueue q(lock);
  const std::lock_guard g(lock);
  auto bad = q.post([] { throw std::runtime_error("no"); });
  int ran = 0;
  auto good = q.post([&] { ran = 1; });
  q.drain();
  EXPECT_TRUE(bad->done());
  EXPECT_NE(bad->error(), nullptr);
  EXPECT_TRUE(good->done());
  EXPECT_EQ(good->error(), nullptr);
  EXPECT_EQ(ran, 1);
}

TEST(AsyncQueue, DestructorWaitsForPostedJobs) {
  detail::CallLock lock;
  std::atomic<int> ran{0};
  {
    AsyncQueue q(lock);
    const std::lock_guard g(lock);
    for (int i = 0; i < 10; ++i) q.post([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(CallLock, ReleasedLetsOtherThreadsInAndRestoresDepth) {
  detail::CallLock lock;
  lock.lock();
  lock.lock();  // nested call
  std::atomic<bool> entered{false};
  std::thread other([&] {
    const std::lock_guard g(lock);
    entered = true;
  });
  {
    const detail::CallLock::Released r(&lock);
    while (!entered) std::this_thread::yield();
  }
  other.join();
  lock.unlock();
  lock.unlock();                     // both levels came back
  EXPECT_TRUE(lock.release() == 0);  // not held any more
}

}  // namespace
}  // namespace onesided::coll
