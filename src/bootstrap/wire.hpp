// SPDX-License-Identifier: BSD-3-Clause
// The rendezvous protocol between a rank (src/bootstrap/tcp.cpp) and onesided-run
// (src/tools/onesided_run.cpp). Every message is a Header followed by `len` payload bytes.
//
// Authentication: onesided-run makes a secret of kSecretBytes random bytes per job and gives it
// to its ranks only through their environment (ONESIDED_SECRET, hex). On every connection:
//   launcher -> rank  kChallenge: a fresh random nonce L
//   rank -> launcher  kHello: rank, a fresh random nonce R, HMAC-SHA256(secret, kRankLabel ||
//                     L || R || rank || jobid)
//   launcher -> rank  kWelcome: HMAC-SHA256(secret, kLauncherLabel || L || R || rank || jobid),
//                     or kRefused with the reason, and the connection closed.
// Each side proves the secret to the other over nonces it did not choose, so a recorded
// exchange replays nowhere, and the secret never travels. The launcher reads nothing else from
// a connection before the rank's proof checks out; it drops one that fails it, sends anything
// else first, or has not proved itself within a few seconds. Every message type has a maximum
// length (maxLenFromRank), checked before any payload is buffered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "bootstrap/hmac.hpp"

namespace onesided::bootstrap::wire {

enum class Type : std::uint32_t {
  kHello = 1,      // rank -> launcher: payload = int32 rank, nonce, proof (the first message)
  kAllgather = 2,  // rank -> launcher: payload = this rank's blob
                   // launcher -> rank: payload = for each rank: uint64 len, bytes
  kFinalize = 3,   // rank -> launcher: the rank ends normally
  kAbort = 4,      // rank -> launcher: payload = int32 code, then message text
  kChallenge = 5,  // launcher -> rank: payload = kNonceBytes random bytes (first message)
  kRefused = 6,    // launcher -> rank: payload = why the hello was refused (text); then closed
  kWelcome = 7,    // launcher -> rank: payload = the launcher's proof; the rank is connected
};

struct Header {
  Type type;
  std::uint32_t reserved;
  std::uint64_t len;
};
static_assert(sizeof(Header) == 16);

constexpr std::size_t kSecretBytes = 32;  // 256 bits; ranks accept >= kMinSecretBytes
constexpr std::size_t kMinSecretBytes = 16;
constexpr std::size_t kNonceBytes = 32;
constexpr std::size_t kProofBytes = 32;
constexpr std::size_t kHelloLen = 4 + kNonceBytes + kProofBytes;
/// One rank's allgather blob (transport addresses, region keys: a few KiB in practice).
constexpr std::uint64_t kMaxBlob = 16u << 20;
/// MPI_Abort's text is cut to this.
constexpr std::uint64_t kMaxAbortText = 4096;
constexpr std::string_view kRankLabel = "onesided-rendezvous-v1 rank";
constexpr std::string_view kLauncherLabel = "onesided-rendezvous-v1 launcher";

/// The largest payload a rank may send with `t` (0 for a type a rank never sends).
constexpr std::uint64_t maxLenFromRank(Type t) {
  switch (t) {
    case Type::kHello:
      return kHelloLen;
    case Type::kAllgather:
      return kMaxBlob;
    case Type::kFinalize:
      return 0;
    case Type::kAbort:
      return 4 + kMaxAbortText;
    default:
      return 0;
  }
}

/// True when a rank may send a message of type `t` at all.
constexpr bool knownFromRank(Type t) {
  return t == Type::kHello || t == Type::kAllgather || t == Type::kFinalize || t == Type::kAbort;
}

/// The proof a rank sends in kHello (label kRankLabel) or the launcher in kWelcome
/// (kLauncherLabel): L is the launcher's nonce, R the rank's.
inline Digest proof(std::string_view label, std::span<const std::byte> secret,
                    std::span<const std::byte> launcherNonce, std::span<const std::byte> rankNonce,
                    std::int32_t rank, std::string_view jobid) {
  std::byte r[4];
  std::memcpy(r, &rank, 4);
  return hmacSha256(secret, {std::as_bytes(std::span(label.data(), label.size())), launcherNonce,
                             rankNonce, std::span<const std::byte>(r, 4),
                             std::as_bytes(std::span(jobid.data(), jobid.size()))});
}

}  // namespace onesided::bootstrap::wire
