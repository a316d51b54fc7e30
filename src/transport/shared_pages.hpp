// SPDX-License-Identifier: BSD-3-Clause
// Shared pages for user memory: lets on-node peers load and store into memory the user owns
// (MPI_Win_create), as they do into memory the runtime allocates (MPI_Win_allocate).
//
// Why: a create window's memory is ordinary private memory of its process, so an on-node peer
// reaches it only through a system call (process_vm_writev: 1.8 us per 8-byte put on the CI
// machines) or through UCX active messages (which need the target to progress). Instead, the
// whole pages inside the window are moved, content and all, into a memfd mapped at the same
// virtual addresses (the range is never unmapped), and on-node peers map that memfd. From then on
// a put is a memcpy into the peer's memory, with no system call and no target involvement, and
// an 8-byte atomic is one CPU atomic, exactly like an allocate window. MPI_Win_free moves the
// content back into private anonymous memory. While a range moves it is read-only, and a store
// another thread makes to it waits in a fault handler until the new pages are in, then is made
// there (shared_pages.cpp): no store is lost.
//
// The partial pages at the window's two ends also hold other data of the process: they move
// too (the window is then reached by loads and stores in whole) when the program has no thread
// of its own but the caller (MPI_THREAD_SINGLE), since a system call another thread made into
// them mid-move would fail with EFAULT; otherwise they go by cross-memory attach or the
// transport. Not touched at all: memory that is not private anonymous (files, MAP_SHARED, the
// main thread's stack, hugetlb); ranges that partly overlap a range shared and in use (a range
// inside one is shared again, with a reference count, so overlapping windows see one memory; a
// range nothing uses any more, which collectives leave behind, is taken over).
// ONESIDED_SHARE_PAGES=0 turns the whole thing off, =whole keeps the partial pages out.
//
// Consequences docs/user-guide.md states: while the window exists, its pages are MAP_SHARED and
// lose mlock / madvise / NUMA settings made before MPI_Win_create. A fork()ed child still gets
// private copies (a fork handler makes them; see shared_pages.cpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/unmap_events.hpp"

namespace onesided::transport {

/// What a peer needs to map the shared part of a region; travels inside a packed key.
struct SharedPagesInfo {
  std::uint64_t lo = 0;          ///< first shared address (page aligned); lo == hi: none
  std::uint64_t hi = 0;          ///< end of the shared addresses
  std::uint64_t fileOffset = 0;  ///< offset of lo in the memfd
  std::uint64_t inode = 0;       ///< the memfd's inode, checked by the peer after opening it
  std::int64_t fd = -1;          ///< the memfd's descriptor number in the owner process
};

/// Owner side: the whole pages of [base, base + len) made shared. Restores private memory when
/// the last handle on the range dies.
class SharedPages {
 public:
  /// nullptr when nothing can be shared (see the file comment); the reason is logged at debug.
  /// `restore`: whether the last handle's end moves the content back into private memory
  /// (false: the pages stay shared, for memory the program may be using on other threads by
  /// then, where a system call another thread makes into it would fail with EFAULT during the
  /// copy back; a range stays so if any handle said false).
  /// `partialEnds`: the partial pages at the two ends too (the whole range is then shared), for
  /// a program with no thread but the one calling (MPI_THREAD_SINGLE): while a range moves, a
  /// store another thread makes to it waits (see shared_pages.cpp), but a system call that
  /// writes there fails with EFAULT. Whole pages only where the ends cannot be shared.
  static std::unique_ptr<SharedPages> share(void* base, std::size_t len, bool restore = true,
                                            bool partialEnds = false);
  ~SharedPages();
  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;
  [[nodiscard]] const SharedPagesInfo& info() const noexcept { return info_; }
  /// The memory was unmapped or replaced: the range is never handed out again, and the end of
  /// the last handle only closes the memfd.
  void forget() noexcept { gone_ = true; }

 private:
  explicit SharedPages(const SharedPagesInfo& info) : info_(info) {}
  /// share() of the pages [lo, hi) exactly.
  static std::unique_ptr<SharedPages> shareExactly(std::uint64_t lo, std::uint64_t hi,
                                                   bool restore);
  SharedPagesInfo info_;
  bool gone_ = false;
};

/// Owner side: a collective's send buffers, shared so that on-node receivers copy straight out
/// of them (one copy, where the scratch ring takes two). A range is shared on its second use
/// in a later collective (a buffer used once would pay a copy and several system calls for
/// nothing), or at once with `firstUse`; a range that could not be shared is not tried again.
/// Shared ranges stay so (never moved back: the program owns the memory between collectives,
/// and other threads may be writing it) until the program unmaps or replaces the memory: the
/// process's unmap events (UCX's ucm hooks: munmap, mmap over it, mremap, brk, madvise) drop
/// every entry they touch before the next lookup, so a freed buffer whose address comes back
/// is never read through its old memfd. Without those events nothing is shared, nor on second
/// use when malloc is not glibc's (see the constructor).
/// Bounded: kMaxShared ranges and kMaxBytes in all; past that, nothing more is shared.
class SharedPagesCache {
 public:
  /// `partialEnds`: a `whole` buffer's partial pages at its two ends may be shared too, in a
  /// program with no thread but the one calling (SharedPages::share's partialEnds).
  SharedPagesCache(bool firstUse, bool partialEnds);
  ~SharedPagesCache();
  SharedPagesCache(const SharedPagesCache&) = delete;
  SharedPagesCache& operator=(const SharedPagesCache&) = delete;

  /// The shared range that holds the whole pages of [p, p + len) (lo == hi: none), sharing
  /// them now when due. `owner` and `call` name the collective asking: a range seen before only
  /// in the same one is not yet due. With `whole` (a buffer [whole, whole + wholeLen) that holds
  /// [p, p + len), all of it the caller's to move), the whole pages of that buffer are shared
  /// instead, so the range returned may start before p and end after p + len: the stream's
  /// pages shared in part too; with partialEnds, the pages that hold the buffer's two ends as
  /// well, so that no byte of it travels through a ring. The range returned is the whole of the
  /// entry (a receiver maps it once for all the streams inside).
  SharedPagesInfo find(const void* p, std::size_t len, const void* owner, std::uint64_t call,
                       const void* whole = nullptr, std::size_t wholeLen = 0);
  /// Shared ranges dropped so far (receivers forget their mappings of mine when it changes).
  [[nodiscard]] std::uint64_t drops() const noexcept { return drops_; }
  /// Whether anything can be shared (unmap events reach the cache).
  [[nodiscard]] bool active() const noexcept { return active_; }

  static constexpr std::size_t kMaxShared = 64;
  static constexpr std::size_t kMaxSeen = 64;
  static constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;

 private:
  struct Entry {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    std::unique_ptr<SharedPages> pages;  // null: seen (or failed) only
    bool failed = false;
    // A sighting: the collective that saw it first. A shared range: the last one that used it.
    const void* owner = nullptr;
    std::uint64_t call = 0;
  };
  /// Applies queued unmap events, except those inside [keepLo, keepHi) (the cache's own
  /// mmap over a range it has just shared reports that range as unmapped).
  void drain(std::uintptr_t keepLo = 0, std::uintptr_t keepHi = 0);
  /// The ranges shared now, and their bytes.
  [[nodiscard]] std::size_t sharedRanges() const noexcept;
  [[nodiscard]] std::uint64_t sharedBytes() const noexcept;

  bool firstUse_;
  bool partialEnds_;
  bool active_ = false;
  std::vector<Entry> entries_;
  std::uint64_t drops_ = 0;
  UnmapEvents events_;
};

/// Peer side: the owner's shared pages mapped into this process.
class PeerPages {
 public:
  /// nullptr when the owner's memfd cannot be opened from here (no ptrace read permission,
  /// the owner is gone) or is not the one the key names; logged at debug.
  static std::unique_ptr<PeerPages> attach(pid_t owner, const SharedPagesInfo& info);
  ~PeerPages();
  PeerPages(const PeerPages&) = delete;
  PeerPages& operator=(const PeerPages&) = delete;
  /// Local address of the owner's address info().lo.
  [[nodiscard]] std::byte* local() const noexcept { return map_; }

 private:
  PeerPages(std::byte* map, std::size_t len) : map_(map), len_(len) {}
  std::byte* map_;
  std::size_t len_;
};

}  // namespace onesided::transport
