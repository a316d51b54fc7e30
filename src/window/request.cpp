// SPDX-License-Identifier: BSD-3-Clause
// Request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate): completion
// tickets.
//
// An operation is issued exactly as its blocking-epoch twin (put / get / accumulate); what a
// request adds is knowing when that one operation is complete. Operations that finish inside
// the call -- the load / store path, cross-memory attach, accumulates by lock or NIC atomic --
// get ticket 0, complete at once. The others leave their target "dirty" (window.cpp) or with
// active messages not yet applied (am.cpp), and the only way to learn of their completion is
// a flush of that target (Window::complete); so each target
// counts the flushes that completed everything issued to it, and an operation's ticket is
// (target, that count + 1). MPI_Wait on it flushes that one target, and only when no flush since
// (MPI_Win_flush, unlock, another request's wait, a packed get's bounce-buffer recycling) did
// already: n requests to one target waited in a row cost one flush, not n, and requests to other
// targets are not touched. Local completion is not cheaper than remote completion on these
// transports (window.hpp, flush_local), so a request completes both.
#include <string>

#include "onesided/comm.hpp"
#include "onesided/window.hpp"

namespace onesided {

void Window::requirePassiveEpoch(const char* call) const {
  requireLive();
  if (epoch_ != Epoch::kPassive) {
    throw Error(kErrRmaSync, std::string(call) +
                                 " outside a passive-target epoch (request-based operations "
                                 "need MPI_Win_lock or MPI_Win_lock_all first)");
  }
}

Window::Ticket Window::ticket(int target) const {
  if (target == kProcNull || freed_) return {};
  const auto i = static_cast<std::size_t>(target);
  if (!unflushed(i) && !targets_[i].amPending) return {target, 0};
  return {target, targets_[i].completions + 1};
}

bool Window::done(const Ticket& t) const {
  if (t.seq == 0 || freed_) return true;
  return targets_[static_cast<std::size_t>(t.target)].completions >= t.seq;
}

void Window::waitFor(const Ticket& t) {
  if (done(t)) return;
  complete(t.target);
}

}  // namespace onesided
