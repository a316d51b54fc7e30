// SPDX-License-Identifier: BSD-3-Clause
// A full memory barrier (MPI_Win_sync, and completion on the load / store path).
#pragma once

#include <atomic>

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

}  // namespace onesided::detail
