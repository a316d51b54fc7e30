// SPDX-License-Identifier: BSD-3-Clause
#include "transport/regcache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "log.hpp"

namespace onesided::transport {
RegCache::RegCache(RegisterFn reg, DeregisterFn dereg, Limits limits, bool listen)
    : reg_(std::move(reg)), dereg_(std::move(dereg)), limits_(limits) {
  const long page = sysconf(_SC_PAGESIZE);
  pageMask_ = static_cast<std::uintptr_t>(page > 0 ? page : 4096) - 1;
  if (limits_.maxEntries == 0 || limits_.maxBytes == 0) return;  // turned off
  if (!listen) {
    active_ = true;
    return;
  }
  active_ = events_.listen(
      "registration cache off (unregistered buffers are copied through bounce buffers)");
}

RegCache::~RegCache() {
  for (Entry* e : lru_) {
    if (e->holds > 0) log::core().warn("registration cache: an entry is still held at the end");
    destroy(e);
  }
  if (retired_ > 0) {
    log::core().warn("registration cache: {} retired entries still held at the end", retired_);
  }
}

void RegCache::invalidate(std::uintptr_t lo, std::uintptr_t hi) noexcept { events_.push(lo, hi); }

void RegCache::drain() {
  events_.drain([this](std::uintptr_t lo, std::uintptr_t hi) { drop(lo, hi); });
}

void RegCache::drop(std::uintptr_t lo, std::uintptr_t hi) {
  if (map_.empty() || lo >= hi) return;
  auto it = map_.upper_bound(lo);
  if (it != map_.begin()) --it;
  while (it != map_.end() && it->second->lo < hi) {
    Entry* e = it->second;
    ++it;
    if (e->hi > lo) {
      ++stats_.invalidations;
      retire(e);
    }
  }
}

void RegCache::retire(Entry* e) {
  map_.erase(e->lo);
  lru_.erase(e->lru);
  bytes_ -= e->hi - e->lo;
  e->cached = false;
  if (e->holds == 0) {
    destroy(e);
  } else {
    ++retired_;
  }
}

void RegCache::destroy(Entry* e) {
  dereg_(e->reg);
  delete e;  // NOLINT(cppcoreguidelines-owning-memory): entries are owned by the map / holds
}

RegCache::Entry* RegCache::acquire(const void* p, std::size_t len) {
  drain();
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t b = a + len;
  auto it = map_.upper_bound(a);
  if (it != map_.begin()) {
    Entry* e = std::prev(it)->second;
    if (e->hi >= b) {
      ++stats_.hits;
      ++e->holds;
      lru_.splice(lru_.begin(), lru_, e->lru);
      return e;
    }
  }
  ++stats_.misses;
  // One registration over the request's pages and every cached entry they overlap.
  std::uintptr_t lo = a & ~pageMask_;
  std::uintptr_t hi = (b + pageMask_) & ~pageMask_;
  it = map_.upper_bound(lo);
  if (it != map_.begin()) --it;
  while (it != map_.end() && it->second->lo < hi) {
    Entry* e = it->second;
    ++it;
    if (e->hi > lo) {
      lo = std::min(lo, e->lo);
      hi = std::max(hi, e->hi);
      retire(e);
    }
  }
  // Make room: least recently used entries that no request holds go first.
  auto evictFor = [&](std::size_t need) {
    for (auto victim = lru_.end(); victim != lru_.begin();) {
      --victim;
      if (map_.size() < limits_.maxEntries && bytes_ + need <= limits_.maxBytes) return;
      Entry* e = *victim;
      if (e->holds > 0) continue;
      auto next = victim;  // retire() erases it from the list
      ++next;
      ++stats_.evictions;
      retire(e);
      victim = next;
    }
  };
  if (hi - lo > limits_.maxBytes) {
    ++stats_.failures;  // larger than the whole cache may pin
    return nullptr;
  }
  evictFor(hi - lo);
  Registration r;
  bool ok = reg_(reinterpret_cast<void*>(lo), hi - lo, r);  // NOLINT(performance-no-int-to-ptr)
  if (!ok && !map_.empty()) {
    // The locked-memory limit, perhaps: free every unheld registration and try once more.
    evictFor(limits_.maxBytes + 1);
    ok = reg_(reinterpret_cast<void*>(lo), hi - lo, r);  // NOLINT(performance-no-int-to-ptr)
  }
  if (!ok) {
    ++stats_.failures;
    return nullptr;
  }
  auto* e = new Entry;  // NOLINT(cppcoreguidelines-owning-memory)
  e->lo = lo;
  e->hi = hi;
  e->reg = r;
  e->holds = 1;
  lru_.push_front(e);
  e->lru = lru_.begin();
  map_[lo] = e;
  bytes_ += hi - lo;
  return e;
}

void RegCache::release(Entry* e) {
  if (--e->holds > 0 || e->cached) return;
  --retired_;
  destroy(e);
}

}  // namespace onesided::transport
