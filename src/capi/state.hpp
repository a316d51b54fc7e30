// SPDX-License-Identifier: BSD-3-Clause
// The C API's process-wide state: the one Context bound at MPI_Init, the handle tables, and the
// error path every entry point shares (one noexcept boundary per call, STYLE.md §5).
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_lock.hpp"
#include "capi/request_table.hpp"
#include "collectives/async.hpp"
#include "collectives/inter.hpp"
#include "hang.hpp"
#include "onesided/collectives.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "onesided/group.hpp"
#include "onesided/op.hpp"
#include "onesided/window.hpp"
#include "p2p/engine.hpp"

namespace onesided::capi {

/// The (key, value) pairs of an info object, in the order they were first set.
using InfoPairs = std::vector<std::pair<std::string, std::string>>;
struct Topology;

struct CommEntry {
  Comm* comm = nullptr;  // an intercommunicator's: its local group
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::unique_ptr<Comm> owned;         // communicators made by dup / split / create
  std::unique_ptr<coll::Inter> inter;  // an intercommunicator (owns `comm`)
  // Its nonblocking collectives' queue (collectives/async.hpp), made by the first; goes before
  // the communicator it uses.
  std::unique_ptr<coll::AsyncQueue> async;
  // MPI_Comm_idup's result until the operation completes: the handle exists, the communicator
  // not yet (MPI_ERR_COMM saying so).
  bool pending = false;
  // MPI_Comm_set_name's name; until then MPI_COMM_WORLD and MPI_COMM_SELF have their own names
  // and the others the empty one (MPI-3.1 §6.8). Not inherited: a new entry has none.
  std::string name;
  bool named = false;
  // The hints MPI_Comm_set_info / MPI_Comm_dup_with_info gave. None changes how a communicator
  // works; MPI_Comm_get_info returns them as set (as Open MPI does).
  InfoPairs hints;
  /// The process topology (MPI-3.1 chapter 7, topology.hpp); null: none.
  std::shared_ptr<const Topology> topo;
};

struct WinEntry {
  std::unique_ptr<Window> win;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  // Storage the MPI_Win_get_attr pointers point to (they must stay valid while the window does).
  MPI_Aint sizeAttr = 0;
  int dispUnitAttr = 0;
  int flavorAttr = 0;
  int modelAttr = MPI_WIN_UNIFIED;
  std::string name;  // MPI_Win_set_name; empty by default (MPI-3.1 §6.8)
  /// The last group handles MPI_Win_post and MPI_Win_start named, as ranks of the window's
  /// group: a program that opens an epoch per iteration with one group translates it once
  /// (group handles are never reused, and a freed one is refused before this is consulted).
  struct GroupRanks {
    MPI_Group handle = MPI_GROUP_NULL;
    std::vector<int> ranks;
  };
  GroupRanks postRanks;
  GroupRanks startRanks;
};

/// An MPI_Info object: (key, value) pairs in the order they were first set (MPI_Info_get_nthkey
/// numbers them so).
struct InfoEntry {
  InfoPairs pairs;
};

/// What MPI_Send_init and its kin were given, for each MPI_Start.
struct PersistentArgs {
  enum class Op : std::uint8_t { kSend, kSsend, kBsend, kRsend, kRecv } op = Op::kSend;
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = 0;
  int peer = 0;
  int tag = 0;
  MPI_Comm comm = 0;
  Datatype::Ptr typeHold;  // the type lives as long as the request (it may be freed meanwhile)
};

/// A message MPI_Mprobe / MPI_Improbe took, and the communicator it came on.
struct MatchedMessage {
  std::unique_ptr<p2p::Incoming> in;
  MPI_Comm comm = 0;
};

/// A generalized request's callbacks (MPI_Grequest_start, src/capi/grequest.cpp).
struct Grequest {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extraState = nullptr;
  std::atomic<bool> complete{false};  // MPI_Grequest_complete, maybe from another thread
  bool freed = false;                 // MPI_Request_free came first: free at completion
};

/// A request. Request-based RMA (MPI_Rput ...): its window by handle (a freed window's requests
/// are complete: MPI_Win_free needs every epoch closed) and its completion ticket. Point-to-point
/// (`msg` set, or `procNull`): the engine's request and its communicator.
struct RequestEntry {
  MPI_Win win = MPI_WIN_NULL;
  Window::Ticket ticket;
  std::unique_ptr<p2p::Request> msg;
  MPI_Comm comm = 0;      // point-to-point: its communicator (MPI_COMM_NULL is 0)
  bool procNull = false;  // point-to-point with MPI_PROC_NULL: complete, with its empty status
  std::unique_ptr<PersistentArgs> persistent;  // MPI_*_init's arguments
  bool active = true;                   // a persistent request: started and not yet completed
  std::shared_ptr<coll::AsyncOp> coll;  // a nonblocking collective (on `comm`)
  std::shared_ptr<Grequest> greq;       // a generalized request
  [[nodiscard]] bool isP2p() const noexcept { return msg != nullptr || procNull || persistent; }
  [[nodiscard]] bool isColl() const noexcept { return coll != nullptr; }
  [[nodiscard]] bool isGreq() const noexcept { return greq != nullptr; }
  /// Request-based RMA (the remaining kind).
  [[nodiscard]] bool isRma() const noexcept { return !isP2p() && !isColl() && !isGreq(); }
};

/// A message MPI_Bsend copied out of the program's buffer, charged against the attached buffer.
struct BufferedSend {
  std::vector<std::byte> data;
  p2p::Request req;
  std::size_t charge = 0;
};

/// An error handler the program made (MPI_Comm_create_errhandler, MPI_Win_create_errhandler).
struct ErrhandlerEntry {
  bool forWin = false;                         // a window's handler, else a communicator's
  MPI_Comm_errhandler_function* fn = nullptr;  // a window's too: handles are ints either way
  int programRefs = 1;  // its creation and each MPI_*_get_errhandler, less MPI_Errhandler_free
};

/// An operation made by MPI_Op_create.
struct UserOpEntry {
  MPI_User_function* fn = nullptr;
  bool commutative = false;
};

struct State {
  /// MPI_THREAD_MULTIPLE was provided.
  bool multiple = false;
  /// Every call takes callLock (Locked): under MPI_THREAD_MULTIPLE, and from the first
  /// nonblocking collective on (its thread enters the runtime too).
  bool lockCalls = false;
  /// Calls under way that took no lock (lockCalls was off), nested ones included: the first
  /// nonblocking collective takes the lock once for each, and each lets go of it as it returns.
  int unlockedCalls = 0;
  detail::CallLock callLock;
  std::thread::id mainThread;  // the thread that called MPI_Init (MPI_Is_thread_main)
  bool initialized = false;
  bool finalized = false;
  int threadLevel = MPI_THREAD_SINGLE;
  std::unique_ptr<Context> ctx;
  // Communicators: index = handle; [0..2] = MPI_COMM_NULL, MPI_COMM_WORLD, MPI_COMM_SELF. A
  // freed handle's entry is empty and never reused, so a stale handle is always MPI_ERR_COMM.
  std::vector<CommEntry> comms = std::vector<CommEntry>(3);
  // Freed communicators a live window still refers to: destroyed when the window is (or at
  // MPI_Finalize).
  std::vector<std::unique_ptr<Comm>> retiredComms;
  // Groups: index = handle; [0] = MPI_GROUP_NULL (empty), [1] = MPI_GROUP_EMPTY; freed handles
  // are never reused.
  std::vector<std::unique_ptr<Group>> groups;
  std::vector<std::unique_ptr<WinEntry>> wins{1};  // index = handle; [0] = MPI_WIN_NULL
  MPI_Errhandler preInitErrhandler = MPI_ERRORS_ARE_FATAL;
  // Derived datatypes: handle kFirstDerivedType + i is types[i]; a freed handle's slot is null
  // and never reused, so a stale handle is always MPI_ERR_TYPE, never another type. The types
  // themselves are shared: a type built from this one, or a pending get, keeps it alive.
  std::vector<std::shared_ptr<Datatype>> types;
  std::unordered_map<int, std::string> predefinedNames;  // MPI_Type_set_name on predefined types
  // MPI_Info objects: handle i is infos[i]; [0] = MPI_INFO_NULL; freed slots are null and never
  // reused, so a stale handle is always MPI_ERR_INFO.
  std::vector<std::unique_ptr<InfoEntry>> infos{2};  // [1] = MPI_INFO_ENV (made at MPI_Init)
  // Active requests by handle. Handles count up from 1 and are not reused (until 2^31 of them
  // have been made), so a completed or freed handle is MPI_ERR_REQUEST, never another request;
  // only live requests take memory.
  RequestTable<RequestEntry> requests;
  // Engine requests of completed messages, kept for the next: no allocation per message.
  std::vector<std::unique_ptr<p2p::Request>> spareRequests;
  // Messages MPI_Mprobe / MPI_Improbe took, by handle (from 2: MPI_MESSAGE_NULL and
  // MPI_MESSAGE_NO_PROC are 0 and 1); handles are not reused.
  std::unordered_map<MPI_Message, MatchedMessage> messages;
  MPI_Message nextMessage = 2;
  // MPI_Buffer_attach's buffer, and the buffered sends charged against it.
  void* bsendBuffer = nullptr;
  int bsendSize = 0;
  bool bsendAttached = false;
  std::size_t bsendUsed = 0;
  std::vector<std::unique_ptr<BufferedSend>> bsends;
  // User-defined operations: handle kFirstUserOp + i is userOps[i]; freed slots are null and
  // never reused, so a stale handle is always MPI_ERR_OP.
  std::vector<std::unique_ptr<UserOpEntry>> userOps;
  // User error handlers: handle kFirstUserErrhandler + i is errhandlers[i]; released slots are
  // null and never reused, so a stale handle is always MPI_ERR_ARG.
  std::vector<std::unique_ptr<ErrhandlerEntry>> errhandlers;
  // The references to each predefined handler MPI_*_get_errhandler handed out: the program may
  // free that many (index = handle).
  std::array<int, 4> predefinedErrhandlerGets{};
};

/// Handles of user error handlers start here (the predefined ones are 1 .. 3).
constexpr MPI_Errhandler kFirstUserErrhandler = 16;

/// Handles of user-defined operations start here (predefined ones are below kNumOps).
constexpr MPI_Op kFirstUserOp = 64;

/// Handles of derived datatypes start here (predefined ones are below).
constexpr MPI_Datatype kFirstDerivedType = 1024;

/// The process's State, made when the library loads (state.cpp) and never destroyed: a program
/// that exits without MPI_Finalize must not run transport teardown from a static destructor (it
/// can wait on peers). A pointer set at load, not a function-local static: the guard of the
/// latter, inlined into every binding, made each save six registers on its fast path too.
[[gnu::visibility("hidden")]] extern State* const gState;
inline State& state() noexcept { return *gState; }

/// The object an error is raised on, which chooses the error handler.
struct On {
  enum Kind { kNone, kComm, kWin } kind = kNone;
  int handle = 0;
  static On comm(MPI_Comm c) { return {kComm, c}; }
  static On win(MPI_Win w) { return {kWin, w}; }
  static On none() { return {}; }
};

/// Records `message` (already prefixed with the call's name), applies the handler of `on`
/// (MPI_COMM_WORLD's when `on` is not a valid object), and returns the error code.
int raise(On on, int errorClass, const std::string& message) noexcept;
/// Applies the handler of `on` (as raise() chooses it) to error `code`: returns when the handler
/// does (MPI_ERRORS_RETURN, or a user handler that returns), ends the job otherwise. `message`
/// is what a fatal handler prints (errhandlers.cpp).
void invokeErrhandler(On on, int code, const std::string& message);
/// What MPI_Error_string says of `code` (predefined, raised or added), or that it is unknown.
std::string errorText(int code);
/// MPI_Error_class of `code`; MPI_ERR_UNKNOWN for a value that is no code.
int errorClassOf(int code) noexcept;
/// The largest error class or code MPI_Add_error_class / _code made (MPI_ERR_LASTCODE before
/// any): MPI_COMM_WORLD's MPI_LASTUSEDCODE attribute.
int lastUsedCode() noexcept;

/// An MPI call's hold on the call lock, when calls take it (State::lockCalls).
class Locked {
 public:
  Locked() noexcept : on_(state().lockCalls) {
    if (on_) [[unlikely]] {
      state().callLock.lock();
    } else {
      ++state().unlockedCalls;
    }
  }
  ~Locked() {
    State& s = state();
    if (!on_) [[likely]] {
      --s.unlockedCalls;
      if (!s.lockCalls) [[likely]]
        return;  // (the lock turned on during this call took it for this call too)
    }
    s.callLock.unlock();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  bool on_;
};

/// Runs `fn` and maps whatever it throws to an error code through the right handler.
template <class Fn>
int call(const char* name, On on, Fn&& fn) noexcept {
  const Locked locked;
  const hang::InCall inCall(name, hang::pack(on.kind, on.handle));  // two plain stores
  try {
    fn();
    return MPI_SUCCESS;
  } catch (const Error& e) {
    return raise(on, e.errorClass(), std::string(name) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return raise(on, MPI_ERR_NO_MEM, std::string(name) + ": out of memory");
  } catch (const std::exception& e) {
    return raise(on, MPI_ERR_INTERN, std::string(name) + ": internal error: " + e.what());
  } catch (...) {
    return raise(on, MPI_ERR_INTERN, std::string(name) + ": unknown internal error");
  }
}

/// call(), kept out of line: for bindings that try a fast case first, so that the fast case
/// needs no stack frame for call()'s error handling.
template <class Fn>
[[gnu::noinline]] int callSlow(const char* name, On on, Fn fn) noexcept {
  return call(name, on, fn);
}

// ---- lookups: each throws Error with the right class and a message naming the bad value ----
// The ones every MPI_Put / MPI_Get / MPI_Win_fence makes are inline with the error paths out of
// line (they build the messages).
[[noreturn]] void throwNotActive();
[[noreturn]] void throwBadWin(MPI_Win win);
[[noreturn]] void throwBadDatatype(MPI_Datatype type);

inline void requireInit() {
  const State& s = state();
  if (!s.initialized || s.finalized) [[unlikely]]
    throwNotActive();
}
Context& context();
/// The process's point-to-point engine (src/p2p/).
inline p2p::Engine& engine() { return context().messages(); }
CommEntry& commEntry(MPI_Comm comm);
Comm& comm(MPI_Comm comm);
/// What point-to-point sees of a communicator: the ranks it sends to and receives from (the
/// remote group's, on an intercommunicator), this rank's number as a sender, and the context
/// its messages carry.
struct Peers {
  const std::vector<int>* worlds = nullptr;
  int me = 0;
  std::uint64_t context = 0;
  [[nodiscard]] int size() const noexcept { return static_cast<int>(worlds->size()); }
  [[nodiscard]] int worldRank(int r) const { return (*worlds)[static_cast<std::size_t>(r)]; }
  [[nodiscard]] int rank() const noexcept { return me; }
  [[nodiscard]] std::uint64_t p2pContext() const noexcept { return context; }
};
Peers peers(MPI_Comm comm);
/// The intercommunicator behind `comm`, or nullptr for an intracommunicator.
coll::Inter* interOf(MPI_Comm comm);
/// MPI_ERR_COMM naming the call's need when `comm` is an intercommunicator.
void requireIntra(MPI_Comm comm, const char* what);
/// comm() for a call that uses the communicator's collective channel (a blocking collective, a
/// constructor, MPI_Comm_free): waits first for the nonblocking collectives started on it.
Comm& collComm(MPI_Comm comm);
/// Makes every call take the call lock from now on (State::lockCalls).
void lockCalls();
/// The communicator's nonblocking-collective queue, made (with its thread) on first use.
coll::AsyncQueue& asyncQueue(MPI_Comm comm);
/// A group handle's group (MPI_GROUP_EMPTY included); MPI_ERR_GROUP naming the handle otherwise.
Group& group(MPI_Group group);
/// A new group handle for `g` (handles are never reused).
MPI_Group addGroup(Group g);
/// New communicator handles (MPI_COMM_NULL for nullptr); `eh`: the handler it inherits.
MPI_Comm addComm(std::unique_ptr<Comm> c, MPI_Errhandler eh);
MPI_Comm addInter(std::unique_ptr<coll::Inter> ic, MPI_Errhandler eh);
/// A live window's entry, or nullptr (not initialised, finalised, or not a window handle).
inline WinEntry* liveEntry(MPI_Win win) noexcept {
  State& s = state();
  if (s.initialized && !s.finalized && win > 0 && static_cast<std::size_t>(win) < s.wins.size())
      [[likely]] {
    return s.wins[static_cast<std::size_t>(win)].get();
  }
  return nullptr;
}
inline WinEntry& winEntry(MPI_Win win) {
  if (WinEntry* e = liveEntry(win); e != nullptr) [[likely]] {
    return *e;
  }
  throwBadWin(win);
}
/// The bindings that try the window's fast case (which never throws, and does nothing when it
/// returns false) before call(): `fast(window)` first, on a live window; `slow()` through
/// callSlow() when there is none or the fast case declines, which checks and names errors.
template <class Fast, class Slow>
int fastOrCall(const char* name, MPI_Win win, Fast fast, Slow slow) noexcept {
  const Locked locked;
  if (WinEntry* e = liveEntry(win); e != nullptr && e->win && fast(*e->win)) [[likely]] {
    return MPI_SUCCESS;
  }
  return callSlow(name, On::win(win), slow);
}
/// fastOrCall for MPI_Fetch_and_op and MPI_Compare_and_swap, whose fast case may also post a
/// request through the fetch box and leave its reply to wait for (Window::BoxFetch::kPosted):
/// that wait, which can fail, runs under callSlow()'s error handling.
template <class Fast, class Slow>
int fetchOrCall(const char* name, MPI_Win win, Fast fast, Slow slow) noexcept {
  const Locked locked;
  if (WinEntry* e = liveEntry(win); e != nullptr && e->win) [[likely]] {
    Window& w = *e->win;
    const Window::BoxFetch f = fast(w);
    if (f == Window::BoxFetch::kDone) [[likely]] {
      return MPI_SUCCESS;
    }
    if (f == Window::BoxFetch::kPosted) return callSlow(name, On::win(win), [&w] { w.awaitBox(); });
  }
  return callSlow(name, On::win(win), slow);
}
/// A derived type's entry; throws MPI_ERR_TYPE naming the handle when it is not one (freed,
/// garbage, or predefined).
std::shared_ptr<Datatype>& derivedEntry(MPI_Datatype type);
inline const Datatype& datatype(MPI_Datatype type) {
  if (const Datatype* d = Datatype::predefined(type); d != nullptr) [[likely]]
    return *d;
  return *derivedEntry(type);
}
void requireArg(const void* p, const char* what);
[[noreturn]] void throwInPlaceBuffer(const char* what);
/// A buffer argument of an RMA call: MPI_IN_PLACE marks a collective's buffer, it is no memory
/// (MPI_ERR_BUFFER naming the argument, instead of using the marker as an address).
inline bool isInPlace(const void* p) noexcept {
  return p == MPI_IN_PLACE;  // NOLINT(performance-no-int-to-ptr): the standard's marker
}
inline void requireNotInPlace(const void* p, const char* what) {
  if (isInPlace(p)) [[unlikely]]
    throwInPlaceBuffer(what);
}
/// The buffers of a fetching RMA call (get_accumulate, fetch_and_op): the origin counts only
/// where the operation reads it, since MPI_NO_OP ignores it (MPI-3.1 §11.3.4).
inline void requireFetchBuffers(const void* origin, const void* result, MPI_Op op) {
  if (op != MPI_NO_OP) requireNotInPlace(origin, "origin_addr");
  requireNotInPlace(result, "result_addr");
}
[[noreturn]] void throwBadOp(MPI_Op o);
/// An RMA operation handle (MPI_MAX .. MPI_NO_OP); MPI_ERR_OP naming a bad one.
inline Op op(MPI_Op o) {
  if (o <= 0 || o >= kNumOps) [[unlikely]]
    throwBadOp(o);
  return static_cast<Op>(o);
}
/// A live user-defined operation's entry, or nullptr when `o` is not one (never throws).
UserOpEntry* userOp(MPI_Op o) noexcept;
/// The operation of a reduction on `datatype` (a collective, MPI_Reduce_local): a predefined
/// one from MPI_MAX to MPI_MAXLOC, or a user-defined one bound to the datatype's handle (which
/// its function receives); MPI_ERR_OP naming anything else.
coll::Reduction reduction(MPI_Op o, MPI_Datatype datatype);
/// MPI_Get_accumulate's origin type: with MPI_NO_OP the origin arguments are ignored, whatever
/// they are (MPI-3.1 §11.3.4), so the target's type stands in for it.
inline const Datatype& accOriginType(Op o, MPI_Datatype origin, MPI_Datatype target) {
  return o == Op::kNoOp ? datatype(target) : datatype(origin);
}
/// Fills MPI_INFO_ENV (at MPI_Init).
void makeInfoEnv(int threadLevel);
/// The info object behind `info`; throws MPI_ERR_INFO naming the handle (MPI_INFO_NULL included).
InfoEntry& infoEntry(MPI_Info info);
/// A new info handle for `e` (handles are never reused).
MPI_Info addInfo(std::unique_ptr<InfoEntry> e);
/// The window hints an info object gives (MPI_INFO_NULL: none); unknown keys are ignored, known
/// keys with values this runtime cannot read fail with MPI_ERR_INFO_VALUE. `base`: the hints to
/// start from.
WindowHints windowHints(MPI_Info info, const WindowHints& base = {});

/// A status's byte count (MPI_Get_count and its kin read it), in two ints of MPI_Status.
inline std::uint64_t statusBytes(const MPI_Status* s) {
  return static_cast<std::uint64_t>(static_cast<unsigned>(s->onesided_count_lo)) |
         (static_cast<std::uint64_t>(static_cast<unsigned>(s->onesided_count_hi)) << 32);
}
inline void setStatusBytes(MPI_Status* s, std::uint64_t bytes) {
  s->onesided_count_lo = static_cast<int>(static_cast<unsigned>(bytes & 0xffffffffU));
  s->onesided_count_hi = static_cast<int>(static_cast<unsigned>(bytes >> 32));
}

// ---- requests (request.cpp), shared with point-to-point (p2p.cpp) ----
/// A new handle for `e`.
MPI_Request addRequest(RequestEntry e);
/// A new handle for a nonblocking collective started on `comm`.
MPI_Request addCollRequest(MPI_Comm comm, std::shared_ptr<coll::AsyncOp> op);
/// An engine request for a new message (a spare one when there is).
std::unique_ptr<p2p::Request> newMessage();
/// Retires live request `h` (its engine request, if complete, is kept as a spare).
void retire(MPI_Request h);
/// A complete generalized request's status by its query_fn (into a scratch status for
/// MPI_STATUS_IGNORE); returns query_fn's error code (grequest.cpp).
int grequestQuery(const Grequest& g, MPI_Status* st);
/// Ends complete generalized request `h` for MPI_Wait and kin: query_fn, then free_fn, then
/// retire(); returns the class of the first that failed (0 if none), its text in `why`.
int grequestFinish(MPI_Request h, MPI_Status* st, std::string* why);
/// MPI_Request_free of generalized request `h`: free_fn and retire() now if it is complete,
/// else at MPI_Grequest_complete; returns free_fn's failure as grequestFinish does.
int grequestRelease(MPI_Request h, std::string* why);
/// Fills `st` (unless MPI_STATUS_IGNORE) from a completed point-to-point request.
void p2pStatus(MPI_Status* st, const p2p::Status& s);
/// The status of a receive from MPI_PROC_NULL (MPI-3.1 §3.11).
void procNullStatus(MPI_Status* st);
/// The message of a point-to-point error class in a status, for the call that reports it.
std::string p2pError(const p2p::Status& s);
/// Completes every buffered send (MPI_Buffer_detach, MPI_Finalize).
void drainBufferedSends();

}  // namespace onesided::capi
