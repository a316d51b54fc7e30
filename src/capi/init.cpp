// SPDX-License-Identifier: BSD-3-Clause
// MPI_Init / MPI_Finalize and the environment calls.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "capi/attr.hpp"
#include "capi/state.hpp"
#include "log.hpp"
#include "transport/transport.hpp"

namespace onesided::capi {
namespace {

void init(int required, int* provided) {
  auto& s = state();
  if (s.finalized) throw Error(MPI_ERR_OTHER, "MPI cannot be initialized again after MPI_Finalize");
  if (s.initialized) throw Error(MPI_ERR_OTHER, "MPI is already initialized");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
    throw Error(MPI_ERR_ARG, "required thread level " + std::to_string(required) + " is invalid");
  }
  // MPI_THREAD_MULTIPLE: calls are serialised by the call lock (src/call_lock.hpp), which
  // waits let go of; below the runtime sees one thread at a time, as with SERIALIZED.
  const int level = required;
  Options o;
  o.threadSerialized = level >= MPI_THREAD_SERIALIZED;
  o.singleThreaded = level == MPI_THREAD_SINGLE;
  o.callLock = &s.callLock;  // its waits let go of it when it is held (nonblocking collectives)
  s.multiple = level == MPI_THREAD_MULTIPLE;
  if (s.multiple) lockCalls();
  hang::install();  // before the rank connects: the launcher may ask from then on
  s.ctx = Context::fromEnvironment(o);
  log::setRank(s.ctx->rank());
  s.comms[MPI_COMM_WORLD].comm = &s.ctx->world();
  s.comms[MPI_COMM_SELF].comm = &s.ctx->self();
  s.groups.clear();
  s.groups.resize(2);
  s.groups[MPI_GROUP_EMPTY] = std::make_unique<Group>();
  s.threadLevel = level;
  makeInfoEnv(level);
  s.mainThread = std::this_thread::get_id();
  s.initialized = true;
  if (provided != nullptr) *provided = level;
}

}  // namespace
}  // namespace onesided::capi

using onesided::capi::call;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

int MPI_Init(int* /*argc*/, char*** /*argv*/) {
  return call("MPI_Init", On::none(), [&] { capi::init(MPI_THREAD_SINGLE, nullptr); });
}

int MPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required, int* provided) {
  return call("MPI_Init_thread", On::none(), [&] {
    capi::requireArg(provided, "provided");
    capi::init(required, provided);
  });
}

int MPI_Query_thread(int* provided) {
  return call("MPI_Query_thread", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(provided, "provided");
    *provided = capi::state().threadLevel;
  });
}

int MPI_Is_thread_main(int* flag) {
  return call("MPI_Is_thread_main", On::none(), [&] {
    capi::requireInit();
    capi::requireArg(flag, "flag");
    *flag = std::this_thread::get_id() == capi::state().mainThread ? 1 : 0;
  });
}

int MPI_Finalize(void) {
  return call("MPI_Finalize", On::none(), [&] {
    capi::requireInit();
    // MPI-3.1 §8.7.1: first of all, MPI_COMM_SELF's attributes are deleted (libraries hook
    // MPI_Finalize so, and may still call MPI), then MPI_COMM_WORLD's. A callback's error is
    // reported once the rest is done.
    std::optional<onesided::Error> attrError = capi::finalizeAttrs();
    auto& s = capi::state();
    // Nonblocking collectives the program did not wait for complete (every member started them).
    for (auto& e : s.comms) e.async.reset();
    capi::drainBufferedSends();  // MPI-3.1 §3.6.1: buffered messages are delivered first
    // Windows the program did not free are released here without a collective.
    for (auto& w : s.wins) {
      if (w) onesided::log::capi().warn("window not freed before MPI_Finalize");
      w.reset();
    }
    // Communicators the program did not free, likewise (before the context they live on), once
    // every rank's last writes into their scratch regions are complete.
    s.ctx->transport().flushAll();
    s.ctx->world().barrier();
    s.retiredComms.clear();
    for (std::size_t i = 3; i < s.comms.size(); ++i) {
      s.comms[i].comm = nullptr;
      s.comms[i].owned.reset();
      s.comms[i].inter.reset();
    }
    s.ctx->finalize();
    // Requests the program left (registrations of their data die before the transport).
    s.requests.clear();
    s.messages.clear();
    s.bsends.clear();
    s.spareRequests.clear();
    s.ctx.reset();
    s.finalized = true;
    if (attrError) throw *attrError;
  });
}

int MPI_Initialized(int* flag) {
  return call("MPI_Initialized", On::none(), [&] {
    capi::requireArg(flag, "flag");
    *flag = capi::state().initialized ? 1 : 0;
  });
}

int MPI_Finalized(int* flag) {
  return call("MPI_Finalized", On::none(), [&] {
    capi::requireArg(flag, "flag");
    *flag = capi::state().finalized ? 1 : 0;
  });
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  auto& s = capi::state();
  const int rank = s.ctx ? s.ctx->rank() : 0;
  std::fprintf(stderr, "onesided: rank %d: MPI_Abort on communicator %d with error code %d\n", rank,
               comm, errorcode);
  std::fflush(stderr);
  if (s.ctx) {
    try {
      s.ctx->bootstrap().abort(errorcode, "MPI_Abort called");
    } catch (...) {  // the job ends anyway
    }
  }
  _exit((errorcode & 0xff) != 0 ? (errorcode & 0xff) : 1);
}

// MPI-3.1 §14.2.4: for a profiling library; with none here, the call does nothing.
int MPI_Pcontrol(const int /*level*/, ...) { return MPI_SUCCESS; }

double MPI_Wtime(void) {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double MPI_Wtick(void) { return 1e-9; }

int MPI_Get_version(int* version, int* subversion) {
  return call("MPI_Get_version", On::none(), [&] {
    capi::requireArg(version, "version");
    capi::requireArg(subversion, "subversion");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
  });
}

int MPI_Get_library_version(char* version, int* resultlen) {
  return call("MPI_Get_library_version", On::none(), [&] {
    capi::requireArg(version, "version");
    capi::requireArg(resultlen, "resultlen");
    auto& s = capi::state();
    std::string v = "onesided 0.1.0 (MPI " + std::to_string(MPI_VERSION) + "." +
                    std::to_string(MPI_SUBVERSION) + " RMA subset";
    if (s.ctx) v += ", transport " + s.ctx->transportName();
    v += ")";
    std::size_t n = std::min<std::size_t>(v.size(), MPI_MAX_LIBRARY_VERSION_STRING - 1);
    std::memcpy(version, v.data(), n);
    version[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}

int MPI_Get_processor_name(char* name, int* resultlen) {
  return call("MPI_Get_processor_name", On::none(), [&] {
    capi::requireArg(name, "name");
    capi::requireArg(resultlen, "resultlen");
    char buf[MPI_MAX_PROCESSOR_NAME] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) std::strcpy(buf, "localhost");
    std::size_t n = std::strlen(buf);
    std::memcpy(name, buf, n + 1);
    *resultlen = static_cast<int>(n);
  });
}

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  return call("MPI_Comm_rank", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    capi::requireArg(rank, "rank");
    *rank = c.rank();
  });
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  return call("MPI_Comm_size", On::comm(comm), [&] {
    auto& c = capi::comm(comm);
    capi::requireArg(size, "size");
    *size = c.size();
  });
}

int MPI_Barrier(MPI_Comm comm) {
  return call("MPI_Barrier", On::comm(comm), [&] { capi::collComm(comm).barrier(); });
}

}  // extern "C"
