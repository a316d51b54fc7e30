// SPDX-License-Identifier: BSD-3-Clause
// Reading ONESIDED_* numeric settings: one parser, so every setting refuses a bad value alike.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string>

#include "onesided/errors.hpp"

namespace onesided::detail {

/// The environment variable `name` as a number in [lo, hi], or `dflt` when unset or empty;
/// anything else is MPI_ERR_ARG naming the variable, its value and the range.
inline std::size_t envSize(const char* name, std::size_t dflt, std::size_t lo, std::size_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || *v == '-' || n < lo || n > hi) {
    throw Error(kErrArg, std::string(name) + "=" + v + ": expected a number from " +
                             std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<std::size_t>(n);
}

}  // namespace onesided::detail
