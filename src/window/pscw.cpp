// SPDX-License-Identifier: BSD-3-Clause
// General active-target synchronisation: MPI_Win_post / start / complete / wait / test.
//
// Matching is done with two counters in each rank's control words, updated by remote atomics
// only (the same words and the same transport path as the passive-target locks):
//   - kPostWord at an origin counts the MPI_Win_post notices it has received. MPI_Win_start with
//     a group of n targets waits until the count reaches n more than the starts before it took
//     (postsTaken_, a plain member: only this rank reads the word).
//   - kCompleteWord at a target counts MPI_Win_complete notices. MPI_Win_wait with a post group
//     of n origins waits likewise until it reaches n more than the waits before it took.
// Counting is enough, no epoch numbers are needed: a target's next post to an origin can only
// come after its wait has seen that origin's complete, which comes after the origin's start has
// consumed the previous post. So a notice never arrives early enough to be counted in the wrong
// epoch. A start or a wait therefore costs no message and no atomic, a post or a complete one
// remote atomic per member. The words only grow (2^64 notices do not happen), so nothing is
// ever taken off them: that was one more atomic per start and per wait, and on verbs a NIC
// atomic looped back to the rank itself (a CPU atomic would not be atomic with respect to the
// NIC's adds). The waiting itself reads the word locally.
#include <algorithm>
#include <atomic>
#include <span>
#include <string>

#include "hang.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "transport/transport.hpp"
#include "window/barrier.hpp"

namespace onesided {
namespace {

/// The world rank of group[i] (ranks of `comm`), or -1 past the group's end: the hang report's.
int worldOf(const Comm& comm, const std::vector<int>& group, std::size_t i) {
  return i < group.size() ? comm.worldRank(group[i]) : -1;
}

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::uint64_t Window::ownControl(int word) const {
  auto* words = reinterpret_cast<std::uint64_t*>(ctlMem_);
  return std::atomic_ref<std::uint64_t>(words[word]).load(std::memory_order_acquire);
}

void Window::pscwGroup(const char* call, std::span<const int> ranks,
                       std::vector<int>& group) const {
  group.assign(ranks.begin(), ranks.end());
  const int p = comm_.size();
  for (int r : group) {
    if (r < 0 || r >= p) {
      throw Error(kErrRank, std::string(call) + ": group member " + str(r) +
                                " is not in the window's group (size " + str(p) + ")");
    }
  }
  std::sort(group.begin(), group.end());
  if (auto dup = std::adjacent_find(group.begin(), group.end()); dup != group.end()) {
    throw Error(kErrGroup, std::string(call) + ": rank " + str(*dup) + " is in the group twice");
  }
}

void Window::post(std::span<const int> origins, int assertion) {
  requireLive();
  constexpr int kAllowed = kModeNocheck | kModeNostore | kModeNoput;
  if ((assertion & ~kAllowed) != 0) {
    throw Error(kErrAssert, "assertion " + str(assertion) +
                                " has bits that MPI_Win_post does not accept (allowed: "
                                "MPI_MODE_NOCHECK, NOSTORE, NOPUT)");
  }
  if (posted_) {
    throw Error(kErrRmaSync,
                "an exposure epoch of MPI_Win_post is already open (end it with "
                "MPI_Win_wait or MPI_Win_test)");
  }
  if (epoch_ == Epoch::kFence && pendingOps_ > 0) {
    throw Error(kErrRmaSync, "MPI_Win_post inside a fence epoch with " +
                                 str(static_cast<std::int64_t>(pendingOps_)) +
                                 " operations issued (end it with MPI_Win_fence first)");
  }
  std::vector<int>& group = postGroup_;
  pscwGroup("MPI_Win_post", origins, group);
  // Our memory must be as the program left it before any origin may access it: stores to the
  // window are ordered before the notices. CPU atomics (cpuAtomics_, amInts_) are
  // read-modify-writes that order every earlier store themselves; the transport's need a full
  // barrier first.
  if (!cpuControl()) detail::fullBarrier();
  if ((assertion & kModeNocheck) == 0) {
    for (int r : group) {
      control(r, kPostWord, static_cast<int>(transport::AtomicOp::kFetchAdd), 1);
    }
  }
  if (epoch_ == Epoch::kFence) {
    epoch_ = Epoch::kNone;
    allOpen_ = false;
  }
  posted_ = true;
  postOrigins_ = group.size();
}

void Window::start(std::span<const int> targets, int assertion) {
  requireLive();
  if ((assertion & ~kModeNocheck) != 0) {
    throw Error(kErrAssert, "assertion " + str(assertion) +
                                " has bits other than MPI_MODE_NOCHECK (MPI_Win_start)");
  }
  if (epoch_ == Epoch::kPscw) {
    throw Error(kErrRmaSync,
                "an access epoch of MPI_Win_start is already open (end it with "
                "MPI_Win_complete)");
  }
  if (epoch_ == Epoch::kPassive) {
    throw Error(kErrRmaSync,
                "MPI_Win_start while a passive-target epoch (MPI_Win_lock / lock_all) is open");
  }
  if (epoch_ == Epoch::kFence && pendingOps_ > 0) {
    throw Error(kErrRmaSync, "MPI_Win_start inside a fence epoch with " +
                                 str(static_cast<std::int64_t>(pendingOps_)) +
                                 " operations issued (end it with MPI_Win_fence first)");
  }
  std::vector<int>& group = started_;  // empty outside an access epoch (checked above)
  pscwGroup("MPI_Win_start", targets, group);
  const std::uint64_t n = group.size();
  if ((assertion & kModeNocheck) == 0 && n > 0) {
    const std::uint64_t want = postsTaken_ + n;
    const hang::Waiting waiting(hang::For::kPosts, static_cast<int>(n), worldOf(comm_, group, 0),
                                worldOf(comm_, group, 1), worldOf(comm_, group, 2));
    comm_.context().waitUntil([&] { return ownControl(kPostWord) >= want; });
    postsTaken_ = want;
  }
  for (int r : group) targets_[static_cast<std::size_t>(r)].lock = kLockStarted;
  epoch_ = Epoch::kPscw;
  ++epochs_;  // dynamic windows re-validate their attach tables once per epoch
  allOpen_ = false;
  pendingOps_ = 0;
}

void Window::completeAccess() {
  requireLive();
  if (epoch_ != Epoch::kPscw) {
    throw Error(kErrRmaSync, "MPI_Win_complete without MPI_Win_start");
  }
  // Every operation complete at its target before the target hears of it: the notice behind
  // the operations, in one round trip for all targets where the transport can
  // (addAfterOperations), otherwise once they are complete.
  // With CPU atomics the notices are read-modify-writes, which order every store before them
  // (the load / store path's included): no full barrier first, and no list to build.
  const bool cpu = cpuControl();
  std::vector<int> added;
  if (!cpu) added = addAfterOperations(started_, kCompleteWord, 1);
  const std::span<const int> rest = cpu ? std::span<const int>(started_) : added;
  if (cpu) needFence_ = false;
  if (started_.size() == static_cast<std::size_t>(comm_.size())) {
    complete(-1);
  } else {
    for (int r : started_) complete(r);
  }
  for (int r : started_) targets_[static_cast<std::size_t>(r)].lock = kLockNone;
  for (int r : rest) {
    control(r, kCompleteWord, static_cast<int>(transport::AtomicOp::kFetchAdd), 1);
  }
  started_.clear();
  epoch_ = Epoch::kNone;
  pendingOps_ = 0;
}

bool Window::test() {
  requireLive();
  if (!posted_) throw Error(kErrRmaSync, "MPI_Win_test without MPI_Win_post");
  const std::uint64_t want = completesTaken_ + postOrigins_;
  if (ownControl(kCompleteWord) < want) {
    comm_.context().progress();
    if (ownControl(kCompleteWord) < want) return false;
  }
  completesTaken_ = want;
  // The origins' data is complete in our memory, and our later loads come after it: the
  // count's load above is an acquire, which saw their release (CPU atomics) or the NIC's
  // coherent writes. No full barrier (none is needed for loads after a load).
  posted_ = false;
  postOrigins_ = 0;
  return true;
}

void Window::wait() {
  requireLive();
  if (!posted_) throw Error(kErrRmaSync, "MPI_Win_wait without MPI_Win_post");
  const std::uint64_t want = completesTaken_ + postOrigins_;
  const hang::Waiting waiting(hang::For::kCompletes, static_cast<int>(postOrigins_),
                              worldOf(comm_, postGroup_, 0), worldOf(comm_, postGroup_, 1),
                              worldOf(comm_, postGroup_, 2));
  comm_.context().waitUntil([&] { return ownControl(kCompleteWord) >= want; });
  test();
}

}  // namespace onesided
