// SPDX-License-Identifier: BSD-3-Clause
// Byte records that communicator construction moves between ranks (intercommunicators,
// MPI_Comm_create_group): plain values, and lists of blobs packed into one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "onesided/errors.hpp"

namespace onesided::detail {

template <class T>
void put(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

/// The value at `at` (advanced past it); kErrIntern when the record is short.
template <class T>
T take(const std::vector<std::byte>& in, std::size_t& at) {
  T v{};
  if (at + sizeof v > in.size()) throw Error(kErrIntern, "a short communicator record");
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

/// Blobs in one: a count, then each one's size and bytes.
inline std::vector<std::byte> packBlobs(const std::vector<std::vector<std::byte>>& blobs) {
  std::vector<std::byte> out;
  put(out, static_cast<std::uint64_t>(blobs.size()));
  for (const auto& b : blobs) {
    put(out, static_cast<std::uint64_t>(b.size()));
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

inline std::vector<std::vector<std::byte>> unpackBlobs(const std::vector<std::byte>& in) {
  std::size_t at = 0;
  const auto n = take<std::uint64_t>(in, at);
  std::vector<std::vector<std::byte>> out;
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto len = take<std::uint64_t>(in, at);
    if (at + len > in.size()) throw Error(kErrIntern, "a short communicator record");
    out.emplace_back(in.begin() + static_cast<std::ptrdiff_t>(at),
                     in.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  return out;
}

}  // namespace onesided::detail
