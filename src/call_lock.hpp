// SPDX-License-Identifier: BSD-3-Clause
// MPI_THREAD_MULTIPLE: every MPI call of a process runs under one lock, which a call that waits
// (a receive, a flush, a collective) lets go of while it backs off, so that the other threads'
// calls run meanwhile, among them the one it waits for (a send to this rank from another thread).
// Reentrant: a call made from inside another (a user operation's callback) does not deadlock.
// Programs at lower thread levels take it only once they start a nonblocking collective, whose
// thread (collectives/async.hpp) enters the runtime too.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>

namespace onesided::detail {

class CallLock {
 public:
  void lock() {
    const auto me = std::this_thread::get_id();
    if (owner_.load(std::memory_order_relaxed) == me) {
      ++depth_;
      return;
    }
    mu_.lock();
    owner_.store(me, std::memory_order_relaxed);
    depth_ = 1;
  }
  void unlock() {
    if (--depth_ == 0) {
      owner_.store(std::thread::id(), std::memory_order_relaxed);
      mu_.unlock();
    }
  }
  /// From a waiting call on the thread that holds the lock: lets the other threads in, then
  /// takes it back. Nothing when this thread does not hold it.
  void yield() {
    const int depth = release();
    if (depth == 0) return;
    std::this_thread::yield();
    reacquire(depth);
  }
  /// Lets go of the lock entirely if this thread holds it (for a sleep, or a wait on another
  /// thread's work); returns what reacquire() needs, 0 when it was not held.
  int release() {
    if (owner_.load(std::memory_order_relaxed) != std::this_thread::get_id()) return 0;
    const int depth = depth_;
    depth_ = 0;
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
    return depth;
  }
  void reacquire(int depth) {
    if (depth == 0) return;
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    depth_ = depth;
  }

  /// Holds the lock released for a scope (nothing when this thread did not hold it).
  class Released {
   public:
    explicit Released(CallLock* l) : lock_(l), depth_(l != nullptr ? l->release() : 0) {}
    ~Released() {
      if (lock_ != nullptr) lock_->reacquire(depth_);
    }
    Released(const Released&) = delete;
    Released& operator=(const Released&) = delete;

   private:
    CallLock* lock_;
    int depth_;
  };

 private:
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
  int depth_ = 0;  // only its owner reads or writes it
};

}  // namespace onesided::detail
