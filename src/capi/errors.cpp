// SPDX-License-Identifier: BSD-3-Clause
// Error codes, error strings and error handlers.
//
// A raised error gets its own code: class + 64 * (slot + 1), where slot indexes a ring of the
// latest messages. MPI_Error_class maps it back to the class (as MPICH's codes do), and
// MPI_Error_string returns the full message naming the call and the bad value.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>

#include "bootstrap/bootstrap.hpp"
#include "capi/state.hpp"
#include "log.hpp"

namespace onesided::capi {
namespace {

static_assert(MPI_ERR_RMA_RANGE == kErrRmaRange && MPI_ERR_RMA_SYNC == kErrRmaSync &&
              MPI_ERR_LASTCODE == kErrLastcode && MPI_ERR_NO_MEM == kErrNoMem &&
              MPI_ERR_WIN == kErrWin && MPI_ERR_DISP == kErrDisp && MPI_ERR_KEYVAL == kErrKeyval);
static_assert(MPI_MODE_NOPRECEDE == kModeNoprecede && MPI_MODE_NOSUCCEED == kModeNosucceed &&
              MPI_MODE_NOSTORE == kModeNostore && MPI_MODE_NOPUT == kModeNoput &&
              MPI_MODE_NOCHECK == kModeNocheck && MPI_PROC_NULL == kProcNull);

constexpr int kClassSpan = 64;
constexpr int kRing = 1024;

struct ErrorLog {
  std::mutex mu;
  std::array<std::string, kRing> messages;
  std::array<int, kRing> codes{};
  unsigned next = 0;

  int record(int errorClass, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu);
    unsigned slot = next++ % kRing;
    int code = errorClass + kClassSpan * static_cast<int>(slot + 1);
    messages[slot] = message;
    codes[slot] = code;
    return code;
  }
  bool find(int code, std::string& out) {
    std::lock_guard<std::mutex> lock(mu);
    int slot = code / kClassSpan - 1;
    if (slot < 0 || slot >= kRing || codes[static_cast<std::size_t>(slot)] != code) return false;
    out = messages[static_cast<std::size_t>(slot)];
    return true;
  }
};

ErrorLog& errorLog() {
  static ErrorLog l;
  return l;
}

bool validClass(int c) {
  return c == MPI_ERR_UNKNOWN || std::strcmp(errorClassName(c), "MPI_ERR_UNKNOWN") != 0;
}

/// A class, or a code this library can have returned (class + 64 * (slot + 1)).
bool validCode(int code) {
  if (code < 0) return false;
  if (code < kClassSpan) return validClass(code);
  return code / kClassSpan - 1 < kRing && validClass(code % kClassSpan);
}

const char* describe(int c) {
  switch (c) {
    case MPI_SUCCESS:
      return "no error";
    case MPI_ERR_BUFFER:
      return "invalid buffer pointer";
    case MPI_ERR_COUNT:
      return "invalid count argument";
    case MPI_ERR_TYPE:
      return "invalid datatype";
    case MPI_ERR_COMM:
      return "invalid communicator";
    case MPI_ERR_RANK:
      return "invalid rank";
    case MPI_ERR_ARG:
      return "invalid argument of some other kind";
    case MPI_ERR_OTHER:
      return "known error not in this list";
    case MPI_ERR_INTERN:
      return "internal error";
    case MPI_ERR_NO_MEM:
      return "out of memory";
    case MPI_ERR_WIN:
      return "invalid window";
    case MPI_ERR_BASE:
      return "invalid base";
    case MPI_ERR_KEYVAL:
      return "invalid keyval";
    case MPI_ERR_RMA_SYNC:
      return "wrong synchronization of RMA calls";
    case MPI_ERR_SIZE:
      return "invalid size";
    case MPI_ERR_DISP:
      return "invalid displacement";
    case MPI_ERR_ASSERT:
      return "invalid assertion";
    case MPI_ERR_RMA_RANGE:
      return "target memory is not part of the window";
    case MPI_ERR_INFO:
      return "invalid info object";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "unsupported operation";
    default:
      return "error";
  }
}

MPI_Errhandler handlerFor(On on) {
  auto& s = state();
  if (on.kind == On::kWin && on.handle > 0 && static_cast<std::size_t>(on.handle) < s.wins.size() &&
      s.wins[static_cast<std::size_t>(on.handle)]) {
    return s.wins[static_cast<std::size_t>(on.handle)]->errhandler;
  }
  if (on.kind == On::kComm && on.handle > 0 &&
      static_cast<std::size_t>(on.handle) < s.comms.size() &&
      s.comms[static_cast<std::size_t>(on.handle)].comm != nullptr && s.initialized) {
    return s.comms[static_cast<std::size_t>(on.handle)].errhandler;
  }
  // Errors not tied to a valid object are raised on MPI_COMM_WORLD (MPI-3.1 §8.3).
  return s.initialized ? s.comms[MPI_COMM_WORLD].errhandler : s.preInitErrhandler;
}

}  // namespace

int raise(On on, int errorClass, const std::string& message) noexcept {
  try {
    int code = errorLog().record(errorClass, message);
    auto& s = state();
    const int rank = s.ctx ? s.ctx->rank() : 0;
    log::capi().error("{} ({})", message, errorClassName(errorClass));
    if (handlerFor(on) == MPI_ERRORS_RETURN) return code;
    std::fprintf(stderr, "onesided: rank %d: %s (%s); aborting the job (MPI_ERRORS_ARE_FATAL)\n",
                 rank, message.c_str(), errorClassName(errorClass));
    std::fflush(stderr);
    if (s.ctx) s.ctx->bootstrap().abort(errorClass, message);
    _exit(errorClass == 0 ? 1 : errorClass);
  } catch (...) {
    std::fputs("onesided: failure while reporting an error; aborting\n", stderr);
    _exit(1);
  }
}

void checkErrhandler(MPI_Errhandler eh) {
  if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ABORT) {
    throw Error(MPI_ERR_ARG, "invalid error handler " + std::to_string(eh));
  }
}

}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Error_class(int errorcode, int* errorclass) {
  return call("MPI_Error_class", On::none(), [&] {
    capi::requireArg(errorclass, "errorclass");
    if (!capi::validCode(errorcode)) {
      throw onesided::Error(MPI_ERR_ARG, "unknown error code " + std::to_string(errorcode));
    }
    *errorclass = errorcode % capi::kClassSpan;
  });
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  return call("MPI_Error_string", On::none(), [&] {
    capi::requireArg(string, "string");
    capi::requireArg(resultlen, "resultlen");
    if (!capi::validCode(errorcode)) {
      throw onesided::Error(MPI_ERR_ARG, "unknown error code " + std::to_string(errorcode));
    }
    const int c = errorcode % capi::kClassSpan;
    std::string text;
    if (errorcode < capi::kClassSpan || !capi::errorLog().find(errorcode, text)) {
      text = std::string(onesided::errorClassName(c)) + ": " + capi::describe(c);
    } else {
      text += std::string(" (") + onesided::errorClassName(c) + ")";
    }
    std::size_t n = std::min<std::size_t>(text.size(), MPI_MAX_ERROR_STRING - 1);
    std::memcpy(string, text.data(), n);
    string[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return call("MPI_Comm_set_errhandler", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::checkErrhandler(errhandler);
    e.errhandler = errhandler;
  });
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return call("MPI_Comm_get_errhandler", On::comm(comm), [&] {
    capi::CommEntry& e = capi::commEntry(comm);
    capi::requireArg(errhandler, "errhandler");
    *errhandler = e.errhandler;
  });
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  return call("MPI_Win_set_errhandler", On::win(win), [&] {
    capi::WinEntry& e = capi::winEntry(win);
    capi::checkErrhandler(errhandler);
    e.errhandler = errhandler;
  });
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  return call("MPI_Win_get_errhandler", On::win(win), [&] {
    capi::WinEntry& e = capi::winEntry(win);
    capi::requireArg(errhandler, "errhandler");
    *errhandler = e.errhandler;
  });
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return call("MPI_Errhandler_free", On::none(), [&] {
    capi::requireArg(errhandler, "errhandler");
    capi::checkErrhandler(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;  // predefined handlers are never really freed
  });
}

}  // extern "C"
