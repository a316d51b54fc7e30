// SPDX-License-Identifier: BSD-3-Clause
// applyOp's three-operand form (dst = base op src, what a reduction's fold writes into a fresh
// buffer in one pass; dst may be base or src) against its in-place form (a copy of base, then
// base op= src), for every predefined operation on the types it applies to, at lengths and
// offsets that take the vectorised loops, their tails and the scalar case; the inputs stay
// untouched.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "onesided/op.hpp"

namespace {

using onesided::applyOp;
using onesided::Op;
using onesided::opAccepts;
using onesided::packedSize;

// Small values, often equal, so that MINLOC / MAXLOC meet ties and signed SUM / PROD do not
// overflow; floating values stay finite (random bits may be NaNs, which compare unequal to
// themselves in MIN / MAX and would make the two forms differ legitimately).
std::vector<std::byte> values(int kind, std::size_t n, std::mt19937& rng) {
  const std::size_t e = packedSize(kind);
  std::vector<std::byte> v(n * e);
  std::uniform_int_distribution<int> small(0, 3);
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* x = v.data() + i * e;
    switch (kind) {
      case MPI_FLOAT: {
        const float f = static_cast<float>(small(rng)) - 1.5F;
        std::memcpy(x, &f, sizeof f);
        break;
      }
      case MPI_DOUBLE: {
        const double d = static_cast<double>(small(rng)) * 0.25 - 0.5;
        std::memcpy(x, &d, sizeof d);
        break;
      }
      case MPI_2INT: {
        const int pair[2] = {small(rng), small(rng)};
        std::memcpy(x, pair, sizeof pair);
        break;
      }
      case MPI_DOUBLE_INT: {
        const double d = small(rng);
        const int i2 = small(rng);
        std::memcpy(x, &d, sizeof d);
        std::memcpy(x + sizeof d, &i2, sizeof i2);
        break;
      }
      case MPI_C_BOOL:
        x[0] = static_cast<std::byte>(rng() & 1);  // a bool holds 0 or 1 only
        break;
      default:
        // Integers: a small value in the low byte (little-endian), so SUM and PROD of signed
        // types never overflow (undefined behaviour, which UBSan rejects).
        for (std::size_t b = 0; b < e; ++b) x[b] = std::byte{0};
        x[0] = static_cast<std::byte>(rng() & 0x7f);
    }
  }
  return v;
}

TEST(ApplyOp, ThreeOperandFormMatchesCopyThenInPlace) {
  const int kinds[] = {MPI_CHAR,     MPI_INT8_T,    MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_INT,
                       MPI_UNSIGNED, MPI_LONG_LONG, MPI_UINT64_T,      MPI_FLOAT, MPI_DOUBLE,
                       MPI_C_BOOL,   MPI_2INT,      MPI_DOUBLE_INT};
  std::mt19937 rng(20261202);
  int checked = 0;
  for (int o = 1; o < onesided::kNumOps; ++o) {
    const auto op = static_cast<Op>(o);
    for (int kind : kinds) {
      if (!opAccepts(op, kind)) continue;
      const std::size_t e = packedSize(kind);
      for (std::size_t n :
           {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{33}, std::size_t{1000}}) {
        for (std::size_t skew : {std::size_t{0}, std::size_t{3}}) {  // unaligned buffers too
          const auto a = values(kind, n, rng);
          const auto b = values(kind, n, rng);
          // One byte of slack: no buffer is empty (a null data() would make the calls UB).
          std::vector<std::byte> base(n * e + skew + 1), src(n * e + skew + 1);
          std::vector<std::byte> out(n * e + skew + 1);
          std::byte* const pb = base.data() + skew;
          std::byte* const ps = src.data() + skew;
          std::copy(a.begin(), a.end(), pb);
          std::copy(b.begin(), b.end(), ps);
          std::vector<std::byte> want = a;
          want.push_back(std::byte{0});  // slack, as above
          applyOp(op, kind, want.data(), ps, n);
          want.pop_back();
          auto holds = [&](const std::byte* p, const std::vector<std::byte>& v) {
            return std::equal(v.begin(), v.end(), p);
          };
          applyOp(op, kind, out.data() + skew, pb, ps, n);
          ASSERT_TRUE(holds(out.data() + skew, want))
              << onesided::opName(o) << " kind " << kind << " n " << n << " skew " << skew;
          ASSERT_TRUE(holds(pb, a)) << "base written";
          ASSERT_TRUE(holds(ps, b)) << "src written";
          // src == dst: the stream received into the destination, combined there.
          applyOp(op, kind, ps, pb, ps, n);
          ASSERT_TRUE(holds(ps, want))
              << onesided::opName(o) << " into src, kind " << kind << " n " << n;
          std::copy(b.begin(), b.end(), ps);
          // base == dst is the in-place form.
          applyOp(op, kind, pb, pb, ps, n);
          ASSERT_TRUE(holds(pb, want))
              << onesided::opName(o) << " in place, kind " << kind << " n " << n;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 200);
}

// MINLOC / MAXLOC into a fresh buffer keep base's pair where it wins (the in-place form leaves
// it where it is, so the three-operand form must store it).
TEST(ApplyOp, LocPairsFromBaseAreStored) {
  const int base[4] = {5, 1, 9, 7};  // (5, idx 1), (9, idx 7)
  const int src[4] = {5, 2, 3, 0};   // a tie with a larger index, a smaller value
  int out[4] = {-1, -1, -1, -1};
  applyOp(Op::kMinloc, MPI_2INT, reinterpret_cast<std::byte*>(out),
          reinterpret_cast<const std::byte*>(base), reinterpret_cast<const std::byte*>(src), 2);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 1);  // the tie: the smaller index, base's
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(out[3], 0);  // src's smaller value
  applyOp(Op::kMaxloc, MPI_2INT, reinterpret_cast<std::byte*>(out),
          reinterpret_cast<const std::byte*>(base), reinterpret_cast<const std::byte*>(src), 2);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 9);  // base's larger value
  EXPECT_EQ(out[3], 7);
}

// MPI_CHAR takes the arithmetic, logical and bitwise operations as a signed 8-bit integer, as
// in Open MPI and MPICH (benchmarks accumulate MPI_CHAR with MPI_SUM); MPI_WCHAR stays refused,
// and compare-and-swap keeps to the standard's integer types.
TEST(ApplyOp, CharIsASignedByte) {
  for (Op op : {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kBand, Op::kBor, Op::kBxor, Op::kLand,
                Op::kLor, Op::kLxor, Op::kReplace, Op::kNoOp}) {
    EXPECT_TRUE(opAccepts(op, MPI_CHAR)) << onesided::opName(static_cast<int>(op));
    EXPECT_TRUE(opAccepts(op, MPI_SIGNED_CHAR)) << onesided::opName(static_cast<int>(op));
    EXPECT_TRUE(opAccepts(op, MPI_UNSIGNED_CHAR)) << onesided::opName(static_cast<int>(op));
  }
  EXPECT_FALSE(opAccepts(Op::kMaxloc, MPI_CHAR));
  EXPECT_FALSE(opAccepts(Op::kSum, MPI_WCHAR));
  EXPECT_FALSE(onesided::casAccepts(MPI_CHAR));
  EXPECT_EQ(packedSize(MPI_CHAR), 1U);

  const signed char a[4] = {100, -5, -1, 7};
  const signed char b[4] = {27, 3, 1, -7};
  signed char out[4] = {};
  auto run = [&](Op op) {
    applyOp(op, MPI_CHAR, reinterpret_cast<std::byte*>(out), reinterpret_cast<const std::byte*>(a),
            reinterpret_cast<const std::byte*>(b), 4);
  };
  run(Op::kSum);
  EXPECT_EQ(out[0], 127);
  EXPECT_EQ(out[1], -2);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 0);
  run(Op::kMax);  // signed: -1 < 1
  EXPECT_EQ(out[0], 100);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 1);
  EXPECT_EQ(out[3], 7);
  run(Op::kMin);
  EXPECT_EQ(out[2], -1);
  EXPECT_EQ(out[3], -7);
  run(Op::kProd);
  EXPECT_EQ(out[1], -15);
  EXPECT_EQ(out[2], -1);
}

}  // namespace
