// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/datatype.hpp"

#include <array>
#include <complex>
#include <cstddef>
#include <utility>

namespace onesided {
namespace {

// The handle values of <mpi.h> (checked against it in src/capi/types.cpp).
enum Id : int {
  kChar = 1,
  kSignedChar,
  kUnsignedChar,
  kByte,
  kWchar,
  kShort,
  kUnsignedShort,
  kInt,
  kUnsigned,
  kLong,
  kUnsignedLong,
  kLongLong,
  kUnsignedLongLong,
  kFloat,
  kDouble,
  kLongDouble,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kCBool,
  kCFloatComplex,
  kCDoubleComplex,
  kCLongDoubleComplex,
  kAint,
  kOffset,
  kCount,
  kPacked,
  kFloatInt,
  kDoubleInt,
  kLongInt,
  k2Int,
  kShortInt,
  kLongDoubleInt,
  kNumPredefined
};

template <class T>
Datatype basic(int id, const char* name) {
  return Datatype(id, name, sizeof(T), sizeof(T), {{0, sizeof(T)}}, {{id, 1}});
}

// MPI's pair types are C structs {value; int}: two blocks with the struct's padding between.
template <class V>
Datatype pair(int id, const char* name, int valueKind) {
  struct P {
    V v;
    int i;
  };
  std::vector<Datatype::Block> blocks{{0, sizeof(V)},
                                      {static_cast<std::ptrdiff_t>(offsetof(P, i)), sizeof(int)}};
  if (offsetof(P, i) == sizeof(V)) blocks = {{0, sizeof(V) + sizeof(int)}};
  return Datatype(id, name, sizeof(V) + sizeof(int), sizeof(P), std::move(blocks),
                  {{valueKind, 1}, {kInt, 1}});
}

std::vector<Datatype> makeTable() {
  std::vector<Datatype> t;
  t.reserve(kNumPredefined);
  t.emplace_back(0, "MPI_DATATYPE_NULL", 0, 0, std::vector<Datatype::Block>{},
                 std::vector<Datatype::SigRun>{});
  t.push_back(basic<char>(kChar, "MPI_CHAR"));
  t.push_back(basic<signed char>(kSignedChar, "MPI_SIGNED_CHAR"));
  t.push_back(basic<unsigned char>(kUnsignedChar, "MPI_UNSIGNED_CHAR"));
  t.push_back(basic<unsigned char>(kByte, "MPI_BYTE"));
  t.push_back(basic<wchar_t>(kWchar, "MPI_WCHAR"));
  t.push_back(basic<short>(kShort, "MPI_SHORT"));
  t.push_back(basic<unsigned short>(kUnsignedShort, "MPI_UNSIGNED_SHORT"));
  t.push_back(basic<int>(kInt, "MPI_INT"));
  t.push_back(basic<unsigned>(kUnsigned, "MPI_UNSIGNED"));
  t.push_back(basic<long>(kLong, "MPI_LONG"));
  t.push_back(basic<unsigned long>(kUnsignedLong, "MPI_UNSIGNED_LONG"));
  t.push_back(basic<long long>(kLongLong, "MPI_LONG_LONG"));
  t.push_back(basic<unsigned long long>(kUnsignedLongLong, "MPI_UNSIGNED_LONG_LONG"));
  t.push_back(basic<float>(kFloat, "MPI_FLOAT"));
  t.push_back(basic<double>(kDouble, "MPI_DOUBLE"));
  t.push_back(basic<long double>(kLongDouble, "MPI_LONG_DOUBLE"));
  t.push_back(basic<std::int8_t>(kInt8, "MPI_INT8_T"));
  t.push_back(basic<std::int16_t>(kInt16, "MPI_INT16_T"));
  t.push_back(basic<std::int32_t>(kInt32, "MPI_INT32_T"));
  t.push_back(basic<std::int64_t>(kInt64, "MPI_INT64_T"));
  t.push_back(basic<std::uint8_t>(kUint8, "MPI_UINT8_T"));
  t.push_back(basic<std::uint16_t>(kUint16, "MPI_UINT16_T"));
  t.push_back(basic<std::uint32_t>(kUint32, "MPI_UINT32_T"));
  t.push_back(basic<std::uint64_t>(kUint64, "MPI_UINT64_T"));
  t.push_back(basic<bool>(kCBool, "MPI_C_BOOL"));
  t.push_back(basic<std::complex<float>>(kCFloatComplex, "MPI_C_FLOAT_COMPLEX"));
  t.push_back(basic<std::complex<double>>(kCDoubleComplex, "MPI_C_DOUBLE_COMPLEX"));
  t.push_back(basic<std::complex<long double>>(kCLongDoubleComplex, "MPI_C_LONG_DOUBLE_COMPLEX"));
  t.push_back(basic<std::intptr_t>(kAint, "MPI_AINT"));
  t.push_back(basic<long long>(kOffset, "MPI_OFFSET"));
  t.push_back(basic<long long>(kCount, "MPI_COUNT"));
  t.push_back(basic<unsigned char>(kPacked, "MPI_PACKED"));
  t.push_back(pair<float>(kFloatInt, "MPI_FLOAT_INT", kFloat));
  t.push_back(pair<double>(kDoubleInt, "MPI_DOUBLE_INT", kDouble));
  t.push_back(pair<long>(kLongInt, "MPI_LONG_INT", kLong));
  t.emplace_back(k2Int, "MPI_2INT", 2 * sizeof(int), 2 * sizeof(int),
                 std::vector<Datatype::Block>{{0, 2 * sizeof(int)}},
                 std::vector<Datatype::SigRun>{{kInt, 2}});
  t.push_back(pair<short>(kShortInt, "MPI_SHORT_INT", kShort));
  t.push_back(pair<long double>(kLongDoubleInt, "MPI_LONG_DOUBLE_INT", kLongDouble));
  return t;
}

const std::vector<Datatype>& table() {
  static const std::vector<Datatype> t = makeTable();
  return t;
}

/// The whole signature of count elements, run-length encoded, if it has at most `limit` runs.
bool expand(const Datatype& d, std::size_t count, std::vector<Datatype::SigRun>& out,
            std::size_t limit) {
  for (std::size_t i = 0; i < count; ++i) {
    for (const auto& r : d.signature()) {
      if (!out.empty() && out.back().kind == r.kind) {
        out.back().count += r.count;
      } else {
        if (out.size() == limit) return false;
        out.push_back(r);
      }
    }
    if (d.signature().size() == 1) {  // homogeneous: the rest only grows the one run
      out.back().count += (count - i - 1) * d.signature()[0].count;
      break;
    }
  }
  return true;
}

}  // namespace

Datatype::Datatype(int id, std::string name, std::size_t size, std::ptrdiff_t extent,
                   std::vector<Block> blocks, std::vector<SigRun> signature)
    : id_(id),
      name_(std::move(name)),
      size_(size),
      extent_(extent),
      contiguous_(blocks.size() == 1 && blocks[0].offset == 0 &&
                  static_cast<std::ptrdiff_t>(blocks[0].len) == extent),
      blocks_(std::move(blocks)),
      signature_(std::move(signature)) {}

Datatype::PredefinedTable Datatype::predefinedTable() noexcept {
  static const PredefinedTable t{table().data(), static_cast<int>(table().size())};
  return t;
}

bool signaturesMatch(const Datatype& o, std::size_t ocount, const Datatype& t, std::size_t tcount) {
  if (o.size() * ocount != t.size() * tcount) return false;
  if (o.size() * ocount == 0) return true;
  // MPI_PACKED matches anything at the other end (MPI-3.1 §3.3.1).
  if (o.id() == kPacked || t.id() == kPacked) return true;
  // The common cases without building run lists: the same type, or two homogeneous types.
  if (o.id() == t.id()) return ocount == tcount;
  if (o.signature().size() == 1 && t.signature().size() == 1) {
    return o.signature()[0].kind == t.signature()[0].kind &&
           o.signature()[0].count * ocount == t.signature()[0].count * tcount;
  }
  constexpr std::size_t kLimit = 1U << 16;
  std::vector<Datatype::SigRun> a;
  std::vector<Datatype::SigRun> b;
  if (!expand(o, ocount, a, kLimit) || !expand(t, tcount, b, kLimit)) {
    return o.id() == t.id() && ocount == tcount;  // too long to compare run by run
  }
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind || a[i].count != b[i].count) return false;
  }
  return true;
}

template <>
const Datatype& datatypeOf<char>() {
  return table()[kChar];
}
template <>
const Datatype& datatypeOf<signed char>() {
  return table()[kSignedChar];
}
template <>
const Datatype& datatypeOf<unsigned char>() {
  return table()[kUnsignedChar];
}
template <>
const Datatype& datatypeOf<std::byte>() {
  return table()[kByte];
}
template <>
const Datatype& datatypeOf<wchar_t>() {
  return table()[kWchar];
}
template <>
const Datatype& datatypeOf<short>() {
  return table()[kShort];
}
template <>
const Datatype& datatypeOf<unsigned short>() {
  return table()[kUnsignedShort];
}
template <>
const Datatype& datatypeOf<int>() {
  return table()[kInt];
}
template <>
const Datatype& datatypeOf<unsigned>() {
  return table()[kUnsigned];
}
template <>
const Datatype& datatypeOf<long>() {
  return table()[kLong];
}
template <>
const Datatype& datatypeOf<unsigned long>() {
  return table()[kUnsignedLong];
}
template <>
const Datatype& datatypeOf<long long>() {
  return table()[kLongLong];
}
template <>
const Datatype& datatypeOf<unsigned long long>() {
  return table()[kUnsignedLongLong];
}
template <>
const Datatype& datatypeOf<float>() {
  return table()[kFloat];
}
template <>
const Datatype& datatypeOf<double>() {
  return table()[kDouble];
}
template <>
const Datatype& datatypeOf<long double>() {
  return table()[kLongDouble];
}
template <>
const Datatype& datatypeOf<bool>() {
  return table()[kCBool];
}
template <>
const Datatype& datatypeOf<std::complex<float>>() {
  return table()[kCFloatComplex];
}
template <>
const Datatype& datatypeOf<std::complex<double>>() {
  return table()[kCDoubleComplex];
}

}  // namespace onesided
