// SPDX-License-Identifier: BSD-3-Clause
// The registration cache with a fake registrar that records what is registered: hits, merging,
// the bounds, holds across eviction and invalidation, and (where UCX's memory events exist) that
// munmap really empties it.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "transport/regcache.hpp"

namespace onesided::transport {
namespace {

class FakeRegistrar {
 public:
  RegCache::RegisterFn reg() {
    return [this](void* base, std::size_t len, RegCache::Registration& out) {
      if (refuse_) return false;
      const auto lo = reinterpret_cast<std::uintptr_t>(base);
      live_.emplace(lo, lo + len);
      out.handle = base;
      out.lkey = ++next_;
      lens_[out.lkey] = len;
      return true;
    };
  }
  RegCache::DeregisterFn dereg() {
    return [this](const RegCache::Registration& r) {
      const auto lo = reinterpret_cast<std::uintptr_t>(r.handle);
      auto it = live_.find({lo, lo + lens_.at(r.lkey)});
      ASSERT_NE(it, live_.end()) << "deregistered twice";
      live_.erase(it);
    };
  }
  [[nodiscard]] std::size_t live() const { return live_.size(); }
  std::uint32_t registrations() const { return next_; }
  void refuse(bool r) { refuse_ = r; }

 private:
  std::multiset<std::pair<std::uintptr_t, std::uintptr_t>> live_;
  std::map<std::uint32_t, std::size_t> lens_;
  std::uint32_t next_ = 0;
  bool refuse_ = false;
};

constexpr std::uintptr_t kPage = 4096;
const void* at(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }  // NOLINT

TEST(RegCache, HitsWithinARegistrationAndMergesOverlaps) {
  FakeRegistrar f;
  {
    RegCache c(f.reg(), f.dereg(), {}, false);
    ASSERT_TRUE(c.active());
    RegCache::Entry* a = c.acquire(at(100 * kPage + 10), 3 * kPage);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->lo, 100 * kPage);  // whole pages
    EXPECT_EQ(a->hi, 104 * kPage);
    c.release(a);
    RegCache::Entry* b = c.acquire(at(101 * kPage), kPage);  // inside: a hit
    EXPECT_EQ(b, a);
    c.release(b);
    EXPECT_EQ(c.stats().hits, 1U);
    // Overlapping the end: one registration over both, the old one deregistered.
    RegCache::Entry* m = c.acquire(at(103 * kPage), 4 * kPage);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->lo, 100 * kPage);
    EXPECT_EQ(m->hi, 107 * kPage);
    EXPECT_EQ(c.entries(), 1U);
    EXPECT_EQ(f.live(), 1U);
    c.release(m);
  }
  EXPECT_EQ(f.live(), 0U) << "the destructor deregisters everything";
}

TEST(RegCache, StaysWithinItsBoundsLeastRecentlyUsedFirst) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {.maxEntries = 8, .maxBytes = 64 * kPage}, false);
  for (std::uintptr_t i = 0; i < 100; ++i) {
    RegCache::Entry* e = c.acquire(at((1000 + 10 * i) * kPage), 2 * kPage);
    ASSERT_NE(e, nullptr);
    c.release(e);
    ASSERT_LE(c.entries(), 8U);
    ASSERT_LE(c.bytes(), 64 * kPage);
    ASSERT_EQ(f.live(), c.entries());
  }
  // The 8 most recent survive; touching the oldest of them keeps it over the next newcomer.
  RegCache::Entry* oldest = c.acquire(at((1000 + 10 * 92) * kPage), kPage);
  EXPECT_EQ(c.stats().hits, 1U);
  c.release(oldest);
  c.release(c.acquire(at(5000 * kPage), kPage));
  RegCache::Entry* again = c.acquire(at((1000 + 10 * 92) * kPage), kPage);
  EXPECT_EQ(c.stats().hits, 2U) << "the recently used entry was evicted";
  c.release(again);
  // Bytes bound: a big registration evicts several small ones.
  c.release(c.acquire(at(9000 * kPage), 60 * kPage));
  EXPECT_LE(c.bytes(), 64 * kPage);
  // Larger than the whole cache: refused (the transport copies instead).
  EXPECT_EQ(c.acquire(at(20000 * kPage), 65 * kPage), nullptr);
}

TEST(RegCache, HeldEntriesOutliveEvictionAndInvalidation) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {.maxEntries = 1, .maxBytes = 1 << 30}, false);
  RegCache::Entry* a = c.acquire(at(100 * kPage), kPage);
  RegCache::hold(a);  // two requests use it
  c.invalidate(100 * kPage, 101 * kPage);
  RegCache::Entry* b = c.acquire(at(100 * kPage), kPage);  // the unmap is applied first
  ASSERT_NE(b, a) << "an invalidated registration was handed out again";
  EXPECT_EQ(c.stats().invalidations, 1U);
  EXPECT_EQ(f.live(), 2U) << "the held registration must stay until its requests complete";
  c.release(a);
  EXPECT_EQ(f.live(), 2U);
  c.release(a);
  EXPECT_EQ(f.live(), 1U);
  // Full (one entry) and that entry held: a new one is registered anyway, the held one kept.
  RegCache::Entry* d = c.acquire(at(300 * kPage), kPage);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(c.entries(), 2U);
  c.release(b);
  c.release(d);
  c.release(c.acquire(at(500 * kPage), kPage));  // back within the bound at the next acquire
  EXPECT_EQ(c.entries(), 1U);
  EXPECT_EQ(f.live(), 1U);
}

TEST(RegCache, InvalidationCoversPartialOverlapsAndOverflow) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {}, false);
  for (std::uintptr_t i = 0; i < 4; ++i) c.release(c.acquire(at((100 + 10 * i) * kPage), kPage));
  c.invalidate(110 * kPage + 100, 110 * kPage + 200);  // a few bytes inside the second
  c.release(c.acquire(at(1 * kPage), kPage));          // applies it
  EXPECT_EQ(c.stats().invalidations, 1U);
  EXPECT_EQ(c.entries(), 4U);
  for (int i = 0; i < 200; ++i) c.invalidate(1, 2);  // overflows the queue: drop everything
  c.release(c.acquire(at(1 * kPage), kPage));
  EXPECT_EQ(c.entries(), 1U);
}

TEST(RegCache, ARefusedRegistrationIsNoEntry) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {}, false);
  c.release(c.acquire(at(100 * kPage), kPage));
  f.refuse(true);
  EXPECT_EQ(c.acquire(at(200 * kPage), kPage), nullptr);
  EXPECT_EQ(c.stats().failures, 1U);
  EXPECT_EQ(c.entries(), 0U) << "a refusal evicts unheld entries and retries once";
  f.refuse(false);
  RegCache::Entry* e = c.acquire(at(200 * kPage), kPage);
  EXPECT_NE(e, nullptr);
  c.release(e);
}

TEST(RegCache, TurnedOffByZeroLimits) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {.maxEntries = 0, .maxBytes = 0}, false);
  EXPECT_FALSE(c.active());
}

#ifdef ONESIDED_HAVE_UCX
TEST(RegCache, MunmapAndMapFixedEmptyIt) {
  FakeRegistrar f;
  RegCache c(f.reg(), f.dereg(), {}, true);
  ASSERT_TRUE(c.active()) << "no UCX memory events in this process";
  constexpr std::size_t kLen = 1 << 20;
  void* p = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  c.release(c.acquire(p, kLen));
  ASSERT_EQ(munmap(p, kLen), 0);
  void* q = mmap(p, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(q, MAP_FAILED);
  RegCache::Entry* e = c.acquire(q, kLen);
  if (q == p) {
    EXPECT_EQ(c.stats().hits, 0U) << "a registration of unmapped memory was reused";
  }
  EXPECT_EQ(c.stats().invalidations, 1U);
  c.release(e);
  // mmap MAP_FIXED over a registered range replaces its pages too.
  void* r =
      mmap(q, kLen / 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(r, q);
  c.release(c.acquire(q, kLen));
  EXPECT_EQ(c.stats().invalidations, 2U);
  EXPECT_EQ(c.stats().hits, 0U);
  munmap(q, kLen);
}
#endif

}  // namespace
}  // namespace onesided::transport
