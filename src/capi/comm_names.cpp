// SPDX-License-Identifier: BSD-3-Clause
// Communicator names (MPI-3.1 §6.8): local, kept per handle, never copied to a new communicator;
// MPI_COMM_WORLD and MPI_COMM_SELF are named so until the program renames them.
#include <cstring>
#include <string>

#include "capi/state.hpp"

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  return call("MPI_Comm_set_name", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(comm_name, "comm_name");
    // Longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters.
    e.name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
    e.named = true;
  });
}

int MPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  return call("MPI_Comm_get_name", On::comm(comm), [&] {
    const capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(comm_name, "comm_name");
    capi::requireArg(resultlen, "resultlen");
    std::string name = e.name;
    if (!e.named && comm == MPI_COMM_WORLD) name = "MPI_COMM_WORLD";
    if (!e.named && comm == MPI_COMM_SELF) name = "MPI_COMM_SELF";
    std::memcpy(comm_name, name.c_str(), name.size() + 1);
    *resultlen = static_cast<int>(name.size());
  });
}

}  // extern "C"
