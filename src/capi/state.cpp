// SPDX-License-Identifier: BSD-3-Clause
#include "capi/state.hpp"

namespace onesided::capi {

State& state() {
  // Never destroyed: a program that exits without MPI_Finalize must not run transport teardown
  // from a static destructor (it can wait on peers); the kernel reclaims everything instead.
  static State* s = new State;  // NOLINT(cppcoreguidelines-owning-memory)
  return *s;
}

void requireInit() {
  auto& s = state();
  if (!s.initialized) throw Error(MPI_ERR_OTHER, "called before MPI_Init");
  if (s.finalized) throw Error(MPI_ERR_OTHER, "called after MPI_Finalize");
}

Context& context() {
  requireInit();
  return *state().ctx;
}

CommEntry& commEntry(MPI_Comm comm) {
  requireInit();
  if (comm == MPI_COMM_NULL) throw Error(MPI_ERR_COMM, "communicator is MPI_COMM_NULL");
  if (comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF) {
    throw Error(MPI_ERR_COMM, "invalid communicator handle " + std::to_string(comm));
  }
  return state().comms[static_cast<std::size_t>(comm)];
}

Comm& comm(MPI_Comm c) { return *commEntry(c).comm; }

WinEntry& winEntry(MPI_Win win) {
  requireInit();
  auto& s = state();
  if (win == MPI_WIN_NULL) throw Error(MPI_ERR_WIN, "window is MPI_WIN_NULL");
  if (win < 0 || static_cast<std::size_t>(win) >= s.wins.size()) {
    throw Error(MPI_ERR_WIN, "invalid window handle " + std::to_string(win));
  }
  auto& e = s.wins[static_cast<std::size_t>(win)];
  if (!e) throw Error(MPI_ERR_WIN, "window handle " + std::to_string(win) + " was freed");
  return *e;
}

const Datatype& datatype(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) throw Error(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  const Datatype* d = Datatype::predefined(type);
  if (d == nullptr) throw Error(MPI_ERR_TYPE, "invalid datatype handle " + std::to_string(type));
  return *d;
}

void requireArg(const void* p, const char* what) {
  if (p == nullptr) throw Error(MPI_ERR_ARG, std::string(what) + " is NULL");
}

}  // namespace onesided::capi
