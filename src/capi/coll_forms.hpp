// SPDX-License-Identifier: BSD-3-Clause
// The two forms of a collective's binding, shared by coll.cpp and topo.cpp: a `prepare`
// function resolves the handles on the calling thread (their errors are the call's) and returns
// the job that runs the algorithm, at once (blocking) or on the communicator's queue (the
// I-form, collectives/async.hpp). A job keeps the derived datatypes it uses alive: the program
// may free their handles while the operation runs.
#pragma once

#include <memory>
#include <string>

#include "capi/state.hpp"
#include "collectives/channel.hpp"

namespace onesided::capi {

/// A datatype argument of a job: the type, and a reference holding a derived one alive.
struct TypeArg {
  const Datatype* ptr = nullptr;
  std::shared_ptr<const Datatype> keep;
};
inline TypeArg typeArg(MPI_Datatype t) {
  if (const Datatype* d = Datatype::predefined(t); d != nullptr) [[likely]]
    return {d, nullptr};
  const std::shared_ptr<Datatype>& d = derivedEntry(t);
  return {d.get(), d};
}
inline TypeArg typeIf(bool significant, MPI_Datatype t) {
  return significant ? typeArg(t) : TypeArg{};
}

/// What a collective runs on: an intracommunicator, or an intercommunicator (`ic` set; `c` is
/// then its local group).
struct Target {
  Comm* c = nullptr;
  coll::Inter* ic = nullptr;
};

/// The blocking form: the job runs now, counted as one call of the channel even when a check
/// fails (its members stay in step).
template <class Prepare>
void blocking(MPI_Comm comm, Prepare&& prepare) {
  Comm& c = collComm(comm);
  coll::Inter* ic = interOf(comm);
  const onesided::detail::Entry entry(c.channel());
  prepare(Target{&c, ic})();
}

/// The nonblocking form: the job goes to the communicator's queue, `*request` completes with it.
/// An error the job meets is the completion call's, named after the operation.
template <class Prepare>
void nonblocking(const char* name, MPI_Comm comm, MPI_Request* request, Prepare&& prepare) {
  requireArg(request, "request");
  Comm& c = capi::comm(comm);
  auto job = prepare(Target{&c, interOf(comm)});
  std::shared_ptr<coll::AsyncOp> op =
      asyncQueue(comm).post([&c, name, job = std::move(job)]() mutable {
        const onesided::detail::Entry entry(c.channel());
        try {
          job();
        } catch (const Error& e) {
          throw Error(e.errorClass(), std::string(name) + ": " + e.what());
        }
      });
  *request = addCollRequest(comm, std::move(op));
}

}  // namespace onesided::capi
