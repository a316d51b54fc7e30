// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), self-contained: onesided-run's rendezvous
// authenticates every connection with them (wire.hpp) and no crypto library is a dependency.
// Tested against the FIPS 180-4 examples and RFC 4231's HMAC vectors (tests/unit/hmac_test.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace onesided::bootstrap {

using Digest = std::array<std::byte, 32>;

class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::byte> data);
  void update(std::string_view s) { update(std::as_bytes(std::span(s.data(), s.size()))); }
  /// The digest of everything passed to update(); the object is then spent.
  Digest finish();

 private:
  void block(const std::byte* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::byte, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;  // bytes
};

Digest sha256(std::span<const std::byte> data);

/// HMAC-SHA256(key, concatenation of `parts`).
Digest hmacSha256(std::span<const std::byte> key,
                  std::initializer_list<std::span<const std::byte>> parts);

/// Equal sizes and bytes, in a time that depends on the sizes only.
bool equalConstantTime(std::span<const std::byte> a, std::span<const std::byte> b);

/// Lower-case hex of `data`.
std::string toHex(std::span<const std::byte> data);
/// The bytes of a hex string (either case); false when it is not one (odd length, other chars).
bool fromHex(std::string_view hex, std::vector<std::byte>& out);

}  // namespace onesided::bootstrap
