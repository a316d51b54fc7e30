// SPDX-License-Identifier: BSD-3-Clause
// MPI-1's datatype calls that MPI-3 removed and Open MPI still ships, for the programs that use
// them: thin wrappers over their MPI-2 replacements (errors are named after the MPI-2 call).
// MPI-1's attribute calls (MPI_Keyval_create, MPI_Attr_put ...) are in attr.cpp, and its error
// handler calls in errhandlers.cpp, beside the calls they share their code with.
#include "capi/state.hpp"

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Address(void* location, MPI_Aint* address) { return MPI_Get_address(location, address); }

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  return call("MPI_Type_extent", On::none(), [&] {
    capi::requireArg(extent, "extent");
    *extent = static_cast<MPI_Aint>(capi::datatype(datatype).extent());
  });
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  return call("MPI_Type_lb", On::none(), [&] {
    capi::requireArg(displacement, "displacement");
    *displacement = static_cast<MPI_Aint>(capi::datatype(datatype).lb());
  });
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  return call("MPI_Type_ub", On::none(), [&] {
    capi::requireArg(displacement, "displacement");
    const auto& t = capi::datatype(datatype);
    *displacement = static_cast<MPI_Aint>(t.lb() + t.extent());
  });
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return MPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                  newtype);
}

int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                    MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return MPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                array_of_types, newtype);
}

}  // extern "C"
