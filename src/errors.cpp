// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/errors.hpp"

namespace onesided {

const char* errorClassName(int errorClass) noexcept {
  switch (errorClass) {
    case kSuccess:
      return "MPI_SUCCESS";
    case kErrBuffer:
      return "MPI_ERR_BUFFER";
    case kErrCount:
      return "MPI_ERR_COUNT";
    case kErrType:
      return "MPI_ERR_TYPE";
    case kErrTag:
      return "MPI_ERR_TAG";
    case kErrComm:
      return "MPI_ERR_COMM";
    case kErrRank:
      return "MPI_ERR_RANK";
    case kErrRequest:
      return "MPI_ERR_REQUEST";
    case kErrRoot:
      return "MPI_ERR_ROOT";
    case kErrGroup:
      return "MPI_ERR_GROUP";
    case kErrOp:
      return "MPI_ERR_OP";
    case kErrTopology:
      return "MPI_ERR_TOPOLOGY";
    case kErrDims:
      return "MPI_ERR_DIMS";
    case kErrArg:
      return "MPI_ERR_ARG";
    case kErrUnknown:
      return "MPI_ERR_UNKNOWN";
    case kErrTruncate:
      return "MPI_ERR_TRUNCATE";
    case kErrOther:
      return "MPI_ERR_OTHER";
    case kErrIntern:
      return "MPI_ERR_INTERN";
    case kErrInStatus:
      return "MPI_ERR_IN_STATUS";
    case kErrPending:
      return "MPI_ERR_PENDING";
    case kErrInfo:
      return "MPI_ERR_INFO";
    case kErrInfoKey:
      return "MPI_ERR_INFO_KEY";
    case kErrInfoValue:
      return "MPI_ERR_INFO_VALUE";
    case kErrInfoNokey:
      return "MPI_ERR_INFO_NOKEY";
    case kErrNoMem:
      return "MPI_ERR_NO_MEM";
    case kErrNotSame:
      return "MPI_ERR_NOT_SAME";
    case kErrName:
      return "MPI_ERR_NAME";
    case kErrPort:
      return "MPI_ERR_PORT";
    case kErrService:
      return "MPI_ERR_SERVICE";
    case kErrSpawn:
      return "MPI_ERR_SPAWN";
    case kErrUnsupportedOperation:
      return "MPI_ERR_UNSUPPORTED_OPERATION";
    case kErrWin:
      return "MPI_ERR_WIN";
    case kErrBase:
      return "MPI_ERR_BASE";
    case kErrLocktype:
      return "MPI_ERR_LOCKTYPE";
    case kErrKeyval:
      return "MPI_ERR_KEYVAL";
    case kErrRmaConflict:
      return "MPI_ERR_RMA_CONFLICT";
    case kErrRmaSync:
      return "MPI_ERR_RMA_SYNC";
    case kErrSize:
      return "MPI_ERR_SIZE";
    case kErrDisp:
      return "MPI_ERR_DISP";
    case kErrAssert:
      return "MPI_ERR_ASSERT";
    case kErrRmaRange:
      return "MPI_ERR_RMA_RANGE";
    case kErrRmaAttach:
      return "MPI_ERR_RMA_ATTACH";
    case kErrRmaShared:
      return "MPI_ERR_RMA_SHARED";
    case kErrRmaFlavor:
      return "MPI_ERR_RMA_FLAVOR";
    case kErrProcAborted:
      return "MPI_ERR_PROC_ABORTED";
    default:
      return "MPI_ERR_UNKNOWN";
  }
}

}  // namespace onesided
