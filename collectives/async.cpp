// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/async.hpp"

#include <utility>

#include "call_lock.hpp"

namespace onesided::coll {

void AsyncOp::wait(onesided::detail::CallLock* lock) const {
  if (done()) return;
  const onesided::detail::CallLock::Released released(lock);
  done_.wait(false, std::memory_order_acquire);
}

AsyncQueue::AsyncQueue(onesided::detail::CallLock& lock)
    : lock_(lock), thread_([this] { run(); }) {}

AsyncQueue::~AsyncQueue() {
  drain();
  {
    const std::lock_guard g(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  // The thread may be between jobs, about to take the call lock this thread holds: let go.
  const onesided::detail::CallLock::Released released(&lock_);
  thread_.join();
}

std::shared_ptr<AsyncOp> AsyncQueue::post(std::function<void()> job) {
  auto op = std::make_shared<AsyncOp>();
  op->job_ = std::move(job);
  {
    const std::lock_guard g(mu_);
    queue_.push_back(op);
    last_ = op;
  }
  cv_.notify_one();
  return op;
}

bool AsyncQueue::idle() const noexcept { return last_ == nullptr || last_->done(); }

void AsyncQueue::drain() {
  // A copy: while this waits, another thread may post (under MPI_THREAD_MULTIPLE).
  const std::shared_ptr<AsyncOp> last = last_;
  if (last != nullptr) last->wait(&lock_);
}

void AsyncQueue::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    const std::shared_ptr<AsyncOp> op = queue_.front();
    lk.unlock();
    {
      const std::lock_guard g(lock_);
      try {
        op->job_();
      } catch (...) {
        op->error_ = std::current_exception();
      }
      op->job_ = nullptr;  // what it holds (datatypes, say) goes under the lock
    }
    op->done_.store(true, std::memory_order_release);
    op->done_.notify_all();
    lk.lock();
    queue_.pop_front();
  }
}

}  // namespace onesided::coll
