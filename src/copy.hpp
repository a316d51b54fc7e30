// SPDX-License-Identifier: BSD-3-Clause
// Bulk copies that avoid glibc's slow case.
//
// glibc 2.36's memcpy / memmove copy sizes from 2113 bytes up to the L2 size with `rep movsb`
// on CPUs with fast short rep movsb. On this project's AMD EPYC machines that runs at 1.6-1.9
// GB/s instead of 30-45 when the destination sits 1-31 bytes after the source modulo 4 KiB (the
// same low address bits: every load waits for the store before it). A page-aligned window and
// a buffer from malloc (16 bytes into its page) are exactly that, so a 64 KiB MPI_Get took 37
// us instead of 2. Such copies go backward, 128 bytes a step, which runs at 20-37 GB/s there.
// Not every CPU has the slow case: on an Intel Xeon (2026-12-01) memcpy at those offsets ran
// at 96-117 GB/s from 4 to 16 KiB (21 at 1 MiB) and the backward copy at 55 (13), so the first
// such copy of a process measures both once (aliasedCopyIsSlow) and goes backward only where
// memcpy is the slower. Every other copy is memcpy / memmove.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onesided::detail {

/// Copies n bytes backward, from the end (correct also when dst overlaps src from above).
void copyBackward(std::byte* dst, const std::byte* src, std::size_t n) noexcept;

/// Whether a copy of n bytes from src to dst is glibc's slow case: more than 2 KiB (rep movsb
/// starts at 2113), and dst 1-63 bytes after src modulo 4 KiB (1-31 measured slow, 48-63 at half
/// speed).
inline bool aliasedCopy(const void* dst, const void* src, std::size_t n) noexcept {
  const auto d =
      (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) & 4095U;
  return n > 2048 && d != 0 && d < 64;
}

/// Whether memcpy is slower than copyBackward at such offsets on this machine: 16 KiB copied
/// both ways with dst 16 bytes after src, the best of a few tries each, once per process
/// (ONESIDED_COPY_BACKWARD=1 / 0 says yes / no without measuring).
bool aliasedCopyIsSlow() noexcept;

/// Copies above this size go in pieces of it (copyPieces). glibc 2.36 copies from the L2 size
/// up (1 MiB on this project's AMD EPYC machines) with a vector loop instead of `rep movsb`,
/// which there ran 10-17 % slower: 1 MiB in one memcpy 20.9-23.4 us, in pieces of 256 KiB
/// 17.8-19.7; 2 MiB 40.7 against 37.3. Open MPI copies in pieces of 128 KiB
/// (opal_datatype_memop_block_size), so its osc sm put of 1 MiB took 17.9 us against our 21.
/// Below the L2 size a piece is what glibc would have done with the whole.
constexpr std::size_t kCopyPiece = std::size_t{256} << 10;

/// memcpy of n > kCopyPiece bytes (no overlap) in pieces of kCopyPiece.
void copyPieces(void* dst, const void* src, std::size_t n) noexcept;

/// memcpy (no overlap), but around glibc's slow case, and in pieces when large.
inline void copyBytes(void* dst, const void* src, std::size_t n) noexcept {
  if (aliasedCopy(dst, src, n) && aliasedCopyIsSlow()) [[unlikely]] {
    copyBackward(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n);
    return;
  }
  if (n > kCopyPiece) [[unlikely]] {
    copyPieces(dst, src, n);
    return;
  }
  std::memcpy(dst, src, n);
}

/// memmove, but around glibc's slow case (a backward copy is right when dst is after src), and
/// in pieces when large and not overlapping.
inline void moveBytesLarge(void* dst, const void* src, std::size_t n) noexcept {
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if (aliasedCopy(dst, src, n) && (d > s || d + n <= s) && aliasedCopyIsSlow()) [[unlikely]] {
    copyBackward(static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n);
    return;
  }
  if (n > kCopyPiece && (d + n <= s || s + n <= d)) [[unlikely]] {
    copyPieces(dst, src, n);
    return;
  }
  std::memmove(dst, src, n);
}

}  // namespace onesided::detail
