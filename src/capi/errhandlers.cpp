// SPDX-License-Identifier: BSD-3-Clause
// Error handler objects (MPI-3.1 §8.3): the predefined ones and the program's, set on and got
// from communicators and windows, called for an error, and freed.
//
// A user handler's handle is kFirstUserErrhandler + i, never reused. The program's references
// (its creation, each MPI_*_get_errhandler) are counted; the communicators and windows that use
// it are not, they are looked up when the count reaches 0: a handler still in use stays, and is
// released by a later MPI_Errhandler_free or creation once nothing uses it. Handler calls are
// rare, and this keeps the communicator and window code free of handler bookkeeping.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "capi/state.hpp"

namespace onesided::capi {
namespace {

bool predefinedErrhandler(MPI_Errhandler eh) {
  return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

const char* predefinedName(MPI_Errhandler eh) {
  switch (eh) {
    case MPI_ERRORS_ARE_FATAL:
      return "MPI_ERRORS_ARE_FATAL";
    case MPI_ERRORS_RETURN:
      return "MPI_ERRORS_RETURN";
    case MPI_ERRORS_ABORT:
      return "MPI_ERRORS_ABORT";
    default:
      return "MPI_ERRHANDLER_NULL";
  }
}

/// The entry of user handler `eh`, live or not yet released; nullptr for anything else.
ErrhandlerEntry* userEntry(MPI_Errhandler eh) noexcept {
  auto& hs = state().errhandlers;
  if (eh < kFirstUserErrhandler) return nullptr;
  const auto i = static_cast<std::size_t>(eh - kFirstUserErrhandler);
  return i < hs.size() ? hs[i].get() : nullptr;
}

/// Whether a live communicator or window uses `eh`.
bool inUse(MPI_Errhandler eh) {
  const State& s = state();
  for (const CommEntry& c : s.comms) {
    if (c.comm != nullptr && c.errhandler == eh) return true;
  }
  for (const auto& w : s.wins) {
    if (w && w->errhandler == eh) return true;
  }
  return false;
}

/// Releases the user handlers that neither the program nor an object holds.
void sweep() {
  auto& hs = state().errhandlers;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    const auto eh = kFirstUserErrhandler + static_cast<MPI_Errhandler>(i);
    if (hs[i] && hs[i]->programRefs == 0 && !inUse(eh)) hs[i].reset();
  }
}

/// A handler the program may set on an object of the kind `forWin` says; MPI_ERR_ARG naming it
/// otherwise (freed, garbage, or of the other kind).
void checkSettable(MPI_Errhandler eh, bool forWin) {
  if (predefinedErrhandler(eh)) return;
  const ErrhandlerEntry* e = userEntry(eh);
  if (e == nullptr || e->programRefs == 0) {
    throw Error(MPI_ERR_ARG, "invalid error handler " + std::to_string(eh) +
                                 (eh == MPI_ERRHANDLER_NULL ? " (MPI_ERRHANDLER_NULL)" : ""));
  }
  if (e->forWin != forWin) {
    throw Error(MPI_ERR_ARG, "error handler " + std::to_string(eh) + " is a " +
                                 (e->forWin ? "window" : "communicator") + "'s, not a " +
                                 (forWin ? "window" : "communicator") + "'s");
  }
}

/// A new reference to `eh` for the program (MPI_*_get_errhandler).
MPI_Errhandler handOut(MPI_Errhandler eh) {
  if (predefinedErrhandler(eh)) {
    ++state().predefinedErrhandlerGets[static_cast<std::size_t>(eh)];
  } else if (ErrhandlerEntry* e = userEntry(eh); e != nullptr) {
    ++e->programRefs;
  }
  return eh;
}

MPI_Errhandler create(MPI_Comm_errhandler_function* fn, bool forWin) {
  requireInit();
  requireArg(reinterpret_cast<const void*>(fn),
             forWin ? "win_errhandler_fn" : "comm_errhandler_fn");
  sweep();
  auto e = std::make_unique<ErrhandlerEntry>();
  e->forWin = forWin;
  e->fn = fn;
  auto& hs = state().errhandlers;
  hs.push_back(std::move(e));
  return kFirstUserErrhandler + static_cast<MPI_Errhandler>(hs.size() - 1);
}

/// The handler an error on `on` goes to, and the handle it is called with: the object's, or
/// MPI_COMM_WORLD's when `on` is no live object (MPI-3.1 §8.3).
struct Target {
  MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
  int handle = MPI_COMM_WORLD;
};

Target targetOf(On on) {
  auto& s = state();
  if (on.kind == On::kWin && on.handle > 0 && static_cast<std::size_t>(on.handle) < s.wins.size() &&
      s.wins[static_cast<std::size_t>(on.handle)]) {
    return {s.wins[static_cast<std::size_t>(on.handle)]->errhandler, on.handle};
  }
  if (on.kind == On::kComm && on.handle > 0 &&
      static_cast<std::size_t>(on.handle) < s.comms.size() &&
      s.comms[static_cast<std::size_t>(on.handle)].comm != nullptr && s.initialized) {
    return {s.comms[static_cast<std::size_t>(on.handle)].errhandler, on.handle};
  }
  return {s.initialized ? s.comms[MPI_COMM_WORLD].errhandler : s.preInitErrhandler, MPI_COMM_WORLD};
}

}  // namespace

void invokeErrhandler(On on, int code, const std::string& message) {
  const Target t = targetOf(on);
  if (t.eh == MPI_ERRORS_RETURN) return;
  if (const ErrhandlerEntry* e = userEntry(t.eh); e != nullptr) {
    // The handler may call MPI (MPI_Error_string, MPI_Abort ...): the call lock is reentrant.
    int handle = t.handle;
    int c = code;
    e->fn(&handle, &c);
    return;
  }
  // MPI_ERRORS_ARE_FATAL ends every process; MPI_ERRORS_ABORT those of the object's
  // communicator, as MPI_Abort does, which here is the job too.
  auto& s = state();
  const int rank = s.ctx ? s.ctx->rank() : 0;
  std::fprintf(stderr, "onesided: rank %d: %s; aborting the job (%s)\n", rank, message.c_str(),
               predefinedName(t.eh));
  std::fflush(stderr);
  const int errorClass = errorClassOf(code);
  if (s.ctx) s.ctx->bootstrap().abort(errorClass, message);
  _exit(errorClass > 0 && errorClass < 256 ? errorClass : 1);
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* comm_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  return call("MPI_Comm_create_errhandler", On::none(), [&] {
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::create(comm_errhandler_fn, false);
  });
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                              MPI_Errhandler* errhandler) {
  return call("MPI_Win_create_errhandler", On::none(), [&] {
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::create(win_errhandler_fn, true);
  });
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Comm_set_errhandler", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::checkSettable(errhandler, false);
    e.errhandler = errhandler;
  });
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call("MPI_Comm_get_errhandler", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::handOut(e.errhandler);
  });
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  return call("MPI_Win_set_errhandler", On::win(win), [&] {
    capi::WinEntry& e = capi::winEntry(win);
    capi::checkSettable(errhandler, true);
    e.errhandler = errhandler;
  });
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  return call("MPI_Win_get_errhandler", On::win(win), [&] {
    capi::WinEntry& e = capi::winEntry(win);
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::handOut(e.errhandler);
  });
}

// MPI-3.1 §8.3.6: the call returns MPI_SUCCESS once the handler has returned; the code is the
// program's (any value: the handler receives it as is).
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  return call("MPI_Comm_call_errhandler", On::comm(comm), [&] {
    capi::commEntry(comm);
    capi::invokeErrhandler(On::comm(comm), errorcode,
                           "MPI_Comm_call_errhandler: error code " + std::to_string(errorcode) +
                               ": " + capi::errorText(errorcode));
  });
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  return call("MPI_Win_call_errhandler", On::win(win), [&] {
    capi::winEntry(win);
    capi::invokeErrhandler(On::win(win), errorcode,
                           "MPI_Win_call_errhandler: error code " + std::to_string(errorcode) +
                               ": " + capi::errorText(errorcode));
  });
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_free", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(errhandler, "errhandler");
    const MPI_Errhandler eh = *errhandler;
    if (capi::predefinedErrhandler(eh)) {
      // Only the references MPI_*_get_errhandler handed out (Open MPI does the same).
      int& gets = capi::state().predefinedErrhandlerGets[static_cast<std::size_t>(eh)];
      if (gets == 0) {
        throw onesided::Error(MPI_ERR_ARG, std::string("the predefined error handler ") +
                                               capi::predefinedName(eh) + " cannot be freed");
      }
      --gets;
    } else {
      capi::ErrhandlerEntry* e = capi::userEntry(eh);
      if (e == nullptr || e->programRefs == 0) {
        throw onesided::Error(
            MPI_ERR_ARG,
            "invalid error handler " + std::to_string(eh) +
                (eh == MPI_ERRHANDLER_NULL ? " (MPI_ERRHANDLER_NULL)" : " (freed, or never made)"));
      }
      --e->programRefs;
      capi::sweep();
    }
    *errhandler = MPI_ERRHANDLER_NULL;
  });
}

// MPI-1's names: communicator handlers.
int MPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_create", On::none(), [&] {
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::create(function, false);
  });
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Errhandler_set", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::checkSettable(errhandler, false);
    e.errhandler = errhandler;
  });
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_get", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(errhandler, "errhandler");
    *errhandler = capi::handOut(e.errhandler);
  });
}

}  // extern "C"
