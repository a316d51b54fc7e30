// SPDX-License-Identifier: BSD-3-Clause
// The verbs transport on its own: two transports in this process (each with its own device
// context, PD, CQ and listener thread) talk through the HCA. Runs where an RDMA port is active:
// in CI, inside the soft-RoCE VM (tests/rxe); skipped elsewhere.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "onesided/errors.hpp"
#include "transport/transport.hpp"

namespace onesided::transport {
namespace {

class Verbs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!verbsPortActive()) GTEST_SKIP() << "no active RDMA port";
    a_ = makeVerbsTransport();
    b_ = makeVerbsTransport();
  }
  /// a's endpoint to b.
  std::unique_ptr<Endpoint> connectAB() { return a_->connect(1, b_->address()); }

  std::unique_ptr<Transport> a_;
  std::unique_ptr<Transport> b_;
};

TEST_F(Verbs, PutAndGetEverySizeAndBufferKind) {
  auto ep = connectAB();
  constexpr std::size_t kWin = 3 << 20;
  auto win = b_->registerMemory(nullptr, kWin, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  auto* target = static_cast<std::uint8_t*>(win->base());
  // Registered origin memory (its own lkey), and plain heap memory (bounce buffers).
  auto reg = a_->registerMemory(nullptr, kWin, Placement::kAllocate, Access::kLocal);
  std::vector<std::uint8_t> heap(kWin);
  for (std::size_t n : {std::size_t{1}, std::size_t{8}, std::size_t{200}, std::size_t{4096},
                        std::size_t{65537}, std::size_t{1} << 20, std::size_t{3} << 20}) {
    for (int kind = 0; kind < 2; ++kind) {
      auto* src = kind == 0 ? static_cast<std::uint8_t*>(reg->base()) : heap.data();
      for (std::size_t i = 0; i < n; ++i) src[i] = static_cast<std::uint8_t>(i * 7 + n + kind);
      std::memset(target, 0, n);
      Iov iov{src, n};
      ep->put({&iov, 1}, base, *key);
      ep->flush();
      ASSERT_EQ(std::memcmp(target, src, n), 0) << "put of " << n << " bytes, kind " << kind;
      std::vector<std::uint8_t> back(n + 1, 0xee);
      Iov in{back.data(), n};
      ep->get({&in, 1}, base, *key);
      ep->flush();
      ASSERT_EQ(std::memcmp(back.data(), target, n), 0) << "get of " << n << " bytes";
      EXPECT_EQ(back[n], 0xee) << "get wrote past its buffer";
    }
  }
}

TEST_F(Verbs, ManySmallPutsNeverOverflowTheQueues) {
  auto ep = connectAB();
  auto win = b_->registerMemory(nullptr, 1 << 20, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  std::vector<std::uint64_t> values(20000);
  std::iota(values.begin(), values.end(), 1);
  for (std::size_t i = 0; i < values.size(); ++i) {
    Iov iov{&values[i], 8};
    ep->put({&iov, 1}, base + (i % 4096) * 8, *key);
  }
  ep->flush();
  const auto* t = static_cast<const std::uint64_t*>(win->base());
  for (std::size_t slot = 0; slot < 4096; ++slot) {
    std::size_t last = slot;
    while (last + 4096 < values.size()) last += 4096;
    ASSERT_EQ(t[slot], values[last]) << "slot " << slot;
  }
}

TEST_F(Verbs, Atomics) {
  auto ep = connectAB();
  auto win = b_->registerMemory(nullptr, 64, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  auto* w64 = static_cast<std::uint64_t*>(win->base());
  w64[0] = 40;
  w64[1] = 0x1111111122222222ULL;
  std::uint64_t old = 0;
  ep->atomic(AtomicOp::kFetchAdd, 8, 2, 0, &old, base, *key);
  EXPECT_EQ(old, 40U);
  EXPECT_EQ(w64[0], 42U);
  ep->atomic(AtomicOp::kCompareSwap, 8, 7, 41, &old, base, *key);  // fails: 42 != 41
  EXPECT_EQ(old, 42U);
  EXPECT_EQ(w64[0], 42U);
  ep->atomic(AtomicOp::kCompareSwap, 8, 7, 42, &old, base, *key);
  EXPECT_EQ(w64[0], 7U);
  ep->atomic(AtomicOp::kSwap, 8, 99, 0, &old, base, *key);
  EXPECT_EQ(old, 7U);
  EXPECT_EQ(w64[0], 99U);
  // 4-byte operations change only their half of the word.
  std::uint32_t old32 = 0;
  ep->atomic(AtomicOp::kFetchAdd, 4, 5, 0, &old32, base + 8, *key);
  EXPECT_EQ(old32, 0x22222222U);
  EXPECT_EQ(w64[1], 0x1111111122222227ULL);
  ep->atomic(AtomicOp::kSwap, 4, 0xabcdef01U, 0, &old32, base + 12, *key);
  EXPECT_EQ(old32, 0x11111111U);
  EXPECT_EQ(w64[1], 0xabcdef0122222227ULL);
  ep->atomic(AtomicOp::kCompareSwap, 4, 1, 0x22222227U, &old32, base + 8, *key);
  EXPECT_EQ(w64[1], 0xabcdef0100000001ULL);
  // A misaligned target is an error at the origin, before anything is posted.
  try {
    ep->atomic(AtomicOp::kFetchAdd, 8, 1, 0, &old, base + 4, *key);
    FAIL() << "misaligned 8-byte atomic was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.errorClass(), kErrArg);
    EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w64[0], 99U);
}

TEST_F(Verbs, PostAddLandsAfterTheWritesBeforeIt) {
  // The accumulate messages' stamp (Endpoint::postAdd): a watcher that sees the word it adds to
  // must see the whole block written before it, with no flush in between.
  auto ep = connectAB();
  constexpr std::size_t kBlock = 16384;  // several packets, through bounce buffers
  auto win = b_->registerMemory(nullptr, kBlock + 64, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  auto* block = static_cast<std::uint8_t*>(win->base());
  std::memset(block, 0, kBlock + 64);
  std::atomic_ref<std::uint64_t> flag(*reinterpret_cast<std::uint64_t*>(block + kBlock));
  std::atomic<std::uint64_t> seen{0};
  std::atomic<int> torn{0};
  constexpr std::uint64_t kRounds = 300;
  std::thread watcher([&] {
    for (std::uint64_t k = 1; k <= kRounds; ++k) {
      while (flag.load(std::memory_order_acquire) < k) std::this_thread::yield();
      const auto want = static_cast<std::uint8_t>(k);
      if (std::any_of(block, block + kBlock, [&](std::uint8_t b) { return b != want; })) {
        torn.fetch_add(1);
      }
      seen.store(k, std::memory_order_release);
    }
  });
  std::vector<std::uint8_t> src(kBlock);
  for (std::uint64_t k = 1; k <= kRounds; ++k) {
    std::memset(src.data(), static_cast<int>(k & 0xff), kBlock);
    Iov iov{src.data(), kBlock};
    ep->put({&iov, 1}, base, *key);
    ASSERT_TRUE(ep->postAdd(1, base + kBlock, *key, transport::AddAfter::kWrites));
    ep->post();
    while (seen.load(std::memory_order_acquire) < k) std::this_thread::yield();
  }
  watcher.join();
  ep->flush();
  EXPECT_EQ(torn.load(), 0) << "the added word was seen before the block written before it";
  EXPECT_EQ(flag.load(), kRounds);
  try {
    (void)ep->postAdd(1, base + 4, *key, transport::AddAfter::kWrites);
    FAIL() << "misaligned remote add was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
  }
}

TEST_F(Verbs, PostAddAfterEverythingWaitsForTheReadsBeforeIt) {
  // A lock's release or a PSCW completion notice (Window::addAfterOperations): the target may
  // overwrite what the origin read as soon as it sees the word added to, so the add must not
  // run before the reads issued before it are done.
  auto ep = connectAB();
  constexpr std::size_t kBlock = 16384;  // several packets
  auto win = b_->registerMemory(nullptr, kBlock + 64, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  auto* block = static_cast<std::uint8_t*>(win->base());
  std::memset(block, 1, kBlock);
  std::memset(block + kBlock, 0, 64);
  std::atomic_ref<std::uint64_t> flag(*reinterpret_cast<std::uint64_t*>(block + kBlock));
  std::atomic<std::uint64_t> seen{0};
  constexpr std::uint64_t kRounds = 200;
  std::thread owner([&] {
    for (std::uint64_t k = 1; k <= kRounds; ++k) {
      while (flag.load(std::memory_order_acquire) < k) std::this_thread::yield();
      std::memset(block, 0xee, kBlock);  // what a read still running would see
      std::memset(block, static_cast<int>((k + 1) & 0x7f), kBlock);
      seen.store(k, std::memory_order_release);
    }
  });
  std::vector<std::uint8_t> dst(kBlock);
  int torn = 0;
  for (std::uint64_t k = 1; k <= kRounds; ++k) {
    Iov iov{dst.data(), kBlock};
    ep->get({&iov, 1}, base, *key);
    ASSERT_TRUE(ep->postAdd(1, base + kBlock, *key, transport::AddAfter::kEverything));
    ep->post();
    while (seen.load(std::memory_order_acquire) < k) std::this_thread::yield();
    ep->flush();
    const auto want = static_cast<std::uint8_t>(k & 0x7f);
    if (std::any_of(dst.begin(), dst.end(), [&](std::uint8_t b) { return b != want; })) ++torn;
  }
  owner.join();
  EXPECT_EQ(torn, 0) << "the target saw the add before the read issued before it was done";
  EXPECT_EQ(flag.load(), kRounds);
}

TEST_F(Verbs, PostFetchReturnsOldValuesOnceFlushed) {
  // An exclusive lock's announcement and compare-and-swap in flight together
  // (Window::acquireExclusiveAtOnce): results after flush, in order with the requests around them.
  auto ep = connectAB();
  auto win = b_->registerMemory(nullptr, 64, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  auto* words = static_cast<std::uint64_t*>(win->base());
  words[0] = 40;
  words[1] = 7;
  std::uint64_t added = 0;
  std::uint64_t swapped = 0;
  std::uint64_t missed = 0;
  std::uint64_t again = 0;
  ASSERT_TRUE(ep->postFetch(AtomicOp::kFetchAdd, 2, 0, &added, base, *key));
  ASSERT_TRUE(ep->postFetch(AtomicOp::kCompareSwap, 9, 7, &swapped, base + 8, *key));
  ASSERT_TRUE(ep->postFetch(AtomicOp::kCompareSwap, 1, 7, &missed, base + 8, *key));
  ASSERT_TRUE(ep->postFetch(AtomicOp::kFetchAdd, 1, 0, &again, base, *key));
  ep->flush();
  EXPECT_EQ(added, 40U);
  EXPECT_EQ(swapped, 7U);
  EXPECT_EQ(missed, 9U);  // the first swap ran before it
  EXPECT_EQ(again, 42U);
  EXPECT_EQ(words[0], 43U);
  EXPECT_EQ(words[1], 9U);
  // More than a batch and more than the bounce pool's share of one: every result arrives.
  std::vector<std::uint64_t> olds(300, ~std::uint64_t{0});
  for (auto& o : olds) ASSERT_TRUE(ep->postFetch(AtomicOp::kFetchAdd, 1, 0, &o, base, *key));
  ep->flush();
  for (std::size_t i = 0; i < olds.size(); ++i) EXPECT_EQ(olds[i], 43U + i) << i;
  EXPECT_FALSE(ep->postFetch(AtomicOp::kSwap, 1, 0, &again, base, *key));  // atomic() loops
  EXPECT_THROW(ep->postFetch(AtomicOp::kFetchAdd, 1, 0, &again, base + 4, *key), Error);
}

TEST_F(Verbs, RemoteAccessErrorNamesPeerAndOperationAndLeavesNoHang) {
  auto ep = connectAB();
  // Remote read only: a write must fail at the target's HCA.
  auto win = b_->registerMemory(nullptr, 4096, Placement::kAllocate, Access::kRemoteRead);
  std::memset(win->base(), 0, 4096);
  auto key = ep->unpackRkey(win->packRkey());
  std::vector<std::uint8_t> data(1024, 1);
  Iov iov{data.data(), data.size()};
  ep->put({&iov, 1}, reinterpret_cast<std::uint64_t>(win->base()), *key);
  try {
    ep->flush();
    FAIL() << "a write to read-only memory completed";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 1"), std::string::npos) << m;
    EXPECT_NE(m.find("RDMA write"), std::string::npos) << m;
    EXPECT_NE(m.find("remote"), std::string::npos) << m;  // ibv_wc_status_str: remote access
  }
  // The connection stays failed, with the same message, instead of hanging.
  EXPECT_THROW(ep->put({&iov, 1}, reinterpret_cast<std::uint64_t>(win->base()), *key), Error);
  std::uint8_t zero[1024] = {};
  EXPECT_EQ(std::memcmp(win->base(), zero, sizeof zero), 0);
}

TEST_F(Verbs, FreedAndReusedMemoryNeverSendsStalePages) {
  // Buffers this large go through the registration cache. Memory unmapped and mapped again at
  // the same address (munmap + mmap, mmap MAP_FIXED over it, malloc / free of large blocks)
  // holds new pages: the transport must send those, not the pages an old registration pinned.
  auto ep = connectAB();
  constexpr std::size_t kN = 1 << 20;
  auto win = b_->registerMemory(nullptr, kN, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  const auto* target = static_cast<const std::uint8_t*>(win->base());
  void* p = mmap(nullptr, kN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  for (int round = 0; round < 6; ++round) {
    std::memset(p, round + 1, kN);
    Iov iov{p, kN};
    ep->put({&iov, 1}, base, *key);
    ep->flush();
    ASSERT_EQ(target[0], round + 1) << "round " << round;
    ASSERT_EQ(target[kN - 1], round + 1) << "round " << round;
    // The same buffer again, now holding other bytes: the cached registration is right.
    std::memset(p, 0x80 + round, kN);
    ep->put({&iov, 1}, base, *key);
    ep->flush();
    ASSERT_EQ(target[kN / 2], 0x80 + round) << "round " << round;
    // A get into it after it was replaced lands in the new pages.
    if (round % 2 == 0) {
      ASSERT_EQ(munmap(p, kN), 0);
      ASSERT_EQ(mmap(p, kN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                p);
    } else {
      ASSERT_EQ(mmap(p, kN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                p);
    }
    Iov in{p, kN};
    ep->get({&in, 1}, base, *key);
    ep->flush();
    ASSERT_EQ(static_cast<const std::uint8_t*>(p)[kN - 1], 0x80 + round) << "get, round " << round;
  }
  munmap(p, kN);
  // malloc / free of blocks that glibc maps and unmaps, different contents each time.
  for (int round = 0; round < 20; ++round) {
    std::vector<std::uint8_t> v(512 << 10, static_cast<std::uint8_t>(round + 3));
    Iov iov{v.data(), v.size()};
    ep->put({&iov, 1}, base, *key);
    ep->flush();
    ASSERT_EQ(target[v.size() - 1], round + 3) << "heap round " << round;
  }
  // Read-only memory cannot be registered for local write: it is copied, and still correct.
  void* ro = mmap(nullptr, kN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  std::memset(ro, 0x5a, kN);
  ASSERT_EQ(mprotect(ro, kN, PROT_READ), 0);
  Iov iov{ro, kN};
  ep->put({&iov, 1}, base, *key);
  ep->flush();
  EXPECT_EQ(target[kN - 1], 0x5a);
  munmap(ro, kN);
}

TEST_F(Verbs, ManyDistinctLargeBuffersStayCorrect) {
  // More distinct buffers than the cache holds at once (bounded here to 1 MiB, about 15 of
  // them): entries are evicted while requests still hold them, and every put still sends its
  // own buffer's bytes.
  setenv("ONESIDED_REGCACHE_MB", "1", 1);
  a_ = makeVerbsTransport();
  unsetenv("ONESIDED_REGCACHE_MB");
  auto ep = connectAB();
  constexpr std::size_t kN = 64 << 10;
  constexpr int kBuffers = 40;
  auto win = b_->registerMemory(nullptr, kN * kBuffers, Placement::kAllocate, Access::kRemoteAll);
  auto key = ep->unpackRkey(win->packRkey());
  const auto base = reinterpret_cast<std::uint64_t>(win->base());
  std::vector<std::vector<std::uint8_t>> bufs;
  for (int i = 0; i < kBuffers; ++i) bufs.emplace_back(kN, static_cast<std::uint8_t>(i + 1));
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < kBuffers; ++i) {
      std::fill(bufs[i].begin(), bufs[i].end(), static_cast<std::uint8_t>(i + 1 + pass * 50));
      Iov iov{bufs[i].data(), kN};
      ep->put({&iov, 1}, base + i * kN, *key);  // many in flight at once
    }
    ep->flush();
    for (int i = 0; i < kBuffers; ++i) {
      const auto* t = static_cast<const std::uint8_t*>(win->base()) + i * kN;
      ASSERT_EQ(t[0], i + 1 + pass * 50) << "buffer " << i << ", pass " << pass;
      ASSERT_EQ(t[kN - 1], i + 1 + pass * 50) << "buffer " << i << ", pass " << pass;
    }
  }
}

}  // namespace
}  // namespace onesided::transport
