// SPDX-License-Identifier: BSD-3-Clause
#include "counters.hpp"

namespace onesided::counters {

namespace {
Counters gCounters;  // constant-initialised: usable before MPI_Init and after MPI_Finalize
}  // namespace

Counters& get() noexcept { return gCounters; }

}  // namespace onesided::counters
