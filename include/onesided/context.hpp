// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace onesided {

namespace bootstrap {
class Bootstrap;
}
namespace transport {
class Transport;
class Endpoint;
class MemoryRegion;
class RemoteKey;
class SharedPagesCache;
}  // namespace transport

class Comm;
namespace detail {
class Inboxes;
class CallLock;
}  // namespace detail
namespace p2p {
class Engine;
}

/// How a Context is brought up.
struct Options {
  /// "ucx", "self" or "auto"; empty means the ONESIDED_TRANSPORT environment variable, else auto
  /// (UCX when built in, else self).
  std::string transport;
  /// The transport may be entered by several threads, one at a time (MPI_THREAD_SERIALIZED).
  bool threadSerialized = false;
  /// The program runs no thread of its own besides the one calling the runtime
  /// (MPI_THREAD_SINGLE): the partial pages at the ends of user memory a window exposes may be
  /// moved into shared memory too, so on-node peers reach all of it by loads, stores and CPU
  /// atomics (src/transport/shared_pages.hpp).
  bool singleThreaded = false;
  /// Tests that run ranks as threads set this when one rank failed, so the others' waits throw
  /// instead of hanging. Must outlive the Context.
  const std::atomic<bool>* cancel = nullptr;
  /// How accumulates of types without NIC atomics reach their target: "am" (an active message
  /// the target applies, see src/window/am.cpp), "lock" (a read-modify-write at the origin under
  /// the target's accumulate lock) or "auto": am for windows whose group spans several nodes,
  /// lock on one node (where loads and stores reach the target). Empty: ONESIDED_ACCUMULATE,
  /// else auto. Must be the same on every rank.
  std::string accumulate;
  /// A progress thread applies active messages while the rank computes: 1 on, 0 off (messages
  /// are then applied only when the rank calls into the runtime), -1: ONESIDED_PROGRESS_THREAD,
  /// else on.
  int progressThread = -1;
  /// MPI_THREAD_MULTIPLE: the lock every MPI call of the process holds; a wait that backs off
  /// lets go of it for a moment, so other threads' calls run (src/call_lock.hpp). Must outlive
  /// the Context.
  detail::CallLock* callLock = nullptr;
};

/// One rank's runtime: its bootstrap, its transport, and the world and self communicators.
/// There is no global state, so several Contexts can live in one process (one per thread).
/// Not thread-safe: one thread at a time.
class Context {
 public:
  /// Brings the transport up (one bootstrap allgather of addresses). Collective over the
  /// bootstrap's ranks. Throws onesided::Error.
  static std::unique_ptr<Context> create(std::unique_ptr<bootstrap::Bootstrap> boot,
                                         const Options& options = {});
  /// The usual entry point: ranks from onesided-run's environment, or a singleton (size 1)
  /// when the program was started without a launcher.
  static std::unique_ptr<Context> fromEnvironment(const Options& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  Comm& world() { return *world_; }
  Comm& self() { return *self_; }
  [[nodiscard]] std::string transportName() const;
  /// World ranks on this rank's node (itself included), ascending: from the launcher (PMIx
  /// locality under srun / mpirun; every rank under onesided-run and with threads as ranks).
  [[nodiscard]] const std::vector<int>& nodePeers() const noexcept { return nodePeers_; }

  /// Collective: completes everything, synchronises, and closes endpoints. The Context can only
  /// be destroyed afterwards (the destructor calls it if needed, logging failures).
  void finalize();

  /// MPI_Alloc_mem: memory from the transport (shared memory where it can), so a window later
  /// created over it is reached by on-node peers with plain loads and stores. len may be 0.
  void* allocMemory(std::size_t len);
  /// MPI_Free_mem; false when `p` did not come from allocMemory.
  bool freeMemory(void* p);
  /// The allocMemory region holding [p, p + len), or nullptr.
  [[nodiscard]] const transport::MemoryRegion* findMemory(const void* p, std::size_t len) const;
  /// The packed remote key of the allocMemory region holding [p, p + len) (packed once, kept
  /// until MPI_Free_mem), or nullptr: collectives expose such buffers without registering them.
  const std::vector<std::byte>* memoryKey(const void* p, std::size_t len);
  /// How many allocMemory regions have been freed so far.
  [[nodiscard]] std::uint64_t memoryFrees() const noexcept { return memoryFrees_; }
  /// Collectives' send buffers shared with on-node receivers (made on first use; `firstUse`
  /// as ONESIDED_COLL_SHARE says, the same for every caller).
  transport::SharedPagesCache& sharedSends(bool firstUse);
  /// What a kept region served (regions of one use are registered alike and interchangeable).
  enum class ScratchUse { kChannel, kWindowControl };
  /// A freed communicator's scratch region (or window's control region) of exactly `bytes`, for
  /// a new one, or null; `state` gets what keepScratch was told of its content. A fresh region
  /// costs a page fault per page here and in every on-node peer that maps it, which was most of
  /// an MPI_Comm_dup (4.8 ms of it at 2 ranks) and a third of an MPI_Win_create.
  std::unique_ptr<transport::MemoryRegion> takeScratch(ScratchUse use, std::size_t bytes,
                                                       std::uint64_t& state);
  /// Keeps a freed communicator's scratch region or window's control region (no peer writes
  /// into it any more) for takeScratch, with the keeper's word on its content (`state`); beyond
  /// kScratchKept regions of a use the oldest of them goes.
  void keepScratch(ScratchUse use, std::unique_ptr<transport::MemoryRegion> region,
                   std::uint64_t state);
  /// A peer's key unpacked before from the same packed bytes, with the peer's memory mapped
  /// here, if `mapsIt` says it still maps what the bytes name now (a region the peer freed and
  /// one it registered later may pack alike: then the kept key is dropped); else null.
  std::shared_ptr<transport::RemoteKey> peerKey(
      int worldRank, std::span<const std::byte> packed,
      const std::function<bool(const transport::RemoteKey&)>& mapsIt);
  /// Keeps a key for peerKey (at most kPeerKeysKept; the least recently used goes).
  void keepPeerKey(int worldRank, std::span<const std::byte> packed,
                   std::shared_ptr<transport::RemoteKey> key);
  /// This process's pid, read once (a system call costs about a microsecond in these VMs).
  [[nodiscard]] std::int64_t pid() const noexcept { return pid_; }
  /// The pid a world rank's collective channel named, once this process has read the peer's
  /// memory through it (cross-memory attach works between the two), or 0: a later channel to
  /// the same rank naming the same pid needs no check.
  std::int64_t& reachablePid(int worldRank);
  /// Whether reading an on-node peer's memory with cross-memory attach pays off here (measured
  /// once per process by the first collective channel that asks), or unset.
  std::optional<bool>& attachPaysOff() noexcept { return attachPaysOff_; }

  // ---- for the runtime's own layers (windows, collectives, C API) ----
  transport::Transport& transport() { return *transport_; }
  bootstrap::Bootstrap& bootstrap() { return *boot_; }
  /// The endpoint to a world rank, connected on first use.
  transport::Endpoint& endpoint(int worldRank);
  /// Drives the transport (and applies active messages that arrived); throws if the job is
  /// being cancelled. True when it did some work: the transport completed or handled something,
  /// or an inbox message was applied or released.
  bool progress();
  /// Whether windows over `comm` accumulate by active message (the same answer on every member).
  [[nodiscard]] bool accumulateByMessage(const Comm& comm) const;
  /// Whether the accumulate path is left to each window (ONESIDED_ACCUMULATE=auto).
  [[nodiscard]] bool accumulateAuto() const noexcept { return accMode_ == AccMode::kAuto; }
  /// Whether a progress thread applies inbox messages while the rank computes.
  [[nodiscard]] bool progressThread() const noexcept { return progressThread_; }
  /// Whether every member of `comm` is on this rank's node (the same answer on every member).
  [[nodiscard]] bool sameNode(const Comm& comm) const;
  /// The same for the members given by their world ranks.
  [[nodiscard]] bool sameNode(std::span<const int> worldRanks) const;
  /// This process's PID namespace (the inode of /proc/self/ns/pid), or -1 - rank when it cannot
  /// be read (so that ranks that cannot tell never count as sharing one). On-node peers map
  /// each other's shared memory through /proc/PID paths only inside one PID namespace.
  [[nodiscard]] std::int64_t pidNamespace() const noexcept { return pidNamespace_; }
  /// Under MPI_THREAD_MULTIPLE, lets the process's other threads' MPI calls run for a moment
  /// (waits that do not go through waitUntil call it as they back off).
  void yieldCallLock();
  /// Point-to-point messaging (src/p2p/).
  p2p::Engine& messages() { return *p2p_; }
  /// What world rank `worldRank` published for point-to-point messaging (Engine::localInfo).
  std::vector<std::byte> p2pInfo(int worldRank);
  /// The windows whose inboxes this rank serves (and the progress thread serving them).
  detail::Inboxes& inboxes();
  /// Applies what arrived in this rank's inboxes, unless the progress thread is at it; true
  /// when it did anything (progress() does this too, after the transport's progress).
  bool serviceInboxes();
  /// Whether an oversubscribed wait drives progress at every poll (kAlways), or at every
  /// fourth (kRarely): for a wait that nothing through the transport can end (a collective's
  /// phase among ranks that load and store each other's regions), where a progress call is
  /// 0.18 us of the core the rank waited for needs (4 ranks on 2 cores, 16 interleaved
  /// launches, alltoall of 64 KiB medians 19.58 -> 19.09 us). Messages for this rank (another
  /// rank's RMA) and a failed rank's cancellation are still seen, a few yields later.
  enum class Drive : std::uint8_t { kAlways, kRarely };
  /// Spins (driving progress) until done() is true, then backs off to yielding and sleeping so
  /// oversubscribed ranks do not starve each other.
  template <class Done>
  void waitUntil(Done&& done, Drive drive = Drive::kAlways) {
    // A short tight loop first: the answer usually arrives within a cache-line transfer or two,
    // and a pause (up to ~140 cycles on recent x86) or a progress call would only delay seeing
    // it. Then pause between polls and drive progress every 16th, backing off to yield / sleep.
    // With more ranks than cores the rank waited for most likely needs this core: one poll,
    // then every poll yields (Open MPI's yield_when_idle does the same). (16 polls first cost
    // 0.22 us a wait there and rarely saw the answer: 4 ranks on 2 cores, alltoall of 64 KiB,
    // 16 interleaved launches, medians 19.95 -> 19.58 us; see kTightSpinsShared.)
    const unsigned tight = tightSpins();
    for (unsigned spins = 0; spins < tight; ++spins) {
      if (done()) return;
    }
    waitPastTight(done, drive);
  }
  /// Where on-node world rank `worldRank` shows the CPU it runs on (a word in its world
  /// scratch region as mapped here), told by the world communicator's channel as it maps the
  /// members (this rank too); null words are unknown. clearPlacement() before that channel goes.
  void placementWord(int worldRank, std::uint64_t* word) noexcept;
  void clearPlacement() noexcept;
  /// How many polls waitUntil() makes before it drives progress: a caller that made them itself
  /// (a fast path that cannot throw) continues with waitPastTight().
  [[nodiscard]] unsigned tightSpins() const noexcept {
    return oversubscribed_ ? kTightSpinsShared : kTightSpins;
  }
  /// waitUntil() past its tight polls.
  template <class Done>
  void waitPastTight(Done&& done, Drive drive = Drive::kAlways) {
    std::int64_t since = 0;  // when the wait began to back off (ns, steady clock); 0: not yet
    unsigned alone = 0;      // yields in a row that found nothing else to run (yieldShared)
    for (unsigned spins = tightSpins(); !done(); ++spins) {
      if (oversubscribed_ || (spins & 15U) == 15U) {
        backoff(spins, since, alone, drive);
      } else {
        // Messages for this rank's inboxes are served at every poll: looking costs a few loads,
        // and a peer's fetch_and_op waits on it (every 16th poll: 0.8-1.0 us per operation
        // instead of 0.4-0.6).
        if (inboxes_ && serviceInboxes()) since = 0;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }

 private:
  static constexpr unsigned kTightSpins = 256;
  static constexpr unsigned kTightSpinsShared = 0;
  Context(std::unique_ptr<bootstrap::Bootstrap> boot, const Options& options);
  /// One step of a wait's back-off (every 16th poll; every poll when oversubscribed); `since`
  /// is the wait's own state.
  void backoff(unsigned spins, std::int64_t& since, unsigned& alone, Drive drive);
  /// One yield of an oversubscribed wait; a short sleep instead once this wait's yields have
  /// found nothing else to run on this core `kAloneYields` times in a row (`alone` counts them).
  void yieldShared(unsigned& alone);
  /// Oversubscribed waits, every kLookEveryNs at most: shows the CPU this rank runs on, and
  /// moves the rank to another CPU it may use when its own runs two more of the node's ranks
  /// than that one (the highest rank on it moves; `now` from transport::nowNs()).
  void balanceCores(std::int64_t now) noexcept;
  void forgetPeerKey(int worldRank, std::span<const std::byte> packed);

  std::unique_ptr<bootstrap::Bootstrap> boot_;
  std::unique_ptr<transport::Transport> transport_;
  int rank_ = 0;
  int size_ = 1;
  const std::atomic<bool>* cancel_ = nullptr;
  std::vector<int> nodePeers_;
  std::int64_t pidNamespace_ = -1;
  bool spinWait_ = false;        // ONESIDED_WAIT=spin: waits never yield or sleep
  bool singleThreaded_ = false;  // Options::singleThreaded
  enum class AccMode { kAuto, kMessage, kLock } accMode_ = AccMode::kAuto;
  bool progressThread_ = true;
  std::unique_ptr<detail::Inboxes> inboxes_;
  std::unique_ptr<p2p::Engine> p2p_;
  detail::CallLock* callLock_ = nullptr;  // Options::callLock
  // More ranks than CPUs this process may run on: waits yield from the start, since the rank
  // waited for is likely waiting for this core.
  bool oversubscribed_ = false;
  // balanceCores(): on when oversubscribed with two CPUs or more to use (ONESIDED_BALANCE);
  // the node's ranks' CPU words (by index in nodePeers_; the value is the CPU + 1, 0 unknown),
  // the CPUs this rank may use, when it looks next, whether a thread is looking, the CPU it
  // showed last and until when it stays where it moved.
  bool balance_ = false;
  std::unique_ptr<std::atomic<std::uint64_t*>[]> placeWords_;
  std::vector<int> cpus_;
  std::atomic<std::int64_t> nextLook_{0};
  std::atomic<bool> looking_{false};
  int cpuShown_ = -1;
  std::int64_t stayUntil_ = 0;
  /// Rank r's start-up blob ([address length][transport address][world sync info]), fetched
  /// from the bootstrap on first use.
  const std::vector<std::byte>& peerBlob(int worldRank);
  std::vector<std::vector<std::byte>> blobs_;
  std::vector<std::unique_ptr<transport::Endpoint>> endpoints_;
  std::unique_ptr<Comm> world_;
  std::unique_ptr<Comm> self_;
  /// One MPI_Alloc_mem block: its registration, and the packed key memoryKey() hands out
  /// (a cache, packed on first use).
  struct Allocation {
    std::unique_ptr<transport::MemoryRegion> region;
    mutable std::vector<std::byte> key;
  };
  /// The allocation holding [p, p + len), or nullptr.
  [[nodiscard]] const Allocation* findAllocation(const void* p, std::size_t len) const;
  std::map<std::uintptr_t, Allocation> allocations_;  // by base
  std::uint64_t memoryFrees_ = 0;
  std::unique_ptr<transport::SharedPagesCache> sharedSends_;
  static constexpr std::size_t kScratchKept = 8;
  struct Scratch {
    ScratchUse use;
    std::unique_ptr<transport::MemoryRegion> region;
    std::uint64_t state;
  };
  std::vector<Scratch> scratch_;  // oldest first
  struct PeerKey {
    int worldRank;
    std::vector<std::byte> packed;
    std::shared_ptr<transport::RemoteKey> key;
  };
  static constexpr std::size_t kPeerKeysKept = 64;
  std::vector<PeerKey> peerKeys_;  // least recently used first
  std::optional<bool> attachPaysOff_;
  std::int64_t pid_ = 0;
  std::vector<std::int64_t> reachablePids_;  // by world rank, reachablePid()
  /// Drops the kept scratch regions and peer keys (before the endpoints the keys live on).
  void dropKept();
  bool finalized_ = false;
};

}  // namespace onesided
