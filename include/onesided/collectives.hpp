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
// count); ONESIDED_COLL_CHUNK (payload bytes per scratch chunk), ONESIDED_COLL_DEPTH (chunks a
// sender may be ahead of its peer) and ONESIDED_COLL_INFLIGHT (sends in flight per phase) tune
// the scratch channel.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "onesided/op.hpp"

namespace onesided {

class Comm;
class Datatype;

namespace coll {

/// MPI_IN_PLACE's value.
inline const void* inPlace() noexcept { return reinterpret_cast<const void*>(-1); }  // NOLINT

/// MPI_Barrier: the communicator's dissemination barrier.
void barrier(Comm& comm);
/// MPI_Bcast: `count` x `type` at the root's `buf` into every member's.
void bcast(Comm& comm, void* buf, int count, const Datatype* type, int root);
/// MPI_Gather: block r of the root's rbuf (rcount x rtype, r * rcount extents on) from rank r;
/// sbuf may be inPlace() at the root.
void gather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf, int rcount,
            const Datatype* rtype, int root);
/// MPI_Gatherv: block r at displs[r] extents, rcounts[r] elements (root only).
void gatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             const int* rcounts, const int* displs, const Datatype* rtype, int root);
/// MPI_Scatter: the reverse of gather; rbuf may be inPlace() at the root.
void scatter(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
             int rcount, const Datatype* rtype, int root);
/// MPI_Scatterv: the reverse of gatherv.
void scatterv(Comm& comm, const void* sbuf, const int* scounts, const int* displs,
              const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype, int root);
/// MPI_Allgather: gather to every member; sbuf may be inPlace() (own block already in rbuf).
void allgather(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
               int rcount, const Datatype* rtype);
/// MPI_Allgatherv.
void allgatherv(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                const int* rcounts, const int* displs, const Datatype* rtype);
/// MPI_Alltoall: block j of rank i lands in block i of rank j; sbuf may be inPlace().
void alltoall(Comm& comm, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
              int rcount, const Datatype* rtype);
/// MPI_Alltoallv; in place, the receive layout describes both.
void alltoallv(Comm& comm, const void* sbuf, const int* scounts, const int* sdispls,
               const Datatype* stype, void* rbuf, const int* rcounts, const int* rdispls,
               const Datatype* rtype);
/// MPI_Alltoallw: alltoallv with a datatype per block and displacements in bytes; in place,
/// the receive layout describes both.
void alltoallw(Comm& comm, const void* sbuf, const int* scounts, const int* sdispls,
               const Datatype* const* stypes, void* rbuf, const int* rcounts, const int* rdispls,
               const Datatype* const* rtypes);
/// A rank's neighbourhood for the neighbourhood collectives (MPI-3.1 §7.6), as comm ranks:
/// receive block k comes from sources[k], send block k goes to destinations[k]; a negative
/// entry (MPI_PROC_NULL, or -1) is no neighbour, whose block is neither sent nor written. A
/// pair that appears more than once exchanges its blocks in list order: the k-th send from i
/// to j lands in the k-th receive from i at j. `cartesian`: the lists are the (-1, +1)
/// neighbours of each dimension, and a block sent towards -1 lands in the receiver's block from
/// its +1 neighbour (which matters when both are one rank: a periodic dimension of size 1 or 2).
/// Only the neighbours are touched: nothing is written to or waited for from any other member.
struct Neighborhood {
  std::span<const int> sources;
  std::span<const int> destinations;
  bool cartesian = false;
};
/// MPI_Neighbor_allgather: the one send block to every destination; block k of rbuf (rcount x
/// rtype, k * rcount extents on) from sources[k]. MPI_IN_PLACE is not allowed.
void neighborAllgather(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                       const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype);
/// MPI_Neighbor_allgatherv: block k at displs[k] extents, rcounts[k] elements.
void neighborAllgatherv(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                        const Datatype* stype, void* rbuf, const int* rcounts, const int* displs,
                        const Datatype* rtype);
/// MPI_Neighbor_alltoall: send block k (scount x stype, k * scount extents on) to
/// destinations[k], receive block k from sources[k].
void neighborAlltoall(Comm& comm, const Neighborhood& nb, const void* sbuf, int scount,
                      const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype);
/// MPI_Neighbor_alltoallv: blocks at displacements in extents of their type.
void neighborAlltoallv(Comm& comm, const Neighborhood& nb, const void* sbuf, const int* scounts,
                       const int* sdispls, const Datatype* stype, void* rbuf, const int* rcounts,
                       const int* rdispls, const Datatype* rtype);
/// MPI_Neighbor_alltoallw: a datatype per block and displacements in bytes (MPI_Aint).
void neighborAlltoallw(Comm& comm, const Neighborhood& nb, const void* sbuf, const int* scounts,
                       const std::intptr_t* sdispls, const Datatype* const* stypes, void* rbuf,
                       const int* rcounts, const std::intptr_t* rdispls,
                       const Datatype* const* rtypes);
/// A user-defined reduction (MPI_Op_create), bound by the caller to the call's datatype:
/// combine(in, inout, count) sets inout[i] = in[i] op inout[i] for `count` elements laid out by
/// that datatype's type map (MPI-3.1 §5.9.5).
struct UserOp {
  std::function<void(const void* in, void* inout, int count)> combine;
  /// Whether the collectives may combine in any order; if not, they combine in rank order
  /// (rank 0's elements first), grouping as they like (op is associative).
  bool commutative = false;
};

/// The operation of a reduction: a predefined Op, or a user function.
struct Reduction {
  Reduction(Op o) : op(o) {}  // NOLINT(google-explicit-constructor): an Op is a reduction
  explicit Reduction(UserOp u) : user(std::move(u)) {}
  [[nodiscard]] bool isUser() const noexcept { return static_cast<bool>(user.combine); }
  Op op = Op::kNoOp;  ///< when !isUser()
  UserOp user;
};

/// MPI_Reduce (kErrOp for REPLACE / NO_OP or a predefined operation that does not take the
/// type; user operations take any committed type); sbuf may be inPlace() at the root.
void reduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
            const Reduction& op, int root);
/// MPI_Allreduce; sbuf may be inPlace().
void allreduce(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
               const Reduction& op);
/// MPI_Reduce_scatter_block: block r (rcount elements) of the reduced p * rcount to rank r;
/// sbuf may be inPlace() (the input is then rbuf's p * rcount elements).
void reduceScatterBlock(Comm& comm, const void* sbuf, void* rbuf, int rcount, const Datatype* type,
                        const Reduction& op);
/// MPI_Reduce_scatter: rcounts[r] elements of the reduced sum of rcounts to rank r, in rank
/// order; sbuf may be inPlace() (the input is then rbuf's sum of rcounts elements).
void reduceScatter(Comm& comm, const void* sbuf, void* rbuf, const int* rcounts,
                   const Datatype* type, const Reduction& op);
/// MPI_Scan: rank r receives the reduction of ranks 0..r's vectors; sbuf may be inPlace().
void scan(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
          const Reduction& op);
/// MPI_Exscan: rank r > 0 receives the reduction of ranks 0..r-1's vectors; rank 0's rbuf is
/// left as it is. sbuf may be inPlace().
void exscan(Comm& comm, const void* sbuf, void* rbuf, int count, const Datatype* type,
            const Reduction& op);
/// MPI_Reduce_local: inout = in op inout, element by element (checks as the collectives do).
void reduceLocal(const void* in, void* inout, int count, const Datatype* type, const Reduction& op);

}  // namespace coll
}  // namespace onesided
