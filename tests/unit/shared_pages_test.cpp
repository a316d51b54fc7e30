// SPDX-License-Identifier: BSD-3-Clause
// Shared pages (src/transport/shared_pages.hpp) in one process: the owner's view and a peer's
// view (attached through this process's own /proc/<pid>/fd) are the same memory, the content
// survives sharing and unsharing, and overlapping windows share one memfd. The cross-process
// case runs under onesided-run in tests/mpi/create_shared.c.
#include "transport/shared_pages.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace onesided::transport {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

/// Whether /proc/self/maps shows one of our memfds mapped at `addr`.
bool memfdAt(const void* addr) {
  std::ifstream in("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  while (std::getline(in, line)) {
    unsigned long long lo = 0;
    unsigned long long hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2 && lo <= a && a < hi) {
      return line.find("onesided-window") != std::string::npos;
    }
  }
  return false;
}

void fill(std::byte* p, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
}

bool holds(const std::byte* p, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::byte>((i * 131 + seed) & 0xff)) return false;
  }
  return true;
}

struct Buffer {
  explicit Buffer(std::size_t n) : size(n) {
    void* p = nullptr;
    EXPECT_EQ(posix_memalign(&p, kPage, n), 0);
    data = static_cast<std::byte*>(p);
  }
  ~Buffer() { std::free(data); }  // NOLINT(cppcoreguidelines-no-malloc)
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::byte* data = nullptr;
  std::size_t size;
};

/// Memory of its own mapping (a range left shared goes with the munmap, not into the heap).
struct Mapped {
  explicit Mapped(std::size_t n) : size(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    data = static_cast<std::byte*>(p);
  }
  ~Mapped() { munmap(data, size); }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  std::byte* data = nullptr;
  std::size_t size;
};

TEST(SharedPages, WholePagesAreSharedAndComeBackPrivate) {
  Buffer b(8 * kPage);
  fill(b.data, b.size, 1);
  // A window from the middle of page 0 to the middle of page 7: pages 1..6 are whole.
  std::byte* base = b.data + kPage / 2;
  const std::size_t len = 7 * kPage;
  auto shared = SharedPages::share(base, len);
  ASSERT_NE(shared, nullptr);
  const SharedPagesInfo& info = shared->info();
  EXPECT_EQ(info.lo, reinterpret_cast<std::uint64_t>(b.data + kPage));
  EXPECT_EQ(info.hi, reinterpret_cast<std::uint64_t>(b.data + 7 * kPage));
  EXPECT_TRUE(memfdAt(b.data + kPage));
  EXPECT_FALSE(memfdAt(b.data));  // the partial pages stay private
  EXPECT_FALSE(memfdAt(b.data + 7 * kPage));
  EXPECT_TRUE(holds(b.data, b.size, 1)) << "sharing changed the content";

  // A peer's mapping is the same memory, both ways.
  auto peer = PeerPages::attach(getpid(), info);
  ASSERT_NE(peer, nullptr);
  EXPECT_NE(peer->local(), b.data + kPage);
  fill(peer->local(), 6 * kPage, 2);
  EXPECT_TRUE(holds(b.data + kPage, 6 * kPage, 2));
  fill(b.data + kPage, 6 * kPage, 3);
  EXPECT_TRUE(holds(peer->local(), 6 * kPage, 3));

  peer.reset();
  shared.reset();
  EXPECT_FALSE(memfdAt(b.data + kPage));
  EXPECT_TRUE(holds(b.data + kPage, 6 * kPage, 3)) << "unsharing lost the content";
  // Private again: a fresh write is only ours, and the memory behaves as before.
  fill(b.data, b.size, 4);
  EXPECT_TRUE(holds(b.data, b.size, 4));
}

TEST(SharedPages, NothingToShareBelowOnePage) {
  Buffer b(2 * kPage);
  EXPECT_EQ(SharedPages::share(b.data + 16, kPage), nullptr);  // straddles, no whole page
  EXPECT_EQ(SharedPages::share(b.data, 0), nullptr);
  EXPECT_EQ(SharedPages::share(nullptr, 4 * kPage), nullptr);
  EXPECT_FALSE(memfdAt(b.data));
}

TEST(SharedPages, OverlappingWindowsShareOneMemory) {
  Buffer b(8 * kPage);
  fill(b.data, b.size, 5);
  auto outer = SharedPages::share(b.data, 8 * kPage);
  ASSERT_NE(outer, nullptr);
  auto inner = SharedPages::share(b.data + 2 * kPage, 3 * kPage);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->info().inode, outer->info().inode);
  EXPECT_EQ(inner->info().fileOffset, 2 * kPage);
  // Partly overlapping another shared range: not shared (its bytes go the slow way).
  EXPECT_EQ(SharedPages::share(b.data + 6 * kPage, 3 * kPage), nullptr);

  auto peer = PeerPages::attach(getpid(), inner->info());
  ASSERT_NE(peer, nullptr);
  fill(peer->local(), 3 * kPage, 6);
  EXPECT_TRUE(holds(b.data + 2 * kPage, 3 * kPage, 6));
  peer.reset();

  outer.reset();  // the inner window still holds the range
  EXPECT_TRUE(memfdAt(b.data + 2 * kPage));
  inner.reset();
  EXPECT_FALSE(memfdAt(b.data + 2 * kPage));
  EXPECT_TRUE(holds(b.data + 2 * kPage, 3 * kPage, 6));
}

TEST(SharedPages, FileMemoryIsNotShared) {
  void* p = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_EQ(SharedPages::share(p, 4 * kPage), nullptr);  // already MAP_SHARED
  munmap(p, 4 * kPage);
  void* ro = mmap(nullptr, 4 * kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(SharedPages::share(ro, 4 * kPage), nullptr);  // not writable
  munmap(ro, 4 * kPage);
}

TEST(SharedPages, StaticMemory) {
  alignas(4096) static std::byte bss[16 * 4096];
  fill(bss, sizeof bss, 7);
  auto shared = SharedPages::share(bss, sizeof bss);
  ASSERT_NE(shared, nullptr);  // .bss is private anonymous memory
  EXPECT_TRUE(holds(bss, sizeof bss, 7));
  shared.reset();
  EXPECT_TRUE(holds(bss, sizeof bss, 7));
}

TEST(SharedPages, UnmappedBeforeFreeIsLeftAlone) {
  void* p = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto shared = SharedPages::share(p, 4 * kPage);
  ASSERT_NE(shared, nullptr);
  munmap(p, 4 * kPage);  // erroneous program: the memory went away before MPI_Win_free
  void* q =
      mmap(p, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(q, p);
  fill(static_cast<std::byte*>(q), 4 * kPage, 8);
  shared.reset();  // must not put the old window's content over the new mapping
  EXPECT_TRUE(holds(static_cast<std::byte*>(q), 4 * kPage, 8));
  munmap(q, 4 * kPage);
}

TEST(SharedPages, PeerRejectsAStaleKey) {
  Buffer b(4 * kPage);
  auto shared = SharedPages::share(b.data, b.size);
  ASSERT_NE(shared, nullptr);
  SharedPagesInfo wrong = shared->info();
  ++wrong.inode;
  EXPECT_EQ(PeerPages::attach(getpid(), wrong), nullptr);
  wrong = shared->info();
  wrong.fd = 0;  // stdin: not our memfd
  EXPECT_EQ(PeerPages::attach(getpid(), wrong), nullptr);
}

// Ranges shared for collectives (restore = false) stay shared with no handle left (dormant):
// a later share of the range or of a part reuses the memfd, a larger one takes the pages over
// into a new memfd with their content, and memory unmapped and mapped again is never handed
// out through the old memfd.
TEST(SharedPages, DormantRangesAreReusedTakenOverOrDropped) {
  void* m = mmap(nullptr, 8 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* b = static_cast<std::byte*>(m);
  fill(b, 8 * kPage, 9);
  auto first = SharedPages::share(b + 2 * kPage, 2 * kPage, false);
  ASSERT_NE(first, nullptr);
  const std::uint64_t inode = first->info().inode;
  first.reset();
  EXPECT_TRUE(memfdAt(b + 2 * kPage)) << "not moved back: restore = false";
  auto again = SharedPages::share(b + 3 * kPage, kPage, false);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->info().inode, inode);
  again.reset();
  auto larger = SharedPages::share(b, 8 * kPage, false);
  ASSERT_NE(larger, nullptr) << "a dormant range inside is taken over";
  EXPECT_NE(larger->info().inode, inode);
  EXPECT_TRUE(holds(b, 8 * kPage, 9));
  auto peer = PeerPages::attach(getpid(), larger->info());
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(holds(peer->local(), 8 * kPage, 9));
  peer.reset();
  const std::uint64_t largerInode = larger->info().inode;
  larger.reset();
  // Unmapped and mapped again at the same address: private memory, a new memfd.
  ASSERT_EQ(munmap(m, 8 * kPage), 0);
  void* m2 = mmap(m, 8 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m2, MAP_FAILED);
  auto* b2 = static_cast<std::byte*>(m2);
  fill(b2, 8 * kPage, 10);
  auto fresh = SharedPages::share(b2, 8 * kPage, false);
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh->info().inode, largerInode);
  auto peer2 = PeerPages::attach(getpid(), fresh->info());
  ASSERT_NE(peer2, nullptr);
  EXPECT_TRUE(holds(peer2->local(), 8 * kPage, 10));
  peer2.reset();
  fresh->forget();  // as the cache does on an unmap event: the memfd goes with the handle
  fresh.reset();
  munmap(m2, 8 * kPage);
}

// A dormant range (no window or collective holds it) that a new range partly overlaps is taken
// over: the new memfd gets the overlapping pages, the rest stay mapped from the old one with no
// entry (an orphan), and a later range takes those over too. A range in use is never cut.
TEST(SharedPages, DormantRangesPartlyOverlappedAreTakenOver) {
  Mapped m(8 * kPage);
  std::byte* b = m.data;
  fill(b, 8 * kPage, 41);
  auto a = SharedPages::share(b + 2 * kPage, 4 * kPage, false);  // pages [2, 6)
  ASSERT_NE(a, nullptr);
  const std::uint64_t aInode = a->info().inode;
  a.reset();
  auto right = SharedPages::share(b + 4 * kPage, 4 * kPage, false);  // [4, 8)
  ASSERT_NE(right, nullptr) << "a dormant range partly overlapped is taken over";
  EXPECT_NE(right->info().inode, aInode);
  EXPECT_TRUE(memfdAt(b + 2 * kPage)) << "pages [2, 4) stay mapped from the old memfd";
  EXPECT_TRUE(holds(b, 8 * kPage, 41));
  auto peer = PeerPages::attach(getpid(), right->info());
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(holds(peer->local(), 4 * kPage, (4 * kPage * 131 + 41) & 0xff));
  peer.reset();
  right.reset();
  auto left = SharedPages::share(b, 4 * kPage, false);  // [0, 4): private [0, 2), orphan [2, 4)
  ASSERT_NE(left, nullptr) << "orphaned pages are taken over";
  EXPECT_TRUE(holds(b, 8 * kPage, 41));
  peer = PeerPages::attach(getpid(), left->info());
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(holds(peer->local(), 4 * kPage, 41));
  fill(peer->local(), 4 * kPage, 42);
  EXPECT_TRUE(holds(b, 4 * kPage, 42)) << "the orphan's pages are the new memfd's now";
  peer.reset();
  // `left` is in use: a range partly overlapping it is not shared, and it stays whole.
  EXPECT_EQ(SharedPages::share(b + 3 * kPage, 2 * kPage, false), nullptr);
  peer = PeerPages::attach(getpid(), left->info());
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(holds(peer->local(), 4 * kPage, 42));
  peer.reset();
  left->forget();
  left.reset();
}

// The collectives' cache: a shared range that a later collective's stream partly overlaps is
// given up for the new range (counted as a drop, so receivers forget their mappings), but not
// within the collective that used it.
TEST(SharedPages, CacheGivesUpOverlappedRangesInLaterCollectives) {
  SharedPagesCache cache(true, false);
  if (!cache.active()) GTEST_SKIP() << "no memory events (built without UCX)";
  Mapped m(16 * kPage);
  std::byte* b = m.data;
  fill(b, 16 * kPage, 51);
  const int tag = 0;
  const SharedPagesInfo first = cache.find(b, 8 * kPage, &tag, 1);
  ASSERT_LT(first.lo, first.hi);
  EXPECT_EQ(cache.drops(), 0U);
  const SharedPagesInfo same = cache.find(b + 4 * kPage, 8 * kPage, &tag, 1);
  EXPECT_EQ(same.lo, same.hi) << "not in the collective that uses the range it overlaps";
  EXPECT_EQ(cache.drops(), 0U);
  const SharedPagesInfo later = cache.find(b + 4 * kPage, 8 * kPage, &tag, 2);
  ASSERT_LT(later.lo, later.hi);
  EXPECT_EQ(later.lo, reinterpret_cast<std::uint64_t>(b + 4 * kPage));
  EXPECT_NE(later.inode, first.inode);
  EXPECT_EQ(cache.drops(), 1U);
  auto peer = PeerPages::attach(getpid(), later);
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(holds(peer->local(), 8 * kPage, (4 * kPage * 131 + 51) & 0xff));
  peer.reset();
  EXPECT_TRUE(holds(b, 16 * kPage, 51));
  const SharedPagesInfo inside = cache.find(b + 5 * kPage + 100, 2 * kPage, &tag, 3);
  EXPECT_EQ(inside.inode, later.inode);
}

// A send argument given whole (alltoall's, scatter's) in a single-threaded program: the pages
// that hold its two ends are shared too, other data on them and all, so that no byte of it
// needs the ring; that data stays the program's to read and write. Without partialEnds (or
// another thread's program) only the whole pages.
TEST(SharedPages, CacheSharesAWholeSendArgumentsEndsWhenAsked) {
  if (const char* env = std::getenv("ONESIDED_SHARE_PAGES"); env != nullptr) {
    GTEST_SKIP() << "ONESIDED_SHARE_PAGES=" << env;
  }
  Mapped m(8 * kPage);
  std::byte* b = m.data;
  fill(b, 8 * kPage, 61);
  std::byte* arg = b + 100;  // 5 pages long: it ends 100 bytes into page 5
  const std::size_t argLen = 5 * kPage;
  const int tag = 0;
  {
    SharedPagesCache cache(true, true);
    if (!cache.active()) GTEST_SKIP() << "no memory events (built without UCX)";
    const SharedPagesInfo info = cache.find(arg + kPage, 2 * kPage, &tag, 1, arg, argLen);
    ASSERT_LT(info.lo, info.hi);
    EXPECT_EQ(info.lo, reinterpret_cast<std::uint64_t>(b));
    EXPECT_EQ(info.hi, reinterpret_cast<std::uint64_t>(b + 6 * kPage));
    EXPECT_TRUE(holds(b, 8 * kPage, 61)) << "the move kept every byte";
    auto peer = PeerPages::attach(getpid(), info);
    ASSERT_NE(peer, nullptr);
    EXPECT_TRUE(holds(peer->local(), 6 * kPage, 61));
    // The program's own bytes beside the argument, on its shared end pages.
    b[0] = std::byte{7};
    b[6 * kPage - 1] = std::byte{8};
    EXPECT_EQ(peer->local()[0], std::byte{7});
    EXPECT_EQ(peer->local()[6 * kPage - 1], std::byte{8});
    // Every stream of the argument is inside the range now, its ends' included.
    const SharedPagesInfo head = cache.find(arg, 64, &tag, 2, arg, argLen);
    EXPECT_EQ(head.inode, info.inode);
    const SharedPagesInfo alone = cache.find(arg + 2 * kPage, 2 * kPage, &tag, 3);
    EXPECT_EQ(alone.inode, info.inode) << "a stream inside, asked without the whole argument";
    peer.reset();
  }
  fill(b, 8 * kPage, 62);
  Mapped other(8 * kPage);
  fill(other.data, 8 * kPage, 63);
  SharedPagesCache wholePages(true, false);
  const SharedPagesInfo info =
      wholePages.find(other.data + 100 + kPage, 2 * kPage, &tag, 1, other.data + 100, argLen);
  ASSERT_LT(info.lo, info.hi);
  EXPECT_EQ(info.lo, reinterpret_cast<std::uint64_t>(other.data + kPage));
  EXPECT_EQ(info.hi, reinterpret_cast<std::uint64_t>(other.data + 5 * kPage));
  EXPECT_TRUE(holds(other.data, 8 * kPage, 63));
  EXPECT_TRUE(holds(b, 8 * kPage, 62));
  // A range shared whole-page only before (a stream asked alone) is taken as it is when the
  // argument is later given whole: not dropped and shared again with its ends.
  Mapped third(8 * kPage);
  fill(third.data, 8 * kPage, 64);
  SharedPagesCache ends(true, true);
  std::byte* arg3 = third.data + 100;
  const SharedPagesInfo alone3 = ends.find(arg3, argLen, &tag, 1);
  ASSERT_LT(alone3.lo, alone3.hi);
  EXPECT_EQ(alone3.lo, reinterpret_cast<std::uint64_t>(third.data + kPage));
  const SharedPagesInfo whole3 = ends.find(arg3 + kPage, 2 * kPage, &tag, 2, arg3, argLen);
  EXPECT_EQ(whole3.inode, alone3.inode);
  EXPECT_EQ(ends.drops(), 0U);
  EXPECT_TRUE(holds(third.data, 8 * kPage, 64));
}

/// Forks; the child returns `check()`'s verdict as its exit status. Whether the child passed.
template <class Check>
bool inChild(Check check) {
  const pid_t child = fork();
  if (child == 0) _exit(check() ? 0 : 1);
  if (child < 0) return false;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A fork()ed child gets private copies of the shared ranges: of a window's (a handle holds
// it), of a dormant one, and of one dropped while still mapped (its memfd closed, no entry
// left). It sees their bytes as at the fork, not what the parent stores after fork() returns,
// and its stores stay its own; the parent's pages stay shared.
TEST(SharedPages, ForkedChildGetsPrivateCopies) {
  Buffer held(4 * kPage);
  Mapped dormant(4 * kPage);
  Mapped dropped(4 * kPage);
  fill(held.data, held.size, 21);
  fill(dormant.data, dormant.size, 22);
  fill(dropped.data, dropped.size, 23);
  auto window = SharedPages::share(held.data, held.size);
  ASSERT_NE(window, nullptr);
  auto d = SharedPages::share(dormant.data, dormant.size, false);
  ASSERT_NE(d, nullptr);
  d.reset();
  auto g = SharedPages::share(dropped.data, dropped.size, false);
  ASSERT_NE(g, nullptr);
  g->forget();
  g.reset();
  for (const std::byte* b : {held.data, dormant.data, dropped.data}) ASSERT_TRUE(memfdAt(b));
  auto peer = PeerPages::attach(getpid(), window->info());
  ASSERT_NE(peer, nullptr);

  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = true;
    unsigned seed = 21;
    for (std::byte* b : {held.data, dormant.data, dropped.data}) {
      ok = ok && !memfdAt(b) && holds(b, 4 * kPage, seed++);
      fill(b, 4 * kPage, 30);  // the parent must not see this
    }
    // The peer mapping (another process's memory, here the parent's own memfd through
    // /proc/<pid>/fd) stays what it is: the parent's window.
    ok = ok && holds(peer->local(), held.size, 21);
    _exit(ok ? 0 : 1);
  }
  // After fork() returned: the child has its copies already and never sees these.
  fill(held.data, held.size, 31);
  fill(dormant.data, dormant.size, 32);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) ASSERT_EQ(errno, EINTR);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_TRUE(holds(held.data, held.size, 31)) << "the child's stores reached the parent";
  EXPECT_TRUE(holds(dormant.data, dormant.size, 32));
  EXPECT_TRUE(holds(dropped.data, dropped.size, 23));
  EXPECT_TRUE(holds(peer->local(), held.size, 31)) << "the window is no longer shared";
  for (const std::byte* b : {held.data, dormant.data, dropped.data}) EXPECT_TRUE(memfdAt(b));

  // The window's end restores private memory; the dormant and dropped ranges stay shared
  // until their memory goes, and a second fork copies them again.
  peer.reset();
  window.reset();
  EXPECT_FALSE(memfdAt(held.data));
  EXPECT_TRUE(holds(held.data, held.size, 31));
  EXPECT_TRUE(inChild([&] {
    return holds(dormant.data, dormant.size, 32) && !memfdAt(dormant.data) &&
           holds(dropped.data, dropped.size, 23) && !memfdAt(dropped.data);
  }));
  EXPECT_TRUE(memfdAt(dormant.data));
}

// A single-threaded program's window shares its partial end pages too (partialEnds): the whole
// range, from the page below its base to the page above its end, content and all; and back.
TEST(SharedPages, PartialEndsAreSharedWhenAsked) {
  Mapped m(8 * kPage);
  fill(m.data, m.size, 41);
  std::byte* base = m.data + kPage + kPage / 2;  // pages 1..6, partial at both ends
  auto shared = SharedPages::share(base, 5 * kPage, true, true);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->info().lo, reinterpret_cast<std::uint64_t>(m.data + kPage));
  EXPECT_EQ(shared->info().hi, reinterpret_cast<std::uint64_t>(m.data + 7 * kPage));
  EXPECT_TRUE(memfdAt(m.data + kPage));
  EXPECT_TRUE(memfdAt(m.data + 6 * kPage));
  EXPECT_FALSE(memfdAt(m.data));
  EXPECT_TRUE(holds(m.data, m.size, 41)) << "sharing changed the content";
  auto peer = PeerPages::attach(getpid(), shared->info());
  ASSERT_NE(peer, nullptr);
  fill(peer->local(), 6 * kPage, 42);
  EXPECT_TRUE(holds(m.data + kPage, 6 * kPage, 42));
  peer.reset();

  // 8 bytes inside one page: that page. A second window in the same page shares the memfd.
  auto tiny = SharedPages::share(m.data + 40, 8, true, true);
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->info().lo, reinterpret_cast<std::uint64_t>(m.data));
  EXPECT_EQ(tiny->info().hi, reinterpret_cast<std::uint64_t>(m.data + kPage));
  auto neighbour = SharedPages::share(m.data + 400, 8, true, true);
  ASSERT_NE(neighbour, nullptr);
  EXPECT_EQ(neighbour->info().inode, tiny->info().inode);
  EXPECT_EQ(SharedPages::share(m.data + 40, 8), nullptr) << "without partialEnds: no whole page";

  tiny.reset();
  EXPECT_TRUE(memfdAt(m.data)) << "the neighbour still holds the page";
  neighbour.reset();
  shared.reset();
  EXPECT_FALSE(memfdAt(m.data));
  EXPECT_FALSE(memfdAt(m.data + kPage));
  fill(m.data, kPage, 43);
  EXPECT_TRUE(holds(m.data, kPage, 43));
  EXPECT_TRUE(holds(m.data + kPage, 6 * kPage, 42)) << "unsharing lost the content";

  // ONESIDED_SHARE_PAGES=whole: the whole pages only.
  ASSERT_EQ(setenv("ONESIDED_SHARE_PAGES", "whole", 1), 0);
  auto whole = SharedPages::share(base, 5 * kPage, true, true);
  unsetenv("ONESIDED_SHARE_PAGES");
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->info().lo, reinterpret_cast<std::uint64_t>(m.data + 2 * kPage));
  EXPECT_EQ(whole->info().hi, reinterpret_cast<std::uint64_t>(m.data + 6 * kPage));
}

// While a range moves into shared memory and back, other threads go on storing into it, with
// plain stores and atomic read-modify-writes, and loading from it: no store is lost, no load
// sees anything but what was stored (the range is read-only while it moves, and a store waits in
// the fault handler until the new pages are in).
TEST(SharedPages, StoresDuringMovesAreKept) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer takes some of these faults as deadly itself (an atomic's always: it runs in
  // its runtime) instead of passing them to the handler installed for them.
  GTEST_SKIP() << "faults on purpose, which ThreadSanitizer does not always pass on";
#endif
  Mapped m(4 * kPage);
  std::memset(m.data, 0, m.size);
  auto* plain = reinterpret_cast<volatile std::uint64_t*>(m.data + 8);        // page 0, outside
  auto* counter = reinterpret_cast<std::uint64_t*>(m.data + 3 * kPage + 64);  // page 3
  auto* constant = reinterpret_cast<volatile std::uint64_t*>(m.data + kPage + 8);
  *constant = 0x5eed;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> lost{0};
  std::atomic<std::uint64_t> wrong{0};
  std::uint64_t stores = 0;
  std::uint64_t adds = 0;
  std::thread storer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      *plain = ++stores;
      if (*plain != stores) lost.fetch_add(1);
      std::atomic_ref<std::uint64_t>(*counter).fetch_add(1);
      ++adds;
    }
  });
  std::thread loader([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (*constant != 0x5eed) wrong.fetch_add(1);
    }
  });
  // The window is bytes 100 .. 3 pages + 100: all four pages move, two of them partial.
  for (int round = 0; round < 200; ++round) {
    auto shared = SharedPages::share(m.data + 100, 3 * kPage, true, true);
    ASSERT_NE(shared, nullptr);
    ASSERT_EQ(shared->info().hi - shared->info().lo, 4 * kPage);
  }
  stop = true;
  storer.join();
  loader.join();
  EXPECT_EQ(lost.load(), 0U);
  EXPECT_EQ(wrong.load(), 0U);
  EXPECT_EQ(*plain, stores);
  EXPECT_EQ(*counter, adds);
  EXPECT_GT(stores, 0U);
  EXPECT_FALSE(memfdAt(m.data));
}

// The partial pages of a window on the calling thread's stack are not moved (read-only, they
// would fault under the thread moving them); its whole pages are.
TEST(SharedPages, PartialEndsNotOnTheCallersStack) {
  std::thread t([] {
    alignas(64) std::byte local[3 * 4096];
    fill(local, sizeof local, 44);
    auto tiny = SharedPages::share(local + 100, 8, true, true);
    EXPECT_EQ(tiny, nullptr);
    auto wide = SharedPages::share(local + 100, sizeof local - 200, true, true);
    if (wide != nullptr) {
      EXPECT_GE(wide->info().lo, reinterpret_cast<std::uint64_t>(local + 100));
    }
    wide.reset();
    EXPECT_TRUE(holds(local, sizeof local, 44));
  });
  t.join();
}

// Each shared range holds a memfd descriptor: at most a quarter of the descriptor limit do, so
// a program with many windows keeps descriptors for its own files (the rest are not shared).
TEST(SharedPages, MemfdsStayWithinAQuarterOfTheDescriptorLimit) {
  EXPECT_TRUE(inChild([] {
    const rlimit low{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &low) != 0) return false;
    std::vector<std::unique_ptr<Mapped>> mem;
    std::vector<std::unique_ptr<SharedPages>> shared;
    int made = 0;
    for (int i = 0; i < 40; ++i) {
      mem.push_back(std::make_unique<Mapped>(2 * kPage));
      shared.push_back(SharedPages::share(mem.back()->data, 2 * kPage));
      made += shared.back() != nullptr;
    }
    const int fd = open("/dev/null", O_RDONLY);
    const bool ok = made > 0 && made <= 16 && fd >= 0;
    if (fd >= 0) close(fd);
    return ok;
  }));
}

// After a move the fault handler stays in front of the program's own: a real fault, outside
// any moved range or inside one (memory the program made read-only since), reaches the
// program's handler (the latter after one retry), and never loops.
sigjmp_buf faultJump;
volatile sig_atomic_t programFaults = 0;
void programHandler(int /*sig*/, siginfo_t* /*info*/, void* /*context*/) {
  programFaults = programFaults + 1;
  siglongjmp(faultJump, 1);
}

TEST(SharedPages, RealFaultsReachTheProgramsHandler) {
  EXPECT_TRUE(inChild([] {
    struct sigaction mine {};
    mine.sa_sigaction = programHandler;
    mine.sa_flags = SA_SIGINFO;
    sigemptyset(&mine.sa_mask);
    if (sigaction(SIGSEGV, &mine, nullptr) != 0) return false;
    Mapped m(4 * kPage);
    auto shared = SharedPages::share(m.data + 100, 2 * kPage, true, true);
    if (shared == nullptr) return false;
    void* none = mmap(nullptr, kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (none == MAP_FAILED) return false;
    if (sigsetjmp(faultJump, 1) == 0) *static_cast<volatile char*>(none) = 1;
    if (programFaults != 1) return false;
    if (mprotect(m.data, kPage, PROT_READ) != 0) return false;
    if (sigsetjmp(faultJump, 1) == 0) *reinterpret_cast<volatile char*>(m.data + 200) = 1;
    if (programFaults != 2) return false;
    mprotect(m.data, kPage, PROT_READ | PROT_WRITE);
    shared.reset();
    return memfdAt(m.data) == false;
  }));
}

}  // namespace
}  // namespace onesided::transport
