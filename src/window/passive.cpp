// SPDX-License-Identifier: BSD-3-Clause
// Passive-target synchronisation: MPI_Win_lock / unlock, lock_all / unlock_all, flush, sync.
//
// Locks live in each rank's control words (a small region registered for remote atomics, see
// Window::setUp) and are taken with remote atomics only: the target's CPU is never involved.
//   - lock word at target t: shared holders count in the low half; kExclusiveBit set by the
//     exclusive holder. Shared: fetch-add 1, and undo if the exclusive bit was set. Exclusive:
//     compare-and-swap 0 -> kExclusiveBit.
//   - master word at rank 0: lock_all holders in the low half, exclusive lockers (anywhere) in the
//     high half. MPI_Win_lock_all is a shared lock on every rank; instead of p fetch-adds it
//     takes one on the master word and backs off while an exclusive locker is announced there.
//     An exclusive locker announces itself there first and waits until no lock_all holds.
// Both sides increment first and check second, so of two racing lockers at least one sees the
// other and backs off; retries sleep a little longer each time, so waiting ranks neither flood
// the target with atomics nor spin a shared core.
//
// On a window whose atomics are all CPU atomics (one node), the announcement is skipped until
// the window's first lock_all, so that an exclusive lock is two atomics, as a lock on one word
// is, instead of four. Bit kLockAllBegun of the master word says that a lock_all has begun and
// kLockAllScanned that no quiet lock can be held any more:
//   - a quiet exclusive locker reads the master word, takes the target's word (compare-and-swap)
//     and reads the master word again; if kLockAllBegun is set by then it gives the word back
//     and announces itself as above;
//   - a lock_all holder that finds kLockAllScanned clear sets kLockAllBegun, then waits until no
//     rank's lock word has the exclusive bit, then sets kLockAllScanned.
// All of it is sequentially consistent: a quiet locker whose second read missed kLockAllBegun
// took its word before the lock_all set the bit, so the scan sees the word taken and waits for
// it. Any later quiet locker sees the bit and announces itself. The scan runs once per window
// (more only if several lock_alls start at once).
//
// Where the control words take transport (NIC) atomics, reading rank 0's word after the
// compare-and-swap would cost a round trip of its own. There the news that a lock_all has begun
// is put into every lock word instead: until then an exclusive lock is one compare-and-swap of
// the target's word from 0 (and one add to give it back), as osc ucx's is, instead of four
// atomics. The window's first lock_all (markLockWords):
//   - claims the marking by setting kLockAllBegun in the master word (compare-and-swap; a rank
//     that finds it claimed waits for kLockAllScanned instead);
//   - adds kLockAllMark to every rank's lock word, and waits for each word whose add returned
//     the exclusive bit until that bit is clear (a quiet holder's unlock);
//   - sets kLockAllScanned.
// A quiet compare-and-swap from 0 fails on a marked word; the locker learns so from the value
// it returns, and announces itself as above, taking the word from kLockAllMark instead of 0. A
// quiet lock taken before the mark is waited for; none can be taken after it. So the first
// lock_all of a window costs p more atomics, once; every later one costs one, at any size.
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "onesided/collectives.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "transport/transport.hpp"
#include "window/am.hpp"
#include "window/barrier.hpp"

namespace onesided {
namespace {

constexpr std::uint64_t kExclusiveBit = std::uint64_t{1} << 32;
constexpr std::uint64_t kLowHalf = kExclusiveBit - 1;
constexpr std::uint64_t kMinusOne = ~std::uint64_t{0};  // fetch-add of -1
// Master word bits for quiet exclusive locks (CPU-atomic windows only; see above), and the
// announced exclusive lockers' count between them and the lock_all count.
constexpr std::uint64_t kLockAllBegun = std::uint64_t{1} << 62;
constexpr std::uint64_t kLockAllScanned = std::uint64_t{1} << 63;
constexpr std::uint64_t kAnnounced = (kLockAllBegun - 1) & ~kLowHalf;
// Transport atomics: the mark the window's first lock_all adds to every lock word.
constexpr std::uint64_t kLockAllMark = std::uint64_t{1} << 40;

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

void Window::requireLive() const {
  if (freed_) throw Error(kErrWin, "window was freed");
}

void Window::checkRank(int target) const {
  const int p = comm_.size();
  if (target != kProcNull && (target < 0 || target >= p)) {
    throw Error(kErrRank, "target rank " + str(target) + " is not in the window's group (size " +
                              str(p) + ")");
  }
}

std::uint64_t Window::control(int target, int word, int op, std::uint64_t operand,
                              std::uint64_t compare) {
  Target& t = cpuAtomics_ ? resolve(target) : describe(target);
  ++controlOps_;
  if (cpuControl()) {  // (amInts_: every target's t.ctlDirect set at creation)
    return transport::cpuAtomic<std::uint64_t>(static_cast<transport::AtomicOp>(op),
                                               t.ctlDirect + static_cast<std::size_t>(word) * 8,
                                               operand, compare);
  }
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  transport::RemoteKey& key = controlKey(t, ep);
  std::uint64_t old = 0;
  // Through the transport, also for this rank's own words and on-node peers: a CPU atomic is
  // not atomic with respect to a NIC's (unless no rank uses the NIC's: cpuAtomics_, amInts_).
  ep.atomic(static_cast<transport::AtomicOp>(op), 8, operand, compare, &old,
            t.ctlBase + static_cast<std::uint64_t>(word) * 8, key);
  return old;
}

std::vector<int> Window::addAfterOperations(std::span<const int> targets, int word,
                                            std::uint64_t value) {
  if (cpuControl()) return {targets.begin(), targets.end()};
  std::vector<int> rest;
  std::vector<transport::Endpoint*> added;
  // Stores on the load / store path (an on-node peer's pages) visible before any add is posted.
  if (needFence_ || flavor_ == Flavor::kShared) detail::fullBarrier();
  for (int r : targets) {
    // Accumulate messages are applied by the target's CPU, after their delivery: only
    // complete() knows when.
    transport::Endpoint* ep =
        describe(r).amPending ? nullptr
                              : postControlAdd(r, word, value, transport::AddAfter::kEverything);
    if (ep == nullptr) {
      rest.push_back(r);
    } else {
      added.push_back(ep);
    }
  }
  for (transport::Endpoint* ep : added) ep->flush();  // all in flight at once: one round trip
  return rest;
}

transport::Endpoint* Window::postControlAdd(int target, int word, std::uint64_t value,
                                            transport::AddAfter after) {
  Target& t = describe(target);
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  if (!ep.postAdd(value, t.ctlBase + static_cast<std::uint64_t>(word) * 8, controlKey(t, ep),
                  after)) {
    return nullptr;
  }
  ++controlOps_;
  ep.post();
  return &ep;
}

std::uint64_t Window::atomic64(int target, int op, std::uint64_t operand, std::uint64_t compare,
                               std::uint64_t raddr) {
  Target& t = cpuAtomics_ ? resolve(target) : describe(target);
  if (cpuAtomics_ && raddr % 8 == 0) {
    return transport::cpuAtomic<std::uint64_t>(static_cast<transport::AtomicOp>(op),
                                               t.direct + (raddr - t.base), operand, compare);
  }
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  if (t.key == nullptr) {
    t.key = &dataKey(t, ep);
  }
  std::uint64_t old = 0;
  ep.atomic(static_cast<transport::AtomicOp>(op), 8, operand, compare, &old, raddr, *t.key);
  return old;
}

bool Window::cpuReach(int target, Target& t) {
  if (t.size > 0 && t.whole == nullptr) return false;
  // The control words are all that CPU atomics touch (an inbox, where there is one, is written
  // through the transport in this mode); control areas may differ in length (localInbox_).
  return ctlReach(target, t, kControlBytes);
}

bool Window::ctlReach(int target, Target& t, std::size_t bytes) {
  if (target == comm_.rank()) {
    t.ctlDirect = ctlMem_;
    return true;
  }
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  const transport::DirectSpan d = controlKey(t, ep).direct();
  if (d.lo <= t.ctlBase && t.ctlBase + bytes <= d.hi) {
    t.ctlDirect = reinterpret_cast<std::byte*>(t.ctlBase + static_cast<std::uint64_t>(d.delta));
    return true;
  }
  return false;
}

void Window::agreeOnCpuAtomics() {
  cpuAtomics_ = false;
  // Only windows on one node can qualify; every rank knows alike whether this one is, so the
  // others skip the agreement round together. Dynamic windows are reached through the keys of
  // attached regions, not a base: they keep the transport's atomics.
  if (flavor_ == Flavor::kDynamic || !comm_.context().sameNode(comm_)) return;
  const int p = comm_.size();
  const int me = comm_.rank();
  auto reach = [&](int r) { return cpuReach(r, resolve(r)); };
  if (p == 1) {
    cpuAtomics_ = reach(me);
    return;
  }
  using I64 = std::int64_t;
  if (flavor_ == Flavor::kAllocate) {
    // O(1) per rank: whether a peer maps an allocate window's memory (control words included:
    // one registration) depends on how its owner's transport allocated it (UCX: System V
    // segments, or POSIX shared memory, or private pages when both are exhausted), and on the
    // peer sharing the owner's PID namespace (POSIX segments are mapped through /proc/PID).
    // Within one PID namespace, one peer that maps it stands for all: each rank maps its right
    // neighbour's window (so every window is tried) and rank 0's (the lock_all word), and the
    // other targets are mapped when first reached (resolve()). Across PID namespaces on one
    // node, every target is checked, as below.
    const bool ok = reach(me) && reach((me + 1) % p) && reach(0);
    const I64 ns = comm_.context().pidNamespace();
    I64 v[3] = {ok ? 1 : 0, ns, -ns};
    coll::allreduce(comm_, coll::inPlace(), v, 3, &datatypeOf<I64>(), Op::kMin);
    if (v[1] == -v[2]) {
      cpuAtomics_ = v[0] == 1;
      return;
    }
  }
  // Every target mapped now (create windows: whether each rank's memory can be shared depends
  // on its own alignment), agreed by every rank. Where not (partial pages), but every rank has
  // an inbox (localInbox_) and reaches every control area, inbox included: the local message
  // mode (amInts_).
  bool ok = true;
  bool local = localInbox_;
  for (int r = 0; r < p && (ok || local); ++r) {
    Target& t = resolve(r);
    ok = ok && cpuReach(r, t);
    local = local && ctlReach(r, t, kControlBytes + detail::kInboxBytes);
  }
  I64 v[2] = {ok ? 1 : 0, local ? 1 : 0};
  coll::allreduce(comm_, coll::inPlace(), v, 2, &datatypeOf<I64>(), Op::kMin);
  cpuAtomics_ = v[0] == 1;
  if (!cpuAtomics_ && v[1] == 1) {
    amMode_ = true;
    amInts_ = true;
    replyTo_.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) replyTo_[static_cast<std::size_t>(r)] = resolve(r).ctlDirect;
    if (p <= detail::kBoxMaxRanks) boxSeen_.assign(static_cast<std::size_t>(p), 0);
  }
}

void Window::retryPause(unsigned attempt) {
  comm_.context().progress();
  comm_.context().yieldCallLock();
  if (attempt < 4) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(1U << std::min(attempt - 4, 8U)));
  }
}

void Window::checkLockable(const char* call, int assertion) {
  requireLive();
  if (hints_.noLocks) {
    throw Error(kErrRmaSync, std::string("the window has info no_locks=true (the program "
                                         "promised not to lock it; MPI_Win_set_info can take the "
                                         "promise back)"));
  }
  if ((assertion & ~kModeNocheck) != 0) {
    throw Error(kErrAssert, std::string(call) + ": assertion " + str(assertion) +
                                " has bits other than MPI_MODE_NOCHECK");
  }
  if (epoch_ == Epoch::kFence && pendingOps_ > 0) {
    throw Error(kErrRmaSync, std::string(call) + " inside a fence epoch with " +
                                 str(static_cast<std::int64_t>(pendingOps_)) +
                                 " operations issued (end it with MPI_Win_fence first)");
  }
  if (lockAll_ != kLockNone) {
    throw Error(kErrRmaSync,
                std::string(call) + " while MPI_Win_lock_all holds (call MPI_Win_unlock_all)");
  }
  if (epoch_ == Epoch::kPscw) {
    throw Error(
        kErrRmaSync,
        std::string(call) + " inside an access epoch of MPI_Win_start (MPI_Win_complete first)");
  }
}

using detail::controlWord;

// Inline (fastLock's case, wait false, is a few instructions); acquire's waits.
[[gnu::always_inline]] inline bool Window::quietExclusive(Target& t, bool wait) {
  auto master = controlWord(targets_[0].ctlDirect, kMasterWord);
  auto word = controlWord(t.ctlDirect, kLockWord);
  for (unsigned attempt = 0;; ++attempt) {
    if ((master.load() & kLockAllBegun) != 0) return false;
    std::uint64_t expected = 0;
    ++controlOps_;
    if (word.compare_exchange_strong(expected, kExclusiveBit)) {
      if ((master.load() & kLockAllBegun) == 0) return true;
      ++controlOps_;  // a lock_all began meanwhile: give the word back, and announce
      word.fetch_sub(kExclusiveBit);
      return false;
    }
    if (!wait) return false;
    retryPause(attempt);
  }
}

std::uint8_t Window::acquire(LockType type, int target) {
  using transport::AtomicOp;
  if (type == LockType::kShared) {
    for (unsigned attempt = 0;; ++attempt) {
      const std::uint64_t old =
          control(target, kLockWord, static_cast<int>(AtomicOp::kFetchAdd), 1);
      if ((old & kExclusiveBit) == 0) return 0;
      control(target, kLockWord, static_cast<int>(AtomicOp::kFetchAdd), kMinusOne);
      retryPause(attempt);
    }
  }
  if (cpuAtomics_ && quietExclusive(resolve(target), true)) {
    return kLockQuiet;
  }
  if (quietExclusiveRemote(target)) return kLockQuiet;
  const std::uint64_t idle = marked_ ? kLockAllMark : 0;
  if (acquireExclusiveAtOnce(target, idle)) return 0;
  // Exclusive: keep lock_all out (announce at rank 0), then take the target's word.
  for (unsigned attempt = 0;; ++attempt) {
    const std::uint64_t old =
        control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), kExclusiveBit);
    if ((old & kLowHalf) == 0) break;
    control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), ~kExclusiveBit + 1);
    retryPause(attempt);
  }
  takeExclusive(target, idle);
  return 0;
}

bool Window::quietExclusiveRemote(int target) {
  using transport::AtomicOp;
  if (cpuControl() || marked_) return false;
  for (unsigned attempt = 0;; ++attempt) {
    const std::uint64_t old =
        control(target, kLockWord, static_cast<int>(AtomicOp::kCompareSwap), kExclusiveBit, 0);
    if (old == 0) return true;
    if ((old & kLockAllMark) != 0) {  // (the mark is added once per window: a bit, not a count)
      marked_ = true;
      return false;
    }
    retryPause(attempt);  // held: shared holders, or another quiet exclusive one
  }
}

void Window::markLockWords(std::uint64_t master) {
  using transport::AtomicOp;
  constexpr int kCas = static_cast<int>(AtomicOp::kCompareSwap);
  constexpr int kAdd = static_cast<int>(AtomicOp::kFetchAdd);
  bool claimed = false;
  while ((master & (kLockAllBegun | kLockAllScanned)) == 0) {
    const std::uint64_t seen = control(0, kMasterWord, kCas, master | kLockAllBegun, master);
    claimed = seen == master;
    if (claimed) break;
    master = seen;
  }
  if (!claimed) {
    for (unsigned attempt = 0; (master & kLockAllScanned) == 0; ++attempt) {
      retryPause(attempt);
      master = readControl(0, kMasterWord * 8);
    }
    return;
  }
  const int p = comm_.size();
  for (int r = 0; r < p; ++r) {
    std::uint64_t word = control(r, kLockWord, kAdd, kLockAllMark);
    for (unsigned attempt = 0; (word & kExclusiveBit) != 0; ++attempt) {
      retryPause(attempt);
      word = readControl(r, kLockWord * 8);
    }
  }
  control(0, kMasterWord, kAdd, kLockAllScanned);
}

bool Window::acquireExclusiveAtOnce(int target, std::uint64_t idle) {
  using transport::AtomicOp;
  if (cpuControl()) return false;
  // The announcement at rank 0 and the compare-and-swap on the target's word in flight together:
  // one round trip. Taking the word before the announcement has landed is safe: each side of
  // the protocol still acts only on what its own increment returned. An exclusive holder's
  // announcement returned no lock_all holder, so every later lock_all sees it and backs off;
  // the word only ever orders this rank against lockers of the same target, and a word taken
  // while a lock_all holds is given back before anything is issued under it.
  for (unsigned attempt = 0;; ++attempt) {
    std::uint64_t announced = 0;
    std::uint64_t word = 0;
    transport::Endpoint* master =
        postControlFetch(0, kMasterWord, AtomicOp::kFetchAdd, kExclusiveBit, 0, &announced);
    if (master == nullptr) return false;
    transport::Endpoint* mine = postControlFetch(target, kLockWord, AtomicOp::kCompareSwap,
                                                 idle | kExclusiveBit, idle, &word);
    try {
      master->flush();
    } catch (...) {
      // The results land in this frame: none may still be on its way when it is gone.
      if (mine != nullptr && mine != master) {
        try {
          mine->flush();
        } catch (...) {  // NOLINT(bugprone-empty-catch): the first failure is the one to report
        }
      }
      throw;
    }
    if (mine == nullptr) {
      word = control(target, kLockWord, static_cast<int>(AtomicOp::kCompareSwap),
                     idle | kExclusiveBit, idle);
    } else if (mine != master) {
      mine->flush();
    }
    if ((announced & kLowHalf) == 0) {
      if (word != idle) takeExclusive(target, idle);  // announced: now wait for the word alone
      return true;
    }
    // A lock_all holds: withdraw both, wait, and try again.
    if (word == idle) {
      control(target, kLockWord, static_cast<int>(AtomicOp::kFetchAdd), ~kExclusiveBit + 1);
    }
    control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), ~kExclusiveBit + 1);
    retryPause(attempt);
  }
}

transport::Endpoint* Window::postControlFetch(int target, int word, transport::AtomicOp op,
                                              std::uint64_t operand, std::uint64_t compare,
                                              std::uint64_t* result) {
  Target& t = describe(target);
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  if (!ep.postFetch(op, operand, compare, result, t.ctlBase + static_cast<std::uint64_t>(word) * 8,
                    controlKey(t, ep))) {
    return nullptr;
  }
  ++controlOps_;
  ep.post();
  return &ep;
}

void Window::takeExclusive(int target, std::uint64_t idle) {
  for (unsigned attempt = 0;; ++attempt) {
    const std::uint64_t old =
        control(target, kLockWord, static_cast<int>(transport::AtomicOp::kCompareSwap),
                idle | kExclusiveBit, idle);
    if (old == idle) return;
    idle = old & kLockAllMark;  // (marked meanwhile: the word's idle value changed)
    retryPause(attempt);
  }
}

void Window::awaitQuietLocks() {
  auto master = controlWord(targets_[0].ctlDirect, kMasterWord);
  ++controlOps_;
  master.fetch_or(kLockAllBegun);
  const int p = comm_.size();
  for (int r = 0; r < p; ++r) {
    auto word = controlWord(resolve(r).ctlDirect, kLockWord);
    for (unsigned attempt = 0; (word.load() & kExclusiveBit) != 0; ++attempt) retryPause(attempt);
  }
  ++controlOps_;
  master.fetch_or(kLockAllScanned);
}

bool Window::fastLock(LockType type, int target, int assertion) noexcept {
  // What checkLockable, lock and acquire test, in the order that lets the common case through
  // with the fewest comparisons; every failure case goes the general way and is named there.
  if (!cpuAtomics_ || assertion != 0 || freed_ || hints_.noLocks || lockAll_ != kLockNone ||
      epoch_ == Epoch::kPscw || (epoch_ == Epoch::kFence && pendingOps_ > 0) ||
      static_cast<unsigned>(target) >= targets_.size()) {
    return false;
  }
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (t.lock != kLockNone || !t.resolved) return false;  // resolve(): the general path
  std::uint8_t quiet = 0;
  if (type == LockType::kExclusive &&
      (controlWord(targets_[0].ctlDirect, kMasterWord).load() & kLockAllBegun) == 0) {
    // No lock_all yet: the target's word alone (a taken word: the general path waits for it).
    if (!quietExclusive(t, false)) return false;
    quiet = kLockQuiet;
  } else if (type == LockType::kExclusive) {
    // As acquire(): announce at rank 0 (keeps lock_all out), then take the target's word. Seen
    // a lock_all holder: undo and let the general path wait for it.
    auto master = controlWord(targets_[0].ctlDirect, kMasterWord);
    ++controlOps_;
    if ((master.fetch_add(kExclusiveBit) & kLowHalf) != 0) {
      ++controlOps_;
      master.fetch_sub(kExclusiveBit);
      return false;
    }
    std::uint64_t expected = 0;
    ++controlOps_;
    if (!controlWord(t.ctlDirect, kLockWord).compare_exchange_strong(expected, kExclusiveBit)) {
      ++controlOps_;  // taken: withdraw, and let the general path wait (waits can throw)
      master.fetch_sub(kExclusiveBit);
      return false;
    }
  } else if (type == LockType::kShared) {
    auto word = controlWord(t.ctlDirect, kLockWord);
    ++controlOps_;
    if ((word.fetch_add(1) & kExclusiveBit) != 0) {
      ++controlOps_;
      word.fetch_sub(1);
      return false;
    }
  } else {
    return false;
  }
  t.lock = type == LockType::kShared ? kLockShared : (kLockExclusive | quiet);
  ++locks_;
  pendingOps_ = 0;  // in a fence epoch it was 0 already (tested above)
  epoch_ = Epoch::kPassive;
  allOpen_ = false;
  ++epochs_;
  return true;
}

bool Window::fastUnlock(int target) noexcept {
  if (!cpuAtomics_ || freed_ || static_cast<unsigned>(target) >= targets_.size()) return false;
  const auto i = static_cast<std::size_t>(target);
  Target& t = targets_[i];
  // Nothing for complete() to do but order this rank's stores: no transfer to flush, no packed
  // get to unpack, no accumulate by message to wait for.
  if ((t.lock & ~(kLockShared | kLockExclusive | kLockQuiet)) != 0 || t.lock == kLockNone ||
      unflushed(i) || bounceUsed_ != 0 || t.amPending) {
    return false;
  }
  // The release below is a sequentially consistent read-modify-write of the lock word (a full
  // barrier on x86): every store this rank made to the target's memory before it, on the load /
  // store path or by the program on a shared window, is visible to the next holder of the lock.
  needFence_ = false;
  ++controlOps_;
  if ((t.lock & kLockExclusive) != 0) {
    controlWord(t.ctlDirect, kLockWord).fetch_sub(kExclusiveBit);
    if ((t.lock & kLockQuiet) == 0) {
      ++controlOps_;
      controlWord(targets_[0].ctlDirect, kMasterWord).fetch_sub(kExclusiveBit);
    }
  } else {
    controlWord(t.ctlDirect, kLockWord).fetch_sub(1);
  }
  t.lock = kLockNone;
  if (--locks_ == 0 && procNullLocks_ == 0) {
    epoch_ = Epoch::kNone;
    pendingOps_ = 0;
  }
  return true;
}

bool Window::fastFlush(int target) noexcept {
  if (freed_ || epoch_ != Epoch::kPassive || static_cast<unsigned>(target) >= targets_.size()) {
    return false;
  }
  const auto i = static_cast<std::size_t>(target);
  const Target* t = targets_.touched(i);
  if (t == nullptr || (lockAll_ == kLockNone && t->lock == kLockNone) || unflushed(i) ||
      bounceUsed_ != 0 || t->amPending) {
    return false;
  }
  // complete(target) with nothing issued but loads and stores: order them.
  if (needFence_ || flavor_ == Flavor::kShared) {
    detail::fullBarrier();
    needFence_ = false;
  }
  return true;
}

void Window::release(std::uint8_t lock, int target) {
  using transport::AtomicOp;
  if ((lock & kLockNocheck) != 0) {
    complete(target);
    return;
  }
  const bool exclusive = (lock & kLockExclusive) != 0;
  const std::uint64_t value = exclusive ? ~kExclusiveBit + 1 : kMinusOne;
  // The target's word: behind the epoch's operations in one round trip where the transport
  // can (addAfterOperations), otherwise once they are complete.
  const int one[] = {target};
  const bool added = addAfterOperations(one, kLockWord, value).empty();
  complete(target);
  if (!added) control(target, kLockWord, static_cast<int>(AtomicOp::kFetchAdd), value);
  // Rank 0's count of exclusive holders only after the target's word (a lock_all waits on it
  // before it looks at the words). Where the transport can, that add is posted and not waited
  // for: this rank's own later requests to rank 0 (its next lock, lock_all or flush) queue
  // behind it, and other ranks only see the count a little later, which can only make a
  // lock_all wait longer; MPI_Win_free completes it before control regions go.
  if (exclusive && (lock & kLockQuiet) == 0) {
    if (added && postControlAdd(0, kMasterWord, ~kExclusiveBit + 1, transport::AddAfter::kWrites) !=
                     nullptr) {
      masterAddPosted_ = true;
      return;
    }
    control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), ~kExclusiveBit + 1);
  }
}

void Window::lockSlow(LockType type, int target, int assertion) {
  checkLockable("MPI_Win_lock", assertion);
  if (type != LockType::kShared && type != LockType::kExclusive) {
    throw Error(kErrLocktype, "lock type " + str(static_cast<int>(type)) +
                                  " is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE");
  }
  checkRank(target);
  if (target == kProcNull) {
    ++procNullLocks_;
  } else {
    Target& t = targets_[static_cast<std::size_t>(target)];
    if (t.lock != kLockNone) {
      throw Error(kErrRmaSync, "rank " + str(target) + " is already locked by this rank");
    }
    const bool nocheck = (assertion & kModeNocheck) != 0;
    const std::uint8_t quiet = nocheck ? 0 : acquire(type, target);
    t.lock = static_cast<std::uint8_t>(quiet |
                                       (type == LockType::kShared ? kLockShared : kLockExclusive) |
                                       (nocheck ? kLockNocheck : 0));
    ++locks_;
  }
  if (epoch_ == Epoch::kFence) pendingOps_ = 0;
  epoch_ = Epoch::kPassive;
  allOpen_ = false;
  ++epochs_;
}

void Window::unlockSlow(int target) {
  requireLive();
  checkRank(target);
  if (target == kProcNull) {
    if (procNullLocks_ == 0) {
      throw Error(kErrRmaSync, "MPI_PROC_NULL is not locked (no matching MPI_Win_lock)");
    }
    --procNullLocks_;
  } else {
    Target& t = targets_[static_cast<std::size_t>(target)];
    if (t.lock == kLockNone) {
      throw Error(kErrRmaSync,
                  "rank " + str(target) + " is not locked by this rank (no matching MPI_Win_lock)");
    }
    const std::uint8_t held = t.lock;
    release(held, target);  // everything issued in the epoch complete first
    t.lock = kLockNone;
    --locks_;
  }
  if (locks_ == 0 && procNullLocks_ == 0) {
    epoch_ = Epoch::kNone;
    pendingOps_ = 0;
  }
}

bool Window::fastLockAll(int assertion) noexcept {
  // What checkLockable and lockAllSlow test; the window's first lock_all (its one-time wait for
  // quiet exclusive locks) and an announced exclusive locker go the general way.
  if (!cpuAtomics_ || assertion != 0 || freed_ || hints_.noLocks || lockAll_ != kLockNone ||
      locks_ != 0 || procNullLocks_ != 0 || epoch_ == Epoch::kPscw ||
      (epoch_ == Epoch::kFence && pendingOps_ > 0)) {
    return false;
  }
  auto master = controlWord(targets_[0].ctlDirect, kMasterWord);
  if ((master.load() & kLockAllScanned) == 0) return false;
  ++controlOps_;
  if ((master.fetch_add(1) & kAnnounced) != 0) {
    ++controlOps_;
    master.fetch_sub(1);
    return false;
  }
  lockAll_ = kLockShared;
  pendingOps_ = 0;
  epoch_ = Epoch::kPassive;
  allOpen_ = true;
  ++epochs_;
  return true;
}

bool Window::fastUnlockAll() noexcept {
  // complete(-1) with nothing issued but loads and stores; the release below is a sequentially
  // consistent read-modify-write, which orders them (see fastUnlock).
  if (!cpuAtomics_ || freed_ || lockAll_ != kLockShared || !dirty_.empty() || bounceUsed_ != 0 ||
      amOutstanding_ != 0) {
    return false;
  }
  needFence_ = false;
  lockAll_ = kLockNone;
  epoch_ = Epoch::kNone;
  allOpen_ = false;
  pendingOps_ = 0;
  ++controlOps_;
  controlWord(targets_[0].ctlDirect, kMasterWord).fetch_sub(1);
  return true;
}

void Window::lockAllSlow(int assertion) {
  checkLockable("MPI_Win_lock_all", assertion);
  if (locks_ > 0 || procNullLocks_ > 0) {
    throw Error(kErrRmaSync, "MPI_Win_lock_all while " + str(locks_ + procNullLocks_) +
                                 " MPI_Win_lock epochs are open");
  }
  const bool nocheck = (assertion & kModeNocheck) != 0;
  if (!nocheck) {
    using transport::AtomicOp;
    for (unsigned attempt = 0;; ++attempt) {
      const std::uint64_t old = control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), 1);
      if ((old & kAnnounced) == 0) {  // no announced exclusive locker anywhere
        if (cpuAtomics_) {
          if ((old & kLockAllScanned) == 0) awaitQuietLocks();
        } else if (!cpuControl()) {  // transport atomics: every lock word marked, once
          if ((old & kLockAllScanned) == 0) markLockWords(old + 1);
          marked_ = true;
        }
        break;
      }
      control(0, kMasterWord, static_cast<int>(AtomicOp::kFetchAdd), kMinusOne);
      retryPause(attempt);
    }
  }
  lockAll_ = static_cast<std::uint8_t>(kLockShared | (nocheck ? kLockNocheck : 0));
  pendingOps_ = 0;
  epoch_ = Epoch::kPassive;
  allOpen_ = true;
  ++epochs_;
}

void Window::unlockAllSlow() {
  requireLive();
  if (lockAll_ == kLockNone) {
    throw Error(kErrRmaSync, "MPI_Win_unlock_all without MPI_Win_lock_all");
  }
  complete(-1);
  const bool nocheck = (lockAll_ & kLockNocheck) != 0;
  lockAll_ = kLockNone;
  epoch_ = Epoch::kNone;
  allOpen_ = false;
  pendingOps_ = 0;
  if (!nocheck) {
    control(0, kMasterWord, static_cast<int>(transport::AtomicOp::kFetchAdd), kMinusOne);
  }
}

void Window::flushSlow(int target) {
  requireLive();
  checkRank(target);
  if (epoch_ != Epoch::kPassive || (lockAll_ == kLockNone && target != kProcNull &&
                                    targets_[static_cast<std::size_t>(target)].lock == kLockNone)) {
    throw Error(kErrRmaSync, "flush of rank " + str(target) +
                                 " outside a passive-target epoch at it (MPI_Win_lock or "
                                 "MPI_Win_lock_all first)");
  }
  if (target != kProcNull) complete(target);
}

void Window::flushAll() {
  requireLive();
  if (epoch_ != Epoch::kPassive) {
    throw Error(kErrRmaSync,
                "flush outside a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all first)");
  }
  complete(-1);
}

void Window::sync() {
  requireLive();
  detail::fullBarrier();
}

}  // namespace onesided
