// SPDX-License-Identifier: BSD-3-Clause
// Communicator hints (MPI-3.1 §6.4.4): MPI_Comm_set_info, MPI_Comm_get_info and
// MPI_Comm_dup_with_info. No hint changes how a communicator works here; they are kept as set
// and returned by MPI_Comm_get_info (as Open MPI does), so that programs can read back theirs.
#include <algorithm>
#include <string>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

/// `into` with the pairs of info object `info` set over it (MPI_INFO_NULL: none).
void setHints(InfoPairs& into, MPI_Info info) {
  if (info == MPI_INFO_NULL) return;
  for (const auto& [key, value] : infoEntry(info).pairs) {
    auto it =
        std::find_if(into.begin(), into.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != into.end()) {
      it->second = value;
    } else {
      into.emplace_back(key, value);
    }
  }
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  return call("MPI_Comm_set_info", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::InfoPairs hints = e.hints;
    capi::setHints(hints, info);
    e.hints = std::move(hints);
  });
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  return call("MPI_Comm_get_info", On::comm(comm), [&] {
    const capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(info_used, "info_used");
    auto info = std::make_unique<capi::InfoEntry>();
    info->pairs = e.hints;
    *info_used = capi::addInfo(std::move(info));
  });
}

// MPI_Comm_dup (attributes' copy callbacks included), then the new communicator takes `info`'s
// hints instead of the parent's. The arguments are checked first: a failure after the dup would
// leave the other ranks with a communicator this one never returned.
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  int rc = call("MPI_Comm_dup_with_info", On::comm(comm), [&] {
    capi::commEntry(comm);
    if (info != MPI_INFO_NULL) capi::infoEntry(info);
    capi::requireArg(newcomm, "newcomm");
  });
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Comm_dup(comm, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  return call("MPI_Comm_dup_with_info", On::comm(*newcomm), [&] {
    capi::InfoPairs hints;
    capi::setHints(hints, info);
    capi::commEntry(*newcomm).hints = std::move(hints);
  });
}

}  // extern "C"
