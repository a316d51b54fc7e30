// SPDX-License-Identifier: BSD-3-Clause
// The remote layout of point-to-point messaging: one region per rank, registered by the
// transport (on-node peers map it and store into it; others put), laid out as
//
//   [identity: one line][consumed: one line per peer][rings: one per peer]
//
// Ring s at rank r belongs to the pair (s -> r) alone: rank s writes messages into it, rank r
// reads them in order and reports the cells it has read in s's consumed line for r (every
// quarter ring), which lets s reuse them. A message is a Header and its payload, in whole cells,
// never wrapping around the ring's end (a kPad message fills the cells before the end instead).
// A message announces itself by its stamp (the sender's message count to r, from 1), written
// last: with release order on the load / store path, after a fence on the put path. Stamps only
// grow, so a stale header a lap behind never looks like the next message and nothing is cleared.
#pragma once

#include <cstddef>
#include <cstdint>

namespace onesided::p2p::wire {

/// The ring's granule: a message takes whole cells.
constexpr std::size_t kCell = 64;

/// The region's first line: what a peer checks before it reads this rank's memory with
/// cross-memory attach (the same nonce at the same address through the pid).
struct Identity {
  std::uint64_t nonce;
  std::int64_t pid;
  std::uint64_t reserved[6];
};
static_assert(sizeof(Identity) == kCell);

/// Peer s's line in my region: cells of my ring in s's region that s has read (s writes it).
struct Consumed {
  std::uint64_t cells;
  std::uint64_t reserved[7];
};
static_assert(sizeof(Consumed) == kCell);

enum class Kind : std::uint32_t {
  kEager = 1,  ///< the payload is the message's packed data
  kRts = 2,    ///< ready to send: the payload is an Rts, the data stays in the sender's memory
  kFin = 3,    ///< the receiver has read a kRts message's data (sendId names it)
  kAck = 4,    ///< a synchronous send was matched (sendId names it)
  kPad = 5,    ///< fills the ring's cells up to its end; the next message starts at cell 0
  /// MPI_Cancel of a send the receiver has seen but may not have matched (a kRts, or a kEager
  /// with kSync): the receiver drops it if no receive took it yet and answers kCancelled, else
  /// kCancelRefused (the kFin or kAck comes, or came, as usual).
  kCancel = 6,
  kCancelled = 7,
  kCancelRefused = 8,
};

/// kEager with this flag: the sender waits for a kAck once a receive has matched it.
constexpr std::uint32_t kSync = 1;

/// A message's first 48 bytes.
struct Header {
  std::uint64_t stamp;  ///< the sender's message count to this rank, from 1; written last
  Kind kind;
  std::uint32_t flags;
  std::uint64_t context;  ///< the communicator's point-to-point context (Comm::p2pContext)
  std::int32_t tag;
  std::int32_t source;   ///< the sender's rank in that communicator
  std::uint64_t bytes;   ///< the message's packed bytes (kEager: the payload's length)
  std::uint64_t sendId;  ///< the sender's name for the send (kRts, kSync, kFin, kAck)
};
static_assert(sizeof(Header) == 48);
static_assert(offsetof(Header, stamp) == 0);

/// kRts's payload: where the data is, and how to reach it.
struct Rts {
  std::uint64_t addr;  ///< the packed data's address in the sender
  /// 0: read it with cross-memory attach (or a plain copy between ranks of one process);
  /// otherwise the length of the packed remote key that follows.
  std::uint64_t keyBytes;
};
static_assert(sizeof(Rts) == 16);

}  // namespace onesided::p2p::wire
