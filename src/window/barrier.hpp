// SPDX-License-Identifier: BSD-3-Clause
// A full memory barrier (MPI_Win_sync, and completion on the load / store path).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace onesided::detail {

/// std::atomic_thread_fence(seq_cst), except under ThreadSanitizer, which cannot model fences
/// (GCC refuses them with -Werror=tsan): there a seq_cst read-modify-write of a local atomic,
/// which on x86 is the same locked instruction and which TSan understands.
inline void fullBarrier() noexcept {
#if defined(__SANITIZE_THREAD__)
  std::atomic<int> local{0};
  local.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

/// Control word `word` (8-byte units) of a control region this rank reaches by loads and stores
/// (a window whose atomics are all CPU atomics).
inline std::atomic_ref<std::uint64_t> controlWord(std::byte* ctlDirect, int word) noexcept {
  return std::atomic_ref<std::uint64_t>(
      *reinterpret_cast<std::uint64_t*>(ctlDirect + static_cast<std::size_t>(word) * 8));
}

}  // namespace onesided::detail
