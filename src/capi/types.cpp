// SPDX-License-Identifier: BSD-3-Clause
// Datatypes: the C entry points over onesided::Datatype, the derived-type handle table, pack and
// unpack, and the status queries.
#include <climits>
#include <cstring>
#include <span>
#include <vector>

#include "capi/attr.hpp"
#include "capi/state.hpp"

namespace onesided::capi {
namespace {

static_assert(MPI_PACKED == kTypePacked && MPI_LB == kTypeLb && MPI_UB == kTypeUb &&
              ONESIDED_NUM_PREDEFINED_TYPES == kNumPredefinedTypes);
static_assert(MPI_ORDER_C == kOrderC && MPI_ORDER_FORTRAN == kOrderFortran);
static_assert(MPI_DISTRIBUTE_BLOCK == kDistributeBlock &&
              MPI_DISTRIBUTE_CYCLIC == kDistributeCyclic &&
              MPI_DISTRIBUTE_NONE == kDistributeNone &&
              MPI_DISTRIBUTE_DFLT_DARG == kDistributeDfltDarg);
static_assert(MPI_COMBINER_NAMED == static_cast<int>(Combiner::kNamed) &&
              MPI_COMBINER_DUP == static_cast<int>(Combiner::kDup) &&
              MPI_COMBINER_CONTIGUOUS == static_cast<int>(Combiner::kContiguous) &&
              MPI_COMBINER_VECTOR == static_cast<int>(Combiner::kVector) &&
              MPI_COMBINER_HVECTOR == static_cast<int>(Combiner::kHvector) &&
              MPI_COMBINER_INDEXED == static_cast<int>(Combiner::kIndexed) &&
              MPI_COMBINER_HINDEXED == static_cast<int>(Combiner::kHindexed) &&
              MPI_COMBINER_INDEXED_BLOCK == static_cast<int>(Combiner::kIndexedBlock) &&
              MPI_COMBINER_HINDEXED_BLOCK == static_cast<int>(Combiner::kHindexedBlock) &&
              MPI_COMBINER_STRUCT == static_cast<int>(Combiner::kStruct) &&
              MPI_COMBINER_SUBARRAY == static_cast<int>(Combiner::kSubarray) &&
              MPI_COMBINER_DARRAY == static_cast<int>(Combiner::kDarray) &&
              MPI_COMBINER_RESIZED == static_cast<int>(Combiner::kResized));

MPI_Datatype addType(std::shared_ptr<Datatype> t) {
  auto& types = state().types;
  if (types.size() >= static_cast<std::size_t>(INT_MAX - kFirstDerivedType)) {
    throw Error(MPI_ERR_INTERN, "out of datatype handles");
  }
  types.push_back(std::move(t));
  return static_cast<MPI_Datatype>(kFirstDerivedType + static_cast<int>(types.size() - 1));
}

/// The constructor's output handle; checked before anything is built.
MPI_Datatype* output(MPI_Datatype* newtype) {
  requireArg(newtype, "newtype");
  return newtype;
}

void requireCount(int count, const char* what) {
  if (count < 0)
    throw Error(MPI_ERR_COUNT, std::string(what) + " " + std::to_string(count) + " is negative");
}

/// An int array of n entries, widened; NULL only when n is 0.
std::vector<std::int64_t> ints(const int* a, int n, const char* what) {
  if (n > 0) requireArg(a, what);
  return n > 0 ? std::vector<std::int64_t>(a, a + n) : std::vector<std::int64_t>{};
}
std::vector<std::int64_t> aints(const MPI_Aint* a, int n, const char* what) {
  if (n > 0) requireArg(a, what);
  return n > 0 ? std::vector<std::int64_t>(a, a + n) : std::vector<std::int64_t>{};
}

int toInt(std::uint64_t v) { return v > INT_MAX ? MPI_UNDEFINED : static_cast<int>(v); }

void copyName(const std::string& name, char* out, int* len) {
  const std::size_t n = std::min<std::size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(out, name.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n);
}

}  // namespace
}  // namespace onesided::capi

using onesided::Datatype;
using onesided::Error;
using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  return call("MPI_Type_size", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(size, "size");
    *size = capi::toInt(t.size());
  });
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return call("MPI_Type_size_x", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(size, "size");
    *size = static_cast<MPI_Count>(t.size());
  });
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return call("MPI_Type_get_extent", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(lb, "lb");
    capi::requireArg(extent, "extent");
    *lb = t.lb();
    *extent = t.extent();
  });
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return call("MPI_Type_get_extent_x", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(lb, "lb");
    capi::requireArg(extent, "extent");
    *lb = t.lb();
    *extent = t.extent();
  });
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return call("MPI_Type_get_true_extent", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(true_lb, "true_lb");
    capi::requireArg(true_extent, "true_extent");
    *true_lb = t.trueLb();
    *true_extent = t.trueExtent();
  });
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return call("MPI_Type_get_true_extent_x", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(true_lb, "true_lb");
    capi::requireArg(true_extent, "true_extent");
    *true_lb = t.trueLb();
    *true_extent = t.trueExtent();
  });
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_contiguous", On::none(), [&] {
    auto* out = capi::output(newtype);
    const auto& old = capi::datatype(oldtype);
    *out = capi::addType(Datatype::contiguous(count, old));
  });
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype* newtype) {
  return call("MPI_Type_vector", On::none(), [&] {
    auto* out = capi::output(newtype);
    const auto& old = capi::datatype(oldtype);
    *out = capi::addType(Datatype::vector(count, blocklength, stride, old));
  });
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  return call("MPI_Type_create_hvector", On::none(), [&] {
    auto* out = capi::output(newtype);
    const auto& old = capi::datatype(oldtype);
    *out = capi::addType(Datatype::hvector(count, blocklength, stride, old));
  });
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return call("MPI_Type_indexed", On::none(), [&] {
    auto* out = capi::output(newtype);
    capi::requireCount(count, "count");
    const auto& old = capi::datatype(oldtype);
    auto bl = capi::ints(array_of_blocklengths, count, "array_of_blocklengths");
    auto ds = capi::ints(array_of_displacements, count, "array_of_displacements");
    *out = capi::addType(Datatype::indexed(bl, ds, old));
  });
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return call("MPI_Type_create_hindexed", On::none(), [&] {
    auto* out = capi::output(newtype);
    capi::requireCount(count, "count");
    const auto& old = capi::datatype(oldtype);
    auto bl = capi::ints(array_of_blocklengths, count, "array_of_blocklengths");
    auto ds = capi::aints(array_of_displacements, count, "array_of_displacements");
    *out = capi::addType(Datatype::hindexed(bl, ds, old));
  });
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_create_indexed_block", On::none(), [&] {
    auto* out = capi::output(newtype);
    capi::requireCount(count, "count");
    const auto& old = capi::datatype(oldtype);
    auto ds = capi::ints(array_of_displacements, count, "array_of_displacements");
    *out = capi::addType(Datatype::indexedBlock(blocklength, ds, old));
  });
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return call("MPI_Type_create_hindexed_block", On::none(), [&] {
    auto* out = capi::output(newtype);
    capi::requireCount(count, "count");
    const auto& old = capi::datatype(oldtype);
    auto ds = capi::aints(array_of_displacements, count, "array_of_displacements");
    *out = capi::addType(Datatype::hindexedBlock(blocklength, ds, old));
  });
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return call("MPI_Type_create_struct", On::none(), [&] {
    auto* out = capi::output(newtype);
    capi::requireCount(count, "count");
    auto bl = capi::ints(array_of_blocklengths, count, "array_of_blocklengths");
    auto ds = capi::aints(array_of_displacements, count, "array_of_displacements");
    if (count > 0) capi::requireArg(array_of_types, "array_of_types");
    std::vector<const Datatype*> ts;
    ts.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      try {
        ts.push_back(&capi::datatype(array_of_types[i]));
      } catch (const Error& e) {
        throw Error(e.errorClass(),
                    std::string("array_of_types[") + std::to_string(i) + "]: " + e.what());
      }
    }
    *out = capi::addType(Datatype::structType(bl, ds, ts));
  });
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return call("MPI_Type_create_subarray", On::none(), [&] {
    auto* out = capi::output(newtype);
    if (ndims <= 0) {
      throw Error(MPI_ERR_ARG, "ndims " + std::to_string(ndims) + " is not positive");
    }
    const auto& old = capi::datatype(oldtype);
    auto sizes = capi::ints(array_of_sizes, ndims, "array_of_sizes");
    auto subsizes = capi::ints(array_of_subsizes, ndims, "array_of_subsizes");
    auto starts = capi::ints(array_of_starts, ndims, "array_of_starts");
    *out = capi::addType(Datatype::subarray(sizes, subsizes, starts, order, old));
  });
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype* newtype) {
  return call("MPI_Type_create_darray", On::none(), [&] {
    auto* out = capi::output(newtype);
    if (ndims <= 0) {
      throw Error(MPI_ERR_ARG, "ndims " + std::to_string(ndims) + " is not positive");
    }
    const auto& old = capi::datatype(oldtype);
    auto g = capi::ints(array_of_gsizes, ndims, "array_of_gsizes");
    auto d = capi::ints(array_of_distribs, ndims, "array_of_distribs");
    auto a = capi::ints(array_of_dargs, ndims, "array_of_dargs");
    auto p = capi::ints(array_of_psizes, ndims, "array_of_psizes");
    *out = capi::addType(Datatype::darray(size, rank, g, d, a, p, order, old));
  });
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype* newtype) {
  return call("MPI_Type_create_resized", On::none(), [&] {
    auto* out = capi::output(newtype);
    const auto& old = capi::datatype(oldtype);
    *out = capi::addType(Datatype::resized(lb, extent, old));
  });
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return call("MPI_Type_dup", On::none(), [&] {
    auto* out = capi::output(newtype);
    const auto& old = capi::datatype(oldtype);
    auto t = Datatype::dup(old);
    // MPI-3.1 §4.1.10: the name is not copied; the new type is committed if the old one was.
    const MPI_Datatype nt = capi::addType(std::move(t));
    // MPI-3.1 §6.7.4: the attributes' copy callbacks; when one fails, so does the call.
    try {
      capi::copyAttrs(capi::AttrKind::kType, oldtype, nt);
    } catch (...) {
      capi::derivedEntry(nt).reset();
      throw;
    }
    *out = nt;
  });
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  return call("MPI_Type_commit", On::none(), [&] {
    capi::requireArg(datatype, "datatype");
    if (Datatype::predefined(*datatype) != nullptr) return;  // predefined: always committed
    capi::derivedEntry(*datatype)->commit();
  });
}

int MPI_Type_free(MPI_Datatype* datatype) {
  return call("MPI_Type_free", On::none(), [&] {
    capi::requireArg(datatype, "datatype");
    if (const Datatype* d = Datatype::predefined(*datatype); d != nullptr) {
      throw Error(MPI_ERR_TYPE, "cannot free predefined datatype " + d->name());
    }
    capi::derivedEntry(*datatype);
    // MPI-3.1 §6.7.4: the attributes' delete callbacks run first; one that fails fails the call.
    capi::deleteAttrs(capi::AttrKind::kType, *datatype);
    // The handle goes; the type lives on in whatever still holds it (types built from it,
    // pending operations).
    capi::derivedEntry(*datatype).reset();
    *datatype = MPI_DATATYPE_NULL;
  });
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                          int* num_datatypes, int* combiner) {
  return call("MPI_Type_get_envelope", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(num_integers, "num_integers");
    capi::requireArg(num_addresses, "num_addresses");
    capi::requireArg(num_datatypes, "num_datatypes");
    capi::requireArg(combiner, "combiner");
    *num_integers = static_cast<int>(t.ints().size());
    *num_addresses = static_cast<int>(t.aints().size());
    *num_datatypes = static_cast<int>(t.types().size());
    *combiner = static_cast<int>(t.combiner());
  });
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]) {
  return call("MPI_Type_get_contents", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    if (t.isPredefined()) {
      throw Error(MPI_ERR_TYPE, "predefined datatype " + t.name() + " has no contents");
    }
    auto need = [](std::size_t n, int max, const char* what) {
      if (max < 0 || static_cast<std::size_t>(max) < n) {
        throw Error(MPI_ERR_ARG, std::string(what) + " " + std::to_string(max) +
                                     " is less than the " + std::to_string(n) + " needed");
      }
    };
    need(t.ints().size(), max_integers, "max_integers");
    need(t.aints().size(), max_addresses, "max_addresses");
    need(t.types().size(), max_datatypes, "max_datatypes");
    if (!t.ints().empty()) capi::requireArg(array_of_integers, "array_of_integers");
    if (!t.aints().empty()) capi::requireArg(array_of_addresses, "array_of_addresses");
    if (!t.types().empty()) capi::requireArg(array_of_datatypes, "array_of_datatypes");
    for (std::size_t i = 0; i < t.ints().size(); ++i) {
      array_of_integers[i] = static_cast<int>(t.ints()[i]);
    }
    for (std::size_t i = 0; i < t.aints().size(); ++i) {
      array_of_addresses[i] = static_cast<MPI_Aint>(t.aints()[i]);
    }
    // Predefined types come back as themselves; derived ones as new handles to the same
    // (immutable) type, which the caller frees (MPI-3.1 §4.1.13).
    for (std::size_t i = 0; i < t.types().size(); ++i) {
      const auto& c = t.types()[i];
      array_of_datatypes[i] =
          c->isPredefined() ? c->id() : capi::addType(std::const_pointer_cast<Datatype>(c));
    }
  });
}

int MPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  return call("MPI_Type_set_name", On::none(), [&] {
    capi::requireArg(type_name, "type_name");
    std::string name(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
    if (Datatype::predefined(datatype) != nullptr) {
      capi::state().predefinedNames[datatype] = std::move(name);
      return;
    }
    capi::derivedEntry(datatype)->setName(std::move(name));
  });
}

int MPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  return call("MPI_Type_get_name", On::none(), [&] {
    const auto& t = capi::datatype(datatype);
    capi::requireArg(type_name, "type_name");
    capi::requireArg(resultlen, "resultlen");
    const auto& names = capi::state().predefinedNames;
    auto it = t.isPredefined() ? names.find(datatype) : names.end();
    capi::copyName(it != names.end() ? it->second : t.name(), type_name, resultlen);
  });
}

int MPI_Get_address(const void* location, MPI_Aint* address) {
  return call("MPI_Get_address", On::none(), [&] {
    capi::requireArg(address, "address");
    *address = reinterpret_cast<MPI_Aint>(location);
  });
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  // Unsigned arithmetic: address arithmetic wraps instead of being undefined.
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) +
                               static_cast<std::uintptr_t>(disp));
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) -
                               static_cast<std::uintptr_t>(addr2));
}

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
             int* position, MPI_Comm comm) {
  return call("MPI_Pack", On::comm(comm), [&] {
    capi::comm(comm);
    capi::requireCount(incount, "incount");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(position, "position");
    if (outsize < 0)
      throw Error(MPI_ERR_ARG, "outsize " + std::to_string(outsize) + " is negative");
    if (*position < 0 || *position > outsize) {
      throw Error(MPI_ERR_ARG, "position " + std::to_string(*position) +
                                   " is not in 0 .. outsize " + std::to_string(outsize));
    }
    const std::size_t bytes = t.size() * static_cast<std::size_t>(incount);
    if (bytes > 0) capi::requireArg(outbuf, "outbuf");
    onesided::pack(inbuf, static_cast<std::size_t>(incount), t,
                   static_cast<std::byte*>(outbuf) + *position,
                   static_cast<std::size_t>(outsize - *position));
    *position += static_cast<int>(bytes);
  });
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm) {
  return call("MPI_Unpack", On::comm(comm), [&] {
    capi::comm(comm);
    capi::requireCount(outcount, "outcount");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(position, "position");
    if (insize < 0) throw Error(MPI_ERR_ARG, "insize " + std::to_string(insize) + " is negative");
    if (*position < 0 || *position > insize) {
      throw Error(MPI_ERR_ARG, "position " + std::to_string(*position) + " is not in 0 .. insize " +
                                   std::to_string(insize));
    }
    const std::size_t bytes = t.size() * static_cast<std::size_t>(outcount);
    if (bytes > 0) capi::requireArg(inbuf, "inbuf");
    onesided::unpack(static_cast<const std::byte*>(inbuf) + *position,
                     static_cast<std::size_t>(insize - *position), outbuf,
                     static_cast<std::size_t>(outcount), t);
    *position += static_cast<int>(bytes);
  });
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return call("MPI_Pack_size", On::comm(comm), [&] {
    capi::comm(comm);
    capi::requireCount(incount, "incount");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(size, "size");
    const unsigned __int128 bytes =
        static_cast<unsigned __int128>(t.size()) * static_cast<unsigned>(incount);
    if (bytes > INT_MAX) {
      throw Error(MPI_ERR_COUNT, std::to_string(incount) + " x " + t.describe() + " is " +
                                     std::to_string(static_cast<std::uint64_t>(bytes)) +
                                     " bytes, more than an int holds (use MPI_Pack_size_c)");
    }
    *size = static_cast<int>(bytes);
  });
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_count", On::none(), [&] {
    capi::requireArg(status, "status");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(count, "count");
    const std::uint64_t bytes = capi::statusBytes(status);
    if (t.size() == 0) {
      *count = 0;  // MPI-3.1 §3.2.5: a zero-size type gives count 0
    } else {
      *count = bytes % t.size() != 0 ? MPI_UNDEFINED : capi::toInt(bytes / t.size());
    }
  });
}

int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return call("MPI_Get_elements_x", On::none(), [&] {
    capi::requireArg(status, "status");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(count, "count");
    std::uint64_t n = 0;
    const bool exact = onesided::elementsIn(t, capi::statusBytes(status), n);
    *count = exact ? static_cast<MPI_Count>(n) : MPI_UNDEFINED;
  });
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return call("MPI_Get_elements", On::none(), [&] {
    capi::requireArg(status, "status");
    const auto& t = capi::datatype(datatype);
    capi::requireArg(count, "count");
    std::uint64_t n = 0;
    const bool exact = onesided::elementsIn(t, capi::statusBytes(status), n);
    *count = exact ? capi::toInt(n) : MPI_UNDEFINED;
  });
}

int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return call("MPI_Status_set_elements_x", On::none(), [&] {
    capi::requireArg(status, "status");
    const auto& t = capi::datatype(datatype);
    if (count < 0) throw Error(MPI_ERR_COUNT, "count " + std::to_string(count) + " is negative");
    capi::setStatusBytes(status, onesided::bytesOfElements(t, static_cast<std::uint64_t>(count)));
  });
}

int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return MPI_Status_set_elements_x(status, datatype, count);
}

}  // extern "C"
