// SPDX-License-Identifier: BSD-3-Clause
// The process's unmap events (UCX's ucm hooks: munmap, mmap over a range, mremap, brk, madvise,
// shmdt), queued for a cache that must forget what it knew about memory the program gave up:
// the registration cache (a registration pins the old physical pages) and the shared send
// pages (a memfd the new memory is not). The hook may run on any thread, inside the unmapping
// call, so it only queues under a spinlock, without allocating; the owner applies the queue
// (drain) before it next uses what it caches.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace onesided::transport {

class UnmapEvents {
 public:
  UnmapEvents() = default;
  ~UnmapEvents();
  UnmapEvents(const UnmapEvents&) = delete;
  UnmapEvents& operator=(const UnmapEvents&) = delete;

  /// Hooks the process's unmap events; false (and the reason, logged by `what`) when they
  /// cannot reach this queue (built without UCX, UCX_MEM_EVENTS=no).
  bool listen(const char* what);
  [[nodiscard]] bool listening() const noexcept { return listening_; }

  /// Queues [lo, hi) as unmapped (the hook's side: any thread, no allocation).
  void push(std::uintptr_t lo, std::uintptr_t hi) noexcept {
    while (lock_.test_and_set(std::memory_order_acquire)) {
    }
    if (count_ < kPending) {
      lo_[count_] = lo;
      hi_[count_] = hi;
      ++count_;
    } else {
      all_ = true;
    }
    any_.store(true, std::memory_order_release);
    lock_.clear(std::memory_order_release);
  }

  /// Calls f(lo, hi) for every queued range, in order, or f(0, UINTPTR_MAX) once when the
  /// queue overflowed, and empties it.
  template <class F>
  void drain(F&& f) {
    if (!any_.load(std::memory_order_acquire)) return;
    std::uintptr_t lo[kPending];
    std::uintptr_t hi[kPending];
    while (lock_.test_and_set(std::memory_order_acquire)) {
    }
    const int n = count_;
    std::copy_n(lo_, n, lo);
    std::copy_n(hi_, n, hi);
    const bool all = all_;
    count_ = 0;
    all_ = false;
    any_.store(false, std::memory_order_relaxed);
    lock_.clear(std::memory_order_release);
    if (all) {
      f(std::uintptr_t{0}, UINTPTR_MAX);
      return;
    }
    for (int i = 0; i < n; ++i) f(lo[i], hi[i]);
  }

 private:
  static constexpr int kPending = 64;
  bool listening_ = false;
  std::atomic<bool> any_{false};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  std::uintptr_t lo_[kPending] = {};
  std::uintptr_t hi_[kPending] = {};
  int count_ = 0;
  bool all_ = false;  // the queue overflowed: everything counts as unmapped
};

}  // namespace onesided::transport
