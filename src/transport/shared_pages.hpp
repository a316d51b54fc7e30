// SPDX-License-Identifier: BSD-3-Clause
// Shared pages for user memory: lets on-node peers load and store into memory the user owns
// (MPI_Win_create), as they do into memory the runtime allocates (MPI_Win_allocate).
//
// Why: a create window's memory is ordinary private memory of its process, so an on-node peer
// reaches it only through a system call (process_vm_writev: 1.8 us per 8-byte put on the CI
// machines) or through UCX active messages (which need the target to progress). Instead, the
// whole pages inside the window are moved, content and all, into a memfd mapped at the same
// virtual addresses (mremap: the range is never unmapped), and on-node peers map that memfd.
// From then on a put is a memcpy into the peer's memory, with no system call and no target
// involvement, exactly like an allocate window. MPI_Win_free moves the content back into
// private anonymous memory.
//
// What it does not touch: the partial pages at the window's two ends (they also hold other
// data of the process, which a concurrent thread could be writing while the copy is made);
// memory that is not private anonymous (files, MAP_SHARED, the main thread's stack, hugetlb);
// ranges that partly overlap a range already shared (a range inside one is shared again, with a
// reference count, so overlapping windows see one memory). Those bytes go by cross-memory attach
// or the transport, as before. ONESIDED_SHARE_PAGES=0 turns the whole thing off.
//
// Consequences the README states: while the window exists, its whole pages are MAP_SHARED (a
// fork()ed child would share them instead of copying them) and lose mlock / madvise / NUMA
// settings made before MPI_Win_create.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

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
  static std::unique_ptr<SharedPages> share(void* base, std::size_t len);
  ~SharedPages();
  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;
  [[nodiscard]] const SharedPagesInfo& info() const noexcept { return info_; }

 private:
  explicit SharedPages(const SharedPagesInfo& info) : info_(info) {}
  SharedPagesInfo info_;
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
