// SPDX-License-Identifier: BSD-3-Clause
// Error codes and error strings (MPI-3.1 §8.4, §8.5); the handlers are in errhandlers.cpp.
//
// A raised error gets its own code: class + 64 * (slot + 1), where slot indexes a ring of the
// latest messages. MPI_Error_class maps it back to the class (as MPICH's codes do), and
// MPI_Error_string returns the full message naming the call and the bad value. The program's own
// classes and codes (MPI_Add_error_class / _code) count up from kFirstUserCode, above every
// code of the ring, and are looked up by value.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

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

// Above the ring's largest code, (kRing + 1) * kClassSpan - 1.
constexpr int kFirstUserCode = 0x20000;

/// The classes and codes the program added, with their strings.
struct UserCodes {
  struct Code {
    int errorClass = 0;  // itself, for a class
    std::string text;
  };
  std::map<int, Code> codes;
  int next = kFirstUserCode;
  int last = MPI_ERR_LASTCODE;  // MPI_LASTUSEDCODE

  int add(int errorClass) {
    if (next == INT_MAX) throw Error(MPI_ERR_OTHER, "no error codes are left");
    const int code = next++;
    codes[code] = Code{errorClass < 0 ? code : errorClass, {}};
    last = code;
    return code;
  }
  Code* find(int code) {
    auto it = codes.find(code);
    return it == codes.end() ? nullptr : &it->second;
  }
};

UserCodes& userCodes() {
  static UserCodes u;
  return u;
}

bool validPredefinedClass(int c) {
  return c == MPI_ERR_UNKNOWN || std::strcmp(errorClassName(c), "MPI_ERR_UNKNOWN") != 0;
}

/// A predefined class or one the program added.
bool validClass(int c) {
  if (c < kClassSpan) return c >= 0 && validPredefinedClass(c);
  const UserCodes::Code* u = userCodes().find(c);
  return u != nullptr && u->errorClass == c;
}

/// A class, a code this library can have returned (class + 64 * (slot + 1)), or one the
/// program added.
bool validCode(int code) {
  if (code < 0) return false;
  if (code < kClassSpan) return validPredefinedClass(code);
  if (code >= kFirstUserCode) return userCodes().find(code) != nullptr;
  return code / kClassSpan - 1 < kRing && validPredefinedClass(code % kClassSpan);
}

/// The class of a valid code.
int classOf(int code) {
  if (code >= kFirstUserCode) return userCodes().find(code)->errorClass;
  return code % kClassSpan;
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
    case MPI_ERR_SPAWN:
      return "error spawning processes";
    case MPI_ERR_PORT:
      return "invalid port name";
    case MPI_ERR_SERVICE:
      return "invalid service name";
    case MPI_ERR_NAME:
      return "invalid service name in MPI_Lookup_name";
    default:
      return "error";
  }
}

}  // namespace

int raise(On on, int errorClass, const std::string& message) noexcept {
  try {
    const int code = errorLog().record(errorClass, message);
    log::capi().error("{} ({})", message, errorClassName(errorClass));
    invokeErrhandler(on, code, message + " (" + errorClassName(errorClass) + ")");
    return code;
  } catch (...) {
    std::fputs("onesided: failure while reporting an error; aborting\n", stderr);
    _exit(1);
  }
}

std::string errorText(int code) {
  if (!validCode(code)) return "unknown error code " + std::to_string(code);
  if (code >= kFirstUserCode) return userCodes().find(code)->text;
  const int c = code % kClassSpan;
  std::string text;
  if (code < kClassSpan || !errorLog().find(code, text)) {
    return std::string(errorClassName(c)) + ": " + describe(c);
  }
  return text + " (" + errorClassName(c) + ")";
}

int lastUsedCode() noexcept { return userCodes().last; }

int errorClassOf(int code) noexcept { return validCode(code) ? classOf(code) : MPI_ERR_UNKNOWN; }

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
    *errorclass = capi::classOf(errorcode);
  });
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  return call("MPI_Error_string", On::none(), [&] {
    capi::requireArg(string, "string");
    capi::requireArg(resultlen, "resultlen");
    if (!capi::validCode(errorcode)) {
      throw onesided::Error(MPI_ERR_ARG, "unknown error code " + std::to_string(errorcode));
    }
    const std::string text = capi::errorText(errorcode);
    std::size_t n = std::min<std::size_t>(text.size(), MPI_MAX_ERROR_STRING - 1);
    std::memcpy(string, text.data(), n);
    string[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}

int MPI_Add_error_class(int* errorclass) {
  return call("MPI_Add_error_class", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(errorclass, "errorclass");
    *errorclass = capi::userCodes().add(-1);
  });
}

int MPI_Add_error_code(int errorclass, int* errorcode) {
  return call("MPI_Add_error_code", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(errorcode, "errorcode");
    if (errorclass == MPI_SUCCESS || !capi::validClass(errorclass)) {
      throw onesided::Error(MPI_ERR_ARG,
                            "errorclass " + std::to_string(errorclass) + " is not an error class");
    }
    *errorcode = capi::userCodes().add(errorclass);
  });
}

int MPI_Add_error_string(int errorcode, const char* string) {
  return call("MPI_Add_error_string", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(string, "string");
    // MPI-3.1 §8.5: only the program's own classes and codes take a string.
    capi::UserCodes::Code* u = capi::userCodes().find(errorcode);
    if (u == nullptr) {
      throw onesided::Error(MPI_ERR_ARG, "errorcode " + std::to_string(errorcode) +
                                             " is not a class or code MPI_Add_error_class / "
                                             "MPI_Add_error_code made");
    }
    const std::size_t len = std::strlen(string);
    if (len > MPI_MAX_ERROR_STRING - 1) {
      throw onesided::Error(MPI_ERR_ARG, "string of " + std::to_string(len) +
                                             " characters is longer than MPI_MAX_ERROR_STRING - 1");
    }
    u->text = string;
  });
}

}  // extern "C"
