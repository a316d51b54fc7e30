// SPDX-License-Identifier: BSD-3-Clause
// The rendezvous protocol between a rank (src/bootstrap/tcp.cpp) and onesided-run
// (src/tools/onesided_run.cpp). Every message is a Header followed by `len` payload bytes.
#pragma once

#include <cstdint>

namespace onesided::bootstrap::wire {

enum class Type : std::uint32_t {
  kHello = 1,      // rank -> launcher: payload = int32 rank (first message)
  kAllgather = 2,  // rank -> launcher: payload = this rank's blob
                   // launcher -> rank: payload = for each rank: uint64 len, bytes
  kFinalize = 3,   // rank -> launcher: the rank ends normally
  kAbort = 4,      // rank -> launcher: payload = int32 code, then message text
};

struct Header {
  Type type;
  std::uint32_t reserved;
  std::uint64_t len;
};
static_assert(sizeof(Header) == 16);

}  // namespace onesided::bootstrap::wire
