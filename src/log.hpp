// SPDX-License-Identifier: BSD-3-Clause
// One spdlog logger per subsystem, off by default. ONESIDED_LOG=debug, or per subsystem
// ONESIDED_LOG=warn,ucx=trace (spdlog's level syntax), turns them on.
#pragma once

#include <spdlog/spdlog.h>

namespace onesided::log {

/// Creates the loggers once per process (idempotent, thread-safe) and applies ONESIDED_LOG.
void init();
/// Sets the rank shown in every line of this process's logs (the C API calls it at MPI_Init).
void setRank(int rank);

spdlog::logger& core();
spdlog::logger& ucx();
spdlog::logger& verbs();
spdlog::logger& coll();
spdlog::logger& capi();
spdlog::logger& boot();

}  // namespace onesided::log
