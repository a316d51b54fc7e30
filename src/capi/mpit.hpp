// SPDX-License-Identifier: BSD-3-Clause
// The MPI tool information interface's state (MPI-3.1 §14.3): its own, apart from the MPI
// state, since MPI_T works before MPI_Init and after MPI_Finalize. Its calls return their
// MPI_T_ERR_* code directly (no error handler) and take one mutex: tools may call from any
// thread, MPI_T_init_thread provides MPI_THREAD_MULTIPLE.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

#include "settings.hpp"

namespace onesided::capi::mpit {

/// A performance variable's handle: which variable, in which session, and what the session has
/// seen of it (a non-continuous one counts only while started).
struct PvarHandle {
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  int pvar = -1;
  bool started = false;
  std::uint64_t accum = 0;  // counted while started before the last stop (or written)
  std::uint64_t mark = 0;   // the counter when last started (or reset while started)
};

struct Tool {
  std::mutex mutex;
  int inits = 0;  // MPI_T_init_thread less MPI_T_finalize calls
  // Handles index these; [0] is the null handle; freed ones stay empty (never reused).
  std::vector<int> cvarHandles{-1};  // the cvar's index, -1 freed
  std::vector<PvarHandle> pvarHandles{PvarHandle{}};
  std::vector<bool> sessions{false};  // live
};
Tool& tool() noexcept;

/// Runs `fn` (returning an MPI_T code) under the tool's mutex once MPI_T is initialised;
/// exceptions become codes: MPI_T calls never raise through an error handler.
template <class Fn>
int call(Fn&& fn) noexcept {
  try {
    Tool& t = tool();
    const std::lock_guard<std::mutex> lock(t.mutex);
    if (t.inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
    return fn(t);
  } catch (const std::bad_alloc&) {
    return MPI_T_ERR_MEMORY;
  } catch (...) {
    return MPI_ERR_INTERN;
  }
}

/// MPI-3.1 §14.3.3's convention for returned strings: `len` null, nothing; `out` null or *len
/// zero, *len gets the length the string needs (its terminating null included); otherwise up
/// to *len - 1 characters and a null, and *len the characters stored, null included.
void copyString(std::string_view s, char* out, int* len) noexcept;

/// The control variables: the settings that are not launcher-internal, as indices into
/// settings::all(), in the table's order.
const std::vector<int>& cvarSettings();

/// The categories (one per settings::Category, in its order).
struct CategoryInfo {
  const char* name;
  const char* desc;
};
const std::vector<CategoryInfo>& categories();

/// The performance variables.
struct PvarInfo {
  const char* name;
  int varClass;  // MPI_T_PVAR_CLASS_*
  int verbosity;
  settings::Category category;
  const char* desc;
  bool continuous;  // counts without a start (and cannot be started or stopped)
  bool readonly;    // cannot be written or reset
  bool seconds;     // a timer: nanoseconds, shown as seconds in an MPI_DOUBLE
};
const std::vector<PvarInfo>& pvars();
/// Performance variable `i`'s counter now.
std::uint64_t pvarValue(int i) noexcept;

}  // namespace onesided::capi::mpit
