// SPDX-License-Identifier: BSD-3-Clause
// Intercommunicators (MPI-3.1 §6.6) over collectives/inter.hpp: their construction, merge and
// queries. Point-to-point on them is p2p.cpp's (capi::peers names the remote group), their
// collectives coll.cpp's, dup / split / free comm.cpp's.
#include "capi/attr.hpp"
#include "capi/state.hpp"

namespace {
/// The intercommunicator behind `comm`; MPI_ERR_COMM naming it when it is an intracommunicator.
onesided::coll::Inter& interArg(MPI_Comm comm) {
  onesided::coll::Inter* ic = onesided::capi::interOf(comm);
  if (ic == nullptr) {
    throw onesided::Error(MPI_ERR_COMM,
                          "communicator " + std::to_string(comm) + " is not an intercommunicator");
  }
  return *ic;
}
}  // namespace

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
namespace coll = onesided::coll;

extern "C" {

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm* newintercomm) {
  return call("MPI_Intercomm_create", On::comm(local_comm), [&] {
    capi::requireIntra(local_comm, "local_comm of MPI_Intercomm_create");
    onesided::Comm& local = capi::collComm(local_comm);
    capi::requireArg(newintercomm, "newintercomm");
    // peer_comm is significant at the local leader only (others may pass anything).
    onesided::Comm* peer = nullptr;
    if (local.rank() == local_leader) {
      capi::requireIntra(peer_comm, "peer_comm of MPI_Intercomm_create");
      peer = &capi::comm(peer_comm);
      if (tag < 0) {
        throw onesided::Error(MPI_ERR_TAG, "tag " + std::to_string(tag) + " is negative");
      }
    }
    const MPI_Errhandler eh = capi::commEntry(local_comm).errhandler;
    *newintercomm =
        capi::addInter(coll::interCreate(local, local_leader, peer, remote_leader, tag), eh);
  });
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return call("MPI_Intercomm_merge", On::comm(intercomm), [&] {
    capi::collComm(intercomm);  // its nonblocking collectives first
    coll::Inter* ic = &interArg(intercomm);
    capi::requireArg(newintracomm, "newintracomm");
    const MPI_Errhandler eh = capi::commEntry(intercomm).errhandler;
    *newintracomm = capi::addComm(coll::interMerge(*ic, high != 0), eh);
  });
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  return call("MPI_Comm_test_inter", On::comm(comm), [&] {
    const bool inter = capi::interOf(comm) != nullptr;
    capi::requireArg(flag, "flag");
    *flag = inter ? 1 : 0;
  });
}

int MPI_Comm_remote_size(MPI_Comm comm, int* size) {
  return call("MPI_Comm_remote_size", On::comm(comm), [&] {
    coll::Inter* ic = &interArg(comm);
    capi::requireArg(size, "size");
    *size = ic->remoteSize();
  });
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  return call("MPI_Comm_remote_group", On::comm(comm), [&] {
    coll::Inter* ic = &interArg(comm);
    capi::requireArg(group, "group");
    *group = capi::addGroup(onesided::Group(ic->remote()));
  });
}

}  // extern "C"
