// SPDX-License-Identifier: BSD-3-Clause
// Intercommunicators (MPI-3.1 §6.6): two disjoint groups, each rank a member of one (its local
// group, an intracommunicator of its own, `local()`), talking to the other (the remote group).
// Point-to-point on one names ranks of the remote group; its messages carry `context()`.
//
// Their collectives (MPI-3.1 §5.2.2) move data from one group to the other: within a group by
// the local communicator's collectives (one-sided, over its scratch channel), between the
// groups by point-to-point messages between the groups' leaders (rank 0 of each) or, where each
// rank has its own data for each remote rank (gather, scatter, alltoall and the v forms),
// between the ranks themselves. Those messages carry a context of their own, so they never
// meet the program's messages on the intercommunicator.
//
// Bad arguments throw Error with the MPI class and a message naming the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "onesided/collectives.hpp"
#include "onesided/comm.hpp"

namespace onesided {
class Datatype;
}

namespace onesided::coll {

/// MPI_ROOT, as <mpi.h> has it: the root's own argument in a rooted intercommunicator
/// collective (the other members of its group pass MPI_PROC_NULL).
constexpr int kRoot = -4;
constexpr int kProcNull = -2;

class Inter {
 public:
  /// `local`: this rank's group; `remote`: the other group's world ranks, in its rank order.
  Inter(std::unique_ptr<Comm> local, std::vector<int> remote, std::uint64_t context);
  ~Inter();
  Inter(const Inter&) = delete;
  Inter& operator=(const Inter&) = delete;

  Comm& local() noexcept { return *local_; }
  [[nodiscard]] const std::vector<int>& remote() const noexcept { return remote_; }
  [[nodiscard]] int remoteSize() const noexcept { return static_cast<int>(remote_.size()); }
  /// The context of the program's point-to-point messages on it.
  [[nodiscard]] std::uint64_t context() const noexcept { return context_; }
  /// A context for a communicator made from this one (dup, split, merge): every member of both
  /// groups asks at the same point.
  std::uint64_t deriveContext();

  /// The context of the collectives' messages between the groups.
  [[nodiscard]] std::uint64_t collContext() const noexcept { return collContext_; }
  /// The collectives' messages to and from remote rank `r` (`tag` tells the kinds apart).
  void send(const void* buf, std::size_t count, const Datatype& t, int r, int tag);
  void recv(void* buf, std::size_t count, const Datatype& t, int r, int tag);
  /// Both groups' leaders swap `mine` (a blob); the others get the remote leader's blob by a
  /// broadcast over the local group. Collective over both groups.
  std::vector<std::byte> swapThroughLeaders(std::span<const std::byte> mine);

 private:
  std::unique_ptr<Comm> local_;
  std::vector<int> remote_;
  std::uint64_t context_;
  std::uint64_t collContext_;
  std::uint64_t derived_ = 0;
};

/// MPI_Intercomm_create: collective over `localComm`; `peer` (with `remoteLeader`, a rank of
/// it) and `tag` matter at the leader only, which swaps the groups with the remote leader.
std::unique_ptr<Inter> interCreate(Comm& localComm, int localLeader, Comm* peer, int remoteLeader,
                                   int tag);
/// MPI_Intercomm_merge: an intracommunicator of both groups, the group that passes
/// `high` = false first (when both pass the same, the group of the lower leader world rank).
std::unique_ptr<Comm> interMerge(Inter& ic, bool high);
/// MPI_Comm_dup of an intercommunicator.
std::unique_ptr<Inter> interDup(Inter& ic);
/// MPI_Comm_split of an intercommunicator: the members of each group with `color`, ordered by
/// (key, rank), facing those of the other group with the same color; nullptr for kUndefined
/// or when either side has none.
std::unique_ptr<Inter> interSplit(Inter& ic, int color, int key);

// ---- the collectives MPI defines on intercommunicators (MPI-3.1 §5.2.2) ----
// Rooted ones: `root` is kRoot at the root, kProcNull at the other members of its group, and
// the root's rank in the remote group at the members of the other group.
void interBarrier(Inter& ic);
void interBcast(Inter& ic, void* buf, int count, const Datatype* type, int root);
void interGather(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                 int rcount, const Datatype* rtype, int root);
void interGatherv(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                  const int* rcounts, const int* displs, const Datatype* rtype, int root);
void interScatter(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                  int rcount, const Datatype* rtype, int root);
void interScatterv(Inter& ic, const void* sbuf, const int* scounts, const int* displs,
                   const Datatype* stype, void* rbuf, int rcount, const Datatype* rtype, int root);
/// Each member receives the remote group's blocks (rcount each, in remote rank order).
void interAllgather(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                    int rcount, const Datatype* rtype);
void interAllgatherv(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                     const int* rcounts, const int* displs, const Datatype* rtype);
/// Block j of sbuf goes to remote rank j; block j of rbuf comes from it.
void interAlltoall(Inter& ic, const void* sbuf, int scount, const Datatype* stype, void* rbuf,
                   int rcount, const Datatype* rtype);
void interAlltoallv(Inter& ic, const void* sbuf, const int* scounts, const int* sdispls,
                    const Datatype* stype, void* rbuf, const int* rcounts, const int* rdispls,
                    const Datatype* rtype);
/// The root receives the reduction of the remote group's vectors.
void interReduce(Inter& ic, const void* sbuf, void* rbuf, int count, const Datatype* type,
                 const Reduction& op, int root);
/// Each member receives the reduction of the remote group's vectors.
void interAllreduce(Inter& ic, const void* sbuf, void* rbuf, int count, const Datatype* type,
                    const Reduction& op);

}  // namespace onesided::coll
