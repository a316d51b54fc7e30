// SPDX-License-Identifier: BSD-3-Clause
// A bounded registration cache for origin buffers the program did not register (heap and stack
// memory handed to MPI_Put / MPI_Get). Registering costs a system call and pins pages, so a
// buffer used again should find its registration; but a registration pins the *physical* pages
// that were mapped when it was made: when the program frees the memory (munmap, brk, madvise)
// and the address is mapped again, an old registration would send the old pages' bytes. So the
// cache listens to the process's unmap events (UCX's ucm hooks: mmap, munmap, mremap, brk,
// madvise, shmdt) and drops every registration that overlaps unmapped memory before it is used
// again. Without those events (built without UCX, or UCX_MEM_EVENTS=no) the cache stays off and
// the transport copies through its bounce buffers instead: slower, never stale.
//
// Bounded in entries and bytes; least recently used registrations that no request holds are
// evicted first. A registration held by posted requests stays valid until they release it,
// even when it is evicted or invalidated meanwhile. Entries never overlap: a request that
// overlaps cached registrations gets one registration covering all of them.
//
// Not thread-safe except for the unmap events, which may arrive on any thread: they are queued
// under a spinlock without allocating (the hook must not) and applied by the next acquire().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>

#include "transport/unmap_events.hpp"

namespace onesided::transport {

class RegCache {
 public:
  /// What the transport's registration gives back.
  struct Registration {
    void* handle = nullptr;
    std::uint32_t lkey = 0;
  };
  /// Registers [base, base + len); false when it cannot (the memory is not writable, the
  /// locked-memory limit is reached, ...).
  using RegisterFn = std::function<bool(void* base, std::size_t len, Registration& out)>;
  using DeregisterFn = std::function<void(const Registration&)>;

  struct Limits {
    std::size_t maxEntries = 1024;
    std::size_t maxBytes = std::size_t{1} << 30;
  };

  struct Entry {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    Registration reg;
    int holds = 0;
    bool cached = true;  // in the map (false: evicted or invalidated, waiting for its holds)
    std::list<Entry*>::iterator lru;
  };

  struct Stats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t evictions = 0;
    std::uint64_t invalidations = 0;
    std::uint64_t failures = 0;  // registrations that could not be made
  };

  /// `listen`: hook the process's unmap events (false only for tests that feed invalidate()).
  RegCache(RegisterFn reg, DeregisterFn dereg, Limits limits, bool listen = true);
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  /// Whether the cache may be used: unmap events reach it.
  [[nodiscard]] bool active() const { return active_; }
  /// A registration covering [p, p + len), held once; nullptr when none can be made.
  Entry* acquire(const void* p, std::size_t len);
  /// One more hold on an entry acquire() returned.
  static void hold(Entry* e) { ++e->holds; }
  /// Drops one hold.
  void release(Entry* e);
  /// Queues [lo, hi) as unmapped (what the unmap hook calls; safe on any thread, no allocation).
  void invalidate(std::uintptr_t lo, std::uintptr_t hi) noexcept;

  [[nodiscard]] std::size_t entries() const { return map_.size(); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  [[nodiscard]] const Stats& stats() const { return stats_; }

 private:
  void drain();
  void drop(std::uintptr_t lo, std::uintptr_t hi);
  /// Takes `e` out of the map and the LRU list; deregisters it now if nothing holds it.
  void retire(Entry* e);
  void destroy(Entry* e);

  RegisterFn reg_;
  DeregisterFn dereg_;
  Limits limits_;
  bool active_ = false;
  std::map<std::uintptr_t, Entry*> map_;  // by lo; entries never overlap
  std::list<Entry*> lru_;                 // most recently used first
  std::size_t bytes_ = 0;
  std::size_t retired_ = 0;  // entries out of the map but still held
  Stats stats_;
  std::uintptr_t pageMask_ = 4095;

  UnmapEvents events_;  // waiting for drain()
};

}  // namespace onesided::transport
