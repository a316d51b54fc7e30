// SPDX-License-Identifier: BSD-3-Clause
// The collective operations (MPI-3.1 chapter 5) over collectives/, blocking and nonblocking.
// Arguments that are not significant on this rank (the receive type of a non-root, the send type
// with MPI_IN_PLACE) are not looked at, as the standard allows any value there.
//
// Each collective's binding is a `prepare` function shared by both forms: on the calling thread
// it resolves the handles (their errors are the call's) and returns the job that runs the
// algorithm, at once for the blocking form, on the communicator's queue for the I-form
// (collectives/async.hpp). A job keeps the derived datatypes it uses alive: the program may free
// their handles while the operation runs. The arrays of counts and displacements it only points
// to, as the standard lets it (they must not change until the operation completes).
#include <exception>
#include <vector>

#include "capi/coll_forms.hpp"
#include "capi/state.hpp"
#include "collectives/channel.hpp"
#include "collectives/common.hpp"
#include "onesided/collectives.hpp"

namespace onesided::capi {
namespace {

bool isRoot(Comm& c, int root) { return c.rank() == root; }

// The checks a nonblocking form makes when it starts (the algorithm makes the rest when it runs,
// reported by the completion call) are the collectives' own (collectives/common.hpp).
using coll::detail::checkCount;
using coll::detail::checkRoot;
/// MPI_Alltoallw's datatypes, one per member: MPI_ERR_ARG for a NULL array; MPI_DATATYPE_NULL
/// stays null (the collective names it), any other bad handle is MPI_ERR_TYPE naming its entry.
struct TypeList {
  onesided::detail::SmallVec<const Datatype*, 16> ptrs;
  std::vector<std::shared_ptr<const Datatype>> keep;  // the derived ones
};
TypeList typesOf(const Comm& c, const MPI_Datatype* types, const char* what) {
  if (types == nullptr) throw Error(MPI_ERR_ARG, std::string(what) + " is NULL");
  TypeList out;
  for (int r = 0; r < c.size(); ++r) {
    if (types[r] == MPI_DATATYPE_NULL) {
      out.ptrs.push_back(nullptr);
      continue;
    }
    try {
      TypeArg t = typeArg(types[r]);
      out.ptrs.push_back(t.ptr);
      if (t.keep != nullptr) out.keep.push_back(std::move(t.keep));
    } catch (const Error& e) {
      throw Error(e.errorClass(), std::string(what) + "[" + std::to_string(r) + "]: " + e.what());
    }
  }
  return out;
}

/// A rooted collective's root: a rank of the communicator; on an intercommunicator MPI_ROOT,
/// MPI_PROC_NULL or a rank of the remote group.
void checkRootOf(Target on, int root) {
  if (on.ic == nullptr) {
    checkRoot(*on.c, root);
    return;
  }
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < on.ic->remoteSize())) {
    return;
  }
  throw Error(MPI_ERR_ROOT, "root " + std::to_string(root) +
                                " is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group"
                                " (of " +
                                std::to_string(on.ic->remoteSize()) + ")");
}
/// Whether this rank is the root (intra), or holds the root's side (inter: MPI_ROOT).
bool atRoot(Target on, int root) {
  return on.ic != nullptr ? root == MPI_ROOT : isRoot(*on.c, root);
}
/// Whether this rank sends to the root (inter: a member of the other group).
bool toRoot(Target on, int root, const void* sbuf) {
  return on.ic != nullptr ? root >= 0 : sbuf != MPI_IN_PLACE;
}
[[noreturn]] void throwNotOnInter(const char* what, bool defined) {
  throw Error(
      MPI_ERR_COMM,
      std::string(what) + (defined ? " is not supported by onesided on intercommunicators"
                                   : " is not defined on intercommunicators (MPI-3.1 §5.2.2)"));
}

// ---- each collective's prepare ----

auto barrierJob() {
  return [](Target on) {
    return [on] { on.ic != nullptr ? coll::interBarrier(*on.ic) : coll::barrier(*on.c); };
  };
}

auto bcastJob(void* buf, int count, MPI_Datatype type, int root) {
  return [=](Target on) {
    checkRootOf(on, root);
    const bool idle = on.ic != nullptr && root == MPI_PROC_NULL;
    if (!idle) checkCount(count, "count");
    return [on, buf, count, t = typeIf(!idle, type), root] {
      if (on.ic != nullptr) {
        coll::interBcast(*on.ic, buf, count, t.ptr, root);
      } else {
        coll::bcast(*on.c, buf, count, t.ptr, root);
      }
    };
  };
}

auto gathervJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
                const int* displs, MPI_Datatype rtype, int root) {
  return [=](Target on) {
    checkRootOf(on, root);
    return [on, sbuf, scount, st = typeIf(toRoot(on, root, sbuf), stype), rbuf, rcounts, displs,
            rt = typeIf(atRoot(on, root), rtype), root] {
      if (on.ic != nullptr) {
        coll::interGatherv(*on.ic, sbuf, scount, st.ptr, rbuf, rcounts, displs, rt.ptr, root);
      } else {
        coll::gatherv(*on.c, sbuf, scount, st.ptr, rbuf, rcounts, displs, rt.ptr, root);
      }
    };
  };
}

auto gatherJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
               MPI_Datatype rtype, int root) {
  return [=](Target on) {
    checkRootOf(on, root);
    return [on, sbuf, scount, st = typeIf(toRoot(on, root, sbuf), stype), rbuf, rcount,
            rt = typeIf(atRoot(on, root), rtype), root] {
      if (on.ic != nullptr) {
        coll::interGather(*on.ic, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr, root);
      } else {
        coll::gather(*on.c, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr, root);
      }
    };
  };
}

auto scatterJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                MPI_Datatype rtype, int root) {
  return [=](Target on) {
    checkRootOf(on, root);
    return [on, sbuf, scount, st = typeIf(atRoot(on, root), stype), rbuf, rcount,
            rt = typeIf(toRoot(on, root, rbuf), rtype), root] {
      if (on.ic != nullptr) {
        coll::interScatter(*on.ic, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr, root);
      } else {
        coll::scatter(*on.c, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr, root);
      }
    };
  };
}

auto scattervJob(const void* sbuf, const int* scounts, const int* displs, MPI_Datatype stype,
                 void* rbuf, int rcount, MPI_Datatype rtype, int root) {
  return [=](Target on) {
    checkRootOf(on, root);
    return [on, sbuf, scounts, displs, st = typeIf(atRoot(on, root), stype), rbuf, rcount,
            rt = typeIf(toRoot(on, root, rbuf), rtype), root] {
      if (on.ic != nullptr) {
        coll::interScatterv(*on.ic, sbuf, scounts, displs, st.ptr, rbuf, rcount, rt.ptr, root);
      } else {
        coll::scatterv(*on.c, sbuf, scounts, displs, st.ptr, rbuf, rcount, rt.ptr, root);
      }
    };
  };
}

auto allgatherJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                  MPI_Datatype rtype) {
  return [=](Target on) {
    return [on, sbuf, scount, st = typeIf(sbuf != MPI_IN_PLACE, stype), rbuf, rcount,
            rt = typeArg(rtype)] {
      if (on.ic != nullptr) {
        coll::interAllgather(*on.ic, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr);
      } else {
        coll::allgather(*on.c, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr);
      }
    };
  };
}

auto allgathervJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int* rcounts,
                   const int* displs, MPI_Datatype rtype) {
  return [=](Target on) {
    return [on, sbuf, scount, st = typeIf(sbuf != MPI_IN_PLACE, stype), rbuf, rcounts, displs,
            rt = typeArg(rtype)] {
      if (on.ic != nullptr) {
        coll::interAllgatherv(*on.ic, sbuf, scount, st.ptr, rbuf, rcounts, displs, rt.ptr);
      } else {
        coll::allgatherv(*on.c, sbuf, scount, st.ptr, rbuf, rcounts, displs, rt.ptr);
      }
    };
  };
}

auto alltoallJob(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype) {
  return [=](Target on) {
    return [on, sbuf, scount, st = typeIf(sbuf != MPI_IN_PLACE, stype), rbuf, rcount,
            rt = typeArg(rtype)] {
      if (on.ic != nullptr) {
        coll::interAlltoall(*on.ic, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr);
      } else {
        coll::alltoall(*on.c, sbuf, scount, st.ptr, rbuf, rcount, rt.ptr);
      }
    };
  };
}

auto alltoallvJob(const void* sbuf, const int* scounts, const int* sdispls, MPI_Datatype stype,
                  void* rbuf, const int* rcounts, const int* rdispls, MPI_Datatype rtype) {
  return [=](Target on) {
    return [on, sbuf, scounts, sdispls, st = typeIf(sbuf != MPI_IN_PLACE, stype), rbuf, rcounts,
            rdispls, rt = typeArg(rtype)] {
      if (on.ic != nullptr) {
        coll::interAlltoallv(*on.ic, sbuf, scounts, sdispls, st.ptr, rbuf, rcounts, rdispls,
                             rt.ptr);
      } else {
        coll::alltoallv(*on.c, sbuf, scounts, sdispls, st.ptr, rbuf, rcounts, rdispls, rt.ptr);
      }
    };
  };
}

auto alltoallwJob(const void* sbuf, const int* scounts, const int* sdispls,
                  const MPI_Datatype* stypes, void* rbuf, const int* rcounts, const int* rdispls,
                  const MPI_Datatype* rtypes) {
  return [=](Target on) {
    if (on.ic != nullptr) throwNotOnInter("alltoallw", true);
    Comm& c = *on.c;
    TypeList rt = typesOf(c, rtypes, "recvtypes");
    // In place, the send arguments are ignored.
    TypeList st = sbuf == MPI_IN_PLACE ? TypeList{} : typesOf(c, stypes, "sendtypes");
    return [&c, sbuf, scounts, sdispls, st = std::move(st), rbuf, rcounts, rdispls,
            rt = std::move(rt)] {
      if (sbuf == MPI_IN_PLACE) {
        coll::alltoallw(c, sbuf, nullptr, nullptr, nullptr, rbuf, rcounts, rdispls, rt.ptrs.data());
        return;
      }
      coll::alltoallw(c, sbuf, scounts, sdispls, st.ptrs.data(), rbuf, rcounts, rdispls,
                      rt.ptrs.data());
    };
  };
}

/// The reductions' jobs share their arguments (`count` and `root` are checked where the
/// operation has them); `Fn` calls the algorithm.
template <class Fn>
auto reductionJob(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                  Fn fn) {
  return [=](Target on) {
    checkCount(count, "count");
    checkRootOf(on, root);
    return [on, sbuf, rbuf, t = typeArg(type), red = reduction(op, type), fn] {
      fn(on, sbuf, rbuf, t.ptr, red);
    };
  };
}
using Red = coll::Reduction;

auto reduceJob(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root) {
  return reductionJob(
      sbuf, rbuf, count, type, op, root,
      [count, root](Target on, const void* s, void* r, const Datatype* t, const Red& red) {
        if (on.ic != nullptr) {
          coll::interReduce(*on.ic, s, r, count, t, red, root);
        } else {
          coll::reduce(*on.c, s, r, count, t, red, root);
        }
      });
}

auto allreduceJob(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op) {
  return reductionJob(
      sbuf, rbuf, count, type, op, 0,
      [count](Target on, const void* s, void* r, const Datatype* t, const Red& red) {
        if (on.ic != nullptr) {
          coll::interAllreduce(*on.ic, s, r, count, t, red);
        } else {
          coll::allreduce(*on.c, s, r, count, t, red);
        }
      });
}

/// The reductions not on intercommunicators: `defined` says whether MPI defines them there.
template <class Fn>
auto intraReductionJob(const char* what, bool defined, const void* sbuf, void* rbuf, int count,
                       MPI_Datatype type, MPI_Op op, Fn fn) {
  return [=](Target on) {
    if (on.ic != nullptr) throwNotOnInter(what, defined);
    return reductionJob(sbuf, rbuf, count, type, op, 0,
                        [fn](Target o, const void* s, void* r, const Datatype* t, const Red& red) {
                          fn(*o.c, s, r, t, red);
                        })(on);
  };
}

auto reduceScatterBlockJob(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op) {
  return intraReductionJob(
      "reduce_scatter_block", true, sbuf, rbuf, rcount, type, op,
      [rcount](Comm& c, const void* s, void* r, const Datatype* t, const Red& red) {
        coll::reduceScatterBlock(c, s, r, rcount, t, red);
      });
}

auto reduceScatterJob(const void* sbuf, void* rbuf, const int* rcounts, MPI_Datatype type,
                      MPI_Op op) {
  return intraReductionJob(
      "reduce_scatter", true, sbuf, rbuf, 0, type, op,
      [rcounts](Comm& c, const void* s, void* r, const Datatype* t, const Red& red) {
        coll::reduceScatter(c, s, r, rcounts, t, red);
      });
}

auto scanJob(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op) {
  return intraReductionJob("scan", false, sbuf, rbuf, count, type, op,
                           [count](Comm& c, const void* s, void* r, const Datatype* t,
                                   const Red& red) { coll::scan(c, s, r, count, t, red); });
}

auto exscanJob(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op) {
  return intraReductionJob("exscan", false, sbuf, rbuf, count, type, op,
                           [count](Comm& c, const void* s, void* r, const Datatype* t,
                                   const Red& red) { coll::exscan(c, s, r, count, t, red); });
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;
namespace coll = onesided::coll;

extern "C" {

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ibarrier", On::comm(comm),
              [&] { capi::nonblocking("MPI_Ibarrier", comm, request, capi::barrierJob()); });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return call("MPI_Bcast", On::comm(comm),
              [&] { capi::blocking(comm, capi::bcastJob(buffer, count, datatype, root)); });
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  return call("MPI_Ibcast", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ibcast", comm, request, capi::bcastJob(buffer, count, datatype, root));
  });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return call("MPI_Gather", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::gatherJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
  });
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  return call("MPI_Igather", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Igather", comm, request,
        capi::gatherJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
  });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return call("MPI_Gatherv", On::comm(comm), [&] {
    capi::blocking(comm, capi::gathervJob(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                          recvtype, root));
  });
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Igatherv", On::comm(comm), [&] {
    capi::nonblocking("MPI_Igatherv", comm, request,
                      capi::gathervJob(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, root));
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return call("MPI_Scatter", On::comm(comm), [&] {
    capi::blocking(
        comm, capi::scatterJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
  });
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return call("MPI_Iscatter", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Iscatter", comm, request,
        capi::scatterJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return call("MPI_Scatterv", On::comm(comm), [&] {
    capi::blocking(comm, capi::scattervJob(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                           recvcount, recvtype, root));
  });
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iscatterv", On::comm(comm), [&] {
    capi::nonblocking("MPI_Iscatterv", comm, request,
                      capi::scattervJob(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                        recvtype, root));
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Allgather", On::comm(comm), [&] {
    capi::blocking(comm,
                   capi::allgatherJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
  });
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iallgather", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Iallgather", comm, request,
        capi::allgatherJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return call("MPI_Allgatherv", On::comm(comm), [&] {
    capi::blocking(comm, capi::allgathervJob(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                             displs, recvtype));
  });
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iallgatherv", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Iallgatherv", comm, request,
        capi::allgathervJob(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Alltoall", On::comm(comm), [&] {
    capi::blocking(comm,
                   capi::alltoallJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
  });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ialltoall", On::comm(comm), [&] {
    capi::nonblocking(
        "MPI_Ialltoall", comm, request,
        capi::alltoallJob(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return call("MPI_Alltoallv", On::comm(comm), [&] {
    capi::blocking(comm, capi::alltoallvJob(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype));
  });
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  return call("MPI_Ialltoallv", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ialltoallv", comm, request,
                      capi::alltoallvJob(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype));
  });
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return call("MPI_Alltoallw", On::comm(comm), [&] {
    capi::blocking(comm, capi::alltoallwJob(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                            recvcounts, rdispls, recvtypes));
  });
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  return call("MPI_Ialltoallw", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ialltoallw", comm, request,
                      capi::alltoallwJob(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                         recvcounts, rdispls, recvtypes));
  });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  return call("MPI_Reduce", On::comm(comm), [&] {
    capi::blocking(comm, capi::reduceJob(sendbuf, recvbuf, count, datatype, op, root));
  });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ireduce", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ireduce", comm, request,
                      capi::reduceJob(sendbuf, recvbuf, count, datatype, op, root));
  });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  return call("MPI_Allreduce", On::comm(comm), [&] {
    capi::blocking(comm, capi::allreduceJob(sendbuf, recvbuf, count, datatype, op));
  });
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iallreduce", On::comm(comm), [&] {
    capi::nonblocking("MPI_Iallreduce", comm, request,
                      capi::allreduceJob(sendbuf, recvbuf, count, datatype, op));
  });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return call("MPI_Reduce_scatter_block", On::comm(comm), [&] {
    capi::blocking(comm, capi::reduceScatterBlockJob(sendbuf, recvbuf, recvcount, datatype, op));
  });
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  return call("MPI_Ireduce_scatter_block", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ireduce_scatter_block", comm, request,
                      capi::reduceScatterBlockJob(sendbuf, recvbuf, recvcount, datatype, op));
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return call("MPI_Reduce_scatter", On::comm(comm), [&] {
    capi::blocking(comm, capi::reduceScatterJob(sendbuf, recvbuf, recvcounts, datatype, op));
  });
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Ireduce_scatter", On::comm(comm), [&] {
    capi::nonblocking("MPI_Ireduce_scatter", comm, request,
                      capi::reduceScatterJob(sendbuf, recvbuf, recvcounts, datatype, op));
  });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  return call("MPI_Scan", On::comm(comm),
              [&] { capi::blocking(comm, capi::scanJob(sendbuf, recvbuf, count, datatype, op)); });
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iscan", On::comm(comm), [&] {
    capi::nonblocking("MPI_Iscan", comm, request,
                      capi::scanJob(sendbuf, recvbuf, count, datatype, op));
  });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  return call("MPI_Exscan", On::comm(comm), [&] {
    capi::blocking(comm, capi::exscanJob(sendbuf, recvbuf, count, datatype, op));
  });
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  return call("MPI_Iexscan", On::comm(comm), [&] {
    capi::nonblocking("MPI_Iexscan", comm, request,
                      capi::exscanJob(sendbuf, recvbuf, count, datatype, op));
  });
}

}  // extern "C"
