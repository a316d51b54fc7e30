// SPDX-License-Identifier: BSD-3-Clause
// detail::copyBytes / moveBytesLarge: byte-exact results on the backward path (dst 1-63 bytes
// after src modulo 4 KiB, more than 2 KiB, where memcpy measured slower: not on every CPU, so
// the backward copy is also tested by itself), on plain memcpy / memmove, overlaps included, and
// in pieces (copies above kCopyPiece).
#include "copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using onesided::detail::aliasedCopy;
using onesided::detail::copyBackward;
using onesided::detail::copyBytes;
using onesided::detail::kCopyPiece;
using onesided::detail::moveBytesLarge;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  std::uint32_t x = seed * 2654435761U + 1;
  for (auto& b : v) {
    x = x * 1664525U + 1013904223U;
    b = static_cast<std::byte>(x >> 24);
  }
  return v;
}

TEST(Copy, BackwardPathCopiesEveryByteAndNothingElse) {
  constexpr std::size_t kPage = 4096;
  const std::vector<std::size_t> sizes = {2049, 2112, 2113, 4096, 4097, 65536 + 77, 300000};
  for (const std::size_t n : sizes) {
    for (const std::size_t shift : {1U, 8U, 16U, 31U, 63U, 64U, 0U}) {
      std::vector<std::byte> src = pattern(n + 2 * kPage, static_cast<unsigned>(n + shift));
      std::vector<std::byte> dst(n + 3 * kPage, std::byte{0x5a});
      // Place src at a page boundary of its buffer, dst `shift` bytes after one of its own.
      auto align = [&](std::byte* p) {
        return p + (kPage - reinterpret_cast<std::uintptr_t>(p) % kPage) % kPage;
      };
      const std::byte* s = align(src.data());
      std::byte* d = align(dst.data()) + shift;
      EXPECT_EQ(aliasedCopy(d, s, n), shift != 0 && shift < 64) << n << " " << shift;
      for (const bool backward : {false, true}) {
        std::fill(dst.begin(), dst.end(), std::byte{0x5a});
        if (backward) {
          copyBackward(d, s, n);
        } else {
          copyBytes(d, s, n);
        }
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(d[i], s[i]) << "size " << n << " shift " << shift << " byte " << i
                                << (backward ? " (backward)" : "");
        }
        for (std::byte* p = dst.data(); p < d; ++p) ASSERT_EQ(*p, std::byte{0x5a});
        for (std::byte* p = d + n; p < dst.data() + dst.size(); ++p) {
          ASSERT_EQ(*p, std::byte{0x5a});
        }
      }
    }
  }
}

TEST(Copy, LargeCopiesInPiecesCopyEveryByteAndNothingElse) {
  for (const std::size_t n : {kCopyPiece + 1, 3 * kCopyPiece, 4 * kCopyPiece + 4093}) {
    for (const std::size_t shift : {0U, 16U, 4080U}) {
      const std::vector<std::byte> src = pattern(n, static_cast<unsigned>(n + shift));
      for (const bool move : {false, true}) {
        std::vector<std::byte> dst(n + 2 * shift + 64, std::byte{0x5a});
        std::byte* d = dst.data() + shift;
        if (move) {
          moveBytesLarge(d, src.data(), n);
        } else {
          copyBytes(d, src.data(), n);
        }
        ASSERT_EQ(std::memcmp(d, src.data(), n), 0) << "size " << n << " shift " << shift;
        ASSERT_TRUE(std::all_of(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(shift),
                                [](std::byte b) { return b == std::byte{0x5a}; }));
        ASSERT_TRUE(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(shift + n), dst.end(),
                                [](std::byte b) { return b == std::byte{0x5a}; }));
      }
    }
  }
}

TEST(Copy, OverlappingMovesAreMemmove) {
  for (const std::size_t n : {std::size_t{3000}, std::size_t{10000}, 2 * kCopyPiece + 5}) {
    for (const std::ptrdiff_t delta : {-40, -16, -1, 1, 16, 40, 4096 + 16, -(4096 - 16)}) {
      std::vector<std::byte> buf = pattern(n + std::size_t{2} * 8192, static_cast<unsigned>(n));
      std::vector<std::byte> want = buf;
      const std::size_t from = 8192;
      const auto to = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(from) + delta);
      std::memmove(want.data() + to, want.data() + from, n);
      moveBytesLarge(buf.data() + to, buf.data() + from, n);
      EXPECT_EQ(buf, want) << "size " << n << " delta " << delta;
    }
  }
}

}  // namespace
