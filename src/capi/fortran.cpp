// SPDX-License-Identifier: BSD-3-Clause
// Handle conversion between C and Fortran (MPI-3.1 §17.2.4), for libraries with Fortran parts
// that pass C handles on (OpenCoarrays' libcaf_mpi calls MPI_Comm_c2f). Every handle here is an
// index (an int, like a Fortran INTEGER handle), so both directions are the identity: an invalid
// handle stays invalid and the call that uses it names it. There are no Fortran bindings.
#include <mpi.h>

#define ONESIDED_HANDLE_CONVERSION(Name, Type)                                     \
  MPI_Fint MPI_##Name##_c2f(Type handle) { return static_cast<MPI_Fint>(handle); } \
  Type MPI_##Name##_f2c(MPI_Fint handle) { return static_cast<Type>(handle); }

extern "C" {
ONESIDED_HANDLE_CONVERSION(Comm, MPI_Comm)
ONESIDED_HANDLE_CONVERSION(Group, MPI_Group)
ONESIDED_HANDLE_CONVERSION(Win, MPI_Win)
ONESIDED_HANDLE_CONVERSION(Type, MPI_Datatype)
ONESIDED_HANDLE_CONVERSION(Op, MPI_Op)
ONESIDED_HANDLE_CONVERSION(Info, MPI_Info)
ONESIDED_HANDLE_CONVERSION(Request, MPI_Request)
ONESIDED_HANDLE_CONVERSION(Errhandler, MPI_Errhandler)
}
