// SPDX-License-Identifier: BSD-3-Clause
// Collective operations over a Comm (MPI-3.1 chapter 5), built on one-sided writes: data moves
// by put (or store, on the load / store path) into the members' registered scratch regions and
// each piece is announced by a counter written after the data is complete (collectives/channel).
//
// Arguments follow MPI: counts are element counts of the given datatype, displacements are in
// units of the datatype's extent, and a type pointer may be null where the argument is not
// significant on this rank (the receive type of a non-root, for example). inPlace() is
// MPI_IN_PLACE. Bad arguments throw Error with the MPI class and a message naming the value;
// nothing is written then. A receive whose sender sent another amount throws kErrTruncate
// (more) or kErrCount (less) at the receiver, leaving that part untouched.
//
// ONESIDED_COLL_ALG=linear|tree forces an algorithm family wide (default: by size and process
// count); ONESIDED_COLL_CHUNK (payload bytes per scratch chunk) and ONESIDED_COLL_INFLIGHT (sends
// in flight per phase) tune the scratch channel.
#pragma once

#include <cstdint>
#include <span>

#include "onesided/op.hpp"

namespace onesided {

class Comm;
class Datatype;

namespace coll {

/// MPI_IN_PLACE's value.
inline const void* inPlace() noexcept { return reinterpret_cast<const void*>(-1); }  // NOLINT

void barrier(Comm& comm);
void bcast(Comm& comm, void* buf, int count, const Datatype* type, int root);
void gather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf, int rcount,
            const Datatype* rtype, int root);
void gatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             const int* rcounts, const int* displs, const Datatype* rtype, int root);
void scatter(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             int rcount, const Datatype* rtype, int root);
void scatterv(Comm& comm, const void* sbuf, const int* scounts, const int* displs,
              const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype, int root);
void allgather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
               int rcount, const Datatype* rtype);
void allgatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                const int* rcounts, const int* displs, const Datatype* rtype);
void alltoall(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
              int rcount, const Datatype* rtype);
void alltoallv(Comm& comm, const void* sbuf, const int* scounts, const int* sdispls,
               const Datatype* stype, void* rbuf, const int* rcounts, const int* rdispls,
               const Datatype* rtype);
void reduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type, Op op,
            int root);
void allreduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type, Op op);
void reduceScatterBlock(Comm& comm, const void* sbuf, void* rbuf, int rcount, const Datatype* type,
                        Op op);

}  // namespace coll
}  // namespace onesided
