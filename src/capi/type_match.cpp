// SPDX-License-Identifier: BSD-3-Clause
// Predefined types chosen by class and size or by Fortran 90 precision and range (MPI-3.1
// §17.1.9). This runtime has C types only, so the answers are C types (Open MPI answers with its
// Fortran ones, MPI_INTEGER4 ...): the same sizes, and the same data on the wire.
#include <cfloat>
#include <span>
#include <string>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

/// A real type's decimal precision and exponent range, as Fortran's PRECISION and RANGE give.
struct RealKind {
  MPI_Datatype real;
  MPI_Datatype complex;
  int precision;
  int range;
};
constexpr RealKind kReals[] = {
    {MPI_FLOAT, MPI_C_FLOAT_COMPLEX, FLT_DIG, FLT_MAX_10_EXP},
    {MPI_DOUBLE, MPI_C_DOUBLE_COMPLEX, DBL_DIG, DBL_MAX_10_EXP},
    {MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX, LDBL_DIG, LDBL_MAX_10_EXP},
};

MPI_Datatype f90Real(const char* what, int p, int r, bool complex) {
  if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
    throw Error(MPI_ERR_ARG, std::string(what) + ": p and r are both MPI_UNDEFINED");
  }
  for (const RealKind& k : kReals) {
    if ((p == MPI_UNDEFINED || p <= k.precision) && (r == MPI_UNDEFINED || r <= k.range)) {
      return complex ? k.complex : k.real;
    }
  }
  throw Error(MPI_ERR_ARG, std::string(what) + ": no real type has " + std::to_string(p) +
                               " decimal digits and an exponent range of " + std::to_string(r) +
                               " (the widest: " + std::to_string(LDBL_DIG) + ", " +
                               std::to_string(LDBL_MAX_10_EXP) + ")");
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  return call("MPI_Type_match_size", On::none(), [&] {
    capi::requireArg(datatype, "datatype");
    static constexpr MPI_Datatype kIntegers[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T};
    static constexpr MPI_Datatype kReals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    static constexpr MPI_Datatype kComplexes[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                                  MPI_C_LONG_DOUBLE_COMPLEX};
    std::span<const MPI_Datatype> candidates;
    switch (typeclass) {
      case MPI_TYPECLASS_INTEGER:
        candidates = kIntegers;
        break;
      case MPI_TYPECLASS_REAL:
        candidates = kReals;
        break;
      case MPI_TYPECLASS_COMPLEX:
        candidates = kComplexes;
        break;
      default:
        throw onesided::Error(MPI_ERR_ARG, "typeclass " + std::to_string(typeclass) +
                                               " is not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX");
    }
    for (MPI_Datatype t : candidates) {
      if (size >= 0 && capi::datatype(t).size() == static_cast<std::size_t>(size)) {
        *datatype = t;
        return;
      }
    }
    throw onesided::Error(MPI_ERR_ARG,
                          "no predefined type of that class has size " + std::to_string(size));
  });
}

// The least integer type whose range holds -10^r .. 10^r (Fortran's SELECTED_INT_KIND(r)).
int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return call("MPI_Type_create_f90_integer", On::none(), [&] {
    capi::requireArg(newtype, "newtype");
    if (r <= 2) {
      *newtype = MPI_INT8_T;
    } else if (r <= 4) {
      *newtype = MPI_INT16_T;
    } else if (r <= 9) {
      *newtype = MPI_INT32_T;
    } else if (r <= 18) {
      *newtype = MPI_INT64_T;
    } else {
      throw onesided::Error(MPI_ERR_ARG, "no integer type has a range of 10^" + std::to_string(r) +
                                             " (the widest: 10^18)");
    }
  });
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return call("MPI_Type_create_f90_real", On::none(), [&] {
    capi::requireArg(newtype, "newtype");
    *newtype = capi::f90Real("real", p, r, false);
  });
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return call("MPI_Type_create_f90_complex", On::none(), [&] {
    capi::requireArg(newtype, "newtype");
    *newtype = capi::f90Real("complex", p, r, true);
  });
}

}  // extern "C"
