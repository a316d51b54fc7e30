// SPDX-License-Identifier: BSD-3-Clause
// Request-based RMA and the completion calls (MPI_Wait / Test and their any / all / some forms)
// over Window tickets (src/window/request.cpp).
//
// Every handle in an array is checked before anything completes, so a bad handle
// (MPI_ERR_REQUEST, naming its index) leaves every request as it was. MPI_Test completes the
// operation when it is not yet complete (a flush of its one target, which never waits for the
// target's CPU): these transports report completion only through a flush, so a Test that did
// not flush could be polled forever.
#include <string>
#include <vector>

#include "capi/state.hpp"
#include "onesided/op.hpp"

namespace onesided::capi {
namespace {

/// Registers the ticket of the operation just issued to `target` on `win`.
MPI_Request addRequest(MPI_Win win, Window& w, int target) {
  auto& s = state();
  MPI_Request h = s.nextRequest;
  while (s.requests.contains(h)) h = h == INT32_MAX ? 1 : h + 1;  // only after 2^31 handles
  s.nextRequest = h == INT32_MAX ? 1 : h + 1;
  s.requests.emplace(h, RequestEntry{win, w.ticket(target)});
  return h;
}

/// Issues `issue` (the operation) in the window's passive epoch and returns its request; the
/// request pointer is checked before anything is issued.
template <class Issue>
void startRequest(const char* call, MPI_Win win, int target, MPI_Request* request, Issue&& issue) {
  auto& w = *winEntry(win).win;
  requireArg(request, "request");
  w.requirePassiveEpoch(call);
  issue(w);
  *request = addRequest(win, w, target);
}

void emptyStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->onesided_count_lo = 0;
  st->onesided_count_hi = 0;
  st->onesided_cancelled = 0;
}

/// The live request behind `h` (nullptr for MPI_REQUEST_NULL); MPI_ERR_REQUEST otherwise.
RequestEntry* lookup(MPI_Request h, int index = -1) {
  if (h == MPI_REQUEST_NULL) return nullptr;
  auto& reqs = state().requests;
  auto it = reqs.find(h);
  if (it == reqs.end()) {
    const std::string where = index >= 0 ? " (index " + std::to_string(index) + ")" : "";
    if (h > 0 && h < state().nextRequest) {
      throw Error(MPI_ERR_REQUEST,
                  "request " + std::to_string(h) + where + " was already completed or freed");
    }
    throw Error(MPI_ERR_REQUEST, "invalid request handle " + std::to_string(h) + where);
  }
  return &it->second;
}

/// Checks an array argument and every handle in it; returns whether any is active.
bool checkArray(int count, const MPI_Request* reqs) {
  requireInit();
  if (count < 0) throw Error(MPI_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  if (count > 0) requireArg(reqs, "array_of_requests");
  bool active = false;
  for (int i = 0; i < count; ++i) active = lookup(reqs[i], i) != nullptr || active;
  return active;
}

Window* windowOf(const RequestEntry& e) {
  auto& wins = state().wins;
  auto& slot = wins[static_cast<std::size_t>(e.win)];
  return slot ? slot->win.get() : nullptr;  // freed: every epoch was closed, so it is complete
}

bool isDone(const RequestEntry& e) {
  const Window* w = windowOf(e);
  return w == nullptr || w->done(e.ticket);
}

/// Completes request `*h` (which is live) and retires it.
void finish(MPI_Request* h, MPI_Status* st) {
  auto& reqs = state().requests;
  auto it = reqs.find(*h);
  if (Window* w = windowOf(it->second); w != nullptr) w->waitFor(it->second.ticket);
  reqs.erase(it);
  *h = MPI_REQUEST_NULL;
  emptyStatus(st);
}

MPI_Status* statusAt(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
}

/// MPI_Wait / MPI_Test: completes `*h` when it is active; an empty status for MPI_REQUEST_NULL.
void finishOrEmpty(MPI_Request* h, MPI_Status* st) {
  if (lookup(*h) != nullptr) {
    finish(h, st);
  } else {
    emptyStatus(st);
  }
}

/// MPI_Waitall / MPI_Testall (checkArray() done): every request completed in turn.
void finishAll(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statusAt(statuses, i);
    if (reqs[i] == MPI_REQUEST_NULL) {
      emptyStatus(st);
    } else {
      finish(&reqs[i], st);
    }
  }
}

/// The completed requests of the array into indices / statuses (waiting for the first active
/// one when none is complete and `block`); returns their number or MPI_UNDEFINED when no request
/// is active.
int some(int incount, MPI_Request reqs[], int indices[], MPI_Status statuses[], bool block) {
  if (!checkArray(incount, reqs)) return MPI_UNDEFINED;
  if (incount > 0) requireArg(indices, "array_of_indices");
  int n = 0;
  int firstActive = -1;
  for (int i = 0; i < incount; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    if (firstActive < 0) firstActive = i;
    if (isDone(state().requests.at(reqs[i]))) {
      finish(&reqs[i], statusAt(statuses, n));
      indices[n++] = i;
    }
  }
  if (n == 0 && block) {
    finish(&reqs[firstActive], statusAt(statuses, 0));
    indices[n++] = firstActive;
    // Its flush may have completed others to the same target.
    for (int i = firstActive + 1; i < incount; ++i) {
      if (reqs[i] != MPI_REQUEST_NULL && isDone(state().requests.at(reqs[i]))) {
        finish(&reqs[i], statusAt(statuses, n));
        indices[n++] = i;
      }
    }
  }
  return n;
}

/// MPI_Waitany: a complete request, else the first active one once completed; its index, or
/// MPI_UNDEFINED (with an empty status) when none is active.
int any(int count, MPI_Request reqs[], MPI_Status* status) {
  if (!checkArray(count, reqs)) {
    emptyStatus(status);
    return MPI_UNDEFINED;
  }
  int first = -1;
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    if (first < 0) first = i;
    if (isDone(state().requests.at(reqs[i]))) {
      finish(&reqs[i], status);
      return i;
    }
  }
  finish(&reqs[first], status);
  return first;
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request* request) {
  return call("MPI_Rput", On::win(win), [&] {
    capi::requireNotInPlace(origin_addr, "origin_addr");
    capi::startRequest("MPI_Rput", win, target_rank, request, [&](onesided::Window& w) {
      w.put(origin_addr, origin_count, capi::datatype(origin_datatype), target_rank, target_disp,
            target_count, capi::datatype(target_datatype));
    });
  });
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request* request) {
  return call("MPI_Rget", On::win(win), [&] {
    capi::requireNotInPlace(origin_addr, "origin_addr");
    capi::startRequest("MPI_Rget", win, target_rank, request, [&](onesided::Window& w) {
      w.get(origin_addr, origin_count, capi::datatype(origin_datatype), target_rank, target_disp,
            target_count, capi::datatype(target_datatype));
    });
  });
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return call("MPI_Raccumulate", On::win(win), [&] {
    capi::requireNotInPlace(origin_addr, "origin_addr");
    capi::startRequest("MPI_Raccumulate", win, target_rank, request, [&](onesided::Window& w) {
      w.accumulate(origin_addr, origin_count, capi::datatype(origin_datatype), target_rank,
                   target_disp, target_count, capi::datatype(target_datatype), capi::op(op));
    });
  });
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  return call("MPI_Rget_accumulate", On::win(win), [&] {
    capi::requireFetchBuffers(origin_addr, result_addr, op);
    capi::startRequest("MPI_Rget_accumulate", win, target_rank, request, [&](onesided::Window& w) {
      const onesided::Op o = capi::op(op);
      const auto& ot = capi::accOriginType(o, origin_datatype, target_datatype);
      w.getAccumulate(origin_addr, origin_count, ot, result_addr, result_count,
                      capi::datatype(result_datatype), target_rank, target_disp, target_count,
                      capi::datatype(target_datatype), o);
    });
  });
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  return call("MPI_Wait", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::finishOrEmpty(request, status);
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::requireArg(flag, "flag");
    capi::finishOrEmpty(request, status);
    *flag = 1;
  });
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  return call("MPI_Waitall", On::none(), [&] {
    capi::checkArray(count, array_of_requests);
    capi::finishAll(count, array_of_requests, array_of_statuses);
  });
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                MPI_Status array_of_statuses[]) {
  return call("MPI_Testall", On::none(), [&] {
    capi::checkArray(count, array_of_requests);
    capi::requireArg(flag, "flag");
    capi::finishAll(count, array_of_requests, array_of_statuses);
    *flag = 1;
  });
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  return call("MPI_Waitany", On::none(), [&] {
    capi::requireArg(index, "index");
    *index = capi::any(count, array_of_requests, status);
  });
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                MPI_Status* status) {
  return call("MPI_Testany", On::none(), [&] {
    capi::requireArg(index, "index");
    capi::requireArg(flag, "flag");
    *index = capi::any(count, array_of_requests, status);
    *flag = 1;
  });
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
  return call("MPI_Waitsome", On::none(), [&] {
    capi::requireArg(outcount, "outcount");
    *outcount = capi::some(incount, array_of_requests, array_of_indices, array_of_statuses, true);
  });
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
  return call("MPI_Testsome", On::none(), [&] {
    capi::requireArg(outcount, "outcount");
    *outcount = capi::some(incount, array_of_requests, array_of_indices, array_of_statuses, true);
  });
}

int MPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    if (capi::lookup(*request) == nullptr) {
      throw onesided::Error(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    }
    // The operation completes at the window's next flush / unlock as any other (MPI-3.1 §3.7.3).
    capi::state().requests.erase(*request);
    *request = MPI_REQUEST_NULL;
  });
}

}  // extern "C"
