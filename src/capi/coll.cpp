// SPDX-License-Identifier: BSD-3-Clause
// The collective operations (MPI-3.1 chapter 5) over collectives/. Arguments that are not
// significant on this rank (the receive type of a non-root, the send type with MPI_IN_PLACE)
// are not looked at, as the standard allows any value there.
#include "capi/state.hpp"
#include "collectives/channel.hpp"
#include "onesided/collectives.hpp"

namespace onesided::capi {
namespace {

const Datatype* typeIf(bool significant, MPI_Datatype t) {
  return significant ? &datatype(t) : nullptr;
}

bool isRoot(Comm& c, int root) { return c.rank() == root; }

/// MPI_Alltoallw's datatypes, one per member: MPI_ERR_ARG for a NULL array; MPI_DATATYPE_NULL
/// stays null (the collective names it), any other bad handle is MPI_ERR_TYPE naming its entry.
using TypeList = onesided::detail::SmallVec<const Datatype*, 16>;
TypeList typesOf(const Comm& c, const MPI_Datatype* types, const char* what) {
  if (types == nullptr) throw Error(MPI_ERR_ARG, std::string(what) + " is NULL");
  TypeList out;
  for (int r = 0; r < c.size(); ++r) {
    if (types[r] == MPI_DATATYPE_NULL) {
      out.push_back(nullptr);
      continue;
    }
    try {
      out.push_back(&datatype(types[r]));
    } catch (const Error& e) {
      throw Error(e.errorClass(), std::string(what) + "[" + std::to_string(r) + "]: " + e.what());
    }
  }
  return out;
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
namespace coll = onesided::coll;

extern "C" {

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return call("MPI_Bcast", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::bcast(c, buffer, count, &capi::datatype(datatype), root);
  });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return call("MPI_Gather", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    const bool r = capi::isRoot(c, root);
    coll::gather(c, sendbuf, sendcount, capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype), recvbuf,
                 recvcount, capi::typeIf(r, recvtype), root);
  });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return call("MPI_Gatherv", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    const bool r = capi::isRoot(c, root);
    coll::gatherv(c, sendbuf, sendcount, capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype), recvbuf,
                  recvcounts, displs, capi::typeIf(r, recvtype), root);
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return call("MPI_Scatter", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    const bool r = capi::isRoot(c, root);
    coll::scatter(c, sendbuf, sendcount, capi::typeIf(r, sendtype), recvbuf, recvcount,
                  capi::typeIf(recvbuf != MPI_IN_PLACE, recvtype), root);
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return call("MPI_Scatterv", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    const bool r = capi::isRoot(c, root);
    coll::scatterv(c, sendbuf, sendcounts, displs, capi::typeIf(r, sendtype), recvbuf, recvcount,
                   capi::typeIf(recvbuf != MPI_IN_PLACE, recvtype), root);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Allgather", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::allgather(c, sendbuf, sendcount, capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype), recvbuf,
                    recvcount, &capi::datatype(recvtype));
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return call("MPI_Allgatherv", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::allgatherv(c, sendbuf, sendcount, capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype),
                     recvbuf, recvcounts, displs, &capi::datatype(recvtype));
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Alltoall", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::alltoall(c, sendbuf, sendcount, capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype), recvbuf,
                   recvcount, &capi::datatype(recvtype));
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Alltoallv", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::alltoallv(c, sendbuf, sendcounts, sdispls,
                    capi::typeIf(sendbuf != MPI_IN_PLACE, sendtype), recvbuf, recvcounts, rdispls,
                    &capi::datatype(recvtype));
  });
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return call("MPI_Alltoallw", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    const capi::TypeList rt = capi::typesOf(c, recvtypes, "recvtypes");
    if (sendbuf == MPI_IN_PLACE) {  // the send arguments are ignored
      coll::alltoallw(c, sendbuf, nullptr, nullptr, nullptr, recvbuf, recvcounts, rdispls,
                      rt.data());
      return;
    }
    const capi::TypeList st = capi::typesOf(c, sendtypes, "sendtypes");
    coll::alltoallw(c, sendbuf, sendcounts, sdispls, st.data(), recvbuf, recvcounts, rdispls,
                    rt.data());
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  return call("MPI_Reduce", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::reduce(c, sendbuf, recvbuf, count, &capi::datatype(datatype),
                 capi::reduction(op, datatype), root);
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  return call("MPI_Allreduce", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::allreduce(c, sendbuf, recvbuf, count, &capi::datatype(datatype),
                    capi::reduction(op, datatype));
  });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return call("MPI_Reduce_scatter_block", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::reduceScatterBlock(c, sendbuf, recvbuf, recvcount, &capi::datatype(datatype),
                             capi::reduction(op, datatype));
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return call("MPI_Reduce_scatter", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::reduceScatter(c, sendbuf, recvbuf, recvcounts, &capi::datatype(datatype),
                        capi::reduction(op, datatype));
  });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return call("MPI_Scan", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::scan(c, sendbuf, recvbuf, count, &capi::datatype(datatype),
               capi::reduction(op, datatype));
  });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  return call("MPI_Exscan", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    const onesided::detail::Entry entry(c.channel());  // counts the call if a check fails
    coll::exscan(c, sendbuf, recvbuf, count, &capi::datatype(datatype),
                 capi::reduction(op, datatype));
  });
}

}  // extern "C"
