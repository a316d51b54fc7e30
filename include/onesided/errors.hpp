// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <stdexcept>
#include <string>

namespace onesided {

/// MPI error classes. The numbers are the ones <mpi.h> gives the MPI_ERR_* macros (checked by a
/// static_assert in src/capi), so a class travels unchanged between the C++ and the C API.
enum ErrorClass : int {
  kSuccess = 0,
  kErrBuffer = 1,
  kErrCount = 2,
  kErrType = 3,
  kErrTag = 4,
  kErrComm = 5,
  kErrRank = 6,
  kErrRequest = 7,
  kErrRoot = 8,
  kErrGroup = 9,
  kErrOp = 10,
  kErrTopology = 11,
  kErrDims = 12,
  kErrArg = 13,
  kErrUnknown = 14,
  kErrTruncate = 15,
  kErrOther = 16,
  kErrIntern = 17,
  kErrInStatus = 18,
  kErrPending = 19,
  kErrAccess = 20,
  kErrAmode = 21,
  kErrBadFile = 22,
  kErrConversion = 23,
  kErrDupDatarep = 24,
  kErrFileExists = 25,
  kErrFileInUse = 26,
  kErrFile = 27,
  kErrInfo = 28,
  kErrInfoKey = 29,
  kErrInfoValue = 30,
  kErrInfoNokey = 31,
  kErrIo = 32,
  kErrName = 33,
  kErrNoMem = 34,
  kErrNotSame = 35,
  kErrNoSpace = 36,
  kErrNoSuchFile = 37,
  kErrPort = 38,
  kErrQuota = 39,
  kErrReadOnly = 40,
  kErrService = 41,
  kErrSpawn = 42,
  kErrUnsupportedDatarep = 43,
  kErrUnsupportedOperation = 44,
  kErrWin = 45,
  kErrBase = 46,
  kErrLocktype = 47,
  kErrKeyval = 48,
  kErrRmaConflict = 49,
  kErrRmaSync = 50,
  kErrSize = 51,
  kErrDisp = 52,
  kErrAssert = 53,
  kErrRmaRange = 55,
  kErrRmaAttach = 56,
  kErrRmaShared = 57,
  kErrRmaFlavor = 58,
  kErrProcAborted = 59,
  // 60-75: MPI_T_ERR_* (mpi.h), which MPI_T calls return directly.
  kErrLastcode = 75,
};

/// The one exception type of the C++ API. what() names the call and the bad value;
/// errorClass() is the MPI error class the C API returns for the same failure.
class Error : public std::runtime_error {
 public:
  Error(int errorClass, const std::string& what) : std::runtime_error(what), class_(errorClass) {}
  [[nodiscard]] int errorClass() const noexcept { return class_; }

 private:
  int class_;
};

/// Name of an error class ("MPI_ERR_RMA_RANGE"); "MPI_ERR_UNKNOWN" for anything else.
const char* errorClassName(int errorClass) noexcept;

}  // namespace onesided
