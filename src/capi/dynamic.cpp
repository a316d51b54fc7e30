// SPDX-License-Identifier: BSD-3-Clause
// Dynamic process management (MPI-3.1 chapter 10) is out of scope: onesided's jobs are the
// processes onesided-run started. The calls exist so that programs which use them on some path
// link and run the rest; each fails with its class through the communicator's error handler,
// saying why. MPI_Comm_get_parent answers MPI_COMM_NULL (no process here was spawned), and
// MPI_Comm_disconnect is MPI_Comm_free (it does not wait for the program's own pending
// nonblocking requests on the communicator: they complete as they do after MPI_Comm_free).
#include <string>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

[[noreturn]] void unsupported(int errorClass) {
  throw Error(errorClass,
              "onesided does not support dynamic process management (MPI-3.1 "
              "chapter 10): the job is the processes onesided-run started");
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Comm_spawn(const char* /*command*/, char* /*argv*/[], int /*maxprocs*/, MPI_Info /*info*/,
                   int /*root*/, MPI_Comm comm, MPI_Comm* intercomm, int /*array_of_errcodes*/[]) {
  return call("MPI_Comm_spawn", On::comm(comm), [&] {
    capi::commEntry(comm);
    if (intercomm != nullptr) *intercomm = MPI_COMM_NULL;
    capi::unsupported(MPI_ERR_SPAWN);
  });
}

int MPI_Comm_spawn_multiple(int /*count*/, char* /*array_of_commands*/[],
                            char** /*array_of_argv*/[], const int /*array_of_maxprocs*/[],
                            const MPI_Info /*array_of_info*/[], int /*root*/, MPI_Comm comm,
                            MPI_Comm* intercomm, int /*array_of_errcodes*/[]) {
  return call("MPI_Comm_spawn_multiple", On::comm(comm), [&] {
    capi::commEntry(comm);
    if (intercomm != nullptr) *intercomm = MPI_COMM_NULL;
    capi::unsupported(MPI_ERR_SPAWN);
  });
}

int MPI_Comm_get_parent(MPI_Comm* parent) {
  return call("MPI_Comm_get_parent", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(parent, "parent");
    *parent = MPI_COMM_NULL;
  });
}

int MPI_Open_port(MPI_Info /*info*/, char* /*port_name*/) {
  return call("MPI_Open_port", On::none(), [] { capi::unsupported(MPI_ERR_PORT); });
}

int MPI_Close_port(const char* /*port_name*/) {
  return call("MPI_Close_port", On::none(), [] { capi::unsupported(MPI_ERR_PORT); });
}

int MPI_Comm_accept(const char* /*port_name*/, MPI_Info /*info*/, int /*root*/, MPI_Comm comm,
                    MPI_Comm* newcomm) {
  return call("MPI_Comm_accept", On::comm(comm), [&] {
    capi::commEntry(comm);
    if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
    capi::unsupported(MPI_ERR_PORT);
  });
}

int MPI_Comm_connect(const char* /*port_name*/, MPI_Info /*info*/, int /*root*/, MPI_Comm comm,
                     MPI_Comm* newcomm) {
  return call("MPI_Comm_connect", On::comm(comm), [&] {
    capi::commEntry(comm);
    if (newcomm != nullptr) *newcomm = MPI_COMM_NULL;
    capi::unsupported(MPI_ERR_PORT);
  });
}

int MPI_Comm_disconnect(MPI_Comm* comm) {
  // Checked here first, so that a bad argument is reported under this call's name.
  const int rc =
      call("MPI_Comm_disconnect", On::comm(comm != nullptr ? *comm : MPI_COMM_NULL), [&] {
        capi::requireArg(comm, "comm");
        capi::commEntry(*comm);
        if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
          throw onesided::Error(
              MPI_ERR_COMM,
              std::string(*comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF") +
                  " cannot be disconnected");
        }
      });
  return rc != MPI_SUCCESS ? rc : MPI_Comm_free(comm);
}

int MPI_Comm_join(int /*fd*/, MPI_Comm* intercomm) {
  return call("MPI_Comm_join", On::none(), [&] {
    if (intercomm != nullptr) *intercomm = MPI_COMM_NULL;
    capi::unsupported(MPI_ERR_UNSUPPORTED_OPERATION);  // no class of its own
  });
}

int MPI_Publish_name(const char* /*service_name*/, MPI_Info /*info*/, const char* /*port_name*/) {
  return call("MPI_Publish_name", On::none(), [] { capi::unsupported(MPI_ERR_SERVICE); });
}

int MPI_Unpublish_name(const char* /*service_name*/, MPI_Info /*info*/, const char* /*port_name*/) {
  return call("MPI_Unpublish_name", On::none(), [] { capi::unsupported(MPI_ERR_SERVICE); });
}

int MPI_Lookup_name(const char* /*service_name*/, MPI_Info /*info*/, char* /*port_name*/) {
  return call("MPI_Lookup_name", On::none(), [] { capi::unsupported(MPI_ERR_NAME); });
}

}  // extern "C"
