// SPDX-License-Identifier: BSD-3-Clause
// The predefined reduction operations (MPI_Op handle values of <mpi.h>) and what they accept.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace onesided {

enum class Op : int {
  kMax = 1,
  kMin,
  kSum,
  kProd,
  kLand,
  kBand,
  kLor,
  kBor,
  kLxor,
  kBxor,
  kMinloc,
  kMaxloc,
  kReplace,
  kNoOp,
};
constexpr int kNumOps = 15;  // handles 1 .. 14; 0 is MPI_OP_NULL

/// "MPI_SUM", ...; "MPI_OP_NULL" for anything else.
const char* opName(int op) noexcept;
/// Whether `op` applies to elements of the predefined type `kind` (MPI-3.1 §5.9.2; REPLACE and
/// NO_OP take every type, as accumulate allows).
/// Inline, from a table: every accumulate asks.
extern const std::array<std::uint64_t, kNumOps> kOpKinds;  // bit k of [op]: op takes kind k
inline bool opAccepts(Op op, int kind) noexcept {
  const auto o = static_cast<unsigned>(op);
  return o < static_cast<unsigned>(kNumOps) && kind > 0 && kind < 64 &&
         ((kOpKinds[o] >> static_cast<unsigned>(kind)) & 1U) != 0;
}
/// Whether MPI_Compare_and_swap takes `kind` (C / multi-language integer, logical, byte).
bool casAccepts(int kind) noexcept;
/// Bit k set: the predefined kind k is an integer type of exactly 8 bytes (kinds are below 64).
extern const std::uint64_t kInt64Kinds;
/// Whether `kind` is an integer type of exactly 8 bytes (the NIC's atomics). Inline: every
/// 8-byte fetch-and-op and compare-and-swap asks.
inline bool isInt64(int kind) noexcept {
  return kind > 0 && kind < 64 && ((kInt64Kinds >> static_cast<unsigned>(kind)) & 1U) != 0;
}
/// dst[i] = base[i] op src[i] for `n` packed elements of the predefined type `kind` (pair types
/// packed as value then int, no padding), in one pass: a reduction into a fresh buffer does not
/// copy its first operand there first. base or src may be dst; otherwise none of the three
/// overlap.
/// REPLACE copies src; NO_OP copies base.
void applyOp(Op op, int kind, std::byte* dst, const std::byte* base, const std::byte* src,
             std::size_t n) noexcept;
/// dst[i] = dst[i] op src[i]. REPLACE copies; NO_OP leaves dst alone.
inline void applyOp(Op op, int kind, std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  applyOp(op, kind, dst, dst, src, n);
}
/// Bytes of one packed element of `kind` (its size, not its extent).
std::size_t packedSize(int kind) noexcept;
/// A pair kind whose C struct has padding between its value and its int (MPI_SHORT_INT:
/// {short; int}, the int at 4), so that an element in memory is not its packed form: where the
/// int is, and the struct's size. `intOffset` 0 (and false) for every other kind.
struct SpreadPair {
  std::size_t valueBytes = 0;
  std::size_t intOffset = 0;
  std::size_t extent = 0;
};
SpreadPair spreadPair(int kind) noexcept;
/// The bytes of memory that `packedBytes` packed bytes of `kind` span when their elements are
/// laid out one struct after the other: packedBytes itself but for a spread pair kind.
inline std::size_t spanOf(int kind, std::size_t packedBytes) noexcept {
  const SpreadPair sp = spreadPair(kind);
  if (sp.intOffset == 0) return packedBytes;
  const std::size_t elem = packedSize(kind);
  const std::size_t n = packedBytes / elem;
  return n == 0 ? 0 : (n - 1) * sp.extent + sp.intOffset + sizeof(int);
}
/// bytes / unit for a packed element size: a shift where unit is a power of two (every kind
/// but a few pair types). A 64-bit division costs 40-90 cycles on current Xeons, and this runs
/// on every message of a reduction.
inline std::size_t unitsIn(std::size_t bytes, std::size_t unit) noexcept {
  return std::has_single_bit(unit) ? bytes >> std::countr_zero(unit) : bytes / unit;
}
/// The accumulate lock path's fast case (Window::fastLocked) by kind: the bytes of one element
/// of the predefined type k when the type has no gaps (size == packed size) and is not an
/// 8-byte integer (those take CPU or NIC atomics), else 0. A table: the fast case asks once.
extern const std::array<std::uint8_t, 64> kLockedBytes;
/// kLockedBytes[kind] for any kind (0 outside the table) when `op` applies to it, else 0.
inline std::size_t lockedBytes(Op op, int kind) noexcept {
  return opAccepts(op, kind) ? kLockedBytes[static_cast<std::size_t>(kind)] : 0;
}

}  // namespace onesided
