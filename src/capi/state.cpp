// SPDX-License-Identifier: BSD-3-Clause
#include "capi/state.hpp"

namespace onesided::capi {

State* const gState = new State;  // NOLINT(cppcoreguidelines-owning-memory)

void throwNotActive() {
  if (!state().initialized) throw Error(MPI_ERR_OTHER, "called before MPI_Init");
  throw Error(MPI_ERR_OTHER, "called after MPI_Finalize");
}

Context& context() {
  requireInit();
  return *state().ctx;
}

CommEntry& commEntry(MPI_Comm comm) {
  requireInit();
  if (comm == MPI_COMM_NULL) throw Error(MPI_ERR_COMM, "communicator is MPI_COMM_NULL");
  auto& comms = state().comms;
  if (comm < 0 || static_cast<std::size_t>(comm) >= comms.size()) {
    throw Error(MPI_ERR_COMM, "invalid communicator handle " + std::to_string(comm));
  }
  auto& e = comms[static_cast<std::size_t>(comm)];
  if (e.comm == nullptr) {
    if (e.pending) {
      throw Error(MPI_ERR_COMM, "communicator handle " + std::to_string(comm) +
                                    " is MPI_Comm_idup's, whose request is not complete yet");
    }
    throw Error(MPI_ERR_COMM, "communicator handle " + std::to_string(comm) + " was freed");
  }
  return e;
}

Group& group(MPI_Group group) {
  requireInit();
  auto& groups = state().groups;
  if (group == MPI_GROUP_NULL) throw Error(MPI_ERR_GROUP, "group is MPI_GROUP_NULL");
  if (group < 0 || static_cast<std::size_t>(group) >= groups.size()) {
    throw Error(MPI_ERR_GROUP, "invalid group handle " + std::to_string(group));
  }
  auto& g = groups[static_cast<std::size_t>(group)];
  if (!g) throw Error(MPI_ERR_GROUP, "group handle " + std::to_string(group) + " was freed");
  return *g;
}

Comm& comm(MPI_Comm c) { return *commEntry(c).comm; }

Peers peers(MPI_Comm c) {
  CommEntry& e = commEntry(c);
  if (e.inter != nullptr) return {&e.inter->remote(), e.comm->rank(), e.inter->context()};
  return {&e.comm->worldRanks(), e.comm->rank(), e.comm->p2pContext()};
}

coll::Inter* interOf(MPI_Comm c) { return commEntry(c).inter.get(); }

void requireIntra(MPI_Comm c, const char* what) {
  if (interOf(c) != nullptr) {
    throw Error(MPI_ERR_COMM, "communicator " + std::to_string(c) + " is an intercommunicator; " +
                                  what + " takes an intracommunicator");
  }
}

Comm& collComm(MPI_Comm c) {
  CommEntry& e = commEntry(c);
  if (e.async != nullptr && !e.async->idle()) [[unlikely]] {
    Comm& out = *e.comm;
    e.async->drain();  // lets other threads in: `e` may move meanwhile
    return out;
  }
  return *e.comm;
}

void lockCalls() {
  State& s = state();
  if (s.lockCalls) return;
  // Every later call takes the lock; the calls under way (this one, and any it is nested in)
  // hold it until they return.
  s.lockCalls = true;
  for (int i = 0; i < s.unlockedCalls; ++i) s.callLock.lock();
}

coll::AsyncQueue& asyncQueue(MPI_Comm c) {
  CommEntry& e = commEntry(c);
  if (e.async == nullptr) {
    State& s = state();
    lockCalls();  // from now on two threads enter the runtime
    e.async = std::make_unique<coll::AsyncQueue>(s.callLock);
  }
  return *e.async;
}

void throwBadWin(MPI_Win win) {
  requireInit();
  auto& s = state();
  if (win == MPI_WIN_NULL) throw Error(MPI_ERR_WIN, "window is MPI_WIN_NULL");
  if (win < 0 || static_cast<std::size_t>(win) >= s.wins.size()) {
    throw Error(MPI_ERR_WIN, "invalid window handle " + std::to_string(win));
  }
  throw Error(MPI_ERR_WIN, "window handle " + std::to_string(win) + " was freed");
}

void throwBadDatatype(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) throw Error(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  throw Error(MPI_ERR_TYPE, "invalid datatype handle " + std::to_string(type));
}

std::shared_ptr<Datatype>& derivedEntry(MPI_Datatype type) {
  auto& types = state().types;
  if (type >= kFirstDerivedType &&
      static_cast<std::size_t>(type - kFirstDerivedType) < types.size()) {
    auto& e = types[static_cast<std::size_t>(type - kFirstDerivedType)];
    if (e) return e;
    throw Error(MPI_ERR_TYPE, "datatype handle " + std::to_string(type) + " was freed");
  }
  throwBadDatatype(type);
}

void throwBadOp(MPI_Op o) {
  if (o == MPI_OP_NULL) throw Error(MPI_ERR_OP, "MPI_OP_NULL is not an operation");
  if (userOp(o) != nullptr) {
    throw Error(MPI_ERR_OP, "operation " + std::to_string(o) +
                                " is user-defined (MPI_Op_create); RMA operations take "
                                "predefined ones only");
  }
  if (o >= kFirstUserOp && static_cast<std::size_t>(o - kFirstUserOp) < state().userOps.size()) {
    throw Error(MPI_ERR_OP, "operation handle " + std::to_string(o) + " was freed");
  }
  throw Error(MPI_ERR_OP, "invalid operation handle " + std::to_string(o));
}

UserOpEntry* userOp(MPI_Op o) noexcept {
  auto& ops = state().userOps;
  if (o < kFirstUserOp || static_cast<std::size_t>(o - kFirstUserOp) >= ops.size()) return nullptr;
  return ops[static_cast<std::size_t>(o - kFirstUserOp)].get();
}

void requireArg(const void* p, const char* what) {
  if (p == nullptr) throw Error(MPI_ERR_ARG, std::string(what) + " is NULL");
}

void throwInPlaceBuffer(const char* what) {
  throw Error(MPI_ERR_BUFFER,
              std::string(what) + " is MPI_IN_PLACE, which only collective calls take");
}

}  // namespace onesided::capi
