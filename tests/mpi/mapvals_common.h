/* SPDX-License-Identifier: BSD-3-Clause */
/* The data of MPI-2.2 §11.3 Example 11.2 (MAPVALS), shared by mapvals_get.c and mapvals_put.c:
 * B is distributed blockwise, m elements per rank (global index g = rank * m + k), and
 * A(i) = B(map(i)) on every rank. The maps are pure functions of (rank, i), so every rank can
 * compute any rank's map and the serial answer on its own. */
#ifndef ONESIDED_TESTS_MPI_MAPVALS_COMMON_H
#define ONESIDED_TESTS_MPI_MAPVALS_COMMON_H

#include <stdint.h>
#include <string.h>

enum { kMapReverse, kMapAffine, kMapSquare, kNumMaps };
static const char* const kMapNames[kNumMaps] = {"reverse", "affine", "square"};

/* B at global index g: exact in float while g < 2^22. */
static inline float mv_b_value(long g) { return (float)g + 0.5f; }

static inline long mv_gcd(long a, long b) {
  while (b != 0) {
    long t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* A multiplier coprime with n (so g -> a*g + c mod n is a permutation). */
static inline long mv_affine_multiplier(long n) {
  static const long kCandidates[] = {7919, 104729, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41};
  for (size_t i = 0; i < sizeof kCandidates / sizeof kCandidates[0]; ++i) {
    if (mv_gcd(kCandidates[i] % n == 0 ? n : kCandidates[i] % n, n) == 1) return kCandidates[i];
  }
  return 1;
}

/* map(i) on rank r, a global index in 0 .. m*p-1. "reverse" and "affine" are permutations of
 * 0 .. m*p-1 across all ranks; "square" repeats some sources and misses others. */
static inline long mv_map(int kind, int r, long i, long m, int p) {
  const long n = m * (long)p;
  const long g = (long)r * m + i;
  switch (kind) {
    case kMapReverse:
      return n - 1 - g;
    case kMapAffine:
      return (long)(((uint64_t)mv_affine_multiplier(n) * (uint64_t)g + (uint64_t)(n / 3 + 1)) %
                    (uint64_t)n);
    default:
      return (long)(((uint64_t)g * (uint64_t)g + 3u * (uint64_t)g + 1u) % (uint64_t)n);
  }
}

/* 1 if map `kind` is a permutation of 0 .. m*p-1 over all ranks (serial check of
 * the test); seen is m*p bytes of scratch. */
static inline int mv_is_permutation(int kind, long m, int p, unsigned char* seen) {
  const long n = m * (long)p;
  memset(seen, 0, (size_t)n);
  for (int r = 0; r < p; ++r) {
    for (long i = 0; i < m; ++i) {
      long t = mv_map(kind, r, i, m, p);
      if (t < 0 || t >= n || seen[t]) return 0;
      seen[t] = 1;
    }
  }
  return 1;
}

/* Order-sensitive checksum of A, identical on every MPI implementation (exact integer math:
 * 2 * A(i) is an integer). */
static inline unsigned long long mv_checksum(const float* a, long m) {
  unsigned long long s = 1469598103934665603ull;
  for (long i = 0; i < m; ++i) {
    s = (s ^ (unsigned long long)(2.0f * a[i])) * 1099511628211ull;
  }
  return s;
}

#endif /* ONESIDED_TESTS_MPI_MAPVALS_COMMON_H */
