// SPDX-License-Identifier: BSD-3-Clause
#include "copy.hpp"
#include "settings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace onesided::detail {

#if defined(__x86_64__)
namespace {

/// Loads of a step come before its stores, and steps go from the end: a load never follows a
/// store to the same low 12 address bits, and dst above src may overlap.
__attribute__((target("avx2"))) void backwardAvx2(std::byte* dst, const std::byte* src,
                                                  std::size_t n) noexcept {
  std::size_t k = n;
  while (k >= 128) {
    k -= 128;
    const auto* s = reinterpret_cast<const __m256i*>(src + k);
    auto* d = reinterpret_cast<__m256i*>(dst + k);
    const __m256i a = _mm256_loadu_si256(s);
    const __m256i b = _mm256_loadu_si256(s + 1);
    const __m256i c = _mm256_loadu_si256(s + 2);
    const __m256i e = _mm256_loadu_si256(s + 3);
    _mm256_storeu_si256(d + 3, e);
    _mm256_storeu_si256(d + 2, c);
    _mm256_storeu_si256(d + 1, b);
    _mm256_storeu_si256(d, a);
  }
  if (k != 0) std::memmove(dst, src, k);  // under 128 bytes: no rep movsb
}

/// Without AVX2 (rare on machines that run this): backward in 8-byte words.
void backwardWords(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  std::size_t k = n;
  while (k >= 8) {
    k -= 8;
    std::uint64_t v = 0;
    std::memcpy(&v, src + k, 8);
    std::memcpy(dst + k, &v, 8);
  }
  if (k != 0) std::memmove(dst, src, k);
}

bool haveAvx2() noexcept {
  static const bool have = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
  return have;
}

}  // namespace

void copyBackward(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  if (haveAvx2()) {
    backwardAvx2(dst, src, n);
  } else {
    backwardWords(dst, src, n);
  }
}
#else
void copyBackward(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  std::memmove(dst, src, n);
}
#endif

void copyPieces(void* dst, const void* src, std::size_t n) noexcept {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  for (std::size_t at = 0; at < n; at += kCopyPiece) {
    std::memcpy(d + at, s + at, std::min(kCopyPiece, n - at));
  }
}

namespace {

bool measureAliasedCopy() noexcept {
  if (const char* e = settings::raw(settings::Id::kCopyBackward); e != nullptr && *e != '\0') {
    return *e == '1';
  }
  constexpr std::size_t kLen = std::size_t{16} << 10;
  constexpr std::size_t kPage = 4096;
  constexpr std::size_t kShift = 16;  // a malloc'ed buffer against a page-aligned window
  void* a = std::aligned_alloc(kPage, kLen + kPage);
  void* b = std::aligned_alloc(kPage, kLen + kPage);
  bool slow = true;  // without buffers to measure with: what this code did before it measured
  if (a != nullptr && b != nullptr) {
    std::memset(a, 1, kLen + kPage);
    std::memset(b, 2, kLen + kPage);
    const auto* src = static_cast<const std::byte*>(a);
    std::byte* dst = static_cast<std::byte*>(b) + kShift;
    using Clock = std::chrono::steady_clock;
    double plain = 1e30;
    double backward = 1e30;
    for (int t = 0; t <= 5; ++t) {  // try 0 warms both up; a try may be preempted
      const auto t0 = Clock::now();
      std::memcpy(dst, src, kLen);
      asm volatile("" : : "r"(dst) : "memory");  // NOLINT: keep the copy
      const auto t1 = Clock::now();
      copyBackward(dst, src, kLen);
      asm volatile("" : : "r"(dst) : "memory");  // NOLINT
      const auto t2 = Clock::now();
      if (t == 0) continue;
      plain = std::min(plain, std::chrono::duration<double, std::nano>(t1 - t0).count());
      backward = std::min(backward, std::chrono::duration<double, std::nano>(t2 - t1).count());
    }
    slow = plain > 1.25 * backward;
  }
  std::free(a);
  std::free(b);
  return slow;
}

}  // namespace

bool aliasedCopyIsSlow() noexcept {
  static const bool slow = measureAliasedCopy();
  return slow;
}

}  // namespace onesided::detail
