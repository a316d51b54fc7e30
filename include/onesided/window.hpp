// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "onesided/op.hpp"

namespace onesided {

class Comm;
namespace transport {
class Endpoint;
enum class AddAfter;
enum class AtomicOp;
class MemoryRegion;
class RemoteKey;
struct Iov;
}  // namespace transport
namespace detail {
class SyncRegion;
class Inboxes;
struct DynamicState;
}  // namespace detail

/// A target rank that makes an operation a no-op (MPI_PROC_NULL).
constexpr int kProcNull = -2;

enum class Flavor : int { kCreate = 1, kAllocate = 2, kDynamic = 3, kShared = 4 };

/// Fence assertions (the MPI_MODE_* values of <mpi.h>).
enum Assert : int {
  kModeNocheck = 1024,
  kModeNostore = 2048,
  kModeNoput = 4096,
  kModeNoprecede = 8192,
  kModeNosucceed = 16384,
};

/// MPI_Win_lock's lock types (the MPI_LOCK_* values of <mpi.h>).
enum class LockType : int { kExclusive = 234, kShared = 235 };

/// The window info keys this runtime understands (MPI-3.1 §11.2.1, MPI_Win_set_info), with their
/// defaults. What each does here:
///   - noLocks (no_locks): the program promises never to lock the window; MPI_Win_lock and
///     MPI_Win_lock_all then fail with kErrRmaSync naming the hint instead of taking a lock that
///     the promise says nobody else checks.
///   - sameSize / sameDispUnit (same_size, same_disp_unit): checked once against the creation
///     allgather, which every rank sees identically, so a false promise fails the creation on
///     every rank (kErrInfoValue). Nothing else changes: each target's remote key differs from
///     rank to rank whatever the sizes, so per-target state stays O(p) (see docs/design.md).
///   - accumulateOps (accumulate_ops: same_op_no_op or same_op) and accumulateOrdering
///     (accumulate_ordering: "none" or a comma list of rar, raw, war, waw): recorded and returned
///     by MPI_Win_get_info. Nothing is relaxed: the accumulate path is chosen by element type
///     (and window) alone, so every combination of operations is atomic; accumulates by lock or
///     NIC atomic are complete at the target on return, and active messages are applied in
///     ticket order, so the default ordering holds whatever the hints allow.
///   - allocSharedNoncontig (alloc_shared_noncontig): MPI_Win_allocate_shared only.
struct WindowHints {
  bool noLocks = false;
  bool sameSize = false;
  bool sameDispUnit = false;
  bool allocSharedNoncontig = false;
  std::string accumulateOps = "same_op_no_op";
  std::string accumulateOrdering = "rar,raw,war,waw";
};

/// An RMA window: this rank's exposed memory plus, per target, its base, size, disp_unit and
/// key (from one allgather at creation). Every access is bounds-checked at the origin before
/// anything reaches the transport: an overrun throws Error(kErrRmaRange) and touches nothing.
/// Not thread-safe.
class Window {
 public:
  /// MPI_Win_create: exposes (and registers) the caller's memory. Collective over comm.
  /// Invalid arguments on any rank fail the creation on every rank (the bad rank gets its own
  /// error class, the others kErrOther naming it), so no rank is left waiting.
  /// `argError`: an argument error the caller already found (it still takes part).
  static std::unique_ptr<Window> create(Comm& comm, void* base, std::int64_t size, int dispUnit,
                                        const Error* argError = nullptr,
                                        const WindowHints& hints = {});
  /// MPI_Win_allocate: the runtime allocates `size` bytes (in shared memory where the transport
  /// can, so on-node peers store into it directly). Collective over comm.
  static std::unique_ptr<Window> allocate(Comm& comm, std::int64_t size, int dispUnit,
                                          const Error* argError = nullptr,
                                          const WindowHints& hints = {});
  /// MPI_Win_allocate_shared: `size` bytes per rank in one shared-memory segment that every
  /// rank maps (ranks on one node), each rank's part right after the previous rank's
  /// (contiguous), or starting on a page boundary of its own with hints.allocSharedNoncontig.
  /// Every target is on the load / store path; MPI_Win_shared_query (sharedQuery) gives the
  /// local address of any rank's part. A rank that cannot map the segment (another node, no
  /// shared memory) fails the creation on every rank with kErrRmaShared. Collective over comm.
  static std::unique_ptr<Window> allocateShared(Comm& comm, std::int64_t size, int dispUnit,
                                                const Error* argError = nullptr,
                                                const WindowHints& hints = {});
  /// MPI_Win_shared_query: `target`'s part (size, disp_unit, and its address in this process).
  /// kProcNull: the lowest rank whose size is not 0 (or rank 0's when all are). kErrRmaFlavor
  /// unless the window is from allocateShared.
  void sharedQuery(int target, std::size_t& size, int& dispUnit, void*& base) const;

  /// MPI_Win_create_dynamic: no memory at first; each rank attaches regions (attach / detach) and
  /// targets are addressed by absolute address (MPI_Get_address) with disp_unit 1. An access
  /// outside every region attached at the target fails at the origin with kErrRmaRange: the
  /// origin caches each target's attach table, re-reads it with one-sided gets when a lookup
  /// misses, and checks it is current once per epoch (dynamic.cpp). Collective over comm.
  static std::unique_ptr<Window> createDynamic(Comm& comm, const Error* argError = nullptr,
                                               const WindowHints& hints = {});
  /// MPI_Win_attach: exposes [base, base + size) in a dynamic window. Overlapping a region
  /// attached before is kErrRmaAttach; there is no limit on the number of regions (the table
  /// grows, dynamic.hpp). Local.
  void attach(void* base, std::int64_t size);
  /// MPI_Win_detach: the region attached at `base`; kErrRmaAttach when there is none. Local.
  void detach(const void* base);

  /// Frees without synchronising (use free() for the collective MPI_Win_free).
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  /// MPI_Win_free: collective; needs every access epoch closed and every operation fenced.
  void free();

  /// MPI_Win_fence: completes every operation issued since the previous fence (at origin and
  /// target), then a dissemination barrier of one-sided writes. `assertion` is a bitwise or of
  /// Assert values. Collective.
  void fence(int assertion = 0);

  /// MPI_Put: origin buffer described by (origin, ocount, otype), target by (disp, tcount,
  /// ttype) in units of the target's disp_unit. Complete at the next fence.
  void put(const void* origin, std::int64_t ocount, const Datatype& otype, int target,
           std::int64_t disp, std::int64_t tcount, const Datatype& ttype);
  /// MPI_Get: as put, in the other direction; `origin` is valid after the next fence.
  void get(void* origin, std::int64_t ocount, const Datatype& otype, int target, std::int64_t disp,
           std::int64_t tcount, const Datatype& ttype);

  /// Typed helpers: `src.size()` elements to target's displacement `disp` (in disp units).
  template <class T>
  void put(std::span<const T> src, int target, std::int64_t disp) {
    const auto& t = datatypeOf<std::remove_cv_t<T>>();
    auto n = static_cast<std::int64_t>(src.size());
    put(src.data(), n, t, target, disp, n, t);
  }
  template <class T>
  void get(std::span<T> dst, int target, std::int64_t disp) {
    const auto& t = datatypeOf<std::remove_cv_t<T>>();
    auto n = static_cast<std::int64_t>(dst.size());
    get(dst.data(), n, t, target, disp, n, t);
  }

  // ---- passive target (src/window/passive.cpp) ----
  /// MPI_Win_lock: an access epoch at `target`. Exclusive locks exclude every other lock on that
  /// target and MPI_Win_lock_all anywhere; shared locks exclude exclusive ones. `assertion`:
  /// 0 or kModeNocheck (no other process will lock this target meanwhile: nothing is sent).
  void lock(LockType type, int target, int assertion = 0) {
    if (!fastLock(type, target, assertion)) lockSlow(type, target, assertion);
  }
  void unlock(int target) {
    if (!fastUnlock(target)) unlockSlow(target);
  }
  /// lock / unlock / flush's fast case alone: a CPU-atomic window, arguments and epoch state
  /// that need no message, an uncontended lock word, nothing issued that a flush must wait
  /// for. True: done. False: nothing done; lock() / unlock() / flush() take the general path,
  /// which checks everything in order, names any error and retries. They never throw, so the
  /// C bindings try them before setting up their error handling.
  bool fastLock(LockType type, int target, int assertion) noexcept;
  bool fastUnlock(int target) noexcept;
  bool fastFlush(int target) noexcept;
  /// MPI_Win_lock_all: a shared lock on every rank, in O(1) network operations (one fetch-add on
  /// a counter at rank 0 that exclusive lockers consult), not one per rank. On a CPU-atomic
  /// window the first lock_all also waits once for exclusive locks taken before it (which did
  /// not consult that counter): two more atomics and a read of each rank's lock word.
  void lockAll(int assertion = 0) {
    if (!fastLockAll(assertion)) lockAllSlow(assertion);
  }
  void unlockAll() {
    if (!fastUnlockAll()) unlockAllSlow();
  }
  /// lock_all / unlock_all's fast case, as fastLock(): a CPU-atomic window past its first
  /// lock_all, no exclusive locker announced, nothing issued that must complete first.
  bool fastLockAll(int assertion) noexcept;
  bool fastUnlockAll() noexcept;
  /// How many atomics this rank has issued on control words of this window (lock words, the
  /// lock_all counter, PSCW notices, the accumulate lock), at any target: what synchronisation
  /// costs in network operations, for tests and diagnostics.
  [[nodiscard]] std::uint64_t controlOperations() const noexcept { return controlOps_; }
  /// Whether every rank reaches this window's memory and control words by loads, stores and CPU
  /// atomics (one node, no NIC atomics in use), so that atomics and locks never leave the CPU.
  [[nodiscard]] bool cpuAtomics() const noexcept { return cpuAtomics_; }
  /// Whether this window's control region (a create or dynamic window's lock words, notices,
  /// inbox and sync slots) is one a freed window of this context left (Context::takeScratch).
  [[nodiscard]] bool controlReused() const noexcept { return controlReused_; }
  /// How many targets' control regions this rank reaches through a mapping kept from an earlier
  /// window (Context::peerKey), not a new one.
  [[nodiscard]] int controlKeysReused() const noexcept { return ctlKeysReused_; }
  /// How many targets' control regions (with a key of their own) this rank has mapped.
  [[nodiscard]] int mappedControls() const;
  /// Whether the window took the local message mode (amInts_; agreed at creation).
  [[nodiscard]] bool localMessages() const noexcept { return amInts_; }
  /// Whether this window's descriptors are on its communicator's board (read on first use)
  /// rather than gathered at creation, and how many targets' descriptors this rank holds.
  [[nodiscard]] bool onBoard() const noexcept { return slot_ >= 0; }
  [[nodiscard]] std::size_t knownTargets() const noexcept {
    std::size_t n = 0;
    targets_.forEach([&](std::size_t, const Target& t) { n += t.described ? 1 : 0; });
    return n;
  }
  /// MPI_Win_flush(_local)(_all): operations issued to `target` (every target) are complete at
  /// origin and target. Local completion is not cheaper here, so _local is the same.
  void flush(int target) {
    if (!fastFlush(target)) flushSlow(target);
  }
  void flushAll();
  /// MPI_Win_sync: the window is unified (one copy), so a memory barrier.
  void sync();

  // ---- general active target, PSCW (src/window/pscw.cpp) ----
  /// MPI_Win_post: an exposure epoch for the ranks `origins` (ranks of the window's group).
  /// Each of them learns of it through one remote atomic on its control words. `assertion`:
  /// kModeNocheck (the matching starts pass it too: nothing is sent), kModeNostore, kModeNoput.
  void post(std::span<const int> origins, int assertion = 0);
  /// MPI_Win_start: an access epoch to the ranks `targets`; waits until each has posted (unless
  /// kModeNocheck). Operations may then go to those ranks only.
  void start(std::span<const int> targets, int assertion = 0);
  /// MPI_Win_complete: completes every operation of the access epoch at origin and target,
  /// then tells each target (one remote atomic each).
  void completeAccess();
  /// MPI_Win_wait: until every origin of the exposure epoch has called MPI_Win_complete.
  void wait();
  /// MPI_Win_test: wait() that does not block; true when the exposure epoch has ended.
  bool test();

  // ---- request-based operations (src/window/request.cpp) ----
  /// Which operations a request (MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate)
  /// waits for: those issued to `target` before its completion count passes `seq` (0: complete
  /// when issued). Tickets cost nothing to keep: the window counts, per target, the flushes
  /// that completed everything issued to it, and a ticket is the count its operation needs.
  struct Ticket {
    int target = kProcNull;
    std::uint64_t seq = 0;
  };
  /// Throws kErrRmaSync unless a passive-target epoch (lock or lock_all) is open: request-based
  /// operations exist only there (MPI-3.1 §11.3.5). `call` names the operation.
  void requirePassiveEpoch(const char* call) const;
  /// The ticket of the operation to `target` issued last (call right after issuing it).
  [[nodiscard]] Ticket ticket(int target) const;
  /// True when the ticket's operation is complete (also once the window is freed: MPI_Win_free
  /// needs every epoch closed, which completes everything).
  [[nodiscard]] bool done(const Ticket& t) const;
  /// Completes the ticket's operation: a flush of its target only, and only if it is pending.
  void waitFor(const Ticket& t);

  // ---- accumulate and atomics (src/window/accumulate.cpp) ----
  /// MPI_Accumulate: target = target op origin, element-wise, atomic per element with respect to
  /// every other accumulate (see accumulate.cpp for the two paths and why they never race).
  void accumulate(const void* origin, std::int64_t ocount, const Datatype& otype, int target,
                  std::int64_t disp, std::int64_t tcount, const Datatype& ttype, Op op);
  /// MPI_Get_accumulate: the old target values into `result`, then the accumulate. With kNoOp
  /// the origin arguments are ignored (an atomic get).
  void getAccumulate(const void* origin, std::int64_t ocount, const Datatype& otype, void* result,
                     std::int64_t rcount, const Datatype& rtype, int target, std::int64_t disp,
                     std::int64_t tcount, const Datatype& ttype, Op op);
  /// MPI_Fetch_and_op: one element.
  void fetchAndOp(const void* origin, void* result, const Datatype& type, int target,
                  std::int64_t disp, Op op);
  /// MPI_Compare_and_swap: one element; the target becomes *origin when it equals *compare.
  void compareAndSwap(const void* origin, const void* compare, void* result, const Datatype& type,
                      int target, std::int64_t disp);
  /// accumulate's fast case alone (the accumulate lock path on a CPU-atomic window, the target's
  /// accumulate lock free), as fastFetchAndOp: `count` elements of the predefined type whose
  /// handle is `kind` on both sides, by the operation with handle `op`. Handles, not objects:
  /// MPI_Accumulate passes its arguments straight on, and anything else (a derived type, a bad
  /// handle) declines.
  bool fastAccumulate(const void* origin, std::int64_t count, int kind, int target,
                      std::int64_t disp, int op) noexcept;
  /// fetchAndOp / compareAndSwap's fast case alone (one 8-byte integer on a CPU-atomic window):
  /// true when done; false with nothing done (then the call itself checks and names errors).
  /// Never throws, so the C bindings try it before setting up their error handling.
  bool fastFetchAndOp(const void* origin, void* result, const Datatype& type, int target,
                      std::int64_t disp, Op op) noexcept;
  bool fastCompareAndSwap(const void* origin, const void* compare, void* result,
                          const Datatype& type, int target, std::int64_t disp) noexcept;
  /// Their local message case alone, where nothing of this rank's is outstanding at the target:
  /// one element through the fetch box (am.cpp), compare-and-swap when `compare` is given.
  /// kDone: the old value is in `result`. kDeclined: nothing done (the call itself then takes
  /// it, or names the error). kPosted: the request is out and its reply did not come within
  /// boxSpin()'s polls; awaitBox() waits for it, driving progress (and can throw: a failed
  /// peer). Never throws itself, so the C bindings try it before their error handling: the
  /// round trip is a few hundred nanoseconds, and the calls past it were a fifth of it.
  enum class BoxFetch { kDeclined, kDone, kPosted };
  BoxFetch fastBox(const void* origin, const void* compare, void* result, const Datatype& type,
                   int target, std::int64_t disp, Op op) noexcept;
  /// Waits for the reply to fastBox()'s posted request and copies the old value out.
  void awaitBox();

  /// MPI_Win_set_info: the hints in effect from now on (same_size and same_disp_unit are only
  /// checked at creation).
  void setHints(const WindowHints& hints) { hints_ = hints; }
  [[nodiscard]] const WindowHints& hints() const noexcept { return hints_; }

  [[nodiscard]] void* base() const noexcept { return base_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] int dispUnit() const noexcept { return dispUnit_; }
  [[nodiscard]] Flavor flavor() const noexcept { return flavor_; }
  [[nodiscard]] Comm& comm() const noexcept { return comm_; }
  /// This rank's window memory as bytes.
  [[nodiscard]] std::span<std::byte> local() const noexcept {
    return {static_cast<std::byte*>(base_), size_};
  }

 private:
  struct Target {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    int dispUnit = 1;
    std::uint8_t lock = 0;  // kLockNone / kLockShared / kLockExclusive, | kLockNocheck
    bool resolved = false;
    // Whether base, size, disp_unit and the keys are known: at creation (gathered), or read
    // from the target's board slot on first use (describe()).
    bool described = false;
    bool amPending = false;  // accumulates by message sent that amWait has not seen applied
    std::vector<std::byte> packedKey;
    std::unique_ptr<transport::RemoteKey> ownKey;  // unpacked on first access
    // The key in use: ownKey's, or in a dynamic window the key of the region the access in
    // progress lies in (set by check()).
    transport::RemoteKey* key = nullptr;
    std::byte* direct = nullptr;  // local address of window offset 0 on the load / store path
    std::uint64_t directLo = 0;   // window offsets [directLo, directHi) are on that path
    std::uint64_t directHi = 0;
    // `direct` when the whole window, not empty, is on that path; null otherwise. Set with
    // `resolved` by settle(): the fast paths' one test instead of five.
    std::byte* whole = nullptr;
    // The target's control words (lock word, lock_all counter at rank 0, accumulate lock).
    std::uint64_t ctlBase = 0;
    std::uint64_t ctlNonce = 0;  // the kNonceWord the target wrote (its descriptor's copy)
    std::uint64_t syncAddr = 0;  // the target's fence slots (SyncRegion), in its control region
    std::vector<std::byte> ctlPackedKey;
    // Shared with the context's kept peer keys (Context::peerKey) when on the load / store path.
    std::shared_ptr<transport::RemoteKey> ctlKey;
    int member = -1;  // this target's rank in the window's group (set with `described`)
    // The control words' local address, where loads and stores reach them (cpuReach /
    // ctlReach); used for atomics with cpuAtomics_ or amInts_.
    std::byte* ctlDirect = nullptr;
    std::uint64_t completions = 0;  // flushes (complete()) of this target, for request tickets
    // Accumulates by active message to this target (src/window/am.cpp): tickets sent, and the
    // target's applied / released counters as last read.
    std::uint64_t amSent = 0;
    std::uint64_t amApplied = 0;
    std::uint64_t amReleased = 0;

    /// The part [a, b) of window offsets [lo, hi) on the load / store path (a == b: none).
    [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> directPart(
        std::uint64_t lo, std::uint64_t hi) const noexcept {
      const std::uint64_t a = std::clamp(directLo, lo, hi);
      return {a, std::clamp(directHi, a, hi)};
    }
    /// Marks the target resolved once base, size and the load / store span are set.
    void settle() noexcept {
      whole = direct != nullptr && directLo == 0 && directHi == size && size > 0 ? direct : nullptr;
      resolved = true;
    }
  };
  /// Per-target state, in pages of kPage targets made when one of them is first touched: a
  /// rank holds state for the targets it reaches, plus a pointer per kPage ranks. The last page
  /// holds only the targets that exist (a 2-rank window keeps 2 Targets, not kPage).
  class TargetTable {
   public:
    // A halo code touches a page or two (1.4 KB each), and a window on one node also rank 0's
    // (its lock_all word); the pointers cost p bytes.
    static constexpr std::size_t kPage = 8;
    // Out of line: Target holds keys of a type incomplete here.
    void resize(std::size_t n);
    void clear() noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    Target& operator[](std::size_t i) {
      auto& page = pages_[i / kPage];
      if (!page) [[unlikely]]
        return make(i);
      return page[i % kPage];
    }
    /// A target never touched reads as a fresh one (nothing issued, not described).
    const Target& operator[](std::size_t i) const {
      const auto& page = pages_[i / kPage];
      return page ? page[i % kPage] : untouched();
    }
    /// Target i if it was ever touched, else null: for fast cases, which then decline rather
    /// than call out for the fresh one.
    [[nodiscard]] const Target* touched(std::size_t i) const noexcept {
      const auto& page = pages_[i / kPage];
      return page ? &page[i % kPage] : nullptr;
    }
    /// fn(index, target) for every target whose page exists (the others were never touched).
    template <class F>
    void forEach(F&& fn) {
      each(*this, fn);
    }
    template <class F>
    void forEach(F&& fn) const {
      each(*this, fn);
    }

   private:
    template <class Self, class F>
    static void each(Self& self, F& fn) {
      for (std::size_t p = 0; p < self.pages_.size(); ++p) {
        if (!self.pages_[p]) continue;
        for (std::size_t j = 0; j < kPage && p * kPage + j < self.n_; ++j) {
          fn(p * kPage + j, self.pages_[p][j]);
        }
      }
    }
    Target& make(std::size_t i);
    static const Target& untouched();
    std::vector<std::unique_ptr<Target[]>> pages_;
    std::size_t n_ = 0;
  };
  enum class Epoch { kNone, kFence, kPassive, kPscw };
  static constexpr std::uint8_t kLockNone = 0;
  static constexpr std::uint8_t kLockShared = 1;
  static constexpr std::uint8_t kLockExclusive = 2;
  static constexpr std::uint8_t kLockNocheck = 4;
  static constexpr std::uint8_t kLockStarted = 8;  // in the MPI_Win_start group
  // With kLockExclusive: taken without announcing at rank 0 (quietExclusive()), so unlock
  // leaves the master word alone.
  static constexpr std::uint8_t kLockQuiet = 16;
  /// Whether operations may target `t` now: a fence epoch or lock_all, a lock of it, or a PSCW
  /// access epoch that includes it.
  [[nodiscard]] bool isOpen(const Target& t) const { return allOpen_ || t.lock != kLockNone; }
  // Control words, in 8-byte units of the control region.
  static constexpr int kLockWord = 0;     // this rank as a lock target: shared count, kExclusiveBit
  static constexpr int kMasterWord = 1;   // at rank 0: lock_all holders (low half), exclusive
                                          // lockers anywhere (bits 32-61), and on CPU-atomic
                                          // windows whether lock_all was ever used (62, 63)
  static constexpr int kAccLockWord = 2;  // held while an origin runs an accumulate here
  static constexpr int kPostWord = 3;     // MPI_Win_post notices this rank has received
  static constexpr int kCompleteWord = 4;  // MPI_Win_complete notices this rank has received
  static constexpr int kAmTicketWord = 5;  // tickets for slots of this rank's inbox
  // A number new with each window (its descriptor carries it too): a peer's mapping of this
  // control region kept from an earlier window (Context::peerKey) shows it only if it maps the
  // same region, not one freed since that packed to the same key.
  static constexpr int kNonceWord = 7;
  static constexpr std::size_t kControlBytes = 64;

  Window(Comm& comm, Flavor flavor, int dispUnit);
  /// Where an allocate window's control area starts in its registration, and its size.
  static constexpr std::size_t controlOffset(std::size_t size) noexcept {
    return (size + 63) / 64 * 64;
  }
  static std::size_t controlBytes(bool amMode) noexcept;
  /// The creation allgather. `failure` (class, message) is this rank's error so far, if any.
  void setUp(void* base, std::size_t size, int failClass, const std::string& failure);
  Target& resolve(int target);
  /// t's window key and control key, unpacked through `ep` on first use; the packed bytes are
  /// dropped then (every later use takes the unpacked key).
  transport::RemoteKey& dataKey(Target& t, transport::Endpoint& ep);
  transport::RemoteKey& controlKey(Target& t, transport::Endpoint& ep);
  /// Dynamic windows: finds the region at `target` holding bytes [lo, hi), or the adjacent
  /// regions that together do, and makes the (first) one's key the target's current one, the
  /// parts in dynSpan_ when there are several; kErrRmaRange when there is none, after
  /// re-reading the table.
  void dynamicRegion(const char* what, int target, std::uint64_t lo, std::uint64_t hi);
  /// Re-reads `target`'s attach table if it changed since the cached copy.
  void readTable(int target);
  /// Moves this rank's attach table's entries to an array of twice the capacity (dynamic.hpp).
  void growTable();
  /// One attached region's part of an access that spans several (dynamicRegion).
  struct SpanPart {
    std::uint64_t lo;
    std::uint64_t hi;
    transport::RemoteKey* key;
  };
  /// Calls fn(key, skip, addr, len) for the parts of target bytes [addr, addr + n) of the
  /// access in progress that each lie in one attached region (skip: bytes before the part);
  /// one call with t.key but in a dynamic window whose access spans regions.
  template <class F>
  void byRegion(transport::RemoteKey* key, std::uint64_t addr, std::uint64_t n, F&& fn) const {
    if (dynSpan_.empty()) {
      fn(*key, 0, addr, n);
      return;
    }
    for (const SpanPart& part : dynSpan_) {
      const std::uint64_t lo = std::max(part.lo, addr);
      const std::uint64_t hi = std::min(part.hi, addr + n);
      if (lo < hi) fn(*part.key, lo - addr, lo, hi - lo);
    }
  }
  /// The key of target bytes [addr, addr + n) when they lie in one region (an atomic on one
  /// element): t.key, or the region's in an access spanning several; kErrRmaRange when the
  /// bytes cross from one region into the next.
  transport::RemoteKey* keyFor(transport::RemoteKey* key, std::uint64_t addr,
                               std::uint64_t n) const;
  /// Validates a put / get and returns the byte offset in the target's window.
  std::uint64_t check(const char* what, const void* origin, std::int64_t ocount,
                      const Datatype& otype, int target, std::int64_t disp, std::int64_t tcount,
                      const Datatype& ttype);
  /// The load / store path's fast case; false: take transfer().
  template <bool kPut>
  bool fastDirect(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                  std::int64_t disp, std::int64_t tcount, const Datatype& ttype);
  /// The transport path's fast case (one contiguous piece to a target none of whose window is
  /// on the load / store path: verbs, UCX between nodes); false: take transfer().
  template <bool kPut>
  bool fastRemote(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                  std::int64_t disp, std::int64_t tcount, const Datatype& ttype);
  /// MPI_Fetch_and_op / MPI_Compare_and_swap's fast case (one 8-byte integer, a CPU-atomic
  /// window, an open target, a word inside its window); false: take atomicUpdate(). Inlined
  /// into fastFetchAndOp and fastCompareAndSwap (accumulate.cpp).
  [[gnu::always_inline]] inline bool fastAtomic(const void* origin, const void* compare,
                                                void* result, const Datatype& type, int target,
                                                std::int64_t disp, Op op);
  /// The local address of `count` elements of `size` bytes at `disp` of `target` (in the group),
  /// with their byte count in `bytes`, when the target is open, its whole window is on the load
  /// / store path and the elements lie inside it; null otherwise (the fast paths' common test).
  /// Inline: every fast path starts here.
  std::byte* directFootprint(int target, std::int64_t disp, std::int64_t count, std::size_t size,
                             std::int64_t& bytes) {
    Target& t = targets_[static_cast<std::size_t>(target)];
    std::int64_t offset = 0;
    if (t.whole == nullptr || !isOpen(t) || !inWindow(t, disp, count, size, offset, bytes)) {
      return nullptr;
    }
    return t.whole + offset;
  }
  /// Whether `count` elements of `size` bytes at displacement `disp` lie inside t's window,
  /// computed without overflow: sets the byte offset and length (the fast paths' footprint).
  static bool inWindow(const Target& t, std::int64_t disp, std::int64_t count, std::size_t size,
                       std::int64_t& offset, std::int64_t& bytes) {
    std::int64_t end = 0;
    return !__builtin_mul_overflow(disp, static_cast<std::int64_t>(t.dispUnit), &offset) &&
           !__builtin_mul_overflow(count, static_cast<std::int64_t>(size), &bytes) &&
           !__builtin_add_overflow(offset, bytes, &end) &&
           static_cast<std::uint64_t>(end) <= t.size;
  }
  /// Runs fn holding `target`'s accumulate lock (a compare-and-swap on its control word, retried
  /// with retryPause), released also when fn throws.
  template <class F>
  void underAccLock(int target, F&& fn);
  /// The accumulate lock path's fast case (count elements of one predefined, gap-free,
  /// non-int64 type on origin, target and result alike; a CPU-atomic window; an open target; a
  /// footprint inside its window); false: take atomicUpdate().
  /// `kind`: the type's handle, 0 for a derived type (which declines). With `wait` false, a
  /// lock held by another origin makes it return false, having done nothing.
  bool fastLocked(const void* origin, void* result, std::int64_t count, int kind, int target,
                  std::int64_t disp, Op op, bool wait = true);
  /// Calls fn(originPiece, targetOffset, len) for every piece of a transfer, walking both type
  /// maps in step (the window's one datatype walker).
  void walk(std::byte* origin, std::size_t ocount, const Datatype& otype, std::uint64_t toffset,
            std::size_t tcount, const Datatype& ttype,
            const std::function<void(std::byte*, std::uint64_t, std::size_t)>& fn);
  /// Marks `target` as having operations that its next flush must complete.
  void markDirty(int target);
  /// Completes every operation issued to `target` (or to all when target < 0).
  void complete(int target);
  /// An 8-byte atomic on the word at remote address `raddr` of `target`'s window: a CPU atomic
  /// on windows with cpuAtomics_ (aligned words), the transport's otherwise. Returns the old value.
  std::uint64_t atomic64(int target, int op, std::uint64_t operand, std::uint64_t compare,
                         std::uint64_t raddr);
  /// Creation's exchange (setUp): publish() puts this rank's descriptor on the communicator's
  /// board and agrees on a constant-size summary; false: every rank gather()s instead.
  bool publish(const std::vector<std::byte>& blob, int failClass);
  void gather(const std::vector<std::byte>& blob, int failClass, const std::string& failure);
  /// Fails the creation (on every rank alike) when the lowest rank that promised same_size
  /// (same_disp_unit), -1 for none, sees sizes (disp_units) from min to max that differ.
  static void checkPromises(std::int64_t sizeRank, std::int64_t minSize, std::int64_t maxSize,
                            std::int64_t dispRank, std::int64_t minDisp, std::int64_t maxDisp);
  /// Fills t, member `member`'s target, from its descriptor (the window, control and sync
  /// regions).
  static void parseDescriptor(std::span<const std::byte> blob, Target& t, int member);
  /// `member`'s descriptor, read from its board slot (checked against this window's number).
  std::vector<std::byte> readDescriptor(int member);
  /// `target` with its descriptor read (once).
  Target& describe(int target) {
    Target& t = targets_[static_cast<std::size_t>(target)];
    if (!t.described) [[unlikely]]
      describeSlow(target);
    return t;
  }
  void describeSlow(int target);
  void releaseSlot() noexcept;
  /// Whether loads and stores reach `target`'s window memory and control words (resolved);
  /// sets t.ctlDirect when they do.
  bool cpuReach(int target, Target& t);
  /// Whether loads and stores reach the first `bytes` of `target`'s control region; sets
  /// t.ctlDirect when they do.
  bool ctlReach(int target, Target& t, std::size_t bytes);
  /// Decides cpuAtomics_ (and the local message mode, amInts_) with the other ranks (setUp).
  void agreeOnCpuAtomics();
  /// A remote atomic on one of `target`'s control words; returns the old value.
  std::uint64_t control(int target, int word, int op, std::uint64_t operand,
                        std::uint64_t compare = 0);
  /// Adds `value` to control word `word` of each of `targets` behind everything this rank
  /// issued to it, and waits until all of that is complete: one round trip where the transport
  /// runs a remote add after the requests before it (verbs), instead of one to complete and
  /// one to add. Returns the targets it could not do so for (another transport, CPU atomics,
  /// accumulate messages the target's CPU has yet to apply): the caller completes those, then
  /// adds with control(). Either way the caller still runs complete() for every target.
  std::vector<int> addAfterOperations(std::span<const int> targets, int word, std::uint64_t value);
  /// Posts a remote add of `value` to control word `word` of `target` (Endpoint::postAdd) and
  /// returns the endpoint it is on, not waiting; nullptr, doing nothing, where the transport
  /// does not post adds. Only where control() goes through the transport (not CPU atomics).
  transport::Endpoint* postControlAdd(int target, int word, std::uint64_t value,
                                      transport::AddAfter after);
  /// As postControlAdd, an 8-byte fetch-add or compare-and-swap (Endpoint::postFetch) whose old
  /// value is in *result once the returned endpoint is flushed.
  transport::Endpoint* postControlFetch(int target, int word, transport::AtomicOp op,
                                        std::uint64_t operand, std::uint64_t compare,
                                        std::uint64_t* result);
  void requireLive() const;
  /// Throws kErrRank unless `target` is in the group or MPI_PROC_NULL.
  void checkRank(int target) const;
  /// This rank's control word `word`, read locally (remote atomics update it).
  [[nodiscard]] std::uint64_t ownControl(int word) const;
  /// Validates a PSCW group: ranks in the window's group, each once. Leaves them sorted in
  /// `out` (whose capacity is reused: an epoch per iteration allocates nothing).
  void pscwGroup(const char* call, std::span<const int> ranks, std::vector<int>& out) const;
  /// The passive-target checks shared by lock and lock_all.
  void checkLockable(const char* call, int assertion);
  // The general paths (out of line, so the fast cases above need no stack frame).
  [[gnu::noinline]] void lockSlow(LockType type, int target, int assertion);
  [[gnu::noinline]] void unlockSlow(int target);
  [[gnu::noinline]] void flushSlow(int target);
  [[gnu::noinline]] void lockAllSlow(int assertion);
  [[gnu::noinline]] void unlockAllSlow();
  /// Whether operations to target i wait for a flush (dirty_ is empty most of the time: then no
  /// bit lookup).
  [[nodiscard]] bool unflushed(std::size_t i) const { return !dirty_.empty() && isDirty_[i]; }
  /// fetchAndOp() and compareAndSwap() past their CPU-atomic case (out of line, so the fast
  /// case needs no stack frame).
  [[gnu::noinline]] void fetchAndOpSlow(const void* origin, void* result, const Datatype& type,
                                        int target, std::int64_t disp, Op op);
  /// accumulate() past its fast case: the checks, in order, and atomicUpdate().
  [[gnu::noinline]] void accumulateSlow(const void* origin, std::int64_t ocount,
                                        const Datatype& otype, int target, std::int64_t disp,
                                        std::int64_t tcount, const Datatype& ttype, Op op);
  [[gnu::noinline]] void compareAndSwapSlow(const void* origin, const void* compare, void* result,
                                            const Datatype& type, int target, std::int64_t disp);
  /// The exclusive lock's second step: compare-and-swap `target`'s lock word until it is taken
  /// (from `idle`, the word with no holder: 0, or kLockAllMark once marked; passive.cpp).
  void takeExclusive(int target, std::uint64_t idle);
  /// acquire()'s exclusive lock through a transport that posts fetching atomics (verbs): the
  /// announcement at rank 0 and the target's word in one round trip. False, doing nothing,
  /// where it cannot (the caller announces, then takes the word).
  bool acquireExclusiveAtOnce(int target, std::uint64_t idle);
  /// On a window whose control words take transport atomics: takes `target`'s lock word with
  /// one compare-and-swap, without announcing at rank 0, until the window's first lock_all has
  /// marked the lock words (passive.cpp). False, with nothing held, once they are marked.
  bool quietExclusiveRemote(int target);
  /// Whether this window's control words take CPU atomics (cpuAtomics_, or the local message
  /// mode's amInts_) rather than the transport's: the branch every lock and notice takes.
  [[nodiscard]] bool cpuControl() const noexcept { return cpuAtomics_ || amInts_; }
  /// That first lock_all's part (transport atomics): one rank marks every lock word and waits
  /// for the exclusive locks taken quietly before its mark; the others wait for it. `master`:
  /// the master word as this rank's add to it left it.
  void markLockWords(std::uint64_t master);
  /// On a CPU-atomic window that has never seen MPI_Win_lock_all: takes `target`'s lock word
  /// without announcing at rank 0 (passive.cpp says why that is safe). False, with nothing
  /// held, once lock_all has begun or, unless `wait`, when the word is taken.
  bool quietExclusive(Target& t, bool wait);
  /// The first lock_all holders' wait for exclusive locks taken quietly (quietExclusive()).
  void awaitQuietLocks();
  /// Takes `target`'s lock (retrying); returns kLockQuiet when the exclusive lock was taken
  /// quietly (quietExclusive()), else 0.
  std::uint8_t acquire(LockType type, int target);
  /// Completes the epoch's operations at `target` and releases `lock` (what MPI_Win_lock took).
  void release(std::uint8_t lock, int target);
  /// Sleeps a little more each time (a lock retry), driving progress.
  void retryPause(unsigned attempt);
  void atomicUpdate(const char* what, const void* origin, std::int64_t ocount,
                    const Datatype& otype, void* result, std::int64_t rcount, const Datatype& rtype,
                    int target, std::int64_t disp, std::int64_t tcount, const Datatype& ttype,
                    Op op, const void* compare);

  // ---- accumulate by active message (src/window/am.cpp) ----
  /// Sends an accumulate of packed origin values `src` (null for NO_OP) to `target`'s inbox,
  /// where its progress thread applies it; with `old`, waits for the old values (packed).
  /// `packed`: `bytes` contiguous bytes as one committed type (the caller's, built once).
  void amUpdate(int target, const std::byte* src, const void* compare, std::byte* old,
                std::uint64_t offset, std::size_t tcount, const Datatype& ttype, Op op, int kind,
                const Datatype& packed);
  /// Waits until every message sent to `target` (every target when < 0) has been applied.
  void amWait(int target);
  /// The local message mode (amInts_): the address of `ticket`'s slot in t's mapped inbox,
  /// once the target has released it.
  std::byte* directSlot(Target& t, std::uint64_t ticket);
  /// The local message mode: publishes the message written in `ticket`'s slot (its stamp).
  void directSend(Target& t, std::uint64_t ticket);
  /// The local message mode: waits for the reply to a message from directOpen() (which the
  /// target stores into this rank's control region) and copies its `bytes` to `reply`.
  void directAwait(int target, Target& t, std::uint64_t ticket, std::byte* reply,
                   std::size_t bytes);
  /// fastMessage's and fastBox's test: the byte offset in `target`'s window of the one element
  /// of `type` that a fetch_and_op by `op` (a compare-and-swap when `compare` is given) would
  /// update by message, the target being an open, described peer; -1 when it cannot go that way
  /// (then atomicUpdate() checks everything and names what is wrong).
  [[nodiscard]] std::int64_t messageOffset(const void* origin, const void* compare,
                                           const void* result, const Datatype& type, int target,
                                           std::int64_t disp, Op op) const noexcept;
  /// The local message mode: writes one fetch_and_op / compare_and_swap into this rank's fetch
  /// box for `target` (nothing else outstanding there); the old value will go to `result`.
  void boxPost(int target, int kind, std::size_t elem, Op op, std::uint64_t offset,
               const void* origin, const void* compare, void* result) noexcept;
  /// Whether the posted request's reply is in (one load).
  [[nodiscard]] bool boxReplied() const noexcept;
  /// Polls for it, pausing between polls, about as long as a wait's tight loop lasts (no
  /// progress); true, the old value copied out, when it came.
  bool boxSpin() noexcept;
  /// The target's side: answers every origin's new box request for this rank; true if any.
  bool serviceBoxes();
  /// Origin r's box request word if it is new and for this rank, else 0.
  [[nodiscard]] std::uint64_t newBoxRequest(std::size_t r) const noexcept;
  /// The local message mode, amUpdate's pipelined fetches (their replies stay in the slot):
  /// waits for the reply to `ticket`, copies it out, acknowledges it.
  void directReply(Target& t, std::uint64_t ticket, std::byte* reply, std::size_t replyAt,
                   std::size_t replyBytes);
  /// A reply showed the target has applied every ticket below `applied`: t's applied count,
  /// and t no longer pending once that covers every ticket sent to it.
  void noteApplied(Target& t, std::uint64_t applied) noexcept;
  /// n consecutive tickets of target's inbox (the first returned; sent count, pending kept).
  std::uint64_t amTickets(int target, Target& t, std::size_t n);
  /// The local message mode: takes a ticket, waits for its slot, writes a one-segment header
  /// (window bytes [toff, toff + len), dataBytes of data) and returns where the data goes
  /// (kDirectData into the slot); directSend() publishes it. A fetch (kAmFetch in `flags`)
  /// asks for its reply in this rank's control region: wait for it with directAwait().
  std::byte* directOpen(int target, Target& t, std::uint64_t& ticket, std::uint32_t dataBytes,
                        Op op, int kind, std::uint32_t flags, std::uint64_t toff,
                        std::uint64_t len);
  static constexpr std::size_t kDirectData = 32 + 16;  // header, one segment
  /// The local message mode: a put or get of n bytes at window offset toff of `target` that
  /// loads and stores do not reach (a partial page), as one message (at most kMessageBytes).
  void messageTransfer(bool put, int target, Target& t, std::byte* origin, std::uint64_t toff,
                       std::size_t n);
  static constexpr std::size_t kMessageBytes = 4096 - kDirectData;  // one slot's data
  /// MPI_Fetch_and_op / MPI_Compare_and_swap's fast case in the local message mode (one
  /// predefined element, an open peer, inside its window); false: take atomicUpdate().
  bool fastMessage(const void* origin, const void* compare, void* result, const Datatype& type,
                   int target, std::int64_t disp, Op op);
  /// Whether bytes [off, off + len) of this rank's window are exposed: inside [0, size), or for
  /// a dynamic window inside an attached region (offsets are addresses). The inbox service
  /// checks each message with it, under the inbox lock (which attach / detach take too).
  [[nodiscard]] bool exposes(std::uint64_t off, std::uint64_t len) const;
  /// Target side: applies the messages that have arrived, in ticket order. Returns whether it
  /// did anything. Called with the context's inbox lock held (detail::Inboxes). `owner`: from
  /// the rank's own thread, which may use the transport: replies to origins that asked for a
  /// push (kAmPush) are then queued for pushReplies() instead of left in the slot.
  bool serviceInbox(bool owner);
  /// Whether serviceInbox() would find anything to do (a message's stamp in the next slot, or
  /// slots awaiting acknowledgement), read without the inbox lock: what the rank's own thread
  /// checks at every poll of a wait before taking the lock.
  [[nodiscard]] bool inboxPending() const noexcept;
  /// Writes the queued replies into their origins' control regions (the values, a fence, the
  /// token). The rank's own thread only, without the inbox lock (the transport may wait).
  void pushReplies();
  /// Replies pushed with their values when at most this long, or when the origin's memory is
  /// not mapped here; longer ones only announced (their values stay in the slot).
  static constexpr std::size_t kPushMapped = 256;
  enum class Reply { kValuesHere, kInSlot };
  /// Origin side: waits for the reply to message `stamp` in `target`'s slot at `slot`, and says
  /// where its values are: pushed into this rank's control region (kReplyData), or in the slot.
  Reply awaitReply(int target, std::size_t slot, std::uint64_t stamp);
  /// Origin side, through the transport: waits until `target` has applied every message this
  /// rank sent it, as its pushed applied count says, or as a read of its count does.
  void awaitApplied(int target, Target& t);
  [[nodiscard]] bool repliesQueued() const noexcept { return !amPushes_.empty(); }
  /// Between polls of a remote counter: drive progress, after a few polls retryPause.
  void pollPause(unsigned attempt);
  /// One 8-byte word of `target`'s control region, read with a get.
  std::uint64_t readControl(int target, std::size_t byteOffset);
  void detachInbox() noexcept;
  friend class detail::Inboxes;

  template <bool kPut>
  void transfer(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                std::int64_t disp, std::int64_t tcount, const Datatype& ttype);
  /// Completes every operation issued so far (at origin and target) and then the unpacks of
  /// gets that went through the bounce buffer, which is free again afterwards.
  void completeIssued();
  /// Up to `want` bytes of the bounce buffer (at least 1); completes what is issued first when
  /// it is full. `offset` receives the bytes' offset in the buffer.
  std::byte* bounceSpace(std::size_t want, std::size_t& got, std::size_t& offset);

  /// A get whose data arrives in the bounce buffer and is unpacked into the origin buffer once
  /// complete: bytes [pos, pos + len) of the packed stream of (origin, count, type).
  struct PendingUnpack {
    std::size_t bounceOffset;
    std::size_t len;
    std::byte* origin;
    std::size_t count;
    Datatype::Ptr type;  // keeps a derived type alive until the unpack (MPI_Type_free may come)
    std::size_t pos;
  };

  Comm& comm_;
  Flavor flavor_;
  int dispUnit_;
  WindowHints hints_;
  void* base_ = nullptr;
  std::size_t size_ = 0;
  std::unique_ptr<transport::MemoryRegion> region_;   // our registration, if we made one
  const transport::MemoryRegion* exposed_ = nullptr;  // region_ or an MPI_Alloc_mem region
  std::unique_ptr<detail::SyncRegion> sync_;
  // This rank's control area (control words, accumulate inbox, fence slots): in control_, or
  // after the memory of an allocate window, in region_.
  std::unique_ptr<transport::MemoryRegion> control_;
  std::byte* ctlMem_ = nullptr;
  std::uint64_t ctlNonce_ = 0;  // as written in the kNonceWord
  bool controlReused_ = false;
  int ctlKeysReused_ = 0;
  std::size_t ctlLen_ = 0;
  TargetTable targets_;
  std::unique_ptr<transport::MemoryRegion> bounce_;  // registered, for packed transfers
  std::size_t bounceUsed_ = 0;
  std::vector<PendingUnpack> unpacks_;
  std::vector<transport::Iov> batchIov_;  // pieces of one transfer, issued together
  std::vector<std::uint64_t> batchAddr_;
  std::vector<SpanPart> dynSpan_;  // dynamicRegion: the regions an access spans, if several
  std::vector<int> dirty_;         // targets with operations not yet flushed
  std::vector<bool> isDirty_;
  std::size_t pendingOps_ = 0;
  // An operation since the last completion may have loaded or stored on the load / store path:
  // the next completion needs a full barrier (CPU atomics are barriers themselves).
  bool needFence_ = false;
  Epoch epoch_ = Epoch::kNone;
  bool allOpen_ = false;              // every target is open (a fence epoch or lock_all)
  std::uint64_t controlOps_ = 0;      // control() calls (controlOperations())
  std::uint8_t lockAll_ = 0;          // kLockShared (| kLockNocheck) while lock_all holds
  int locks_ = 0;                     // targets locked with MPI_Win_lock
  int procNullLocks_ = 0;             // MPI_Win_lock(MPI_PROC_NULL) epochs
  std::vector<int> started_;          // the MPI_Win_start group while its access epoch is open
  std::vector<int> postGroup_;        // the last MPI_Win_post group (scratch)
  bool posted_ = false;               // an MPI_Win_post exposure epoch is open
  std::uint64_t postOrigins_ = 0;     // how many MPI_Win_complete notices end it
  std::uint64_t postsTaken_ = 0;      // kPostWord notices that MPI_Win_start has consumed
  std::uint64_t completesTaken_ = 0;  // kCompleteWord notices that MPI_Win_wait / test consumed
  // Transport atomics: whether this window's lock words are known to be marked by its first
  // lock_all (a quiet exclusive lock would fail; an announced one takes a word from the mark).
  bool marked_ = false;
  bool masterAddPosted_ = false;  // an unlock's add to rank 0's holder count may be in flight
  // Accumulate by active message: whether this window uses it (the same on every rank), and
  // the target side's counters: messages applied, slots released, slots whose reply awaits the
  // origin's acknowledgement.
  // Every rank reaches every target's window and control words with loads and stores (one
  // node, shared memory): then every atomic of the window, from every rank, is a CPU atomic and
  // none a transport's, so the two never meet on a word. Agreed on at creation.
  bool cpuAtomics_ = false;
  int slot_ = -1;          // the board slot holding this rank's descriptor (publish())
  std::uint64_t seq_ = 0;  // this window's number on its communicator
  bool amMode_ = false;
  // The local message mode (agreeOnCpuAtomics): a create window on one node whose memory is not
  // all on the load / store path (partial pages), while every control area is. Then every
  // accumulate and atomic, 8-byte integers included, goes by message, written with stores into
  // the target's mapped inbox, and the control words take CPU atomics: no transport atomic (in
  // software at the target, with UCX over shared memory) and no cross-memory attach call.
  bool amInts_ = false;
  /// In that mode: each rank's control region as mapped here, where replies are stored
  /// (serviceInbox; set at creation, read by the progress thread too).
  std::vector<std::byte*> replyTo_;
  /// The fetch box (detail::kBoxRequest), in use where boxSeen_ is not empty (windows of at
  /// most kBoxMaxRanks ranks): this rank's last request number, and per origin the last
  /// request word this rank answered.
  std::uint64_t boxSeq_ = 0;
  std::vector<std::uint64_t> boxSeen_;
  /// The posted request's expected reply token, its result buffer and element size.
  std::uint64_t boxWant_ = 0;
  void* boxResult_ = nullptr;
  std::size_t boxElem_ = 0;
  bool localInbox_ = false;  // this rank's control area has an inbox for that mode
  bool amRegistered_ = false;
  std::uint64_t amApplied_ = 0;
  std::uint64_t amReleased_ = 0;
  /// amApplied_ when every applied slot is released, else kPeekBusy; published by
  /// serviceInbox() for inboxPending().
  std::atomic<std::uint64_t> amPeek_{0};
  static constexpr std::uint64_t kPeekBusy = ~std::uint64_t{0};
  std::uint64_t amOutstanding_ = 0;  // targets with messages not known to be applied
  std::vector<std::uint8_t> amAwaitingAck_;
  struct AmPush {
    int origin;
    std::size_t slot;   // the slot's offset in the control region
    std::size_t at;     // the reply's offset in the slot
    std::size_t bytes;  // the reply's length
    /// Not 0: no reply, but this applied count for the origin (this rank << kAppliedRankShift
    /// | count).
    std::uint64_t applied = 0;
  };
  std::vector<AmPush> amPushes_;
  /// The sources of pushed applied counts, each untouched until its put completed: reused
  /// round the ring, after completing every operation once per turn.
  std::array<std::uint64_t, 64> appliedWords_{};
  std::size_t appliedWordNext_ = 0;
  std::vector<std::byte> amScratch_;
  // Accumulate scratch (packed origin values, old and new target values), kept between calls.
  std::vector<std::byte> accIn_;
  std::vector<std::byte> accOld_;
  std::vector<std::byte> accNew_;
  // The packed side of the last accumulate's walks (`bytes` contiguous bytes), reused while the
  // size stays: building and committing a datatype per call cost more than an on-node update.
  std::shared_ptr<Datatype> accPacked_;
  bool freed_ = false;
  std::uint64_t epochs_ = 0;  // epochs opened (fence, lock, lock_all): dynamic tables' checks
  std::unique_ptr<detail::DynamicState> dyn_;
  // Shared windows: the segment as mapped here (unmapped when the last reference goes), and
  // this rank's part's registration in region_.
  std::shared_ptr<void> segment_;
};

}  // namespace onesided
