// SPDX-License-Identifier: BSD-3-Clause
// Request-based RMA and the completion calls (MPI_Wait / Test and their any / all / some forms)
// over Window tickets (src/window/request.cpp).
//
// Every handle in an array is checked before anything completes, so a bad handle
// (MPI_ERR_REQUEST, naming its index) leaves every request as it was. MPI_Test completes the
// operation when it is not yet complete (a flush of its one target, which never waits for the
// target's CPU): these transports report completion only through a flush, so a Test that did
// not flush could be polled forever.
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "capi/state.hpp"
#include "onesided/op.hpp"

namespace onesided::capi {

MPI_Request addRequest(RequestEntry e) {
  return state().requests.add([&](RequestEntry& slot) { slot = std::move(e); });
}

MPI_Request addCollRequest(MPI_Comm comm, std::shared_ptr<coll::AsyncOp> op) {
  return state().requests.add([&](RequestEntry& e) {
    e.coll = std::move(op);
    e.comm = comm;
  });
}

std::unique_ptr<p2p::Request> newMessage() {
  auto& spare = state().spareRequests;
  if (spare.empty()) return std::make_unique<p2p::Request>();
  std::unique_ptr<p2p::Request> r = std::move(spare.back());
  spare.pop_back();
  return r;
}

void retire(MPI_Request h) {
  auto& s = state();
  RequestEntry* e = s.requests.find(h);
  if (e == nullptr) return;
  constexpr std::size_t kSpareMax = 256;
  if (e->msg != nullptr && e->msg->complete && s.spareRequests.size() < kSpareMax) {
    e->msg->type.reset();
    e->msg->exposed.reset();
    e->msg->packed.clear();
    s.spareRequests.push_back(std::move(e->msg));
  }
  s.requests.erase(h);
}

void p2pStatus(MPI_Status* st, const p2p::Status& s) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = s.source;
  st->MPI_TAG = s.tag;
  if (s.error != 0) st->MPI_ERROR = s.error;
  setStatusBytes(st, s.bytes);
  st->onesided_cancelled = s.cancelled ? 1 : 0;
}

void procNullStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_PROC_NULL;
  st->MPI_TAG = MPI_ANY_TAG;
  setStatusBytes(st, 0);
  st->onesided_cancelled = 0;
}

std::string p2pError(const p2p::Status& s) {
  if (s.error == MPI_ERR_TRUNCATE) {
    return "the message from rank " + std::to_string(s.source) + " with tag " +
           std::to_string(s.tag) + " has " + std::to_string(s.sent) +
           " bytes, more than the receive buffer's " + std::to_string(s.bytes) +
           " (truncated to them)";
  }
  return "error class " + std::to_string(s.error);
}

namespace {

/// Registers the ticket of the operation just issued to `target` on `win`.
MPI_Request addRmaRequest(MPI_Win win, Window& w, int target) {
  return state().requests.add([&](RequestEntry& e) {
    e.win = win;
    e.ticket = w.ticket(target);
  });
}

/// Issues `issue` (the operation) in the window's passive epoch and returns its request; the
/// request pointer is checked before anything is issued.
template <class Issue>
void startRequest(const char* call, MPI_Win win, int target, MPI_Request* request, Issue&& issue) {
  auto& w = *winEntry(win).win;
  requireArg(request, "request");
  w.requirePassiveEpoch(call);
  issue(w);
  *request = addRmaRequest(win, w, target);
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
  RequestEntry* e = state().requests.find(h);
  if (e == nullptr) {
    const std::string where = index >= 0 ? " (index " + std::to_string(index) + ")" : "";
    if (state().requests.issued(h)) {
      throw Error(MPI_ERR_REQUEST,
                  "request " + std::to_string(h) + where + " was already completed or freed");
    }
    throw Error(MPI_ERR_REQUEST, "invalid request handle " + std::to_string(h) + where);
  }
  return e;
}

/// Whether a request takes part in completion: persistent requests that are not started do not
/// (MPI-3.1 §3.9: they are treated like MPI_REQUEST_NULL).
bool activeEntry(const RequestEntry* e) { return e != nullptr && e->active; }

/// Checks an array argument and every handle in it; returns whether any is active.
bool checkArray(int count, const MPI_Request* reqs) {
  requireInit();
  if (count < 0) throw Error(MPI_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  if (count > 0) requireArg(reqs, "array_of_requests");
  bool active = false;
  for (int i = 0; i < count; ++i) active = activeEntry(lookup(reqs[i], i)) || active;
  return active;
}

Window* windowOf(const RequestEntry& e) {
  auto& wins = state().wins;
  auto& slot = wins[static_cast<std::size_t>(e.win)];
  return slot ? slot->win.get() : nullptr;  // freed: every epoch was closed, so it is complete
}

/// Whether an active request is complete now (a point-to-point one as of the engine's last
/// poll: callers poll first).
bool isDone(const RequestEntry& e) {
  if (e.isColl()) return e.coll->done();
  if (e.isGreq()) return e.greq->complete.load();
  if (e.isP2p()) return e.procNull || e.msg == nullptr || e.msg->complete;
  const Window* w = windowOf(e);
  return w == nullptr || w->done(e.ticket);
}

/// Whether a Test may complete the request without waiting for another rank: RMA requests can
/// (a flush of their target, which needs no remote CPU), messages only once they are complete.
bool ready(const RequestEntry& e) { return e.isRma() || isDone(e); }

/// A nonblocking collective's error, as a class and its text.
int collError(const coll::AsyncOp& op, std::string* why) {
  const std::exception_ptr ex = op.error();
  if (ex == nullptr) return 0;
  try {
    std::rethrow_exception(ex);
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return e.errorClass();
  } catch (const std::bad_alloc&) {
    if (why != nullptr) *why = "out of memory";
    return MPI_ERR_NO_MEM;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = std::string("internal error: ") + e.what();
    return MPI_ERR_INTERN;
  } catch (...) {
    if (why != nullptr) *why = "unknown internal error";
    return MPI_ERR_INTERN;
  }
}

/// Completes request `*h` (which is live and active): waits for it, fills the status, and
/// retires it (a persistent one becomes inactive). Returns a point-to-point error class (0 if
/// none) and its text in `why`.
int finish(MPI_Request* h, MPI_Status* st, std::string* why = nullptr) {
  // The wait first, holding nothing of the table: under MPI_THREAD_MULTIPLE it lets other
  // threads' calls run, and a request they add may move the table's entries.
  {
    const RequestEntry& e = state().requests.at(*h);
    if (e.isColl()) {
      const std::shared_ptr<coll::AsyncOp> op = e.coll;  // `e` may move while this waits
      op->wait(&state().callLock);
    } else if (e.isGreq()) {
      // Another thread's MPI_Grequest_complete ends it: waitUntil lets it have the call lock.
      const std::shared_ptr<Grequest> g = e.greq;
      context().waitUntil([&] { return g->complete.load(); });
    } else if (e.isP2p()) {
      if (p2p::Request* m = e.procNull ? nullptr : e.msg.get(); m != nullptr) engine().wait(*m);
    } else if (Window* w = windowOf(e); w != nullptr) {
      const Window::Ticket t = e.ticket;
      w->waitFor(t);
    }
  }
  RequestEntry& e = state().requests.at(*h);
  if (e.isGreq()) {
    const int err = grequestFinish(*h, st, why);
    *h = MPI_REQUEST_NULL;
    return err;
  }
  int err = 0;
  if (e.isColl()) {
    emptyStatus(st);
    err = collError(*e.coll, why);
  } else if (!e.isP2p()) {
    emptyStatus(st);
  } else if (e.procNull) {
    procNullStatus(st);
  } else if (e.msg) {
    p2pStatus(st, e.msg->status);
    err = e.msg->status.error;
    if (err != 0 && why != nullptr) *why = p2pError(e.msg->status);
  } else {
    emptyStatus(st);
  }
  if (e.persistent) {
    e.active = false;
    e.procNull = false;
  } else {
    retire(*h);
    *h = MPI_REQUEST_NULL;
  }
  return err;
}

MPI_Status* statusAt(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses + i;
}

/// The communicator a request's errors are raised on (its handler), for MPI_Wait / MPI_Test.
On onOf(const MPI_Request* h) noexcept {
  if (h == nullptr || !state().initialized) return On::none();
  const RequestEntry* e = state().requests.find(*h);
  if (e == nullptr) return On::none();
  if (e->isP2p() || e->isColl()) return On::comm(e->comm);
  if (e->isGreq()) return On::none();
  return On::win(e->win);
}

void throwIf(int err, const std::string& why) {
  if (err != 0) throw Error(err, why);
}

/// MPI_Wait / MPI_Test: completes `*h` when it is active; an empty status for MPI_REQUEST_NULL
/// and for an inactive persistent request.
void finishOrEmpty(MPI_Request* h, MPI_Status* st) {
  if (activeEntry(lookup(*h))) {
    std::string why;
    throwIf(finish(h, st, &why), why);
  } else {
    emptyStatus(st);
  }
}

/// Several completions' errors: each status's MPI_ERROR (when statuses are asked for), then
/// MPI_ERR_IN_STATUS naming the first.
struct Errors {
  int first = -1;
  std::string why;
  void note(int err, int index, const std::string& text) {
    if (err != 0 && first < 0) {
      first = index;
      why = text;
    }
  }
  void raise() const {
    if (first >= 0) {
      throw Error(MPI_ERR_IN_STATUS, "request " + std::to_string(first) + ": " + why);
    }
  }
};

/// MPI_Waitall / MPI_Testall (checkArray() done): every request completed in turn.
void finishAll(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  Errors errors;
  std::vector<int> codes(static_cast<std::size_t>(count), MPI_SUCCESS);
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statusAt(statuses, i);
    if (!activeEntry(lookup(reqs[i], i))) {
      emptyStatus(st);
    } else {
      std::string why;
      const int err = finish(&reqs[i], st, &why);
      codes[static_cast<std::size_t>(i)] = err;
      errors.note(err, i, why);
    }
  }
  if (errors.first >= 0 && statuses != MPI_STATUSES_IGNORE) {
    for (int i = 0; i < count; ++i) statuses[i].MPI_ERROR = codes[static_cast<std::size_t>(i)];
  }
  errors.raise();
}

/// Gives a nonblocking collective's thread a turn: a program that polls MPI_Test in a loop
/// would otherwise take the call lock back before that thread wakes to take it.
void letCollectivesRun() {
  const onesided::detail::CallLock::Released released(&state().callLock);
  std::this_thread::yield();
}

/// Polls the engine once (messages that arrived complete receives), if it may matter; lets
/// unfinished nonblocking collectives run.
void pollMessages(int count, const MPI_Request reqs[]) {
  bool polled = false;
  bool yielded = false;
  for (int i = 0; i < count && !(polled && yielded); ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    const RequestEntry& e = state().requests.at(reqs[i]);
    if (!polled && e.active && e.msg != nullptr && !e.msg->complete) {
      engine().poll();
      polled = true;
    }
    if (!yielded && e.active && e.isColl() && !e.coll->done()) {
      letCollectivesRun();  // (the table may move meanwhile: `e` is not used after)
      yielded = true;
    }
  }
}

/// The indices of the active requests that are done (ready: for the Test family).
std::vector<int> doneIndices(int count, const MPI_Request reqs[], bool forTest) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    const RequestEntry& e = state().requests.at(reqs[i]);
    if (!e.active) continue;
    if (forTest ? ready(e) : isDone(e)) out.push_back(i);
  }
  return out;
}

/// Waits until some active request of the array is done (driving progress); returns them.
std::vector<int> waitSome(int count, const MPI_Request reqs[]) {
  pollMessages(count, reqs);
  std::vector<int> done = doneIndices(count, reqs, false);
  if (!done.empty()) return done;
  // An RMA request completes by a flush, which needs no remote CPU: the first active one, then.
  for (int i = 0; i < count; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    const RequestEntry& e = state().requests.at(reqs[i]);
    if (e.active && e.isRma()) return {i};
  }
  context().waitUntil([&] {
    engine().poll();
    done = doneIndices(count, reqs, false);
    return !done.empty();
  });
  return done;
}

/// MPI_Waitsome / MPI_Testsome: the completed requests of the array into indices / statuses;
/// returns their number or MPI_UNDEFINED when no request is active.
int some(int incount, MPI_Request reqs[], int indices[], MPI_Status statuses[], bool block,
         int* outcount) {
  if (!checkArray(incount, reqs)) return MPI_UNDEFINED;
  if (incount > 0) requireArg(indices, "array_of_indices");
  std::vector<int> done;
  if (block) {
    done = waitSome(incount, reqs);
  } else {
    pollMessages(incount, reqs);
    done = doneIndices(incount, reqs, true);
  }
  Errors errors;
  int n = 0;
  for (int i : done) {
    std::string why;
    MPI_Status* st = statusAt(statuses, n);
    const int err = finish(&reqs[i], st, &why);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
    errors.note(err, i, why);
    indices[n++] = i;
  }
  *outcount = n;  // also with MPI_ERR_IN_STATUS
  errors.raise();
  return n;
}

/// MPI_Waitany / MPI_Testany: a completed request's index, or MPI_UNDEFINED (with an empty
/// status) when none is active; `flag` (Testany) is false when none is complete yet.
int any(int count, MPI_Request reqs[], MPI_Status* status, bool block, int* flag, int* index) {
  if (!checkArray(count, reqs)) {
    emptyStatus(status);
    if (flag != nullptr) *flag = 1;
    return MPI_UNDEFINED;
  }
  std::vector<int> done;
  if (block) {
    done = waitSome(count, reqs);
  } else {
    pollMessages(count, reqs);
    done = doneIndices(count, reqs, true);
    if (done.empty()) {
      *flag = 0;
      return MPI_UNDEFINED;
    }
    *flag = 1;
  }
  const int i = done.front();
  std::string why;
  *index = i;  // also when the request failed (MPI-3.1 §3.7.5)
  throwIf(finish(&reqs[i], status, &why), why);
  return i;
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
  return call("MPI_Wait", capi::onOf(request), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::finishOrEmpty(request, status);
  });
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return call("MPI_Test", capi::onOf(request), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::requireArg(flag, "flag");
    capi::RequestEntry* e = capi::lookup(*request);
    if (capi::activeEntry(e) && e->msg != nullptr && !e->msg->complete) {
      capi::engine().poll();
      if (!e->msg->complete) {
        *flag = 0;
        return;
      }
    }
    if (capi::activeEntry(e) && e->isColl() && !e->coll->done()) {
      capi::letCollectivesRun();
      e = capi::lookup(*request);  // the table may have moved
      if (!e->coll->done()) {
        *flag = 0;
        return;
      }
    }
    if (capi::activeEntry(e) && e->isGreq() && !e->greq->complete.load()) {
      capi::letCollectivesRun();  // the thread that will complete it may want the call lock
      *flag = 0;
      return;
    }
    *flag = 1;
    capi::finishOrEmpty(request, status);
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
    capi::pollMessages(count, array_of_requests);
    for (int i = 0; i < count; ++i) {
      const capi::RequestEntry* e = capi::lookup(array_of_requests[i], i);
      if (capi::activeEntry(e) && !capi::ready(*e)) {
        *flag = 0;
        return;
      }
    }
    *flag = 1;
    capi::finishAll(count, array_of_requests, array_of_statuses);
  });
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  return call("MPI_Waitany", On::none(), [&] {
    capi::requireArg(index, "index");
    *index = capi::any(count, array_of_requests, status, true, nullptr, index);
  });
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                MPI_Status* status) {
  return call("MPI_Testany", On::none(), [&] {
    capi::requireArg(index, "index");
    capi::requireArg(flag, "flag");
    *index = capi::any(count, array_of_requests, status, false, flag, index);
  });
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
  return call("MPI_Waitsome", On::none(), [&] {
    capi::requireArg(outcount, "outcount");
    *outcount =
        capi::some(incount, array_of_requests, array_of_indices, array_of_statuses, true, outcount);
  });
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[]) {
  return call("MPI_Testsome", On::none(), [&] {
    capi::requireArg(outcount, "outcount");
    *outcount = capi::some(incount, array_of_requests, array_of_indices, array_of_statuses, false,
                           outcount);
  });
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return call("MPI_Request_get_status", capi::onOf(&request), [&] {
    capi::requireInit();
    capi::requireArg(flag, "flag");
    capi::RequestEntry* e = capi::lookup(request);
    if (!capi::activeEntry(e)) {
      capi::emptyStatus(status);
      *flag = 1;
      return;
    }
    if (e->msg != nullptr && !e->msg->complete) capi::engine().poll();
    if (e->isColl() && !e->coll->done()) {
      capi::letCollectivesRun();
      e = capi::lookup(request);
    }
    if (!capi::isDone(*e)) {
      *flag = 0;
      return;
    }
    *flag = 1;
    if (e->isGreq()) {
      // MPI-3.1 §12.2: query_fn gives the status; the request stays to be completed.
      const std::shared_ptr<capi::Grequest> g = e->greq;
      const int rc = capi::grequestQuery(*g, status);
      if (rc != MPI_SUCCESS) {
        throw onesided::Error(MPI_ERR_OTHER, "the query_fn of generalized request " +
                                                 std::to_string(request) + " returned error code " +
                                                 std::to_string(rc));
      }
      return;
    }
    if (e->procNull) {
      capi::procNullStatus(status);
    } else if (e->msg != nullptr) {
      capi::p2pStatus(status, e->msg->status);
    } else {
      capi::emptyStatus(status);
    }
    // A failed collective's error is reported here too (the request stays to be completed).
    std::string why;
    if (e->isColl()) capi::throwIf(capi::collError(*e->coll, &why), why);
  });
}

int MPI_Request_free(MPI_Request* request) {
  return call("MPI_Request_free", capi::onOf(request), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    capi::RequestEntry* e = capi::lookup(*request);
    if (e == nullptr) throw onesided::Error(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    if (e->isColl()) {
      throw onesided::Error(MPI_ERR_REQUEST,
                            "request " + std::to_string(*request) +
                                " is a nonblocking collective's, which cannot be freed (MPI-3.1 "
                                "§5.12): complete it with MPI_Wait or MPI_Test");
    }
    if (e->isGreq()) {
      std::string why;
      const int err = capi::grequestRelease(*request, &why);
      *request = MPI_REQUEST_NULL;
      capi::throwIf(err, why);
      return;
    }
    // RMA: completes at the window's next flush / unlock as any other (MPI-3.1 §3.7.3). A
    // message still under way goes on; the engine keeps its request until it completes.
    if (e->msg != nullptr && !e->msg->complete) capi::engine().orphan(std::move(e->msg));
    capi::retire(*request);
    *request = MPI_REQUEST_NULL;
  });
}

}  // extern "C"
