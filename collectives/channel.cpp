// SPDX-License-Identifier: BSD-3-Clause
#include "collectives/channel.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "copy.hpp"
#include "datatype/loop.hpp"
#include "env.hpp"
#include "hang.hpp"
#include "log.hpp"
#include "onesided/context.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"
#include "window/sync.hpp"

namespace onesided::detail {

namespace {

/// How a wait drives progress: rarely where every peer it waits for stores into this rank's
/// region itself (Context::Drive).
Context::Drive driveFor(bool direct) {
  return direct ? Context::Drive::kRarely : Context::Drive::kAlways;
}

constexpr std::size_t kLine = 64;
// A sender prefetches this many lines of the cell its next chunk starts in (postChunk).
constexpr std::size_t kPrefetchLines = 4;

// At the start of every chunk: the size of the whole stream (so the receiver checks it against
// its own count before writing anything) and of this chunk's payload.
struct ChunkHeader {
  // The chunk's number (1, 2, ... per pair) when it was stored on the load / store path:
  // written last, with release order, so a receiver polling this word sees a complete chunk
  // (one cache line to watch instead of a separate counter). 0 when the chunk was put: then
  // the arrived counter, written after the put is complete, says so.
  std::uint64_t seq;
  std::uint64_t total;
  // The rest in 32 bits (a chunk is at most half a ring of at most 1 GiB), so that the header
  // takes half a cache line and a payload of up to 32 bytes shares its line: a receiver of a
  // small message then waits for one line, not two (gather of 24-40 bytes at 2 ranks took
  // 0.15-0.19 us with a 48-byte header, 0.10-0.12 us at 8-16 bytes).
  std::uint32_t len;
  std::uint32_t poison;  // the sender's error class (SendOp::poison), or 0
  std::uint32_t kind;    // kData, or kReady: the payload is [address][key] of the whole stream
  std::uint32_t sig;     // 1 + the basic kind of every element of the stream, or 0 (mixed)
};
static_assert(sizeof(ChunkHeader) == 32);
// A header to write (seq 0: postChunk() stores it). `len` fits in 32 bits: a chunk is at most
// half the ring (the constructor's maxPayload_ and pads).
ChunkHeader header(std::uint64_t total, std::uint64_t len, int poison, std::uint32_t kind,
                   std::uint32_t sig) {
  return {0, total, static_cast<std::uint32_t>(len), static_cast<std::uint32_t>(poison), kind, sig};
}
// Writes h at dst, except its seq word: postChunk() stores that (a receiver may be polling it).
void writeHeader(std::byte* dst, const ChunkHeader& h) {
  constexpr std::size_t kSkip = sizeof h.seq;
  std::memcpy(dst + kSkip, reinterpret_cast<const std::byte*>(&h) + kSkip, sizeof h - kSkip);
}
// Writes a chunk of n payload bytes from src at dst (line-aligned), except its seq word. A chunk
// within one cell of `cell` bytes: the payload past the first line first, then the first line
// (header and the payload's first 32 bytes) in one go, just before postChunk() stores the seq
// word there. A receiver polling that word takes the line between the sender's stores to it:
// written header first and payload after, it crossed between the cores twice per chunk (2
// ranks, root to member, 128 bytes, with the next cell's lines prefetched too: scatter
// 0.09-0.18 us -> 0.07-0.13, bcast 0.07-0.14 -> 0.06-0.12). Longer chunks are written in order
// (their first line last, 2 KiB scatters took 0.30-0.39 us against 0.29-0.33).
void writeChunk(std::byte* dst, const ChunkHeader& h, const std::byte* src, std::size_t n,
                std::size_t cell) {
  if (sizeof h + n > cell) {
    writeHeader(dst, h);
    std::memcpy(dst + sizeof h, src, n);
    return;
  }
  constexpr std::size_t kFirst = kLine - sizeof h;
  if (n > kFirst) std::memcpy(dst + kLine, src + kFirst, n - kFirst);
  writeHeader(dst, h);
  if (n > 0) std::memcpy(dst + sizeof h, src, std::min(n, kFirst));
}

// The kind is the low byte of ChunkHeader::kind; the rest holds the sender's collective call
// number (Channel::callStamp), so that a stream of another call is never taken for this one's.
constexpr unsigned kKindBits = 8;
constexpr std::uint32_t kKindMask = (1U << kKindBits) - 1;
constexpr std::uint32_t kData = 0;
constexpr std::uint32_t kReady = 1;
constexpr std::uint32_t kPad = 2;  // fills the ring's end; no stream data
// kReady for a send buffer inside an MPI_Alloc_mem region: its key stays valid until
// MPI_Free_mem, so the receiver keeps it unpacked.
constexpr std::uint32_t kReadyAllocated = 3;
// kReady for a peer on this node that reads my memory with cross-memory attach: the payload is
// the stream's address only (nothing registered).
constexpr std::uint32_t kReadyAttach = 4;
// kReady for a peer on this node that maps my shared pages (transport::SharedPagesCache): the
// payload says where the stream's whole pages are in which memfd and carries the bytes of its
// partial pages at both ends.
constexpr std::uint32_t kReadyShared = 5;
constexpr std::size_t kSharedHead = 7 * sizeof(std::uint64_t);
// The identity line (offset 0 of the region): [pid][nonce], written at construction.
constexpr std::size_t kPidWord = 0;
constexpr std::size_t kNonceWord = 1;
// ... and how far this member has come on the channel: (call << 8) | part for a part it has
// finished (Channel::nextCall), (call << 8) | 0xFF for a whole call (Channel::leave).
constexpr std::size_t kDoneWord = 2;
// ... and, in a wait that has lasted, where it waits and for whom: (position << 24) | (member +
// 1), the position as Channel::position() gives it; 0 when not waiting.
constexpr std::size_t kWaitWord = 3;
// ... and a count its waits advance at each look while they name a member there, and one
// each such wait advances when it ends: a member whose beat moves while this count stands
// still is waiting, not moving on.
constexpr std::size_t kBeatWord = 4;
constexpr std::size_t kMovedWord = 5;
// Polls of a wait after which it is yielding or sleeping (Context::backoff).
constexpr std::uint32_t kSpinPolls = 1U << 12;
constexpr unsigned kWaitPeerBits = 24;
constexpr std::uint64_t kWaitPeerMask = (std::uint64_t{1} << kWaitPeerBits) - 1;
// A wait looks for members that left the call after this long, and then every so often; one
// seen gone for kGoneFor (with what it owes still missing) ends the call.
constexpr std::int64_t kWatchAfterNs = 1'000'000;
constexpr std::int64_t kGoneForNs = 200'000'000;
// A wait cycle through a member reached by the transport counts only after this long: a chunk
// or a fin in flight there is not in either member's memory yet, and over UCX tcp between
// hosts under load one took 220-235 ms to land (2 of 20 runs of coll_comm across 3 namespace
// hosts), which a 200 ms watch called a deadlock and ended the job. On memory both members
// map, what one wrote is there for the other at once.
constexpr std::int64_t kCycleViaTransportNs = 2'000'000'000;
// In the fin line a member writes into my region, the word after the count: 1 when it reads my
// memory with cross-memory attach, 2 when it cannot, 0 until it has checked.
constexpr std::size_t kAttachWord = 1;
constexpr std::uint64_t kAttachYes = 1;
constexpr std::uint64_t kAttachNo = 2;
// ... 3 when it cannot read it fast enough that way but can map my shared pages.
constexpr std::uint64_t kAttachMapOnly = 3;
// A peer's shared send ranges mapped here at once, per peer.
constexpr std::size_t kSharedMapsKept = 8;
// Unpacked keys of a peer's MPI_Alloc_mem regions kept per peer (each may hold a mapping).
constexpr std::size_t kAllocKeysKept = 4;
// A receiver reads a rendezvous stream by this many pieces per getv.
constexpr std::size_t kGetBatch = 1024;

// Copies `len` bytes of the packed stream between `mem` (the typed buffer) and `packed`.
void packFrom(Cursor& c, const void* base, std::byte* out, std::size_t len) {
  Datatype::Segment s{};
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  while (len > 0 && c.next(len, s)) {
    onesided::detail::copyBytes(
        out, reinterpret_cast<const std::byte*>(b + static_cast<std::uintptr_t>(s.offset)), s.len);
    out += s.len;
    len -= s.len;
  }
}

void unpackTo(Cursor& c, void* base, const std::byte* in, std::size_t len) {
  Datatype::Segment s{};
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  while (len > 0 && c.next(len, s)) {
    onesided::detail::copyBytes(
        reinterpret_cast<std::byte*>(b + static_cast<std::uintptr_t>(s.offset)), in, s.len);
    in += s.len;
    len -= s.len;
  }
}

// Maps the pages of [p, p + n) into this process writable now: a peer's region attached on the
// load / store path otherwise takes a page fault at the first store into each of its pages,
// which on a ring of small chunks is one collective in 16 (a 2-rank 8-byte gather: 0.13 us
// against 0.08 once the ring has been round). MADV_POPULATE_WRITE (Linux 5.14) fills the page
// tables without touching the memory; a load from each page then also fills what the machine
// builds lazily beneath them: in a VM whose hypervisor shadows the guest's page tables, the
// first access to each page from each process still costs an exit of about 6 us after the
// populate (measured on this project's CI machines: every 16th 8-byte gather took 6-7 us until
// the ring had been round once, and 2-rank 8-byte gatherv in coll_latency's batches of 200
// took 0.48 us per call instead of 0.18). The load changes nothing the peer sees. `populate`:
// false for a mapping kept from an earlier channel, whose page tables are filled mostly, where
// the populate's walk over them cost more than the loads (10% of a 2-rank MPI_Comm_dup).
void prefault(const std::byte* p, std::size_t n, bool populate) {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const auto hi = first + n;
#ifdef MADV_POPULATE_WRITE
  const auto lo = first / page * page;
  if (populate && madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE) != 0) {
    log::coll().debug("prefaulting {} bytes of a peer's scratch: {}", n, std::strerror(errno));
  }
#else
  (void)populate;
#endif
  for (std::uintptr_t a = first; a < hi; a = (a / page + 1) * page) {
    (void)*reinterpret_cast<const volatile std::byte*>(a);
  }
}

std::size_t streamBytes(const Stream& s) { return s.count * s.type->size(); }

// The signature a chunk header carries: 1 + the stream's single basic kind, 0 when it has
// several. MPI_BYTE and MPI_PACKED match anything here (the collectives' own packed streams are
// bytes, and byte-typed programs move any data that way).
bool wildKind(int k) { return k == datatypeOf<std::byte>().homogeneousKind() || k == kTypePacked; }
std::uint32_t signatureOf(const Stream& s) {
  const int k = (s.sig != nullptr ? s.sig : s.type)->homogeneousKind();
  return k < 0 || wildKind(k) ? 0 : static_cast<std::uint32_t>(k) + 1;
}
// Equal sizes, different basic types (MPI-3.1 §5.1: the type signatures must match); a
// signature of 0 (mixed, or bytes) matches anything, and so does an empty stream.
bool signaturesDiffer(std::uint64_t sent, std::uint64_t mine, std::uint64_t total) {
  return sent != 0 && mine != 0 && sent != mine && total > 0;
}
std::string kindName(int k) {
  const Datatype* t = Datatype::predefined(k);
  return t != nullptr ? t->describe() : "kind " + std::to_string(k);
}

// Streams from this size go by rendezvous to peers reached by put, unless ONESIDED_COLL_ZCOPY
// says otherwise.
constexpr std::size_t kZeroCopyDefault = std::size_t{16} << 10;
// And to peers on the load / store path from this size, when the send buffer lies in an
// MPI_Alloc_mem region (which the receiver maps).
constexpr std::size_t kZeroCopyAllocatedDefault = std::size_t{16} << 10;
// And to peers that read my memory with cross-memory attach (where the read measured fast
// enough, attachPaysOff), from these sizes. An attach read moves the stream's one copy to the
// receiver and leaves the sender idle, where the ring's two copies run on both cores at once;
// it pays off from 32 KiB when this rank also receives in the phase (an exchange: alltoall(v),
// allgather, where it halves the copying every core does), and from 128 KiB for a stream one
// way (bcast, scatter), where it must beat one pipelined copy (SendOp::byAttach keeps folded
// and gathered streams out of it). 2 ranks on this kind of
// machine (probe 2.2-2.6 copies), us ring / attach: alltoallv 32 KiB 7.3 / 4.9, 128 KiB
// 26.8 / 14.0; bcast 32 KiB 2.8 / 3.1, 64 KiB 5.7 / 5.9, 128 KiB 11.3 / 7.5; scatter 16 KiB
// 2.1 / 2.4, 128 KiB 14.5 / 12.7.
constexpr std::size_t kZeroCopyAttachExchange = std::size_t{32} << 10;
constexpr std::size_t kZeroCopyAttachOneWay = std::size_t{128} << 10;
// And from this size through shared pages (one copy by the receiver, as from an MPI_Alloc_mem
// buffer; the partial pages at the ends go in the ready chunk, so below this they would be
// much of the stream). 2 ranks, alltoall, us by the ring / from MPI_Alloc_mem buffers:
// 64 KiB 10.6 / 4.6, 256 KiB 35 / 17, 1 MiB 245 / 185.
constexpr std::size_t kZeroCopySharedDefault = std::size_t{32} << 10;

}  // namespace

struct Channel::SendState {
  const SendOp* op = nullptr;
  std::optional<Cursor> cursor;       // the stream's type map; unused when contiguous
  const std::byte* contig = nullptr;  // the stream's bytes, when its type is contiguous
  std::uint64_t total = 0;
  std::uint64_t sentBytes = 0;
  bool started = false;     // a first chunk is written (a stream of 0 bytes still sends one)
  bool rendezvous = false;  // a candidate until the first chunk is written
  bool waitFin = false;     // ready-to-send written, waiting for the receiver's fin
  std::uint64_t need = 1;   // free cells the next chunk needs (a ready-to-send one may need more)
  std::uint64_t fin = 0;    // the peer's fin count that ends it
  std::unique_ptr<transport::MemoryRegion> exposed;
  std::vector<std::byte> exposedKey;
  bool allocated = false;  // exposedKey is the key of the MPI_Alloc_mem region holding buf
  bool attached = false;   // the receiver reads buf with cross-memory attach: no key
  transport::SharedPagesInfo shared;  // the receiver maps buf's whole pages (shared.hi > lo)
  /// Ready for `o` (states are kept from phase to phase: no allocation per collective).
  void reset(const SendOp& o) {
    op = &o;
    cursor.reset();
    // A contiguous stream is the bytes at buf: copied as they are, without walking a type map
    // (most small collectives' case, where the walk was a good part of the time).
    contig = o.src.type->contiguous() ? static_cast<const std::byte*>(o.src.buf) : nullptr;
    if (contig == nullptr) cursor.emplace(*o.src.type, o.src.count);
    total = streamBytes(o.src);
    sentBytes = 0;
    started = rendezvous = waitFin = false;
    need = 1;
    fin = 0;
    exposed.reset();
    exposedKey.clear();
    allocated = attached = false;
    shared = {};
  }
  [[nodiscard]] bool finished() const { return started && sentBytes == total && !waitFin; }
  /// A tree node forwarding (op->avail): the next chunk's data has not arrived yet (all of it,
  /// for a rendezvous, which exposes the whole stream at once).
  [[nodiscard]] bool awaitsData() const {
    if (op->avail == nullptr || sentBytes == total) return false;
    return rendezvous ? *op->avail < total : *op->avail <= sentBytes;
  }
};

struct Channel::RecvState {
  const RecvOp* op = nullptr;
  std::optional<Cursor> cursor;  // typeMap()
  void* base = nullptr;
  bool contig = false;  // the destination is the bytes at base (a contiguous type)
  std::uint64_t expected = 0;
  std::uint64_t total = 0;  // as the sender says, from the first chunk
  std::uint64_t got = 0;    // bytes of the stream whose chunks are consumed
  bool started = false;
  int errorClass = 0;
  std::string error;
  // A folding receive: bytes folded so far (whole elements), and an element split between
  // chunks (chunk sizes follow ring space, not element boundaries).
  std::uint64_t folded = 0;
  std::array<std::byte, 64> carry{};
  std::size_t carryLen = 0;
  void reset(const RecvOp& o) {
    op = &o;
    cursor.reset();
    base = nullptr;
    contig = false;
    expected = o.grow == nullptr ? streamBytes(o.dst) : 0;
    total = got = 0;
    started = false;
    errorClass = 0;
    error.clear();
    folded = 0;
    carryLen = 0;
  }
  [[nodiscard]] bool finished() const { return started && got == total; }
  /// The destination's type map, made on first use (a contiguous destination needs one only
  /// for a rendezvous): the stream's own bytes for a growing receive, else dst's.
  Cursor& typeMap() {
    if (!cursor) {
      if (op->grow != nullptr) {
        cursor.emplace(datatypeOf<std::byte>(), total);
      } else {
        cursor.emplace(*op->dst.type, op->dst.count);
      }
    }
    return *cursor;
  }
};

Channel::Channel(Context& ctx, std::vector<int> worldRanks, int me)
    : ctx_(ctx), ranks_(std::move(worldRanks)), me_(me) {
  const std::size_t p = ranks_.size();
  // About 1 MiB per region: a ring of 1 MiB / p per pair (512 KiB at most, 8 cells at least),
  // so a sender runs ahead of a receiver that is not scheduled (more ranks than cores) by
  // hundreds of small chunks or several large ones.
  constexpr std::size_t kBudget = std::size_t{1} << 20;
  cell_ = envSize(settings::get(settings::Id::kCollCell).name, 256, kLine, 4096) / kLine * kLine;
  const std::size_t dfltRing =
      std::clamp<std::size_t>(kBudget / p, 8 * cell_, std::size_t{512} << 10) / cell_ * cell_;
  ringBytes_ = envSize(settings::get(settings::Id::kCollRing).name, dfltRing, 8 * cell_,
                       std::size_t{1} << 30);
  ringBytes_ = ringBytes_ / cell_ * cell_;
  ringCells_ = ringBytes_ / cell_;
  // Every chunk sent and received takes a cell's ring position and a size in cells; with the
  // default geometry both are powers of two, and a mask and a shift replace two 64-bit divisions
  // per call of each (tens of cycles each, on a path of 0.06-0.1 us per 8-byte collective).
  ringMask_ = std::has_single_bit(ringCells_) ? ringCells_ - 1 : 0;
  cellShift_ = std::has_single_bit(cell_) ? static_cast<unsigned>(std::countr_zero(cell_)) : 0;
  // A chunk takes at most half the ring, so a receiver that reports every quarter never leaves
  // its sender stuck (see tryRecv).
  maxPayload_ = std::min(envSize(settings::get(settings::Id::kCollChunk).name,
                                 std::size_t{64} << 10, 8, std::size_t{64} << 20),
                         ringBytes_ / 2 - sizeof(ChunkHeader));
  reportEvery_ = std::max<std::size_t>(1, ringCells_ / 4);
  // 8 cells: 8 small chunks, 0.5 us of calls at 2 ranks (see postChunk); never past a quarter of
  // the ring, where the prefetch could take lines the receiver has yet to read.
  aheadCells_ = std::min<std::uint64_t>(8, ringCells_ / 4);
  prefetchBytes_ = std::min<std::size_t>(cell_, kPrefetchLines * kLine);
  inflight_ =
      static_cast<int>(envSize(settings::get(settings::Id::kCollInflight).name, 4, 1, 1 << 20));
  oneNode_ = ctx_.sameNode(ranks_);
  // Rendezvous from 16 KiB to peers reached by put (each chunk there costs a round trip). On
  // the load / store path by the ring, where the sender's copy in and the receiver's copy out
  // overlap and stay in cache, except to a peer that reads my memory with cross-memory attach
  // (from 32 KiB in an exchange, 128 KiB one way), which it does only where that measured no
  // slower than about three copies (attachPaysOff: on some machines a read runs at copy speed,
  // on others it pins every page first and runs 4 times slower), and from 16 KiB for
  // MPI_Alloc_mem buffers, read through the mapping. ONESIDED_COLL_ZCOPY sets all of these
  // thresholds (tests send almost everything by rendezvous that way).
  zcopyPut_ = envSize(settings::get(settings::Id::kCollZcopy).name, kZeroCopyDefault, 0, SIZE_MAX);
  const char* z = settings::raw(settings::Id::kCollZcopy);
  const bool zset = z != nullptr && *z != '\0';
  zcopyDirect_ = zset ? zcopyPut_ : 0;
  zcopyAttach_ = zset ? zcopyPut_ : kZeroCopyAttachExchange;
  zcopyAttachOneWay_ = zset ? zcopyPut_ : kZeroCopyAttachOneWay;
  // Reading a sender's mapped buffer is a single memcpy, which beats the ring's two.
  zcopyAllocated_ = zset ? zcopyPut_ : kZeroCopyAllocatedDefault;
  if (const char* a = settings::raw(settings::Id::kCollAlg); a != nullptr && *a != '\0') {
    const std::string s(a);
    if (s == "linear") {
      algorithm_ = 1;
    } else if (s == "tree") {
      algorithm_ = 2;
    } else if (s != "auto") {
      throw Error(kErrArg, "ONESIDED_COLL_ALG=" + s + ": expected auto, linear or tree");
    }
  }
  boardOff_ = (1 + 3 * p) * kLine + p * ringBytes_;
  syncOff_ = boardOff_ + kBoardSlots * kBoardSlotBytes;
  static_assert(kBoardSlotBytes % kLine == 0 && SyncRegion::kBytes % kLine == 0);
  regionBytes_ = syncOff_ + SyncRegion::kBytes;
  // Peers write chunks and counters, and read window descriptors from the board.
  // A freed communicator's region when there is one of this size: its pages are mapped here
  // and in the peers that used it, which keep their mappings (Context::peerKey).
  std::uint64_t state = 0;
  region_ = ctx_.takeScratch(Context::ScratchUse::kChannel, regionBytes_, state);
  regionReused_ = region_ != nullptr;
  if (!region_) {
    region_ = ctx_.transport().registerMemory(
        nullptr, regionBytes_, transport::Placement::kAllocate,
        static_cast<transport::Access>(static_cast<unsigned>(transport::Access::kRemoteWrite) |
                                       static_cast<unsigned>(transport::Access::kRemoteRead)));
  }
  local_ = static_cast<std::byte*>(region_->base());
  // Counters 0, and every cell's first word 0: no chunk has arrived anywhere. A region left
  // that way by a channel of this layout (~Channel) has only stale payload bytes in its rings,
  // never read: not cleared again (a 1 MiB memset was 40% of a 2-rank MPI_Comm_dup).
  if (!regionReused_ || state == 0 || state != layout()) std::memset(local_, 0, regionBytes_);
  // Who I am, for peers that read my memory with cross-memory attach: my pid, and a nonce that
  // they read both through the mapping and through the pid (the same value: the same process).
  // The nonce travels in the info too: a peer's mapping kept from an earlier channel shows it
  // only if it maps this region (not one freed since that packed to the same key).
  auto* id = reinterpret_cast<std::uint64_t*>(local_);
  id[kPidWord] = static_cast<std::uint64_t>(ctx_.pid());
  id[kNonceWord] = transport::regionNonce(local_);
  zcopyShared_ = kZeroCopySharedDefault;
  if (const char* a = settings::raw(settings::Id::kCollShare); a != nullptr && *a != '\0') {
    const std::string_view v(a);
    if (v == "never" || v == "0") {
      share_ = ShareMode::kNever;
    } else if (v == "always") {
      share_ = ShareMode::kAlways;  // on first use, from ONESIDED_COLL_ZCOPY bytes if set
      if (zset && zcopyPut_ > 0) zcopyShared_ = zcopyPut_;
    } else if (v != "auto") {
      throw Error(kErrArg,
                  "ONESIDED_COLL_SHARE=" + std::string(v) + ": expected auto, always or never");
    }
  }
  if (share_ != ShareMode::kNever) {
    sharedSends_ = &ctx_.sharedSends(share_ == ShareMode::kAlways);
    if (!sharedSends_->active()) share_ = ShareMode::kNever;
  }
  if (const char* a = settings::raw(settings::Id::kCollAttach); a != nullptr && *a != '\0') {
    const std::string_view v(a);
    if (v == "0") {
      attach_ = AttachMode::kNever;
    } else if (v == "1") {
      attach_ = AttachMode::kAlways;
      zcopyAttachOneWay_ = zcopyAttach_;  // forced: every stream the exchange threshold takes
    } else if (v != "auto") {
      throw Error(kErrArg, "ONESIDED_COLL_ATTACH=" + std::string(v) + ": expected 0, 1 or auto");
    }
  }
  // The smallest stream to a peer on the load / store path that wantsRendezvous may take.
  for (const std::size_t from : {zcopyDirect_, zcopyAttach_, zcopyAttachOneWay_, zcopyAllocated_}) {
    if (from > 0) directRendezvousFrom_ = std::min(directRendezvousFrom_, from);
  }
  if (share_ != ShareMode::kNever)
    directRendezvousFrom_ = std::min(directRendezvousFrom_, zcopyShared_);
}

Channel::~Channel() {
  if (placement_) ctx_.clearPlacement();
  try {
    quiesce();
  } catch (const std::exception& e) {
    log::core().warn("completing the last collective writes: {}", e.what());
  }
  std::uint64_t state = 0;
  if (reusable_) {
    // Each chunk's cells are cleared as it is consumed (consume()); a chunk nobody consumed (an
    // erroneous program) leaves its number in the ring, and the next channel clears it all.
    state = layout();
    if (peers_.size() != ranks_.size()) state = 0;
    for (std::size_t m = 0; m < peers_.size() && state != 0; ++m) {
      if (arrived(static_cast<int>(m), peers_[m])) state = 0;
    }
    if (state != 0) {
      std::memset(local_, 0, slotOff(0, 0));  // counters and identity
      for (std::size_t s = 0; s < kBoardSlots; ++s) {
        if (boardUsed_.test(s))
          std::memset(local_ + boardOff_ + s * kBoardSlotBytes, 0, kBoardSlotBytes);
      }
      std::memset(local_ + syncOff_, 0, SyncRegion::kBytes);
    }
  }
  peers_.clear();  // keys belong to endpoints and go before the region
  if (reusable_) ctx_.keepScratch(Context::ScratchUse::kChannel, std::move(region_), state);
}

std::size_t Channel::directPeers() const noexcept {
  std::size_t n = 0;
  for (std::size_t m = 0; m < peers_.size(); ++m) {
    if (static_cast<int>(m) != me_ && peers_[m].resolved && peers_[m].direct != nullptr) ++n;
  }
  return n;
}

std::uint64_t Channel::layout() const {
  // Exact, or 0: a cell is at most 4096 bytes (13 bits), a ring at most 2^24 cells (25 bits).
  const std::uint64_t p = ranks_.size();
  if (p >= (std::uint64_t{1} << 26) || cell_ > 4096 || ringCells_ >= (std::uint64_t{1} << 25)) {
    return 0;
  }
  return (p << 38) | (static_cast<std::uint64_t>(ringCells_) << 13) | cell_;
}

std::vector<std::byte> Channel::localInfo() const {
  auto out = regionInfo(*region_);
  const std::uint64_t nonce = loadLocal(kNonceWord * sizeof(std::uint64_t));
  const auto* b = reinterpret_cast<const std::byte*>(&nonce);
  out.insert(out.end(), b, b + sizeof nonce);
  return out;
}

std::size_t Channel::infoSize(const std::byte* in) {
  return regionInfoSize(in) + sizeof(std::uint64_t);
}

void Channel::parseInfo(const std::vector<std::byte>& in, Peer& p) {
  parseRegionInfo(in, p.base, p.packedKey);
  if (in.size() < infoSize(in.data())) {
    throw Error(kErrIntern, "a collective scratch region's info is " + std::to_string(in.size()) +
                                " bytes, short of " + std::to_string(infoSize(in.data())));
  }
  std::memcpy(&p.nonce, in.data() + regionInfoSize(in.data()), sizeof p.nonce);
}

void Channel::connect(const std::vector<std::vector<std::byte>>& infos) {
  peers_.resize(infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) parseInfo(infos[i], peers_[i]);
}

void Channel::connectLazily(int n, std::function<std::vector<std::byte>(int)> info) {
  peers_.resize(static_cast<std::size_t>(n));
  lazyInfo_ = std::move(info);
}

std::byte* Channel::claimSlot(std::size_t slot) {
  if (slotsTaken_.test(slot)) return nullptr;
  slotsTaken_.set(slot);
  boardUsed_.set(slot);
  return local_ + boardOff_ + slot * kBoardSlotBytes;
}

void Channel::releaseSlot(std::size_t slot) noexcept { slotsTaken_.reset(slot); }

void Channel::nextCall() noexcept {
  static_assert(kDoneOffset == kDoneWord * sizeof(std::uint64_t));
  publishDone(position());
  ++part_;
}

void Channel::endWait() noexcept {
  publishWait(-1);
  auto* moved = reinterpret_cast<std::uint64_t*>(local_) + kMovedWord;
  std::atomic_ref<std::uint64_t>(*moved).fetch_add(1, std::memory_order_release);
}

void Channel::publishWait(int member) noexcept {
  auto* w = reinterpret_cast<std::uint64_t*>(local_) + kWaitWord;
  const std::uint64_t v =
      member < 0 ? 0 : (position() << kWaitPeerBits) | static_cast<std::uint64_t>(member + 1);
  std::atomic_ref<std::uint64_t>(*w).store(v, std::memory_order_release);
  // The hang report's "waiting for rank ..." (by world rank).
  if (member < 0) {
    hang::Waiting::set(hang::For::kNothing);
  } else {
    hang::Waiting::set(hang::For::kRank, ranks_[static_cast<std::size_t>(member)]);
  }
}

std::string Channel::streamState(int member) const {
  const Peer& p = peers_[static_cast<std::size_t>(member)];
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  return " [streams with rank " + n(static_cast<std::uint64_t>(member)) + " (" +
         (p.direct != nullptr ? "load / store" : "transport") + "): chunks sent " + n(p.sent) +
         " in " + n(p.sentCells) + " cells, its consumed count " +
         n(loadLocal(consumedOff(member))) + "; chunks received " + n(p.received) + " in " +
         n(p.recvCells) + " cells, its arrived count " + n(loadLocal(arrivedOff(member))) +
         ", consumed reported " + n(p.reported) + "; rendezvous sent " + n(p.rdvSent) +
         ", its fins " + n(loadLocal(finOff(member))) + ", received " + n(p.rdvDone) + "]";
}

void Channel::memberLeft(int member) {
  breakChannel("rank " + std::to_string(member) +
               " left this collective without sending or taking what this rank waits for from "
               "it: it failed a check of its own arguments, or its arguments select another "
               "algorithm (counts, datatypes or roots differ), or it called collectives in "
               "another order" +
               streamState(member));
}

void Channel::waitCycle(int member) {
  breakChannel("this rank waits for rank " + std::to_string(member) +
               ", which waits (alone or through others) for this rank, in the same collective: "
               "the members' roots, counts or datatypes differ, or they called collectives in "
               "another order" +
               streamState(member));
}

void Channel::otherCall(int member, std::uint32_t theirCall) {
  breakChannel("rank " + std::to_string(member) + " sent data of its collective call " +
               std::to_string(theirCall >> 8) +
               " on this communicator where this rank is in call " +
               std::to_string(position() >> 8 & 0xFFFF) +
               ": its arguments select another algorithm (counts, datatypes or roots differ), "
               "or it called collectives in another order");
}

void Channel::breakChannel(std::string why) {
  broken_ = std::move(why);
  throw Error(kErrOther, broken_);
}

template <class Owing>
bool Channel::stalled(Watch& w, Owing&& owing) {
  // The clock every 64 polls while they spin, at every poll once they yield or sleep (a
  // sleeping wait polls every few milliseconds).
  if (++w.polls < kSpinPolls && (w.polls & 63U) != 0) [[likely]] {
    return false;
  }
  return look(w, owing);
}

template <class Owing>
[[gnu::noinline]] bool Channel::look(Watch& w, Owing&& owing) {
  if (depth_ == 0) return false;
  const std::int64_t now = transport::nowNs();
  if (w.next == 0) {
    w.next = now + kWatchAfterNs;
    return false;
  }
  if (now < w.next) return false;
  w.next = now + kWatchAfterNs;
  // Counter writes across the transport (arrived, consumed, fin) are issued and left to
  // complete meanwhile; a wait this long first makes sure none of them still sits in a queue
  // here, so a peer waiting for one is never part of what this rank watches.
  quiesce();
  // The members' identity lines: [pid][nonce][done][wait][beat].
  auto state = [&](int member) {
    Peer& p = resolve(member);
    std::array<std::uint64_t, 4> id{};  // done, wait, beat, moved
    if (p.direct != nullptr) {
      auto* words = reinterpret_cast<std::uint64_t*>(p.direct);
      for (std::size_t i = 0; i < id.size(); ++i) {
        id[i] =
            std::atomic_ref<std::uint64_t>(words[kDoneWord + i]).load(std::memory_order_acquire);
      }
    } else {
      // One piece per word: each is stored whole by its owner (an atomic store), and read
      // whole, as a NIC reads an aligned word (the self transport copies such a piece atomically).
      auto& ep = ctx_.endpoint(ranks_[static_cast<std::size_t>(member)]);
      std::array<transport::Iov, 4> iov{};
      for (std::size_t i = 0; i < id.size(); ++i) iov[i] = {&id[i], sizeof id[i]};
      if (ep.get(iov, p.base + kDoneWord * sizeof id[0], *p.key) == transport::Issue::kPending) {
        ep.flush();
      }
    }
    return id;
  };
  int first = -1;
  int owed = 0;
  int left = -1;
  owing([&](int member) {
    if (member == me_) return false;
    if (first < 0) first = member;
    ++owed;
    if (state(member)[0] >= position()) left = member;
    return left >= 0;
  });
  if (left >= 0) {
    if (w.leftSince == 0) w.leftSince = now;
    if (now - w.leftSince >= kGoneForNs) memberLeft(left);
  } else {
    w.leftSince = 0;
  }
  // A wait for one member alone is published with a beat that each look advances, and
  // followed: members that each wait for the next alone, around to this one, wait for ever. A
  // member that is not running (more ranks than cores) may still show a wait it has left, and
  // one that moves on and waits again shows the same wait, so the cycle counts only once every
  // member in it has looked again while none has moved.
  const int edge = owed == 1 ? first : -1;
  if (edge != w.edge) {
    if (w.edge >= 0) endWait();  // it moved on from that member
    if (edge >= 0) publishWait(edge);
    w.edge = edge;
  }
  if (edge >= 0) {
    auto* beat = reinterpret_cast<std::uint64_t*>(local_) + kBeatWord;
    std::atomic_ref<std::uint64_t>(*beat).fetch_add(1, std::memory_order_release);
  }
  const std::uint64_t here = position() << kWaitPeerBits;
  std::vector<Watch::Member> cycle;  // from `edge` on
  for (int at = edge; at >= 0 && at != me_ && cycle.size() < ranks_.size();) {
    const auto id = state(at);
    if ((id[1] & ~kWaitPeerMask) != here || (id[1] & kWaitPeerMask) == 0) break;
    cycle.push_back({at, id[2], id[3]});
    at = static_cast<int>(id[1] & kWaitPeerMask) - 1;
    if (at == me_) {
      cycle.push_back({me_, 0, 0});  // closed
      break;
    }
  }
  const bool closed = !cycle.empty() && cycle.back().member == me_;
  auto viaTransport = [&](const std::vector<Watch::Member>& c) {
    return std::any_of(c.begin(), c.end(), [&](const Watch::Member& m) {
      return m.member != me_ && peers_[static_cast<std::size_t>(m.member)].direct == nullptr;
    });
  };
  auto sameMembers = [&] {
    if (cycle.size() != w.cycle.size()) return false;
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      if (cycle[i].member != w.cycle[i].member || cycle[i].moved != w.cycle[i].moved) {
        return false;
      }
    }
    return true;
  };
  if (!closed) {
    w.cycleSince = 0;
    w.cycle.clear();
  } else if (w.cycleSince == 0 || !sameMembers()) {
    w.cycleSince = now;
    w.cycle = std::move(cycle);
  } else if (now - w.cycleSince >= (viaTransport(w.cycle) ? kCycleViaTransportNs : kGoneForNs)) {
    bool allLooked = true;
    for (std::size_t i = 0; i + 1 < cycle.size(); ++i) {
      allLooked = allLooked && cycle[i].beat > w.cycle[i].beat;
    }
    if (allLooked) waitCycle(edge);
    w.cycleSince = now;  // someone did not run: watch again from here
    w.cycle = std::move(cycle);
  }
  return false;
}

std::uint32_t Channel::callStamp() const noexcept {
  return static_cast<std::uint32_t>(position() << kKindBits);
}

void Channel::readSlot(int member, std::size_t slot, std::byte* dst, std::size_t len) {
  Peer& p = resolve(member);
  const std::size_t off = boardOff_ + slot * kBoardSlotBytes;
  if (p.direct != nullptr) {
    onesided::detail::copyBytes(dst, p.direct + off, len);
    return;
  }
  auto& ep = ctx_.endpoint(ranks_[static_cast<std::size_t>(member)]);
  transport::Iov iov{dst, len};
  if (ep.get({&iov, 1}, p.base + off, *p.key) == transport::Issue::kPending) ep.flush();
}

Channel::Peer& Channel::resolveSlow(int member) {
  Peer& p = peers_[static_cast<std::size_t>(member)];
  {
    if (lazyInfo_ && member != me_) parseInfo(lazyInfo_(member), p);
    if (member == me_) {
      p.direct = local_;
    } else {
      const int world = ranks_[static_cast<std::size_t>(member)];
      // The whole region must be on the load / store path, or none of it is used that way.
      auto directOf = [&](const transport::RemoteKey& key) -> std::byte* {
        auto* lo = static_cast<std::byte*>(key.directPointer(p.base));
        auto* hi = static_cast<std::byte*>(key.directPointer(p.base + regionBytes_ - 1));
        return lo != nullptr && hi == lo + regionBytes_ - 1 ? lo : nullptr;
      };
      // A mapping kept from an earlier channel to the same region of the peer (reused from
      // its scratch pool): no new mapping, and its pages are in place already. It is that
      // region if it shows this channel's nonce; else the peer freed it (and the mapping keeps
      // the dead memory alive): forgotten.
      p.key = ctx_.peerKey(world, p.packedKey, [&](const transport::RemoteKey& key) {
        std::byte* d = directOf(key);
        return d != nullptr &&
               std::atomic_ref<std::uint64_t>(reinterpret_cast<std::uint64_t*>(d)[kNonceWord])
                       .load(std::memory_order_acquire) == p.nonce;
      });
      const bool kept = p.key != nullptr;
      if (kept) {
        ++keysReused_;
      } else {
        p.key = ctx_.endpoint(world).unpackRkey(p.packedKey);
        if (directOf(*p.key) != nullptr) ctx_.keepPeerKey(world, p.packedKey, p.key);
      }
      p.direct = directOf(*p.key);
      if (p.direct != nullptr) {
        prefault(p.direct + slotOff(me_, 0), ringBytes_, !kept);
        probeAttach(member, p);
      } else if (staging_.empty()) {
        staging_.resize(sizeof(ChunkHeader) + maxPayload_);  // chunks are put from here
      }
    }
    if (placement_ && p.direct != nullptr && member != me_) {
      ctx_.placementWord(ranks_[static_cast<std::size_t>(member)], cpuWord(p.direct));
    }
    p.resolved = true;
    log::core().debug("collective scratch of member {} (world {}): {}", member,
                      ranks_[static_cast<std::size_t>(member)],
                      p.direct != nullptr ? "direct" : "transport");
  }
  return p;
}

void Channel::showPlacement() {
  placement_ = true;
  ctx_.placementWord(ranks_[static_cast<std::size_t>(me_)], cpuWord(local_));
}

std::uint64_t* Channel::cpuWord(std::byte* region) const noexcept {
  return reinterpret_cast<std::uint64_t*>(region + syncOff_ +
                                          SyncRegion::kCpuSlot * SyncRegion::kSlotStride);
}

SyncRegion::Target Channel::syncTarget(int member) {
  Peer& p = resolve(member);
  return {p.key.get(), p.base + syncOff_,
          p.direct != nullptr ? reinterpret_cast<std::uint64_t*>(p.direct + syncOff_) : nullptr};
}

void Channel::probeAttach(int member, Peer& p) {
  std::array<std::uint64_t, 2> id{};
  std::memcpy(id.data(), p.direct, sizeof id);  // written before the peer's region went out
  bool ok = false;
  bool reach = false;  // the pid is the peer's, and this process may read its memory
  std::string why = "disabled by ONESIDED_COLL_ATTACH=0";
  if (attach_ != AttachMode::kNever || share_ != ShareMode::kNever) {
    // Once read from here, a rank's pid needs no second check (a system call per peer and
    // channel: a fifth of a 2-rank MPI_Comm_dup once its region was kept).
    std::int64_t& known = ctx_.reachablePid(ranks_[static_cast<std::size_t>(member)]);
    if (known != 0 && static_cast<std::uint64_t>(known) == id[kPidWord]) {
      reach = true;
    } else {
      std::uint64_t seen = 0;
      iovec l{&seen, sizeof seen};
      iovec r{reinterpret_cast<void*>(p.base + kNonceWord * sizeof seen), sizeof seen};  // NOLINT
      const ssize_t n = process_vm_readv(static_cast<pid_t>(id[kPidWord]), &l, 1, &r, 1, 0);
      reach = n == static_cast<ssize_t>(sizeof seen) && seen == id[kNonceWord];
      why = n < 0 ? std::strerror(errno)
                  : "pid " + std::to_string(id[kPidWord]) + " is another process";
      if (reach) known = static_cast<std::int64_t>(id[kPidWord]);
    }
    if (reach) p.pid = p.attachPid = static_cast<pid_t>(id[kPidWord]);
    ok = reach && attach_ != AttachMode::kNever;
    if (!ok && reach) why = "disabled by ONESIDED_COLL_ATTACH=0";
    if (ok && attach_ == AttachMode::kAuto && !attachPaysOff(p)) {
      ok = false;
      why = "slower than the ring here (ONESIDED_COLL_ATTACH=1 forces it)";
    }
  }
  if (!ok) p.attachPid = 0;
  log::coll().debug("member {}: its streams to me {} by cross-memory attach{}{}", member,
                    ok ? "go" : "do not go", ok ? "" : ": ", ok ? "" : why);
  // Shared pages are opened by pid too (/proc/PID/fd), with the same permission check.
  const bool maps = reach && share_ != ShareMode::kNever;
  auto* w = reinterpret_cast<std::uint64_t*>(p.direct + finOff(me_)) + kAttachWord;
  std::atomic_ref<std::uint64_t>(*w).store(ok     ? kAttachYes
                                           : maps ? kAttachMapOnly
                                                  : kAttachNo,
                                           std::memory_order_release);
}

bool Channel::attachPaysOff(const Peer& p) {
  std::optional<bool>& verdict = ctx_.attachPaysOff();
  if (verdict) return *verdict;
  // The bytes of my ring in the peer's region: nobody else writes them before my first chunk.
  // Read with process_vm_readv and copied through the mapping, the best of a few tries each
  // (a try may be preempted). On one machine the read ran at copy speed (2 ranks, 512 KiB bcast
  // 35.7 us by the ring, 17.9 by attach), on another 3.7 times slower than a copy, pinning
  // pages (bcast 27.9 by the ring, 34.4 by attach; at 16 KiB 1.2 against 5.3), on a third
  // 2.2-2.6 times slower (alltoallv 2 ranks 128 KiB 26.8 us by the ring, 14.0 by attach; bcast
  // 11.3 against 7.5): what the ring costs is not a hot copy but a copy into cells the other
  // core has just read, and an exchange pays two of those per stream, so attach pays off up to
  // about three hot copies (with the size thresholds of kZeroCopyAttachExchange / OneWay).
  constexpr double kAttachCostMax = 3.0;
  constexpr int kTries = 4;
  const std::size_t len = std::min<std::size_t>(ringBytes_, std::size_t{64} << 10);
  const std::size_t off = slotOff(me_, 0);
  // The destination at the source's offset modulo 4 KiB: the kernel's copy, like glibc's, runs
  // 4 times slower when the destination sits a few bytes after the source there (copy.hpp), and
  // a heap buffer lands anywhere, so the verdict would depend on where malloc put it.
  constexpr std::size_t kPage = 4096;
  std::vector<std::byte> buf(len + kPage);
  const std::size_t skew = (p.base + off - reinterpret_cast<std::uintptr_t>(buf.data())) % kPage;
  const std::span<std::byte> to(buf.data() + skew, len);
  using Clock = std::chrono::steady_clock;
  double attachNs = 1e30;
  double copyNs = 1e30;
  for (int t = 0; t <= kTries; ++t) {  // try 0 warms both up
    const auto t0 = Clock::now();
    iovec l{to.data(), len};
    iovec r{reinterpret_cast<void*>(p.base + off), len};  // NOLINT
    if (process_vm_readv(p.attachPid, &l, 1, &r, 1, 0) != static_cast<ssize_t>(len)) {
      return false;  // this peer only: its memory may be out of reach where others' is not
    }
    const auto t1 = Clock::now();
    onesided::detail::copyBytes(to.data(), p.direct + off, len);
    const auto t2 = Clock::now();
    if (t == 0) continue;
    attachNs = std::min(attachNs, std::chrono::duration<double, std::nano>(t1 - t0).count());
    copyNs = std::min(copyNs, std::chrono::duration<double, std::nano>(t2 - t1).count());
  }
  verdict = attachNs <= kAttachCostMax * copyNs;
  log::coll().debug("cross-memory attach of {} bytes: {:.0f} ns, a copy {:.0f} ns: {}", len,
                    attachNs, copyNs, *verdict ? "used" : "not used, the ring is faster");
  return *verdict;
}

bool Channel::attachedBy(int member) const {
  return loadLocal(finOff(member) + kAttachWord * sizeof(std::uint64_t)) == kAttachYes;
}

bool Channel::mapsMine(int member) const {
  const std::uint64_t w = loadLocal(finOff(member) + kAttachWord * sizeof(std::uint64_t));
  return w == kAttachYes || w == kAttachMapOnly;
}

namespace {
/// The bytes of a stream of `total` bytes at b that lie before and after the shared range
/// [info.lo, info.hi) (which may start before b and end after the stream: SendOp::whole).
std::pair<std::uint64_t, std::uint64_t> sharedEnds(const transport::SharedPagesInfo& info,
                                                   std::uint64_t b, std::uint64_t total) {
  return {info.lo > b ? info.lo - b : 0, b + total > info.hi ? b + total - info.hi : 0};
}
}  // namespace

transport::SharedPagesInfo Channel::sharedPagesFor(const SendOp& o, const Peer& p,
                                                   std::uint64_t total) {
  if (share_ == ShareMode::kNever || !o.byShare || p.direct == nullptr || o.peer == me_ ||
      total < zcopyShared_ || !mapsMine(o.peer)) {
    return {};
  }
  const auto b = reinterpret_cast<std::uintptr_t>(o.src.buf);
  if (whole_.find != nullptr) whole_ = whole_.find(whole_.ctx);  // once per phase
  transport::SharedPagesInfo info = sharedSends_->find(o.src.buf, static_cast<std::size_t>(total),
                                                       this, entered_, whole_.buf, whole_.len);
  // The stream's bytes outside the shared pages travel in the ready chunk: they must fit, and
  // some must be shared.
  const auto [front, back] = sharedEnds(info, b, total);
  if (info.hi > info.lo &&
      (front + back >= total || kSharedHead + front + back + sizeof(ChunkHeader) >
                                    std::min<std::size_t>(maxPayload_, ringBytes_ / 2))) {
    return {};
  }
  return info;
}

std::size_t Channel::arrivedOff(int member) const {
  return (1 + static_cast<std::size_t>(member)) * kLine;
}

std::size_t Channel::consumedOff(int member) const {
  return (1 + ranks_.size() + static_cast<std::size_t>(member)) * kLine;
}

std::size_t Channel::finOff(int member) const {
  return (1 + 2 * ranks_.size() + static_cast<std::size_t>(member)) * kLine;
}

std::size_t Channel::slotOff(int member, std::uint64_t cell) const {
  return (1 + 3 * ranks_.size()) * kLine + static_cast<std::size_t>(member) * ringBytes_ +
         static_cast<std::size_t>(ringPos(cell)) * cell_;
}

std::uint64_t Channel::loadLocal(std::size_t off) const {
  auto* w = reinterpret_cast<std::uint64_t*>(local_ + off);
  return std::atomic_ref<std::uint64_t>(*w).load(std::memory_order_acquire);
}

void Channel::writeCounter(int member, Counter which, std::uint64_t value) {
  Peer& p = resolve(member);
  const std::size_t off = which == Counter::kArrived    ? arrivedOff(me_)
                          : which == Counter::kConsumed ? consumedOff(me_)
                                                        : finOff(me_);
  if (p.direct != nullptr) {
    auto* w = reinterpret_cast<std::uint64_t*>(p.direct + off);
    std::atomic_ref<std::uint64_t>(*w).store(value, std::memory_order_release);
    return;
  }
  auto& ep = ctx_.endpoint(ranks_[static_cast<std::size_t>(member)]);
  if (p.outPending) ep.flush();  // the last counter put may still read its source word
  std::uint64_t& src = p.out[static_cast<std::size_t>(which)];
  src = value;
  transport::Iov iov{&src, sizeof src};
  (void)ep.put({&iov, 1}, p.base + off, *p.key);
  ep.post();  // the peer waits for it: no batching
  p.outPending = true;
}

bool Channel::trySend(SendState& s) {
  const int peer = s.op->peer;
  Peer& p = resolve(peer);
  if (s.waitFin) {
    if (loadLocal(finOff(peer)) < s.fin) return false;
    s.waitFin = false;  // the receiver has read the whole stream
    s.exposed.reset();
    return true;
  }
  const std::uint64_t free = freeCells(peer, p);
  if (free == 0) return false;
  // A chunk never wraps around the end of the ring.
  const std::uint64_t room = std::min(free, ringCells_ - ringPos(p.sentCells));
  // An error found meanwhile by a forwarding tree node goes in a data chunk.
  if (s.op->livePoison != nullptr && *s.op->livePoison != 0) s.rendezvous = false;
  if (s.awaitsData()) return false;
  if (s.rendezvous) {
    switch (startRendezvous(s, p, free, room)) {
      case Start::kDone:
        return true;
      case Start::kWait:
        return false;
      case Start::kCopy:
        break;
    }
  }
  const std::uint64_t pos = s.sentBytes;
  std::uint64_t len =
      std::min<std::uint64_t>({s.total - pos, maxPayload_, room * cell_ - sizeof(ChunkHeader)});
  if (s.op->avail != nullptr) len = std::min(len, *s.op->avail - pos);  // what has arrived
  int poison = s.op->poison;
  if (poison == 0 && s.op->livePoison != nullptr) poison = *s.op->livePoison;
  const ChunkHeader h = header(s.total, len, poison, kData | callStamp(), signatureOf(s.op->src));
  std::byte* dst = chunkBuffer(p);
  if (s.contig != nullptr) {
    writeChunk(dst, h, s.contig + pos, static_cast<std::size_t>(len), cell_);
  } else {
    writeHeader(dst, h);
    packFrom(*s.cursor, s.op->src.buf, dst + sizeof h, static_cast<std::size_t>(len));
  }
  postChunk(peer, p, sizeof h + static_cast<std::size_t>(len));
  s.sentBytes += len;
  s.started = true;
  return true;
}

std::byte* Channel::chunkBuffer(Peer& p) {
  return p.direct != nullptr ? p.direct + slotOff(me_, p.sentCells) : staging_.data();
}

std::uint64_t Channel::cellsFor(std::size_t bytes) const {
  return cellShift_ != 0 ? (bytes + cell_ - 1) >> cellShift_ : (bytes + cell_ - 1) / cell_;
}

void Channel::postChunk(int peer, Peer& p, std::size_t bytes) {
  const std::uint64_t cells = cellsFor(bytes);
  if (p.direct != nullptr) {
    auto* seq = reinterpret_cast<std::uint64_t*>(p.direct + slotOff(me_, p.sentCells));
    p.sentCells += cells;
    std::atomic_ref<std::uint64_t>(*seq).store(++p.sent, std::memory_order_release);
    // The next chunk's first line, for writing: the receiver cleared it a ring ago and holds
    // it, so fetching it now overlaps that transfer with the rest of this call and the
    // caller's next one (2 ranks, back-to-back 8-byte scatters: 0.16 us each before, 0.09
    // after; gather 0.14 -> 0.09, bcast 0.16 -> 0.12).
    const std::byte* next = p.direct + slotOff(me_, p.sentCells);
    __builtin_prefetch(next, 1, 3);
    // After a one-cell chunk (not after longer ones, whose copy the hardware prefetches
    // already: there each of these cost, 2 ranks, 512-byte scatter 0.33-0.49 -> 0.46-0.57 us,
    // 2 KiB 0.28-0.37 -> 0.31-0.46), two more:
    // - the next cell's other lines, up to kPrefetchLines: a chunk of more than 32 bytes
    //   reaches them (with writeChunk's order, 2 ranks, 128 bytes: scatter 0.09-0.18 us ->
    //   0.07-0.13, bcast 0.07-0.14 -> 0.06-0.12);
    // - a line some chunks further on, whose last owner may be far: on the ring's first round,
    //   the receiver's zeroing at creation left its lines in memory, and a fetch there outlasted
    //   the one call the first prefetch runs ahead (2 ranks, 8-byte gather, the first 2000 calls
    //   of a communicator: 280-500 cycles each against 190 once the ring had been round;
    //   coll_latency's first size, whose 1000 timed calls all fall in that round: gather
    //   0.11-0.13 us -> 0.06-0.07, scatter 0.12-0.15 -> 0.07-0.08, bcast 0.10-0.12 -> 0.06;
    //   4 ranks 8-byte scatter 0.13-0.35 -> 0.09-0.18).
    if (cells == 1) {
      for (std::size_t l = kLine; l < prefetchBytes_; l += kLine) {
        __builtin_prefetch(next + l, 1, 3);
      }
      __builtin_prefetch(p.direct + slotOff(me_, p.sentCells + aheadCells_), 1, 3);
    }
    return;
  }
  auto& ep = ctx_.endpoint(ranks_[static_cast<std::size_t>(peer)]);
  // All but the first word, which stays 0 (the receiver may be polling it; the counter below
  // announces this chunk).
  constexpr std::size_t kSeq = sizeof(std::uint64_t);
  transport::Iov iov{staging_.data() + kSeq, bytes - kSeq};
  (void)ep.put({&iov, 1}, p.base + slotOff(me_, p.sentCells) + kSeq, *p.key);
  // The count is written only once the chunk is known to be complete at the peer.
  ep.flush();
  p.outPending = false;
  p.sentCells += cells;
  ++p.sent;
  writeCounter(peer, Counter::kArrived, p.sent);
}

std::uint64_t Channel::freeCells(int peer, const Peer& p) const {
  return ringCells_ - (p.sentCells - loadLocal(consumedOff(peer)));
}

bool Channel::arrived(int peer, const Peer& p) const {
  return loadLocal(slotOff(peer, p.recvCells)) == p.received + 1 ||
         loadLocal(arrivedOff(peer)) > p.received;
}

Channel::Start Channel::startRendezvous(SendState& s, Peer& p, std::uint64_t free,
                                        std::uint64_t room) {
  const bool keyed = s.allocated || s.exposed || s.attached || s.shared.hi > s.shared.lo;
  if (!keyed) {  // no key yet (a self transport's are empty)
    if (const std::vector<std::byte>* k = ctx_.memoryKey(s.op->src.buf, s.total)) {
      s.exposedKey = *k;  // MPI_Alloc_mem memory: exposed already, to every peer
      s.allocated = true;
    } else if (s.shared = sharedPagesFor(*s.op, p, s.total); s.shared.hi > s.shared.lo) {
      // The receiver maps the shared pages; the stream's bytes outside them go in the chunk.
    } else if (p.direct != nullptr && s.op->peer != me_ && s.op->byAttach &&
               attachedBy(s.op->peer)) {
      s.attached = true;  // read by pid and address: nothing to register
    } else {
      try {
        // The stream is contiguous: its packed bytes are the buffer's first total bytes.
        s.exposed = ctx_.transport().registerMemory(const_cast<void*>(s.op->src.buf), s.total,
                                                    transport::Placement::kExpose,
                                                    transport::Access::kRemoteRead);
      } catch (const std::exception& e) {
        log::coll().debug("send buffer {} ({} bytes) not exposed, copied through scratch: {}",
                          s.op->src.buf, s.total, e.what());
        s.rendezvous = false;
        return Start::kCopy;
      }
      s.exposedKey = s.exposed->packRkey();
    }
  }
  // [address][key], or for an MPI_Alloc_mem region [address][frees][key]: frees is this
  // process's count of MPI_Free_mem calls, so a receiver drops the mappings of regions that may
  // be gone (they would keep the memory alive) when it changes.
  const auto b = reinterpret_cast<std::uintptr_t>(s.op->src.buf);
  const bool shared = s.shared.hi > s.shared.lo;
  const std::size_t head = shared ? kSharedHead : sizeof(std::uint64_t) * (s.allocated ? 2 : 1);
  const auto [front, back] = sharedEnds(s.shared, b, s.total);
  const std::size_t len = head + (shared ? front + back : s.exposedKey.size());
  if (len > maxPayload_) {  // chunks too small for the key
    s.exposed.reset();
    s.rendezvous = false;
    return Start::kCopy;
  }
  const std::uint64_t cells = cellsFor(sizeof(ChunkHeader) + len);
  if (cells > free) {
    s.need = cells;  // so the wait sleeps until that much is free, instead of spinning
    return Start::kWait;
  }
  s.need = 1;
  if (cells > room) {
    // Not before the end of the ring: a pad chunk fills the rest, the next try starts at 0.
    log::coll().debug("pad of {} cells before a ready-to-send chunk of {}", room, cells);
    const ChunkHeader h = header(0, room * cell_ - sizeof(ChunkHeader), 0, kPad, 0);
    writeHeader(chunkBuffer(p), h);
    postChunk(s.op->peer, p, static_cast<std::size_t>(room * cell_));
    return Start::kDone;
  }
  // The buffer's own address: a transport may report its registration's base rounded down.
  const std::uint64_t raddr = reinterpret_cast<std::uintptr_t>(s.op->src.buf);
  const ChunkHeader h = header(s.total, len, 0,
                               (shared        ? kReadyShared
                                : s.attached  ? kReadyAttach
                                : s.allocated ? kReadyAllocated
                                              : kReady) |
                                   callStamp(),
                               signatureOf(s.op->src));
  std::byte* dst = chunkBuffer(p);
  writeHeader(dst, h);
  std::memcpy(dst + sizeof h, &raddr, sizeof raddr);
  if (s.allocated) {
    const std::uint64_t frees = ctx_.memoryFrees();
    std::memcpy(dst + sizeof h + sizeof raddr, &frees, sizeof frees);
  }
  if (shared) {
    const std::array<std::uint64_t, 6> w{
        sharedSends_->drops(), s.shared.lo,    s.shared.hi,
        s.shared.fileOffset,   s.shared.inode, static_cast<std::uint64_t>(s.shared.fd)};
    std::byte* out = dst + sizeof h + sizeof raddr;
    std::memcpy(out, w.data(), sizeof w);
    out += sizeof w;
    const auto* src = static_cast<const std::byte*>(s.op->src.buf);
    std::memcpy(out, src, front);
    std::memcpy(out + front, src + (s.total - back), back);
    sharedEndBytes_ += front + back;
  } else if (!s.exposedKey.empty()) {  // the self transport's keys are empty
    std::memcpy(dst + sizeof h + head, s.exposedKey.data(), s.exposedKey.size());
  }
  postChunk(s.op->peer, p, sizeof h + len);
  s.rendezvous = false;
  s.started = true;
  s.sentBytes = s.total;
  s.waitFin = true;
  s.fin = ++p.rdvSent;
  return Start::kDone;
}

void Channel::finishRendezvous(RecvState& r, const std::byte* payload, std::size_t len,
                               std::uint32_t kind) {
  const int peer = r.op->peer;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (r.errorClass == 0 && r.typeMap().total() > 0) {
    try {
      std::uint64_t raddr = 0;
      std::memcpy(&raddr, payload, sizeof raddr);
      if (kind == kReadyAttach) {
        readAttached(r, p.attachPid, raddr);
      } else if (kind == kReadyShared) {
        readShared(r, p, {payload, len}, raddr);
      } else {
        readKeyed(r, p, {payload, len}, kind == kReadyAllocated, raddr);
      }
    } catch (const Error& e) {
      r.errorClass = e.errorClass();
      r.error = std::string("reading rank ") + std::to_string(peer) + "'s data: " + e.what();
    }
  }
  // Written even after an error, so the sender does not wait for ever.
  writeCounter(peer, Counter::kFin, ++p.rdvDone);
}

void Channel::readShared(RecvState& r, Peer& p, std::span<const std::byte> payload,
                         std::uint64_t raddr) {
  std::array<std::uint64_t, 6> w{};
  std::memcpy(w.data(), payload.data() + sizeof raddr, sizeof w);
  // Named copies, not a structured binding: clang before 16 cannot capture those in a lambda.
  const std::uint64_t drops = w[0];
  const std::uint64_t lo = w[1];
  const std::uint64_t hi = w[2];
  const std::uint64_t fileOffset = w[3];
  const std::uint64_t inode = w[4];
  const std::uint64_t fd = w[5];
  if (drops != p.sharedDrops) {  // the peer dropped ranges: their memfds may be gone
    p.sharedMaps.clear();
    p.sharedDrops = drops;
  }
  const std::uint64_t len = hi - lo;
  auto& kept = p.sharedMaps;
  auto it = std::find_if(kept.begin(), kept.end(), [&](const Peer::SharedMap& m) {
    return m.inode == inode && m.fileOffset == fileOffset && m.len == len;
  });
  if (it == kept.end()) {
    auto pages = transport::PeerPages::attach(
        p.pid, {lo, hi, fileOffset, inode, static_cast<std::int64_t>(fd)});
    if (!pages) {
      // Not mapped here after all (the descriptor was closed meanwhile, a security module
      // said no): the sender waits for my fin with the buffer in place, so read it by pid.
      log::coll().debug("rank {}'s shared pages not mapped here: read by pid", r.op->peer);
      readAttached(r, p.pid, raddr);
      return;
    }
    if (kept.size() == kSharedMapsKept) kept.pop_back();
    kept.push_back({inode, fileOffset, len, std::move(pages)});
    it = kept.end() - 1;
  }
  std::rotate(kept.begin(), it, it + 1);  // most recent first
  ++sharedReads_;
  const std::uint64_t total = r.typeMap().total();
  const std::byte* ends = payload.data() + kSharedHead;
  // The mapping may reach past the stream's ends (SendOp::whole): only its part is read.
  const auto [front, back] = sharedEnds({lo, hi, 0, 0, -1}, raddr, total);
  const std::uint64_t from = std::max(raddr, lo);
  const std::array<std::pair<const std::byte*, std::size_t>, 3> pieces{
      {{ends, static_cast<std::size_t>(front)},
       {kept.front().pages->local() + (from - lo),
        static_cast<std::size_t>(std::min(raddr + total, hi) - from)},
       {ends + front, static_cast<std::size_t>(back)}}};
  const bool folding = r.op->foldBase != nullptr;
  std::uint64_t at = 0;
  for (const auto& [from, n] : pieces) {
    if (folding) {
      if (!foldsFailed_) fold(r, from, n);
    } else if (r.contig) {
      std::memcpy(static_cast<std::byte*>(r.base) + at, from, n);
    } else {
      unpackTo(r.typeMap(), r.base, from, n);
    }
    at += n;
  }
}

void Channel::readAttached(RecvState& r, pid_t pid, std::uint64_t raddr) {
  ++attachedReads_;
  const bool folding = r.op->foldBase != nullptr;
  std::array<iovec, kGetBatch> iov{};
  std::size_t n = 0;
  std::uint64_t batch = 0;  // bytes the pieces in iov take
  std::uint64_t pos = 0;    // bytes of the stream read before them
  // One system call per kGetBatch pieces (IOV_MAX); the kernel may move fewer bytes than asked
  // (a page it could not pin at once), and then the rest goes in the next call.
  auto read = [&] {
    std::size_t first = 0;
    std::uint64_t done = 0;
    while (done < batch) {
      iovec from{reinterpret_cast<void*>(raddr + pos + done), batch - done};  // NOLINT
      const ssize_t got = process_vm_readv(pid, &iov[first], n - first, &from, 1, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        throw Error(kErrOther, "cross-memory attach read of " + std::to_string(batch - done) +
                                   " bytes at " + std::to_string(raddr + pos + done) +
                                   " from pid " + std::to_string(pid) +
                                   " failed: " + (got < 0 ? std::strerror(errno) : "no progress"));
      }
      done += static_cast<std::uint64_t>(got);
      for (auto left = static_cast<std::size_t>(got); left > 0;) {
        const std::size_t step = std::min(left, iov[first].iov_len);
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + step;
        iov[first].iov_len -= step;
        left -= step;
        if (iov[first].iov_len == 0) ++first;
      }
    }
    pos += batch;
    n = 0;
    batch = 0;
  };
  if (folding) {
    auto* out = static_cast<std::byte*>(r.base);
    const std::size_t total = r.typeMap().total();
    if (!foldsFailed_ && r.op->foldBase != out) {
      // The fold's first operand is elsewhere: the stream lands in the destination and is
      // combined with it there, as a receive into the destination and an in-place fold would
      // (2 ranks, reduce of 512 KiB: read 18-26 us, fold 12.5-14; read aside and a fold into the
      // destination 22-25 and 20-21).
      iov[n++] = {out, total};
      batch = total;
      read();
      applyOp(r.op->foldOp, r.op->foldKind, out, r.op->foldBase, out,
              unitsIn(total, packedSize(r.op->foldKind)));
      r.folded = total;
      return;
    }
    foldIn_.resize(total);  // the stream whole, folded afterwards
    iov[n++] = {foldIn_.data(), foldIn_.size()};
    batch = foldIn_.size();
    read();
    if (!foldsFailed_) fold(r, foldIn_.data(), foldIn_.size());
    return;
  }
  // Each contiguous piece of the receive buffer, from its place in the stream.
  const auto b = reinterpret_cast<std::uintptr_t>(r.base);
  Datatype::Segment seg{};
  while (r.typeMap().next(std::size_t{1} << 30, seg)) {
    iov[n++] = {reinterpret_cast<void*>(b + static_cast<std::uintptr_t>(seg.offset)), seg.len};
    batch += seg.len;
    if (n == iov.size()) read();
  }
  if (n > 0) read();
}

void Channel::readKeyed(RecvState& r, Peer& p, std::span<const std::byte> payload, bool allocated,
                        std::uint64_t raddr) {
  const int peer = r.op->peer;
  auto& ep = ctx_.endpoint(ranks_[static_cast<std::size_t>(peer)]);
  const std::size_t head = sizeof raddr * (allocated ? 2 : 1);
  const std::span<const std::byte> packed{payload.data() + head, payload.size() - head};
  std::unique_ptr<transport::RemoteKey> once;
  const transport::RemoteKey* key = nullptr;
  if (allocated) {
    auto& kept = p.allocKeys;
    std::uint64_t frees = 0;
    std::memcpy(&frees, payload.data() + sizeof raddr, sizeof frees);
    if (frees != p.allocFrees) {  // the peer freed memory: its regions may be gone
      kept.clear();
      p.allocFrees = frees;
    }
    auto it = std::find_if(kept.begin(), kept.end(), [&](const auto& e) {
      return std::equal(e.first.begin(), e.first.end(), packed.begin(), packed.end());
    });
    if (it == kept.end()) {
      if (kept.size() == kAllocKeysKept) kept.pop_back();
      kept.emplace_back(std::vector<std::byte>(packed.begin(), packed.end()),
                        ep.unpackRkey(packed));
      ++allocKeysUnpacked_;
      it = kept.end() - 1;
    }
    std::rotate(kept.begin(), it, it + 1);  // most recent first
    key = kept.front().second.get();
  } else {
    once = ep.unpackRkey(packed);
    key = once.get();
  }
  const bool folding = r.op->foldBase != nullptr;
  const std::uint64_t total = r.typeMap().total();
  // Mapped here (a peer's MPI_Alloc_mem memory on shared memory): loads, one copy.
  const auto* mapped = static_cast<const std::byte*>(key->directPointer(raddr));
  if (mapped != nullptr && key->directPointer(raddr + total - 1) != mapped + (total - 1)) {
    mapped = nullptr;
  }
  if (mapped != nullptr) ++mappedReads_;
  if (mapped != nullptr && folding) {
    if (!foldsFailed_) fold(r, mapped, static_cast<std::size_t>(total));
  } else if (mapped != nullptr) {
    unpackTo(r.typeMap(), r.base, mapped, static_cast<std::size_t>(total));
  } else {
    // Each contiguous piece of the receive buffer, read from its place in the stream; a
    // folding receive reads the stream whole and folds it afterwards.
    std::vector<transport::Iov> iov;
    std::vector<std::uint64_t> from;
    Datatype::Segment seg{};
    if (folding) foldIn_.resize(r.typeMap().total());
    const auto b = reinterpret_cast<std::uintptr_t>(folding ? foldIn_.data() : r.base);
    std::uint64_t pos = 0;
    for (;;) {
      const bool more = r.typeMap().next(std::size_t{1} << 30, seg);
      if (more) {
        iov.push_back(
            {reinterpret_cast<void*>(b + static_cast<std::uintptr_t>(seg.offset)), seg.len});
        from.push_back(raddr + pos);
        pos += seg.len;
      }
      if (iov.size() == kGetBatch || (!more && !iov.empty())) {
        (void)ep.getv(iov, from, *key);  // the lists are read in the call
        iov.clear();
        from.clear();
      }
      if (!more) break;
    }
    ep.flush();  // every piece is in place
    if (folding && !foldsFailed_) fold(r, foldIn_.data(), foldIn_.size());
  }
}

void Channel::consume(int peer, Peer& p, std::uint64_t cells) {
  // Every cell's first word back to 0 before the sender may reuse it: any cell can start a
  // later chunk, and a stale word there must never look like that chunk's number.
  for (std::uint64_t c = 0; c < cells; ++c) {
    auto* w = reinterpret_cast<std::uint64_t*>(local_ + slotOff(peer, p.recvCells + c));
    std::atomic_ref<std::uint64_t>(*w).store(0, std::memory_order_relaxed);
  }
  p.recvCells += cells;
  ++p.received;
  // Reported every quarter ring: a sender waits only when its chunk (at most half the ring)
  // does not fit, so at least a quarter is unread then, and reading it reports.
  if (p.recvCells - p.reported >= reportEvery_) {
    p.reported = p.recvCells;
    writeCounter(peer, Counter::kConsumed, p.recvCells);
  }
}

void Channel::fold(RecvState& r, const std::byte* in, std::size_t len) {
  const RecvOp& o = *r.op;
  const std::size_t unit = packedSize(o.foldKind);
  auto* out = static_cast<std::byte*>(r.base);
  // out[at, at + n elements) = base op in, one pass over the three.
  auto combine = [&](const std::byte* src, std::size_t n) {
    applyOp(o.foldOp, o.foldKind, out + r.folded, o.foldBase + r.folded, src, n);
    r.folded += n * unit;
  };
  if (r.carryLen > 0) {
    const std::size_t take = std::min(unit - r.carryLen, len);
    std::memcpy(r.carry.data() + r.carryLen, in, take);
    r.carryLen += take;
    in += take;
    len -= take;
    if (r.carryLen < unit) return;
    combine(r.carry.data(), 1);
    r.carryLen = 0;
  }
  const std::size_t whole = unitsIn(len, unit);
  combine(in, whole);
  r.carryLen = len - whole * unit;
  if (r.carryLen > 0) std::memcpy(r.carry.data(), in + whole * unit, r.carryLen);
}

bool Channel::tryRecv(RecvState& r) {
  const int peer = r.op->peer;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (!arrived(peer, p)) return false;
  const std::byte* chunk = local_ + slotOff(peer, p.recvCells);
  ChunkHeader h{};
  std::memcpy(&h, chunk, sizeof h);
  const std::uint64_t cells = cellsFor(sizeof h + static_cast<std::size_t>(h.len));
  if (h.kind == kPad) {
    consume(peer, p, cells);
    return true;
  }
  if ((h.kind & ~kKindMask) != callStamp()) otherCall(peer, h.kind >> kKindBits);
  h.kind &= kKindMask;
  const bool wasStarted = r.started;
  if (!r.started) {
    r.started = true;
    r.total = h.total;
    if (h.poison != 0) {
      r.errorClass = static_cast<int>(h.poison);
      r.error = "rank " + std::to_string(peer) + " reported an error in its part of the collective";
    } else if (r.op->grow != nullptr) {
      r.op->grow->resize(h.total);
      r.base = r.op->grow->data();
      r.contig = true;
    } else if (h.total != r.expected) {
      r.errorClass = h.total > r.expected ? kErrTruncate : kErrCount;
      r.error = "rank " + std::to_string(peer) + " sent " + std::to_string(h.total) +
                " bytes where " + std::to_string(r.expected) + " bytes were expected (" +
                std::to_string(r.op->dst.count) + " x " + r.op->dst.type->describe() + ")";
    } else if (const std::uint64_t mine = signatureOf(r.op->dst);
               signaturesDiffer(h.sig, mine, h.total)) {
      r.errorClass = kErrType;
      r.error = "rank " + std::to_string(peer) + " sent " + kindName(static_cast<int>(h.sig - 1)) +
                " data where " + std::to_string(r.op->dst.count) + " x " +
                r.op->dst.type->describe() + " was expected (the type signatures differ)";
    } else {
      r.base = const_cast<void*>(r.op->dst.buf);
      r.contig = r.op->dst.type->contiguous();
    }
  }
  // A fold writes its destination only once every folding receive of the phase has checked
  // its first chunk (sizes, signatures, errors from the sender): after a mismatch nothing is
  // written. Until then the chunk stays in the ring.
  const bool folding = r.op->foldBase != nullptr && r.errorClass == 0 && r.total > 0;
  if (folding && !foldsChecked_) return !wasStarted;
  std::uint64_t got = h.len;
  if (h.kind == kReady || h.kind == kReadyAllocated || h.kind == kReadyAttach ||
      h.kind == kReadyShared) {
    finishRendezvous(r, chunk + sizeof h, static_cast<std::size_t>(h.len), h.kind);
    got = r.total;
  } else if (folding) {
    if (!foldsFailed_) fold(r, chunk + sizeof h, static_cast<std::size_t>(h.len));
  } else if (r.errorClass == 0 && r.contig) {
    if (h.len > 0) {  // a buffer of 0 elements may be NULL
      std::memcpy(static_cast<std::byte*>(r.base) + r.got, chunk + sizeof h,
                  static_cast<std::size_t>(h.len));
    }
  } else if (r.errorClass == 0) {
    unpackTo(r.typeMap(), r.base, chunk + sizeof h, static_cast<std::size_t>(h.len));
  }
  r.got += got;
  if (r.op->progress != nullptr) {
    *r.op->progress = r.errorClass == 0 ? *r.op->progress + got : UINT64_MAX;
  }
  if (r.op->errorOut != nullptr && r.errorClass != 0) *r.op->errorOut = r.errorClass;
  consume(peer, p, cells);
  return true;
}

namespace {
// The first n of `kept` (grown as needed) reset for ops, as a list of pointers in `view`.
template <class State, class Op>
void prepare(std::vector<std::unique_ptr<State>>& kept, std::vector<State*>& view,
             std::span<const Op> ops) {
  while (kept.size() < ops.size()) kept.push_back(std::make_unique<State>());
  view.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    kept[i]->reset(ops[i]);
    view[i] = kept[i].get();
  }
}
}  // namespace

bool Channel::foldHeld(const RecvState& r, bool earlierFoldWaits) const {
  // A fold's first chunk always moves it on (it is checked before any fold writes); after
  // that, only once every fold is checked and the folds before it are done.
  return r.op->foldBase != nullptr && r.started && (earlierFoldWaits || !foldsChecked_);
}

void Channel::checkFolds() {
  foldsChecked_ = true;
  foldsFailed_ = false;
  for (const RecvState* r : recvView_) {
    if (r->op->foldBase == nullptr) continue;
    foldsChecked_ = foldsChecked_ && r->started;
    foldsFailed_ = foldsFailed_ || r->errorClass != 0;
  }
}

bool Channel::wantsRendezvous(const SendOp& o, const Peer& p, std::uint64_t total, bool exchange) {
  if (p.direct == nullptr) return zcopyPut_ > 0 && total >= zcopyPut_;
  // Below every threshold (a small collective's every send): no lookups.
  if (total < directRendezvousFrom_) return false;
  if (zcopyDirect_ > 0 && total >= zcopyDirect_) return true;
  if (const auto info = sharedPagesFor(o, p, total); info.hi > info.lo) return true;
  const std::size_t attachFrom = exchange ? zcopyAttach_ : zcopyAttachOneWay_;
  if (o.byAttach && attachFrom > 0 && total >= attachFrom && attachedBy(o.peer)) return true;
  return zcopyAllocated_ > 0 && total >= zcopyAllocated_ &&
         ctx_.findMemory(o.src.buf, static_cast<std::size_t>(total)) != nullptr;
}

bool Channel::sendSmall(const SendOp& o, bool exchange) {
  if (o.avail != nullptr || o.livePoison != nullptr || !o.src.type->contiguous()) return false;
  Peer& p = resolve(o.peer);
  const std::uint64_t total = streamBytes(o.src);
  if (p.direct == nullptr || total > maxPayload_ ||
      (o.poison == 0 && wantsRendezvous(o, p, total, exchange))) {
    return false;  // put, more than a chunk, or a rendezvous
  }
  const ChunkHeader h = header(total, total, o.poison, kData | callStamp(), signatureOf(o.src));
  const std::uint64_t free = freeCells(o.peer, p);
  if (std::min(free, ringCells_ - ringPos(p.sentCells)) < cellsFor(sizeof h + total)) {
    return false;  // no room before the ring's end: the general path pads or waits
  }
  std::byte* dst = p.direct + slotOff(me_, p.sentCells);
  writeChunk(dst, h, static_cast<const std::byte*>(o.src.buf), static_cast<std::size_t>(total),
             cell_);
  postChunk(o.peer, p, sizeof h + static_cast<std::size_t>(total));
  return true;
}

Channel::Small Channel::recvSmall(const RecvOp& o, bool wait) {
  if (o.grow != nullptr || o.progress != nullptr || o.errorOut != nullptr ||
      !o.dst.type->contiguous()) {
    return Small::kDecline;
  }
  Peer& p = resolve(o.peer);
  if (wait) {
    Watch w(*this);
    ctx_.waitUntil(
        [&] {
          return arrived(o.peer, p) || stalled(w, [&](auto&& f) {
                   if (!arrived(o.peer, p)) f(o.peer);
                 });
        },
        driveFor(p.direct != nullptr));
  } else if (!arrived(o.peer, p)) {
    return Small::kNotYet;
  }
  const std::byte* chunk = local_ + slotOff(o.peer, p.recvCells);
  ChunkHeader h{};
  std::memcpy(&h, chunk, sizeof h);
  const std::uint64_t mine = signatureOf(o.dst);
  if (h.kind != (kData | callStamp()) || h.poison != 0 || h.total != streamBytes(o.dst) ||
      h.len != h.total || signaturesDiffer(h.sig, mine, h.total)) {
    return Small::kDecline;  // a pad, a rendezvous, several chunks or an error: tryRecv names it
  }
  auto* out = static_cast<std::byte*>(const_cast<void*>(o.dst.buf));
  if (o.foldBase != nullptr && h.len > 0) {
    // A reduction's one chunk: out = base op in (allreduce's rounds, a tree's one child).
    const std::size_t unit = packedSize(o.foldKind);
    const std::size_t elems = unitsIn(static_cast<std::size_t>(h.len), unit);
    if (elems * unit != h.len) return Small::kDecline;
    applyOp(o.foldOp, o.foldKind, out, o.foldBase, chunk + sizeof h, elems);
  } else if (h.len > 0) {  // a buffer of 0 elements may be NULL
    onesided::detail::copyBytes(out, chunk + sizeof h, static_cast<std::size_t>(h.len));
  }
  consume(o.peer, p, cellsFor(sizeof h + static_cast<std::size_t>(h.len)));
  return Small::kDone;
}

bool Channel::recvsSmall(std::span<const RecvOp> recvs, SmallVec<RecvOp, 8>& rest) {
  // Two receives from one peer must take its chunks in order: the general path's business.
  if (seen_.size() != peers_.size()) seen_.assign(peers_.size(), 0);
  ++phase_;
  // Folding receives, too: they complete in list order (see RecvOp).
  for (const RecvOp& o : recvs) {
    std::uint64_t& mark = seen_[static_cast<std::size_t>(o.peer)];
    if (mark == phase_ || o.foldBase != nullptr) {
      for (const RecvOp& r : recvs) rest.push_back(r);
      return false;
    }
    mark = phase_;
  }
  SmallVec<std::uint8_t, 64> done;
  for (std::size_t i = 0; i < recvs.size(); ++i) done.push_back(0);
  std::size_t left = recvs.size();
  bool declined = false;
  while (!declined) {
    for (std::size_t i = 0; i < recvs.size() && !declined; ++i) {
      if (done[i] != 0) continue;
      const Small s = recvSmall(recvs[i], false);
      declined = s == Small::kDecline;
      if (s == Small::kDone) {
        done[i] = 1;
        --left;
      }
    }
    if (left == 0) return true;
    if (declined) break;
    bool direct = true;
    for (const RecvOp& o : recvs) direct = direct && resolve(o.peer).direct != nullptr;
    Watch w(*this);
    ctx_.waitUntil(
        [&] {
          for (std::size_t i = 0; i < recvs.size(); ++i) {
            const int peer = recvs[i].peer;
            if (done[i] == 0 && arrived(peer, peers_[static_cast<std::size_t>(peer)])) return true;
          }
          return stalled(w, [&](auto&& f) {
            for (std::size_t i = 0; i < recvs.size(); ++i) {
              const int peer = recvs[i].peer;
              if (done[i] == 0 && !arrived(peer, peers_[static_cast<std::size_t>(peer)]) &&
                  f(peer)) {
                return;
              }
            }
          });
        },
        driveFor(direct));
  }
  for (std::size_t i = 0; i < recvs.size(); ++i) {
    if (done[i] == 0) rest.push_back(recvs[i]);
  }
  return false;
}

void Channel::run(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                  const Callback& meanwhile, const WholeSend& whole) {
  whole_ = whole;
  if (!broken_.empty()) {
    throw Error(
        kErrOther,
        "collectives on this communicator are out of step since an earlier one failed: " + broken_);
  }
  // `meanwhile` must not leave the phase half done: its error waits for the phase's end.
  bool metWhile = !meanwhile;
  std::optional<Error> whileError;
  auto runMeanwhile = [&] {
    metWhile = true;
    try {
      meanwhile();
    } catch (const Error& e) {
      whileError = e;
    }
  };
  auto finish = [&] {
    if (!metWhile) runMeanwhile();
    if (whileError) throw *whileError;
  };
  // Small contiguous sends to peers on the load / store path go straight into their rings,
  // and then, with every send of the phase out, small contiguous receives are taken as their
  // chunks arrive, without the general path's per-phase state (a small collective's time is
  // mostly bookkeeping). Whatever these do not take (a put, a rendezvous, a full ring, an
  // error, a send behind one of those) goes the general way, in order.
  // An exchange: this rank receives in the phase too (its sends that forward what it receives
  // are not part of one).
  const bool receives = !recvs.empty();
  std::size_t sent = 0;
  while (sent < sends.size() && sendSmall(sends[sent], receives)) ++sent;
  sends = sends.subspan(sent);
  SmallVec<RecvOp, 8> rest;
  if (sends.empty()) {
    if (recvs.empty()) return finish();
    if (recvs.size() == 1) {
      if (recvSmall(recvs[0], true) == Small::kDone) return finish();
    } else {
      if (recvsSmall(recvs, rest)) return finish();
      recvs = rest;
    }
  }
  // The states stay in the channel from phase to phase: a small collective's time is mostly
  // bookkeeping, and allocating them was a good part of it. run() is never re-entered.
  prepare(sendKept_, sendView_, sends);
  prepare(recvKept_, recvView_, recvs);
  for (SendState* s : sendView_) {
    s->rendezvous = s->op->src.type->contiguous() && s->op->poison == 0 &&
                    wantsRendezvous(*s->op, resolve(s->op->peer), s->total,
                                    receives && s->op->avail == nullptr);
  }
  // Whether every peer of the phase stores into this rank's region itself: then no wait here
  // needs the transport's progress (Context::Drive).
  bool direct = true;
  for (const SendState* s : sendView_) direct = direct && resolve(s->op->peer).direct != nullptr;
  for (const RecvState* r : recvView_) direct = direct && resolve(r->op->peer).direct != nullptr;
  auto ready = [&] {
    int active = 0;
    for (SendState* sp : sendView_) {
      SendState& s = *sp;
      if (s.finished()) continue;
      if (active++ >= inflight_) break;
      const int peer = s.op->peer;
      if (s.waitFin) {
        if (loadLocal(finOff(peer)) >= s.fin) return true;
        continue;
      }
      if (s.awaitsData()) continue;  // waiting for the data it forwards
      if (freeCells(peer, resolve(peer)) >= s.need) {
        return true;
      }
    }
    bool foldWaits = false;  // an earlier folding receive is unfinished
    for (RecvState* rp : recvView_) {
      RecvState& r = *rp;
      if (r.finished()) continue;
      const bool held = foldHeld(r, foldWaits);
      foldWaits = foldWaits || r.op->foldBase != nullptr;
      if (!held && arrived(r.op->peer, peers_[static_cast<std::size_t>(r.op->peer)])) return true;
    }
    return false;
  };
  // The members this phase waits for: a fin, ring space, a chunk.
  auto owing = [&](auto&& f) {
    int active = 0;
    for (SendState* sp : sendView_) {
      const SendState& s = *sp;
      if (s.finished()) continue;
      if (active++ >= inflight_) break;
      const int peer = s.op->peer;
      const bool owes = s.waitFin ? loadLocal(finOff(peer)) < s.fin
                                  : !s.awaitsData() && freeCells(peer, resolve(peer)) < s.need;
      if (owes && f(peer)) return;
    }
    for (RecvState* rp : recvView_) {
      const RecvState& r = *rp;
      const int peer = r.op->peer;
      if (!r.finished() && !arrived(peer, peers_[static_cast<std::size_t>(peer)]) && f(peer)) {
        return;
      }
    }
  };
  for (;;) {
    bool moved = false;
    bool all = true;
    int active = 0;
    for (SendState* sp : sendView_) {
      SendState& s = *sp;
      if (s.finished()) continue;
      if (active++ >= inflight_) {
        all = false;
        break;
      }
      while (!s.finished() && trySend(s)) moved = true;
      if (!s.finished()) all = false;
    }
    checkFolds();
    bool foldWaits = false;
    for (RecvState* rp : recvView_) {
      RecvState& r = *rp;
      if (r.finished()) continue;
      if (!foldHeld(r, foldWaits)) {
        while (!r.finished() && tryRecv(r)) moved = true;
      }
      if (!r.finished()) {
        all = false;
        foldWaits = foldWaits || r.op->foldBase != nullptr;
      }
    }
    if (all) break;
    if (moved) continue;
    if (!metWhile) {
      runMeanwhile();
      continue;
    }
    Watch watch(*this);
    ctx_.waitUntil([&] { return ready() || stalled(watch, owing); }, driveFor(direct));
  }
  if (!metWhile) runMeanwhile();  // before a receive's error is thrown: it runs in any case
  for (RecvState* rp : recvView_) {
    RecvState& r = *rp;
    if (r.errorClass != 0) throw Error(r.errorClass, r.error);
  }
  if (whileError) throw *whileError;
}

std::byte* Channel::buffer(std::size_t slot, std::size_t n) {
  if (buffers_.size() <= slot) buffers_.resize(slot + 1);
  Buffer& b = buffers_[slot];
  constexpr std::size_t kKeepBelow = std::size_t{16} << 20;
  if (b.size < n || (b.size > kKeepBelow && b.size / 4 > n)) {
    b.data.reset();
    b.data.reset(new std::byte[std::max<std::size_t>(n, 1)]);  // NOLINT: not zeroed on purpose
    b.size = n;
  }
  return b.data.get();
}

void Channel::quiesce() {
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    Peer& p = peers_[i];
    if (!p.resolved || p.direct != nullptr || !p.outPending) continue;
    ctx_.endpoint(ranks_[i]).flush();
    p.outPending = false;
  }
}

}  // namespace onesided::detail
