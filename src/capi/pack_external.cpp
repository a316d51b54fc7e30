// SPDX-License-Identifier: BSD-3-Clause
// Canonical packing, datarep "external32" (MPI-3.1 §13.5.2): MPI_Pack_external,
// MPI_Unpack_external, MPI_Pack_external_size. The type's data is packed natively first (the
// pack engine, in type-map order), then each basic element is converted field by field to the
// big-endian sizes of §13.5.2's table, walking the type signature; unpacking is the reverse.
// Integers wider here than in external32 (long, wchar_t) keep their low bytes; narrower ones
// are sign- or zero-extended back. long double (x87 extended) travels as IEEE binary128.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

enum class Num : std::uint8_t { kUnsigned, kSigned, kFloat, kLongDouble };

/// One field of a basic element: its native and external32 sizes and what it holds.
struct Field {
  std::size_t native = 0;
  std::size_t ext = 0;
  Num num = Num::kUnsigned;
};

/// The fields of predefined kind `kind` (one, or two for complex and pair types); 0 fields for
/// a kind external32 has no representation for.
int fieldsOf(int kind, Field (&f)[2]) {
  auto one = [&](std::size_t native, std::size_t ext, Num num) {
    f[0] = {native, ext, num};
    return 1;
  };
  auto pair = [&](Field a) {
    f[0] = a;
    f[1] = {sizeof(int), 4, Num::kSigned};
    return 2;
  };
  switch (kind) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
      return one(1, 1, Num::kSigned);
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_PACKED:
    case MPI_UINT8_T:
    case MPI_C_BOOL:
      return one(1, 1, Num::kUnsigned);
    case MPI_WCHAR:
      return one(sizeof(wchar_t), 2, Num::kUnsigned);
    case MPI_SHORT:
    case MPI_INT16_T:
      return one(2, 2, Num::kSigned);
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T:
      return one(2, 2, Num::kUnsigned);
    case MPI_INT:
    case MPI_INT32_T:
      return one(sizeof(int), 4, Num::kSigned);
    case MPI_UNSIGNED:
    case MPI_UINT32_T:
      return one(sizeof(unsigned), 4, Num::kUnsigned);
    case MPI_LONG:
      return one(sizeof(long), 4, Num::kSigned);
    case MPI_UNSIGNED_LONG:
      return one(sizeof(unsigned long), 4, Num::kUnsigned);
    case MPI_LONG_LONG:
    case MPI_INT64_T:
      return one(8, 8, Num::kSigned);
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T:
      return one(8, 8, Num::kUnsigned);
    case MPI_AINT:
      return one(sizeof(MPI_Aint), 8, Num::kSigned);
    case MPI_OFFSET:
      return one(sizeof(MPI_Offset), 8, Num::kSigned);
    case MPI_COUNT:
      return one(sizeof(MPI_Count), 8, Num::kSigned);
    case MPI_FLOAT:
      return one(sizeof(float), 4, Num::kFloat);
    case MPI_DOUBLE:
      return one(sizeof(double), 8, Num::kFloat);
    case MPI_LONG_DOUBLE:
      return one(sizeof(long double), 16, Num::kLongDouble);
    case MPI_C_FLOAT_COMPLEX:
      f[1] = f[0] = {sizeof(float), 4, Num::kFloat};
      return 2;
    case MPI_C_DOUBLE_COMPLEX:
      f[1] = f[0] = {sizeof(double), 8, Num::kFloat};
      return 2;
    case MPI_C_LONG_DOUBLE_COMPLEX:
      f[1] = f[0] = {sizeof(long double), 16, Num::kLongDouble};
      return 2;
    case MPI_FLOAT_INT:
      return pair({sizeof(float), 4, Num::kFloat});
    case MPI_DOUBLE_INT:
      return pair({sizeof(double), 8, Num::kFloat});
    case MPI_LONG_INT:
      return pair({sizeof(long), 4, Num::kSigned});
    case MPI_2INT:
      return pair({sizeof(int), 4, Num::kSigned});
    case MPI_SHORT_INT:
      return pair({2, 2, Num::kSigned});
    case MPI_LONG_DOUBLE_INT:
      return pair({sizeof(long double), 16, Num::kLongDouble});
    default:
      return 0;
  }
}

/// External32 bytes of one element of `kind`; MPI_ERR_TYPE for a kind without a representation.
std::size_t extSize(int kind) {
  Field f[2];
  const int n = fieldsOf(kind, f);
  if (n == 0) {
    throw Error(MPI_ERR_TYPE,
                "external32 has no representation for " + Datatype::predefined(kind)->name());
  }
  return n == 1 ? f[0].ext : f[0].ext + f[1].ext;
}

// Little-endian hosts store an integer's low bytes first: its big-endian form is the reverse.
static_assert(std::endian::native == std::endian::little, "external32 conversion assumes x86-64");

void toExternal(const Field& f, const std::byte* in, std::byte* out) {
  std::byte le[16] = {};
  if (f.num == Num::kLongDouble) {
    long double v = 0;
    std::memcpy(&v, in, sizeof v);
    const auto q = static_cast<__float128>(v);
    std::memcpy(le, &q, sizeof q);
  } else {
    std::memcpy(le, in, std::min(f.native, f.ext));  // the low bytes
    if (f.ext > f.native && f.num == Num::kSigned &&
        (static_cast<unsigned>(in[f.native - 1]) & 0x80U)) {
      std::fill(le + f.native, le + f.ext, std::byte{0xff});
    }
  }
  std::reverse_copy(le, le + f.ext, out);
}

void fromExternal(const Field& f, const std::byte* in, std::byte* out) {
  std::byte le[16] = {};
  std::reverse_copy(in, in + f.ext, le);
  if (f.num == Num::kLongDouble) {
    __float128 q = 0;
    std::memcpy(&q, le, sizeof q);
    const auto v = static_cast<long double>(q);
    std::memcpy(out, &v, sizeof v);
    return;
  }
  if (f.native > f.ext && f.num == Num::kSigned && (static_cast<unsigned>(le[f.ext - 1]) & 0x80U)) {
    std::fill(le + f.ext, le + f.native, std::byte{0xff});
  }
  std::memcpy(out, le, f.native);
}

/// Converts the native packed stream of `count` elements of `t` to or from external32.
template <bool kToExternal>
void convert(const Datatype& t, std::size_t count, const std::byte* in, std::byte* out) {
  t.forEachSigRun(count, [&](int kind, std::uint64_t n) {
    Field f[2];
    const int nf = fieldsOf(kind, f);
    for (std::uint64_t i = 0; i < n; ++i) {
      for (int k = 0; k < nf; ++k) {
        if constexpr (kToExternal) {
          toExternal(f[k], in, out);
        } else {
          fromExternal(f[k], in, out);
        }
        in += kToExternal ? f[k].native : f[k].ext;
        out += kToExternal ? f[k].ext : f[k].native;
      }
    }
    return true;
  });
}

/// External32 bytes of `count` elements of `t`.
std::uint64_t externalBytes(const Datatype& t, std::size_t count) {
  std::uint64_t bytes = 0;
  t.forEachSigRun(count, [&](int kind, std::uint64_t n) {
    bytes += n * extSize(kind);
    return true;
  });
  return bytes;
}

void checkDatarep(const char* datarep) {
  requireArg(datarep, "datarep");
  if (std::strcmp(datarep, "external32") != 0) {
    throw Error(MPI_ERR_ARG, "datarep \"" + std::string(datarep) +
                                 "\" is not \"external32\", the one representation defined");
  }
}

void checkPosition(const MPI_Aint* position, MPI_Aint size, const char* sizeName) {
  requireArg(position, "position");
  if (size < 0) {
    throw Error(MPI_ERR_ARG, std::string(sizeName) + " " + std::to_string(size) + " is negative");
  }
  if (*position < 0 || *position > size) {
    throw Error(MPI_ERR_ARG, "position " + std::to_string(*position) + " is not in 0 .. " +
                                 sizeName + " " + std::to_string(size));
  }
}

void requireCommitted(const Datatype& t) {
  if (!t.committed()) throw Error(MPI_ERR_TYPE, t.describe() + " is not committed");
}

void requireCountArg(int count, const char* what) {
  if (count < 0) {
    throw Error(MPI_ERR_COUNT, std::string(what) + " " + std::to_string(count) + " is negative");
  }
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                      void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  return call("MPI_Pack_external", On::none(), [&] {
    capi::requireInit();
    capi::checkDatarep(datarep);
    capi::requireCountArg(incount, "incount");
    const auto& t = capi::datatype(datatype);
    capi::requireCommitted(t);
    capi::checkPosition(position, outsize, "outsize");
    const auto count = static_cast<std::size_t>(incount);
    const std::uint64_t ext = capi::externalBytes(t, count);
    if (ext > static_cast<std::uint64_t>(outsize - *position)) {
      throw onesided::Error(MPI_ERR_TRUNCATE,
                            std::to_string(incount) + " x " + t.describe() + " take " +
                                std::to_string(ext) + " bytes in external32, more than the " +
                                std::to_string(outsize - *position) + " left in outbuf");
    }
    if (ext == 0) return;
    capi::requireArg(outbuf, "outbuf");
    std::vector<std::byte> native(t.size() * count);
    onesided::pack(inbuf, count, t, native.data(), native.size());
    capi::convert<true>(t, count, native.data(), static_cast<std::byte*>(outbuf) + *position);
    *position += static_cast<MPI_Aint>(ext);
  });
}

int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                        MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  return call("MPI_Unpack_external", On::none(), [&] {
    capi::requireInit();
    capi::checkDatarep(datarep);
    capi::requireCountArg(outcount, "outcount");
    const auto& t = capi::datatype(datatype);
    capi::requireCommitted(t);
    capi::checkPosition(position, insize, "insize");
    const auto count = static_cast<std::size_t>(outcount);
    const std::uint64_t ext = capi::externalBytes(t, count);
    if (ext > static_cast<std::uint64_t>(insize - *position)) {
      throw onesided::Error(MPI_ERR_TRUNCATE,
                            std::to_string(outcount) + " x " + t.describe() + " take " +
                                std::to_string(ext) + " bytes in external32, more than the " +
                                std::to_string(insize - *position) + " left in inbuf");
    }
    if (ext == 0) return;
    capi::requireArg(inbuf, "inbuf");
    std::vector<std::byte> native(t.size() * count);
    capi::convert<false>(t, count, static_cast<const std::byte*>(inbuf) + *position, native.data());
    onesided::unpack(native.data(), native.size(), outbuf, count, t);
    *position += static_cast<MPI_Aint>(ext);
  });
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint* size) {
  return call("MPI_Pack_external_size", On::none(), [&] {
    capi::checkDatarep(datarep);
    capi::requireCountArg(incount, "incount");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(size, "size");
    *size = static_cast<MPI_Aint>(capi::externalBytes(t, static_cast<std::size_t>(incount)));
  });
}

}  // extern "C"
