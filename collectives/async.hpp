// SPDX-License-Identifier: BSD-3-Clause
// Nonblocking collectives (MPI-3.1 §5.12): a communicator that starts one gets a queue and a
// thread of its own, which runs each operation's blocking algorithm over the communicator's
// scratch channel, in the order the program started them.
//
// A thread, so that an operation progresses while the program computes, as the standard
// intends: the algorithms wait on counters their peers write, which nothing else would poll.
// One per communicator, because MPI orders collectives per communicator only: two ranks may
// start operations on two communicators in opposite orders, which one shared queue would
// deadlock. The runtime is entered by one thread at a time (detail::CallLock): the queue's
// thread holds the lock while it runs an operation and lets go of it whenever the operation
// waits (Context::backoff), as a program thread does under MPI_THREAD_MULTIPLE.
//
// Anything else that uses the communicator's channel (a blocking collective, a constructor,
// MPI_Comm_free) first waits for the queue to empty (drain): MPI orders it after the
// operations started before it, and the channel serves one operation at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace onesided::detail {
class CallLock;
}

namespace onesided::coll {

/// One started operation: done() once its job has run (or failed: error()).
class AsyncOp {
 public:
  [[nodiscard]] bool done() const noexcept { return done_.load(std::memory_order_acquire); }
  /// What the job threw (null if it succeeded); read after done().
  [[nodiscard]] std::exception_ptr error() const noexcept { return error_; }
  /// Waits until done(), with the call lock released (which the job needs). From a thread that
  /// is not the queue's.
  void wait(onesided::detail::CallLock* lock) const;

 private:
  friend class AsyncQueue;
  std::function<void()> job_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

class AsyncQueue {
 public:
  /// `lock`: the runtime's call lock, which the queue's thread takes for each job.
  explicit AsyncQueue(onesided::detail::CallLock& lock);
  /// Waits for every started operation, then ends the thread.
  ~AsyncQueue();
  AsyncQueue(const AsyncQueue&) = delete;
  AsyncQueue& operator=(const AsyncQueue&) = delete;

  /// Starts `job` after every job posted before it; it runs under the call lock. Called with
  /// the call lock held (as drain() and idle() are).
  std::shared_ptr<AsyncOp> post(std::function<void()> job);
  /// Whether every posted job has run.
  [[nodiscard]] bool idle() const noexcept;
  /// Waits (call lock released) until idle().
  void drain();

 private:
  void run();

  onesided::detail::CallLock& lock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<AsyncOp>> queue_;  // the front is running or next
  std::shared_ptr<AsyncOp> last_;  // the latest posted; under the call lock, as post() is
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace onesided::coll
