// SPDX-License-Identifier: BSD-3-Clause
// A communicator's scratch region: what every collective moves its data through. Each member
// registers (transport-allocated, so on-node peers load and store it directly)
//
//   [identity: one 64-byte line][arrived: one line per member][consumed: one line per member]
//   [fin: one line per member][rings: one per member]
//
// Ring s at rank r belongs to the pair (s -> r) alone: a byte ring of 256-byte cells where rank
// s writes chunks (a header and up to ONESIDED_COLL_CHUNK bytes of packed data, never wrapping
// around the ring's end) with one-sided puts, or stores on the load / store path. A stored
// chunk announces itself by its number in its first word, written last with release order; a
// put one by the chunk count in r's arrived[s], written once the put is complete. Rank r
// unpacks the chunk, clears the first word of its cells, and reports the cells it has read into
// s's consumed[r] every quarter ring, which lets s reuse them: a sender runs ahead of a receiver
// that is busy, or not running (more ranks than cores), by up to a ring of chunks. Counters
// only grow over the communicator's life, so consecutive collectives need no reset and a fast
// rank cannot confuse a slow one.
//
// Large streams go without the ring (rendezvous): when the sender's stream is one contiguous
// run of at least ONESIDED_COLL_ZCOPY bytes, it exposes that buffer (registered for remote
// reads) and writes a single "ready to send" chunk carrying its address and key instead of the
// data; the receiver gets the bytes straight into its receive buffer (its own type map: one
// get per contiguous piece, cross-memory attach or RDMA read), and once they are complete
// writes the sender's fin[r] counter, which releases the sender's buffer. One copy instead of
// two, and no handshake per chunk. A send buffer inside an MPI_Alloc_mem region is exposed
// already: the chunk carries that region's key (kept unpacked by the receiver), and on shared
// memory the receiver copies the bytes with loads from the sender's mapped memory. Any other
// send buffer of a stream to a peer on one node is not registered at all: the chunk carries
// only its address, and the receiver reads it with cross-memory attach (process_vm_readv) by
// the sender's pid, which the identity line gives. A receiver checks once per peer that it can
// (the kernel may refuse: ptrace permission, another pid namespace) by reading the nonce of
// that line both ways, and tells the sender in the second word of its fin line for the peer;
// until then, or if it cannot, the stream goes by key as above. Where that check passed, a
// send buffer of ordinary private memory used again goes through shared pages instead
// (ONESIDED_COLL_SHARE): the sender has moved its whole pages into a memfd
// (transport::SharedPagesCache), the chunk names that memfd and carries the partial pages at
// both ends, and the receiver maps the memfd (kept mapped per peer) and copies with loads, as
// from an MPI_Alloc_mem region.
//
// There is no matching and no tags: a collective's algorithm decides, on both sides, which
// member writes which stream to which member in which phase; run() moves one phase. Sends are
// started in the order given (a staggered schedule) with a bounded number in flight.
#pragma once

#include <array>
#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include <sys/types.h>
#include <vector>

#include "collectives/small_vec.hpp"
#include "onesided/op.hpp"
#include "transport/shared_pages.hpp"
#include "transport/transport.hpp"
#include "window/sync.hpp"

namespace onesided {
class Context;
class Datatype;
}  // namespace onesided

namespace onesided::detail {

/// A reference to a callable taking nothing, returning nothing (Channel::run's `meanwhile`):
/// unlike std::function it never allocates (a lambda capturing a few references does not fit
/// std::function's inline buffer, and the allocation was a quarter of an 8-byte scatter).
class Callback {
 public:
  Callback() = default;
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, Callback>)
      Callback(F&& f)  // NOLINT(google-explicit-constructor): passed as it is, like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o) { (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
  explicit operator bool() const noexcept { return call_ != nullptr; }
  void operator()() const { call_(obj_); }

 private:
  void* obj_ = nullptr;
  void (*call_)(void*) = nullptr;
};

/// No callback: Channel::run's default. A static object, not a temporary: a temporary is
/// built by two 8-byte stores that the callee's copy then reloads as one 16-byte load, which
/// cannot be forwarded from them and waits for both to reach the cache (with WholeSend's,
/// that was most of the time an 8-byte gather's sender spent in gather() itself).
inline constexpr Callback kNoCallback{};

/// The packed stream of `count` elements of `type` at `buf` (type maps relative to buf).
struct Stream {
  const void* buf = nullptr;
  std::size_t count = 0;
  const Datatype* type = nullptr;
  /// For packed bytes of typed data (trees): the type whose basic elements they hold, checked
  /// against the other side's; null: `type` itself.
  const Datatype* sig = nullptr;
};

struct SendOp {
  int peer = 0;
  Stream src;
  /// Nonzero: this rank's part failed with that MPI error class (a tree node whose subtree
  /// failed). The stream is still sent, so the collective completes, and the receiver throws
  /// instead of using the data.
  int poison = 0;
  /// Pipelining (a tree node forwarding what it receives in the same phase): only the first
  /// *avail bytes of the stream exist yet, and *livePoison, when nonzero, is an error found
  /// meanwhile. Null: the whole stream is there.
  const std::uint64_t* avail = nullptr;
  const int* livePoison = nullptr;
  /// Whether the stream may go by cross-memory attach, which puts its whole copy on the
  /// receiver: false where the receiver is the phase's bottleneck, because it folds the stream
  /// with others (a fold straight from the ring is one pass) or takes the streams of several
  /// senders (a gather's root on more than 2 ranks: 1 MiB 189 us against 225). A receiver that
  /// takes one stream (the root of a 2-rank gather or reduce) is faster by attach: a folded one
  /// lands in the fold's destination and is combined there (readAttached).
  bool byAttach = true;
  /// Whether the stream may be read from the sender's memory through shared pages: false for
  /// a recursive-doubling exchange, where the partner folds it while this rank folds the
  /// partner's (see allreduce).
  bool byShare = true;
};

/// A phase's send argument as one buffer (Channel::run), or null: none. Given where the
/// collective's send argument is all send data the call reads (blocks that tile it, no gaps)
/// and so may not change during the call: shared pages (sharedPagesFor) then cover the whole
/// pages of all of it, and a stream inside has no partial pages at its own ends to send in the
/// ready chunk (a block of a malloc'ed buffer starts 16 bytes into a page: 4 KiB through the
/// ring per stream. Alltoall of 64 KiB, A/B: 4 ranks 17.5 -> 13.9 us, 2 ranks 2.3 -> 2.1).
/// Or, with `find` set, worked out by find(ctx) only when a stream of the phase is large
/// enough to be shared (a v-collective's blocks are checked one by one: work a small call can
/// do without).
struct WholeSend {
  const void* buf = nullptr;
  std::size_t len = 0;
  WholeSend (*find)(const void* ctx) = nullptr;
  const void* ctx = nullptr;
};

/// No whole send argument: Channel::run's default (a static object, as kNoCallback).
inline constexpr WholeSend kNoWhole{};

struct RecvOp {
  int peer = 0;
  /// Where the packed bytes go; its size is the size the sender must send.
  Stream dst;
  /// When set, the stream's size is whatever the peer sends: the bytes land here (resized) and
  /// `dst` is ignored.
  std::vector<std::byte>* grow = nullptr;
  /// When set: bytes of the stream unpacked so far (all of them once an error is found, so
  /// sends gated on it drain), and the error class as soon as it is known.
  std::uint64_t* progress = nullptr;
  int* errorOut = nullptr;
  /// A reduction: the stream holds packed elements of the predefined type `foldKind`, and each
  /// is combined as it arrives, straight from the scratch ring: dst[i] = foldBase[i] op in[i]
  /// (`dst` packed bytes; foldBase may be dst.buf; null: no fold). Folding receives of a phase
  /// complete in list order, so a result never depends on which sender was first, and none
  /// writes before all have checked their senders' sizes: after a mismatch dst is untouched.
  /// So each sender of a phase's folds must have its stream under way without waiting for any
  /// other fold (a tree's children send one stream each): an exchange where every rank sends
  /// p - 1 streams, ONESIDED_COLL_INFLIGHT of them at a time, deadlocks folding them.
  const std::byte* foldBase = nullptr;
  Op foldOp = Op::kNoOp;
  int foldKind = 0;
};

class Channel {
 public:
  Channel(Context& ctx, std::vector<int> worldRanks, int me);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// The bytes the other members need (address and key of the scratch region).
  [[nodiscard]] std::vector<std::byte> localInfo() const;
  static std::size_t infoSize(const std::byte* in);
  void connect(const std::vector<std::vector<std::byte>>& infos);
  /// Like connect(), for `n` members whose infos are fetched on first use (a member's, once).
  void connectLazily(int n, std::function<std::vector<std::byte>(int)> info);

  /// One phase: every send and receive in it runs to completion (at most one send and one
  /// receive per peer). A receive whose sender sends another size throws kErrTruncate (more) or
  /// kErrCount (fewer) after the phase, leaving its destination untouched. `meanwhile`, when
  /// given, runs once: the first time the phase has to wait, else at its end (a gather's root
  /// copies its own block while the others' streams are on their way). `whole`: the buffer
  /// the phase's sends lie in, when it is all send data (WholeSend).
  void run(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
           const Callback& meanwhile = kNoCallback, const WholeSend& whole = kNoWhole);
  /// Completes this rank's outstanding writes into peers (before the region goes away).
  void quiesce();
  /// The communicator's barrier slots (SyncRegion::kBytes, zeroed) in this rank's region; they
  /// are at the same offset in every member's.
  [[nodiscard]] std::byte* syncSlots() const noexcept { return local_ + syncOff_; }
  /// Where member `member`'s barrier slots are, the member resolved (mapped) if it was not.
  SyncRegion::Target syncTarget(int member);
  /// The CPU word (SyncRegion::kCpuSlot) in a member's region mapped at `region`.
  std::uint64_t* cpuWord(std::byte* region) const noexcept;
  /// Every member has quiesced and passed a barrier since (MPI_Comm_free): nobody writes into
  /// the region any more, so it goes to the context for a later channel of the same size
  /// (Context::keepScratch) when this one goes.
  void reusable() noexcept { reusable_ = true; }
  /// Peers whose mapping came from the context's key cache (for tests).
  [[nodiscard]] std::uint64_t keysReused() const noexcept { return keysReused_; }
  /// Whether the region came from a freed channel (for tests).
  [[nodiscard]] bool regionReused() const noexcept { return regionReused_; }
  /// Other members resolved so far whose region is on the load / store path (for tests).
  [[nodiscard]] std::size_t directPeers() const noexcept;
  /// Rendezvous streams read with loads from a sender's mapped buffer, and peer keys unpacked
  /// for MPI_Alloc_mem regions, so far (tests check the path taken and the key cache with them).
  [[nodiscard]] std::uint64_t mappedReads() const noexcept { return mappedReads_; }
  [[nodiscard]] std::uint64_t allocKeysUnpacked() const noexcept { return allocKeysUnpacked_; }
  /// Rendezvous streams read with cross-memory attach (for tests).
  [[nodiscard]] std::uint64_t attachedReads() const noexcept { return attachedReads_; }
  /// Rendezvous streams read through a sender's shared pages (for tests).
  [[nodiscard]] std::uint64_t sharedReads() const noexcept { return sharedReads_; }
  /// Bytes of streams sent through shared pages that went in the ready chunk instead, for lying
  /// on pages not shared (for tests).
  [[nodiscard]] std::uint64_t sharedEndBytes() const noexcept { return sharedEndBytes_; }

  /// A buffer of at least n bytes kept across collectives (a fresh large one per call costs
  /// its page faults, and a new registration when it is exposed, every time); `slot` tells
  /// apart the buffers one collective uses at once. Contents are not kept from call to call.
  /// A buffer far larger than asked (16 MiB and four times the size) is given back first.
  std::byte* buffer(std::size_t slot, std::size_t n);

  // ---- the window board ----
  // Windows created on this communicator publish their descriptors (base, size, disp_unit,
  // keys) in a slot of each member's region, where peers read them on first access instead of
  // gathering p of them at creation (src/window/window.cpp). A window created while its slot is
  // still taken by a live one (kBoardSlots windows apart), or whose descriptor does not fit,
  // gathers them as before. 256 KiB a member: programs that keep a window per array (ARMCI-MPI,
  // Global Arrays) hold a hundred or more at once, and a descriptor takes about 330 bytes on
  // UCX over shared memory (verbs: less).
  static constexpr std::size_t kBoardSlots = 256;
  static constexpr std::size_t kBoardSlotBytes = 1024;
  /// The sequence number of the next window on this communicator: the same on every member,
  /// since windows are created collectively and in the same order.
  std::uint64_t nextWindow() noexcept { return windows_++; }
  /// This rank's slot `slot`, or nullptr while a live window holds it; taken until releaseSlot.
  std::byte* claimSlot(std::size_t slot);
  void releaseSlot(std::size_t slot) noexcept;
  /// Copies `len` bytes of `member`'s slot `slot` into dst (a load, or a get and a flush).
  void readSlot(int member, std::size_t slot, std::byte* dst, std::size_t len);

  // ---- members out of step ----
  // The standard wants every member to call the same collectives in the same order with
  // matching arguments, but a program that does not must get an error, not a hang. Members
  // whose counts differ run different schedules where the algorithm depends on the size (tree
  // or linear, recursive doubling or halving), members whose roots differ wait for each other,
  // and a member that fails a check of its own arguments never starts. Three checks end such a
  // call with MPI_ERR_OTHER, at no cost to one that goes well:
  // - every chunk header carries the sender's call number (the collectives begun on the
  //   channel, mod 2^24), so a stream of another call is never taken for this one's;
  // - each member publishes in its identity line how many calls it has finished, and a wait
  //   that has lasted a millisecond looks at the members it waits for: one that finished this
  //   call with the stream, fin or ring space still missing is out of step;
  // - a wait for one member alone is published there too (the call and the member, with a
  //   beat each look advances and a count of such waits ended), and followed: members that
  //   each wait for the next, around to this one, wait for ever.
  // A member seen gone must stay so for 200 ms (a counter put may lag its owner's finishing),
  // and a cycle must hold that long with every member in it looking again meanwhile and none
  // moving on (one that is not running, more ranks than cores, shows a wait it may have left).
  // A wait looks every 64 polls while it spins, at every poll once it yields or sleeps. From
  // then on the rings are out of step, so every later collective on the communicator fails at
  // once (creating communicators and windows from it included); the members this one leaves
  // waiting see it finish and fail in turn.
  /// Brackets one collective; calls nested in one (a communicator's creation gathering through
  /// its parent) count once.
  void enter() noexcept {
    if (depth_++ != 0) return;
    ++entered_;
    part_ = 0;
  }
  void leave() noexcept {
    if (--depth_ == 0) publishDone(entered_ << 8 | 0xFF);
  }
  /// The collectives begun on the channel.
  [[nodiscard]] std::uint64_t calls() const noexcept { return entered_; }
  /// Between the parts of a collective made of two (a reduce and a broadcast): a member
  /// waiting in the first for one that went on to the second sees it leave.
  void nextCall() noexcept;

  /// How many sends of a phase are in flight at once (ONESIDED_COLL_INFLIGHT, default 4).
  [[nodiscard]] int inflight() const noexcept { return inflight_; }
  /// ONESIDED_COLL_ALG as read when the communicator was made: 0 auto, 1 linear, 2 tree.
  [[nodiscard]] int algorithm() const noexcept { return algorithm_; }
  /// Whether every member runs on this rank's node (every member answers alike).
  [[nodiscard]] bool oneNode() const noexcept { return oneNode_; }
  /// The world communicator's channel: tells the context where each member it maps shows its
  /// CPU (Context::placementWord), this rank first; forgotten when the channel goes.
  void showPlacement();

 private:
  struct Peer {
    std::uint64_t base = 0;
    std::vector<std::byte> packedKey;
    std::uint64_t nonce = 0;  // the nonce in the peer's region (kNonceWord), from its info
    std::shared_ptr<transport::RemoteKey> key;  // shared with the context's key cache
    std::byte* direct = nullptr;  // local address of the peer's region, on the load / store path
    bool resolved = false;
    std::uint64_t sent = 0;       // chunks written into the peer's ring for me
    std::uint64_t sentCells = 0;  // cells those chunks took
    std::uint64_t received = 0;   // chunks consumed from my ring for the peer
    std::uint64_t recvCells = 0;  // cells those chunks took
    std::uint64_t reported = 0;   // recvCells as last written into the peer's consumed[me]
    std::uint64_t rdvSent = 0;    // rendezvous sends started to the peer (its fins awaited)
    std::uint64_t rdvDone = 0;    // rendezvous receives from the peer completed (fins written)
    // Source words of counter puts (a put may read its source until the next flush).
    std::array<std::uint64_t, 3> out{};
    bool outPending = false;
    // The peer's MPI_Alloc_mem regions its rendezvous sends came from, unpacked (on shared
    // memory, unpacking maps the region: once, not per collective); most recent first. At
    // most kAllocKeysKept, and dropped when the peer has freed any since (a mapping would keep
    // a freed region's memory alive).
    std::vector<std::pair<std::vector<std::byte>, std::unique_ptr<transport::RemoteKey>>> allocKeys;
    std::uint64_t allocFrees = 0;  // the peer's MPI_Free_mem count when allocKeys were made
    pid_t attachPid = 0;  // the peer's pid, when cross-memory attach reads its memory from here
    pid_t pid = 0;        // the peer's pid, once checked to be reachable from here
    // The peer's shared send pages mapped here (kReadyShared), most recent first; at most
    // kSharedMapsKept, and dropped when the peer has dropped any of its shared ranges since.
    struct SharedMap {
      std::uint64_t inode;
      std::uint64_t fileOffset;
      std::uint64_t len;
      std::unique_ptr<transport::PeerPages> pages;
    };
    std::vector<SharedMap> sharedMaps;
    std::uint64_t sharedDrops = 0;  // the peer's drop count when sharedMaps were made
  };
  /// The ring geometry (members, cells, cell size) as one nonzero word, or 0 if it does not fit:
  /// a region kept clean by a channel of the same layout needs no clearing (Context::keepScratch).
  [[nodiscard]] std::uint64_t layout() const;
  /// Reads a member's info (localInfo()) into its Peer.
  static void parseInfo(const std::vector<std::byte>& in, Peer& p);
  enum class Counter { kArrived, kConsumed, kFin };
  enum class Start { kDone, kWait, kCopy };  // a rendezvous chunk (or pad) written, or not
  struct SendState;
  struct RecvState;

  Peer& resolve(int member) {
    Peer& p = peers_[static_cast<std::size_t>(member)];
    return p.resolved ? p : resolveSlow(member);
  }
  Peer& resolveSlow(int member);
  [[nodiscard]] std::size_t arrivedOff(int member) const;
  [[nodiscard]] std::size_t consumedOff(int member) const;
  [[nodiscard]] std::size_t finOff(int member) const;
  [[nodiscard]] std::size_t slotOff(int member, std::uint64_t cell) const;
  /// A cell number's place in its ring.
  [[nodiscard]] std::uint64_t ringPos(std::uint64_t cell) const {
    return ringMask_ != 0 ? cell & ringMask_ : cell % ringCells_;
  }
  [[nodiscard]] std::uint64_t loadLocal(std::size_t off) const;
  void writeCounter(int member, Counter which, std::uint64_t value);
  /// Where the next chunk to `p` is written: its slot (load / store path) or the staging buffer.
  std::byte* chunkBuffer(Peer& p);
  /// Publishes the chunk just written by chunkBuffer() (a put and flush, unless it was stored)
  /// and then the peer's arrived counter.
  void postChunk(int peer, Peer& p, std::size_t bytes);
  /// Ring cells a chunk of `bytes` (header included) takes.
  [[nodiscard]] std::uint64_t cellsFor(std::size_t bytes) const;
  /// Cells of `peer`'s ring (mine in it) not yet reported read: where my next chunks may go.
  [[nodiscard]] std::uint64_t freeCells(int peer, const Peer& p) const;
  /// Whether the next chunk from `peer` is complete in my slot for it.
  [[nodiscard]] bool arrived(int peer, const Peer& p) const;
  /// Writes the ready-to-send chunk of `s` (or a pad before it, at the ring's end), given the
  /// free cells and those before the ring's end; kCopy: the stream goes through the ring.
  Start startRendezvous(SendState& s, Peer& p, std::uint64_t free, std::uint64_t room);
  /// Releases the cells of the chunk just read from `peer`'s ring.
  void consume(int peer, Peer& p, std::uint64_t cells);
  /// Reads a rendezvous stream (the payload of its ready-to-send chunk of `kind`) into r's
  /// buffer: with cross-memory attach (kReadyAttach), with loads where the sender's buffer is
  /// mapped here, else with gets; an MPI_Alloc_mem region's key (kReadyAllocated) is kept
  /// unpacked in Peer::allocKeys. Then writes the sender's fin, even after an error.
  void finishRendezvous(RecvState& r, const std::byte* payload, std::size_t len,
                        std::uint32_t kind);
  /// finishRendezvous() by key: `payload` is [address][key], or for an MPI_Alloc_mem region
  /// (`allocated`) [address][frees][key].
  void readKeyed(RecvState& r, Peer& p, std::span<const std::byte> payload, bool allocated,
                 std::uint64_t raddr);
  /// Reads a rendezvous stream of `p` at its address `raddr` into r's buffer with cross-memory
  /// attach (the stream's ready chunk was kReadyAttach).
  void readAttached(RecvState& r, pid_t pid, std::uint64_t raddr);
  /// finishRendezvous() through the sender's shared pages: `payload` is [address][drops]
  /// [lo][hi][file offset][inode][fd], then the stream's bytes before lo and those from hi.
  void readShared(RecvState& r, Peer& p, std::span<const std::byte> payload, std::uint64_t raddr);
  /// Whether `member` can map my shared pages (it checked my pid), and whether o's stream of
  /// `total` bytes goes through them (shares the pages of its buffer, or of the phase's whole_,
  /// when due): the shared range, which may reach past the stream's ends (sharedEnds).
  [[nodiscard]] bool mapsMine(int member) const;
  transport::SharedPagesInfo sharedPagesFor(const SendOp& o, const Peer& p, std::uint64_t total);
  /// Whether this rank reads peer `member`'s memory with cross-memory attach (checked against
  /// the nonce of its identity line); tells the peer in its fin line for me.
  void probeAttach(int member, Peer& p);
  /// Whether a cross-memory-attach read of the peer's region costs at most kAttachCostMax
  /// times a copy of the same bytes through its mapping (measured once per channel).
  bool attachPaysOff(const Peer& p);
  /// Whether `member` told me it reads my memory with cross-memory attach.
  [[nodiscard]] bool attachedBy(int member) const;
  /// Whether o's contiguous stream of `total` bytes goes by rendezvous; `exchange`: this rank
  /// receives in the same phase (cross-memory attach pays off sooner).
  bool wantsRendezvous(const SendOp& o, const Peer& p, std::uint64_t total, bool exchange);
  /// Folds the next `len` bytes of a folding receive's stream (RecvOp::foldBase).
  static void fold(RecvState& r, const std::byte* in, std::size_t len);
  /// Whether every folding receive of the phase has its first chunk, and whether one failed.
  void checkFolds();
  /// Whether folding receive r must leave its next chunk in the ring for now: it has its first
  /// chunk, and not every fold is checked or an earlier fold of the phase is unfinished.
  [[nodiscard]] bool foldHeld(const RecvState& r, bool earlierFoldWaits) const;
  /// A wait's watch for members out of step (above): polls, the next look, since when one has
  /// been seen out of step, and what this rank's wait word says (cleared at the end).
  struct Watch {
    explicit Watch(Channel& c) : ch(c) {}
    ~Watch() {
      if (edge >= 0) ch.endWait();
    }
    struct Member {
      int member;
      std::uint64_t beat;   // its looks
      std::uint64_t moved;  // its waits that named a member and ended
    };
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    Channel& ch;
    std::uint32_t polls = 0;
    int edge = -1;  // the member this rank's wait word names (-1: none)
    std::int64_t next = 0;
    std::int64_t leftSince = 0;   // when a member it waits for was first seen to have left
    std::int64_t cycleSince = 0;  // when `cycle` was first seen
    std::vector<Member> cycle;    // members waiting around, from the one this rank waits for
  };
  /// Called at every poll of a wait: returns false, or throws (and breaks the channel) once a
  /// member this rank waits for has, for 200 ms running, finished the call or waited for this
  /// rank in turn. `owing(f)` calls f(member) for each member the wait needs something from,
  /// until f returns true.
  template <class Owing>
  bool stalled(Watch& w, Owing&& owing);
  /// stalled() past its count of polls: the clock, and every so often the members.
  template <class Owing>
  bool look(Watch& w, Owing&& owing);
  /// Stores this rank's done word (how far it has come, for members watching it).
  void publishDone(std::uint64_t v) noexcept {
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(local_ + kDoneOffset))
        .store(v, std::memory_order_release);
  }
  static constexpr std::size_t kDoneOffset = 16;  // in the identity line (channel.cpp)
  /// The end of a wait that published a member: clears the word, counts the move.
  void endWait() noexcept;
  /// This rank's wait word: waiting in this call for `member` (-1: not waiting).
  void publishWait(int member) noexcept;
  /// Each breaks the channel and throws MPI_ERR_OTHER naming `member`, which left the call
  /// owing this rank, waits (alone or through others) for this rank while this rank waits for
  /// it, or sent a stream of its call number `theirCall` (mod 2^24) into this one.
  [[noreturn]] void memberLeft(int member);
  /// This rank's counts of the streams with `member` and the counters it wrote here, for the
  /// messages above (which side of a stream stopped: a chunk never announced, a count or a fin
  /// never written).
  [[nodiscard]] std::string streamState(int member) const;
  [[noreturn]] void waitCycle(int member);
  [[noreturn]] void otherCall(int member, std::uint32_t theirCall);
  [[noreturn]] void breakChannel(std::string why);
  /// The call number as stream headers carry it (above the kind's byte).
  [[nodiscard]] std::uint32_t callStamp() const noexcept;
  bool trySend(SendState& s);
  bool tryRecv(RecvState& r);
  /// run()'s fast cases: the whole of a one-chunk contiguous send to a peer on the load / store
  /// path, or of a receive of one contiguous data chunk (folded in, for a reduction); false /
  /// kDecline: nothing was written
  /// or consumed, and the general path takes the operation. recvSmall waits for the chunk when
  /// `wait`, else answers kNotYet while it has not arrived.
  enum class Small { kDone, kNotYet, kDecline };
  bool sendSmall(const SendOp& o, bool exchange);
  Small recvSmall(const RecvOp& o, bool wait);
  /// run()'s fast case for a phase of several receives whose sends all went by sendSmall: takes
  /// each chunk as it arrives, in any order (waiting on one peer in turn could hold up another
  /// peer's rendezvous, whose sender waits for it). True: all done; false: `rest` holds those
  /// the general path must take (all of them if two come from one peer or one folds).
  bool recvsSmall(std::span<const RecvOp> recvs, SmallVec<RecvOp, 8>& rest);

  Context& ctx_;
  std::vector<int> ranks_;
  int me_;
  std::size_t cell_ = 256;     // ring granule (ONESIDED_COLL_CELL, for tests)
  std::size_t ringBytes_ = 0;  // per pair
  std::uint64_t ringCells_ = 0;
  std::uint64_t ringMask_ = 0;     // ringCells_ - 1 when that is a power of two, else 0
  unsigned cellShift_ = 0;         // log2 cell_ when that is a power of two, else 0
  std::size_t maxPayload_ = 0;     // data bytes per chunk
  std::uint64_t reportEvery_ = 1;  // cells read between consumed reports
  std::uint64_t aheadCells_ = 0;   // how far ahead of its next chunk a sender prefetches
  std::size_t prefetchBytes_ = 0;  // how much of its next chunk's first cell it prefetches
  std::size_t regionBytes_ = 0;
  std::unique_ptr<transport::MemoryRegion> region_;
  std::byte* local_ = nullptr;                           // region_'s base
  std::function<std::vector<std::byte>(int)> lazyInfo_;  // connectLazily()
  bool reusable_ = false;
  bool regionReused_ = false;
  std::uint64_t keysReused_ = 0;
  std::vector<Peer> peers_;
  // recvsSmall's marks: seen_[member] == phase_ when a receive of the phase is from member.
  std::vector<std::uint64_t> seen_;
  std::uint64_t phase_ = 0;
  std::vector<std::byte> staging_;  // chunks bound for peers reached by put (sized on the first)
  std::vector<std::byte> foldIn_;   // a folding receive's rendezvous stream, before the fold
  bool foldsChecked_ = false;       // checkFolds()
  bool foldsFailed_ = false;
  // run()'s states, kept from phase to phase (the first sendView_.size() are this phase's).
  std::vector<std::unique_ptr<SendState>> sendKept_;
  std::vector<std::unique_ptr<RecvState>> recvKept_;
  std::vector<SendState*> sendView_;
  std::vector<RecvState*> recvView_;
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t size = 0;
  };
  std::vector<Buffer> buffers_;
  int inflight_ = 4;
  std::size_t boardOff_ = 0;             // the window board's offset in the region
  std::size_t syncOff_ = 0;              // syncSlots()'s offset in the region
  std::uint64_t windows_ = 0;            // nextWindow()
  std::bitset<kBoardSlots> slotsTaken_;  // claimSlot() bits
  std::bitset<kBoardSlots> boardUsed_;   // every slot ever claimed
  int algorithm_ = 0;
  bool oneNode_ = false;
  bool placement_ = false;  // showPlacement()
  // Cross-memory attach for rendezvous reads (ONESIDED_COLL_ATTACH): kAttachAuto measures it
  // against a copy through the mapping on the first peer that allows it, once per process
  // (Context::attachPaysOff).
  enum class AttachMode : std::uint8_t { kNever, kAlways, kAuto };
  AttachMode attach_ = AttachMode::kAuto;
  // Streams from this many bytes go by rendezvous (0: never), to peers on the load / store
  // path and to peers reached by put (ONESIDED_COLL_ZCOPY sets both).
  std::size_t zcopyDirect_ = 0;
  std::size_t zcopyPut_ = 0;
  // On the load / store path, streams from this many bytes whose send buffer lies in an
  // MPI_Alloc_mem region (mapped by the receiver: one memcpy instead of the ring's two).
  std::size_t zcopyAllocated_ = 0;
  // On the load / store path, streams from this many bytes to a peer that reads my memory with
  // cross-memory attach (one copy, nothing registered): in an exchange, and one way.
  std::size_t zcopyAttach_ = 0;
  std::size_t zcopyAttachOneWay_ = 0;
  std::uint64_t mappedReads_ = 0;
  std::uint64_t allocKeysUnpacked_ = 0;
  std::uint64_t attachedReads_ = 0;
  std::uint64_t sharedReads_ = 0;
  std::uint64_t sharedEndBytes_ = 0;
  WholeSend whole_;  // this phase's (run)
  // Send buffers shared with on-node receivers (ONESIDED_COLL_SHARE: auto, always, never),
  // for streams from zcopyShared_ bytes.
  enum class ShareMode : std::uint8_t { kNever, kAuto, kAlways };
  ShareMode share_ = ShareMode::kAuto;
  std::size_t zcopyShared_ = 0;
  // The least of the thresholds above for peers on the load / store path: streams below it
  // never go by rendezvous there.
  std::size_t directRendezvousFrom_ = SIZE_MAX;
  transport::SharedPagesCache* sharedSends_ = nullptr;
  std::uint64_t entered_ = 0;  // collectives begun on the channel (enter())
  std::uint64_t part_ = 0;     // parts of the present one begun after its first (nextCall())
  /// Where this rank is: the call and its part.
  [[nodiscard]] std::uint64_t position() const noexcept { return entered_ << 8 | part_; }
  int depth_ = 0;
  std::string broken_;  // why collectives here are out of step, once they are
};

/// A C entry point's part of a collective, before the collective itself (collectives/) counts
/// the call: when it fails first (a bad handle or pointer), the call still counts, as one this
/// rank left, so that the others waiting for it see it leave. Nothing on the way that succeeds.
class Entry {
 public:
  explicit Entry(Channel& ch) noexcept : ch_(ch), before_(ch.calls()) {}
  ~Entry() {
    if (ch_.calls() == before_) {
      ch_.enter();
      ch_.leave();
    }
  }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

 private:
  Channel& ch_;
  std::uint64_t before_;
};

/// One collective on `ch` (Channel::enter / leave), from before its arguments are checked.
class Collective {
 public:
  explicit Collective(Channel& ch) noexcept : ch_(ch) { ch_.enter(); }
  ~Collective() { ch_.leave(); }
  Collective(const Collective&) = delete;
  Collective& operator=(const Collective&) = delete;

 private:
  Channel& ch_;
};

}  // namespace onesided::detail
