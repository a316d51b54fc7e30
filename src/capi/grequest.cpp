// SPDX-License-Identifier: BSD-3-Clause
// Generalized requests (MPI-3.1 §12.2): requests whose operation the program runs itself and
// ends with MPI_Grequest_complete. They live in the request table beside the others, so MPI_Wait,
// MPI_Test and their kin take them in arrays; request.cpp asks here for their status and their
// end.
#include <string>

#include "capi/state.hpp"

namespace onesided::capi {
namespace {

/// The class of what a callback returned (a class, or a code of one, as an MPI call gave it to
/// the callback); MPI_ERR_OTHER for anything else.
int callbackClass(int rc) {
  const int cls = errorClassOf(rc);
  return cls == MPI_SUCCESS || cls == MPI_ERR_UNKNOWN || cls > MPI_ERR_LASTCODE ? MPI_ERR_OTHER
                                                                                : cls;
}

/// The first failure of query_fn (`queried`) and free_fn (`freed`) as a class, and its text.
int firstError(MPI_Request h, int queried, int freed, std::string* why) {
  if (queried == MPI_SUCCESS && freed == MPI_SUCCESS) return MPI_SUCCESS;
  const bool q = queried != MPI_SUCCESS;
  if (why != nullptr) {
    *why = std::string("the ") + (q ? "query_fn" : "free_fn") + " of generalized request " +
           std::to_string(h) + " returned error code " + std::to_string(q ? queried : freed);
  }
  return callbackClass(q ? queried : freed);
}

}  // namespace

int grequestQuery(const Grequest& g, MPI_Status* st) {
  MPI_Status scratch{};
  MPI_Status* s = st == MPI_STATUS_IGNORE ? &scratch : st;
  // A query_fn that sets nothing leaves an empty status, not the caller's garbage.
  s->MPI_SOURCE = MPI_UNDEFINED;
  s->MPI_TAG = MPI_UNDEFINED;
  s->onesided_count_lo = 0;
  s->onesided_count_hi = 0;
  s->onesided_cancelled = 0;
  return g.query != nullptr ? g.query(g.extraState, s) : MPI_SUCCESS;
}

int grequestFinish(MPI_Request h, MPI_Status* st, std::string* why) {
  // The callbacks may call MPI (MPI_Status_set_elements, say): this entry may move meanwhile,
  // so they run on a copy of the pointer and the entry is found again afterwards.
  const std::shared_ptr<Grequest> g = state().requests.at(h).greq;
  const int queried = grequestQuery(*g, st);
  const int freed = g->free != nullptr ? g->free(g->extraState) : MPI_SUCCESS;
  retire(h);
  return firstError(h, queried, freed, why);
}

int grequestRelease(MPI_Request h, std::string* why) {
  const std::shared_ptr<Grequest> g = state().requests.at(h).greq;
  if (!g->complete.load()) {
    g->freed = true;  // MPI_Grequest_complete frees it
    return MPI_SUCCESS;
  }
  const int freed = g->free != nullptr ? g->free(g->extraState) : MPI_SUCCESS;
  retire(h);
  return firstError(h, MPI_SUCCESS, freed, why);
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                       MPI_Request* request) {
  return call("MPI_Grequest_start", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(request, "request");
    auto g = std::make_shared<capi::Grequest>();
    g->query = query_fn;
    g->free = free_fn;
    g->cancel = cancel_fn;
    g->extraState = extra_state;
    *request = capi::state().requests.add([&](capi::RequestEntry& e) { e.greq = std::move(g); });
  });
}

int MPI_Grequest_complete(MPI_Request request) {
  return call("MPI_Grequest_complete", On::none(), [&] {
    capi::requireInit();
    capi::RequestEntry* e = capi::state().requests.find(request);
    if (e == nullptr || !e->isGreq()) {
      throw onesided::Error(MPI_ERR_REQUEST, "request " + std::to_string(request) +
                                                 " is not a live generalized request");
    }
    if (e->greq->complete.exchange(true)) {
      throw onesided::Error(MPI_ERR_REQUEST, "generalized request " + std::to_string(request) +
                                                 " was already completed");
    }
    if (e->greq->freed) {
      const std::shared_ptr<capi::Grequest> g = e->greq;
      capi::retire(request);
      const int freed = g->free != nullptr ? g->free(g->extraState) : MPI_SUCCESS;
      std::string why;
      const int err = capi::firstError(request, MPI_SUCCESS, freed, &why);
      if (err != MPI_SUCCESS) throw onesided::Error(err, why);
    }
  });
}

}  // extern "C"
