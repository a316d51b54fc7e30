// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/window.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "collectives/channel.hpp"
#include "copy.hpp"
#include "counters.hpp"
#include "datatype/loop.hpp"
#include "log.hpp"
#include "onesided/collectives.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/errors.hpp"
#include "transport/transport.hpp"
#include "window/am.hpp"
#include "window/barrier.hpp"
#include "window/dynamic.hpp"
#include "window/sync.hpp"

namespace onesided {
namespace {

struct InfoHeader {
  std::uint64_t base;
  std::uint64_t size;
  std::int64_t dispUnit;
  std::uint64_t keyLen;
  std::int64_t failClass;
  std::uint64_t hintBits;  // kHintSameSize | kHintSameDispUnit as this rank promised them
};

constexpr std::uint64_t kHintSameSize = 1;
constexpr std::uint64_t kHintSameDispUnit = 2;

std::string str(std::int64_t v) { return std::to_string(v); }

/// `base` + `offset` as an address: origin buffers may be MPI_BOTTOM (null) with the absolute
/// addresses in the datatype, where pointer arithmetic on null would be undefined.
inline std::byte* at(std::byte* base, std::ptrdiff_t offset) {
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(base) +
                                      static_cast<std::uintptr_t>(offset));
}

/// Calls fn(originPtr, targetOffset, len) for each piece where an origin segment and a target
/// segment overlap, walking (ocount x otype) and (tcount x ttype) in step with two cursors over
/// the types' committed layouts. Signatures match and sizes are equal (checked before).
template <class Fn>
void forEachPiece(std::byte* origin, std::size_t ocount, const Datatype& otype,
                  std::uint64_t toffset, std::size_t tcount, const Datatype& ttype, Fn&& fn) {
  if (otype.contiguous() && ttype.contiguous()) {
    std::size_t n = ocount * otype.size();
    if (n != 0) fn(origin, toffset, n);
    return;
  }
  // Both sides one strided descriptor (vectors, faces of arrays, a contiguous side): a plain
  // loop, a few instructions per block instead of two cursor steps.
  detail::Strided os;
  detail::Strided ts;
  if (detail::asStrided(otype, ocount, os) && detail::asStrided(ttype, tcount, ts)) {
    const auto tbase = static_cast<std::int64_t>(toffset) + ts.offset;
    if (os.count == 1) {  // one origin run: target blocks take consecutive origin bytes
      const auto step = static_cast<std::ptrdiff_t>(ts.blocklen);
      for (std::size_t i = 0; i < ts.count; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        fn(at(origin, os.offset + k * step), static_cast<std::uint64_t>(tbase + k * ts.stride),
           ts.blocklen);
      }
      return;
    }
    if (ts.count == 1 || os.blocklen == ts.blocklen) {
      const std::ptrdiff_t tstep =
          ts.count == 1 ? static_cast<std::ptrdiff_t>(os.blocklen) : ts.stride;
      for (std::size_t i = 0; i < os.count; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        fn(at(origin, os.offset + k * os.stride), static_cast<std::uint64_t>(tbase + k * tstep),
           os.blocklen);
      }
      return;
    }
  }
  // One side a single run: walk only the other side.
  const bool oRun = detail::asStrided(otype, ocount, os) && os.count == 1;
  const bool tRun = detail::asStrided(ttype, tcount, ts) && ts.count == 1;
  if (oRun || tRun) {
    detail::Cursor c(oRun ? ttype : otype, oRun ? tcount : ocount);
    Datatype::Segment s{0, 0};
    std::size_t done = 0;
    while (c.next(SIZE_MAX, s)) {
      const auto d = static_cast<std::ptrdiff_t>(done);
      if (oRun) {
        fn(at(origin, os.offset + d), toffset + static_cast<std::uint64_t>(s.offset), s.len);
      } else {
        fn(at(origin, s.offset),
           static_cast<std::uint64_t>(static_cast<std::int64_t>(toffset) + ts.offset + d), s.len);
      }
      done += s.len;
    }
    return;
  }
  detail::Cursor oc(otype, ocount);
  detail::Cursor tc(ttype, tcount);
  Datatype::Segment o{0, 0};
  Datatype::Segment t{0, 0};
  for (;;) {
    if (o.len == 0 && !oc.next(SIZE_MAX, o)) break;
    if (t.len == 0 && !tc.next(SIZE_MAX, t)) break;
    const std::size_t n = std::min(o.len, t.len);
    fn(at(origin, o.offset), toffset + static_cast<std::uint64_t>(t.offset), n);
    o.offset += static_cast<std::ptrdiff_t>(n);
    o.len -= n;
    t.offset += static_cast<std::ptrdiff_t>(n);
    t.len -= n;
  }
}

// Choosing, per transfer on the transport path, between one operation per contiguous piece and
// packing the origin side into the window's registered bounce buffer (one operation per target
// run). A piece costs one transport operation -- a verbs work request, a UCX request or a
// process_vm_writev syscall: 0.3-1 us of software and NIC overhead each -- while packing costs a
// memcpy at 5-10 GB/s, about 0.1-0.2 us per KiB. Packing therefore pays when the origin is what
// cuts the transfer into pieces: its runs are small (below kPackMaxRun, where the copy is
// cheaper than the operations it saves) and clearly more numerous than the target's (so the
// operation count really drops to the target's runs). When the target is as fragmented as the
// origin, packing would add a copy and save nothing; when origin runs are large, the operations
// are few and the copy is the cost. The load / store path never packs: there a piece is itself
// a memcpy.
constexpr double kPackMaxRun = 8192;
constexpr double kPackMinGain = 2;
// Bounce buffer: grown on demand up to this; longer transfers go through it in chunks.
constexpr std::size_t kBounceMin = 64 * 1024;
constexpr std::size_t kBounceMax = 4 * 1024 * 1024;

bool packOrigin(std::size_t ocount, const Datatype& otype, std::size_t tcount,
                const Datatype& ttype) {
  if (otype.contiguous()) return false;
  const double oruns = otype.runsPerElement() * static_cast<double>(ocount);
  const double truns =
      ttype.contiguous() ? 1 : ttype.runsPerElement() * static_cast<double>(tcount);
  const double orun = static_cast<double>(otype.size()) * static_cast<double>(ocount) / oruns;
  return orun < kPackMaxRun && oruns >= kPackMinGain * truns;
}

}  // namespace

std::size_t Window::controlBytes(bool amMode) noexcept {
  return kControlBytes + (amMode ? detail::kInboxBytes : 0) + detail::SyncRegion::kBytes;
}

Window::Window(Comm& comm, Flavor flavor, int dispUnit)
    : comm_(comm), flavor_(flavor), dispUnit_(dispUnit) {}

Window::Target& Window::TargetTable::make(std::size_t i) {
  auto& page = pages_[i / kPage];
  const std::size_t first = i / kPage * kPage;
  page = std::make_unique<Target[]>(std::min(kPage, n_ - first));
  return page[i % kPage];
}

const Window::Target& Window::TargetTable::untouched() {
  static const Target fresh;
  return fresh;
}

void Window::TargetTable::resize(std::size_t n) {
  if (n != n_) pages_.clear();  // a page holds as many targets as existed when it was made
  n_ = n;
  pages_.resize((n + kPage - 1) / kPage);
}

void Window::TargetTable::clear() noexcept {
  pages_.clear();
  n_ = 0;
}

int Window::mappedControls() const {
  int n = 0;
  targets_.forEach([&](std::size_t, const Target& t) {
    n += t.ctlKey && t.ctlKey->directPointer(t.ctlBase) != nullptr ? 1 : 0;
  });
  return n;
}

Window::~Window() {
  detachInbox();
  releaseSlot();
  // The sync region first (its destructor completes the last barrier's puts, which use
  // targets' control keys), then the keys (they belong to endpoints), then our memory.
  sync_.reset();
  targets_.clear();
  dyn_.reset();
  // Not kept for a later window (free() keeps it): without free()'s barriers a peer may still
  // write into it.
  control_.reset();
  region_.reset();
  segment_.reset();
}

namespace {

/// The local argument checks shared by create and allocate; returns {class, message}.
std::pair<int, std::string> checkArgs(std::int64_t size, int dispUnit, const Error* argError) {
  if (argError != nullptr) return {argError->errorClass(), argError->what()};
  if (size < 0) return {kErrSize, "size " + str(size) + " is negative"};
  if (dispUnit <= 0) return {kErrDisp, "disp_unit " + str(dispUnit) + " is not positive"};
  return {kSuccess, {}};
}

}  // namespace

std::unique_ptr<Window> Window::create(Comm& comm, void* base, std::int64_t size, int dispUnit,
                                       const Error* argError, const WindowHints& hints) {
  auto [cls, msg] = checkArgs(size, dispUnit, argError);
  if (cls == kSuccess && base == nullptr && size > 0) {
    cls = kErrBase;
    msg = "base is NULL but size is " + str(size);
  }
  std::unique_ptr<Window> w(new Window(comm, Flavor::kCreate, dispUnit));
  w->hints_ = hints;
  const auto bytes = cls == kSuccess ? static_cast<std::size_t>(size) : 0;
  if (cls == kSuccess) {
    try {
      // Memory from MPI_Alloc_mem is already the transport's (and mappable by on-node peers).
      w->exposed_ = comm.context().findMemory(base, bytes);
      if (w->exposed_ == nullptr) {
        w->region_ = comm.context().transport().registerMemory(
            base, bytes, transport::Placement::kRegister, transport::Access::kRemoteAll);
        w->exposed_ = w->region_.get();
      }
    } catch (const Error& e) {
      cls = e.errorClass();
      msg = e.what();
    }
  }
  w->setUp(base, bytes, cls, msg);
  return w;
}

std::unique_ptr<Window> Window::allocate(Comm& comm, std::int64_t size, int dispUnit,
                                         const Error* argError, const WindowHints& hints) {
  auto [cls, msg] = checkArgs(size, dispUnit, argError);
  std::unique_ptr<Window> w(new Window(comm, Flavor::kAllocate, dispUnit));
  w->hints_ = hints;
  const auto bytes = cls == kSuccess ? static_cast<std::size_t>(size) : 0;
  if (cls == kSuccess) {
    try {
      // Room for the control area after the window (setUp), in the same registration.
      const bool am = comm.context().accumulateByMessage(comm);
      w->region_ = comm.context().transport().registerMemory(
          nullptr, controlOffset(bytes) + controlBytes(am), transport::Placement::kAllocate,
          transport::Access::kRemoteAll);
      w->exposed_ = w->region_.get();
    } catch (const Error& e) {
      cls = e.errorClass();
      msg = e.what();
    } catch (const std::bad_alloc&) {
      cls = kErrNoMem;
      msg = "cannot allocate " + str(size) + " bytes";
    }
  }
  w->setUp(bytes == 0 || !w->region_ ? nullptr : w->region_->base(), bytes, cls, msg);
  return w;
}

namespace {

/// The control region's part of a descriptor, after the window's key: this, then the control
/// region's key (none when it shares the window's registration: controlKey() takes the window's
/// key then).
struct ControlHeader {
  std::uint64_t base;      // the control words
  std::uint64_t keyLen;    // bytes of the key after this
  std::uint64_t syncAddr;  // the fence slots
  std::uint64_t nonce;     // as in the kNonceWord
};

/// A descriptor as it sits in a board slot: this header, then the blob.
struct SlotHeader {
  std::uint64_t seq;       // the window's number on its communicator
  std::uint64_t len;       // blob bytes
  std::uint64_t checksum;  // of seq and the blob (FNV-1a)
};

std::uint64_t checksum(std::uint64_t seq, const std::byte* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL ^ seq;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint64_t>(p[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

void Window::parseDescriptor(std::span<const std::byte> blob, Target& t, int member) {
  InfoHeader h{};
  std::memcpy(&h, blob.data(), sizeof h);
  const auto key = blob.subspan(sizeof h, h.keyLen);
  t.base = h.base;
  t.size = h.size;
  t.dispUnit = static_cast<int>(h.dispUnit);
  t.packedKey.assign(key.begin(), key.end());
  const auto rest = blob.subspan(sizeof h + h.keyLen);
  ControlHeader ctl{};
  std::memcpy(&ctl, rest.data(), sizeof ctl);
  const auto ctlKey = rest.subspan(sizeof ctl, ctl.keyLen);
  t.ctlBase = ctl.base;
  t.ctlNonce = ctl.nonce;
  t.syncAddr = ctl.syncAddr;
  t.ctlPackedKey.assign(ctlKey.begin(), ctlKey.end());
  t.member = member;
  t.described = true;
}

void Window::setUp(void* base, std::size_t size, int failClass, const std::string& failure) {
  base_ = base;
  size_ = size;
  std::byte* syncMem = nullptr;  // this rank's fence slots
  if (failClass == kSuccess) {
    // The same choice on every rank (Context::accumulateByMessage); with it, the control area
    // carries the inbox of accumulates by active message. The fence's sync slots come last in
    // it. An allocate window's control area follows its memory in one registration (allocate()
    // made room): one key per target for both. Other flavours register it apart.
    amMode_ = comm_.context().accumulateByMessage(comm_);
    // A create window on one node with partial pages (loads and stores will not reach all of
    // it) carries an inbox too, for the local message mode that agreeOnCpuAtomics may choose.
    // Not without the progress thread: the mode's puts and gets would then wait for the target
    // to call into MPI, where cross-memory attach needs nothing of it.
    const auto lo = reinterpret_cast<std::uintptr_t>(base);
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    localInbox_ = !amMode_ && flavor_ == Flavor::kCreate && comm_.size() > 1 && size > 0 &&
                  (lo % page != 0 || (lo + size) % page != 0) && comm_.context().accumulateAuto() &&
                  comm_.context().progressThread() && comm_.context().sameNode(comm_);
    const bool inbox = amMode_ || localInbox_;
    const std::size_t syncAt = kControlBytes + (inbox ? detail::kInboxBytes : 0);
    const transport::MemoryRegion* host = region_.get();
    std::size_t at = controlOffset(size);
    if (flavor_ != Flavor::kAllocate) {
      // A freed window's control region when there is one of this size (its pages faulted in
      // already: 34 page faults and a registration were a third of a 4 KiB MPI_Win_create).
      std::uint64_t unused = 0;
      control_ = comm_.context().takeScratch(Context::ScratchUse::kWindowControl,
                                             controlBytes(inbox), unused);
      controlReused_ = control_ != nullptr;
      if (!control_) {
        control_ = comm_.context().transport().registerMemory(nullptr, controlBytes(inbox),
                                                              transport::Placement::kAllocate,
                                                              transport::Access::kRemoteAll);
      }
      host = control_.get();
      at = 0;
    }
    ctlMem_ = static_cast<std::byte*>(host->base()) + at;
    ctlLen_ = controlBytes(inbox);
    std::memset(ctlMem_, 0, ctlLen_);
    ctlNonce_ = transport::regionNonce(ctlMem_);
    std::atomic_ref<std::uint64_t>(reinterpret_cast<std::uint64_t*>(ctlMem_)[kNonceWord])
        .store(ctlNonce_, std::memory_order_release);
    // A member's fence slots are in its control region, reached through the same key.
    syncMem = ctlMem_ + syncAt;
    sync_ = std::make_unique<detail::SyncRegion>(
        comm_.context(), comm_.worldRanks(), comm_.rank(), syncMem, [this](int member) {
          Target& t = describe(member);
          transport::RemoteKey& key =
              controlKey(t, comm_.context().endpoint(comm_.worldRank(member)));
          return detail::SyncRegion::Target{
              &key, t.syncAddr, static_cast<std::uint64_t*>(key.directPointer(t.syncAddr))};
        });
  }
  // This rank's descriptor: the window (base, size, disp_unit, key), the control region and the
  // sync region, and whether this rank failed (then its message instead of the regions), so
  // that every rank fails together instead of waiting.
  std::vector<std::byte> key;
  std::vector<std::byte> sync;
  if (failClass == kSuccess) {
    key = exposed_->packRkey();
    const auto ctlKey = control_ ? control_->packRkey() : std::vector<std::byte>{};
    const ControlHeader ctl{reinterpret_cast<std::uint64_t>(ctlMem_), ctlKey.size(),
                            reinterpret_cast<std::uint64_t>(syncMem), ctlNonce_};
    sync.resize(sizeof ctl + ctlKey.size());
    std::memcpy(sync.data(), &ctl, sizeof ctl);
    std::copy(ctlKey.begin(), ctlKey.end(), sync.begin() + sizeof ctl);
  } else {
    sync.assign(failure.size(), std::byte{});
    std::memcpy(sync.data(), failure.data(), failure.size());
  }
  const std::uint64_t hintBits =
      (hints_.sameSize ? kHintSameSize : 0) | (hints_.sameDispUnit ? kHintSameDispUnit : 0);
  InfoHeader h{
      reinterpret_cast<std::uint64_t>(base), size, dispUnit_, key.size(), failClass, hintBits};
  std::vector<std::byte> blob(sizeof h + key.size() + sync.size());
  std::memcpy(blob.data(), &h, sizeof h);
  std::copy(key.begin(), key.end(), blob.begin() + sizeof h);
  std::copy(sync.begin(), sync.end(),
            blob.begin() + static_cast<std::ptrdiff_t>(sizeof h + key.size()));
  const auto p = static_cast<std::size_t>(comm_.size());
  isDirty_.assign(p, false);
  if (!publish(blob, failClass)) gather(blob, failClass, failure);
  agreeOnCpuAtomics();
  if (amMode_) {
    amAwaitingAck_.assign(detail::kSlotCount, 0);
    amRegistered_ = true;  // before add(): its lock publishes this to the progress thread
    comm_.context().inboxes().add(this);
  }
  SPDLOG_LOGGER_DEBUG(&log::core(), "window {} bytes at {} (flavor {}), {} ranks ({})", size, base,
                      static_cast<int>(flavor_), p, slot_ >= 0 ? "board" : "gathered");
}

bool Window::publish(const std::vector<std::byte>& blob, int failClass) {
  // Create and allocate windows publish their descriptors on the communicator's board and agree
  // on a constant-size summary (one allreduce): nothing at creation grows with the number of
  // ranks, and a rank reads a target's descriptor when it first reaches it (describe()). Dynamic
  // windows (their attach tables) and shared ones (one segment for all) gather.
  if (flavor_ != Flavor::kCreate && flavor_ != Flavor::kAllocate) return false;
  auto& ch = comm_.channel();
  const std::uint64_t seq = ch.nextWindow();
  const std::size_t slot = seq % detail::Channel::kBoardSlots;
  std::byte* mine = sizeof(SlotHeader) + blob.size() <= detail::Channel::kBoardSlotBytes
                        ? ch.claimSlot(slot)
                        : nullptr;
  if (mine != nullptr) {
    slot_ = static_cast<int>(slot);
    seq_ = seq;
    const SlotHeader sh{seq, blob.size(), checksum(seq, blob.data(), blob.size())};
    std::memcpy(mine, &sh, sizeof sh);
    std::memcpy(mine + sizeof sh, blob.data(), blob.size());
  }
  // The summary, every entry combined by MAX (a minimum as the maximum of negations).
  constexpr std::int64_t kNone = INT64_MIN;
  const auto me = static_cast<std::int64_t>(comm_.rank());
  const auto sz = static_cast<std::int64_t>(size_);
  enum {
    kFail,
    kNoSlot,
    kSeq,
    kNegSeq,
    kSize,
    kNegSize,
    kDisp,
    kNegDisp,
    kSameSize,
    kSameDisp,
    kCount
  };
  std::int64_t v[kCount] = {failClass,
                            mine == nullptr ? 1 : 0,
                            static_cast<std::int64_t>(seq),
                            -static_cast<std::int64_t>(seq),
                            sz,
                            -sz,
                            dispUnit_,
                            -static_cast<std::int64_t>(dispUnit_),
                            hints_.sameSize ? -me : kNone,
                            hints_.sameDispUnit ? -me : kNone};
  coll::allreduce(comm_, coll::inPlace(), v, kCount, &datatypeOf<std::int64_t>(), Op::kMax);
  if (v[kFail] != kSuccess || v[kNoSlot] != 0 || v[kSeq] != -v[kNegSeq]) {
    // A failure (reported with its message by the gather path), a slot still taken or a
    // descriptor too large on some rank: every rank gathers instead.
    releaseSlot();
    return false;
  }
  checkPromises(v[kSameSize] == kNone ? -1 : -v[kSameSize], -v[kNegSize], v[kSize],
                v[kSameDisp] == kNone ? -1 : -v[kSameDisp], -v[kNegDisp], v[kDisp]);
  const auto p = static_cast<std::size_t>(comm_.size());
  targets_.resize(p);
  Target& own = targets_[static_cast<std::size_t>(comm_.rank())];
  parseDescriptor(blob, own, comm_.rank());
  return true;
}

std::vector<std::byte> Window::readDescriptor(int member) {
  std::vector<std::byte> buf(detail::Channel::kBoardSlotBytes);
  comm_.channel().readSlot(member, static_cast<std::size_t>(slot_), buf.data(), buf.size());
  SlotHeader sh{};
  std::memcpy(&sh, buf.data(), sizeof sh);
  if (sh.seq != seq_ || sh.len > buf.size() - sizeof sh ||
      sh.checksum != checksum(sh.seq, buf.data() + sizeof sh, sh.len)) {
    throw Error(kErrIntern, "the window descriptor of rank " + str(member) +
                                " is not this window's (board slot " + str(slot_) +
                                " holds window " + str(static_cast<std::int64_t>(sh.seq)) +
                                ", expected " + str(static_cast<std::int64_t>(seq_)) + ")");
  }
  buf.erase(buf.begin(), buf.begin() + sizeof sh);
  buf.resize(sh.len);
  return buf;
}

void Window::describeSlow(int target) {
  Target& t = targets_[static_cast<std::size_t>(target)];
  parseDescriptor(readDescriptor(target), t, target);
}

void Window::releaseSlot() noexcept {
  if (slot_ < 0) return;
  comm_.channel().releaseSlot(static_cast<std::size_t>(slot_));
  slot_ = -1;
}

void Window::checkPromises(std::int64_t sizeRank, std::int64_t minSize, std::int64_t maxSize,
                           std::int64_t dispRank, std::int64_t minDisp, std::int64_t maxDisp) {
  // same_size / same_disp_unit: every rank sees the same summary, so every rank reaches the same
  // verdict on a false promise (by any rank) and they all fail together.
  if (sizeRank >= 0 && minSize != maxSize) {
    throw Error(kErrInfoValue, "rank " + str(sizeRank) +
                                   " passed info same_size=true, but the sizes differ (from " +
                                   str(minSize) + " to " + str(maxSize) + " bytes)");
  }
  if (dispRank >= 0 && minDisp != maxDisp) {
    throw Error(kErrInfoValue, "rank " + str(dispRank) +
                                   " passed info same_disp_unit=true, but the disp_units differ "
                                   "(from " +
                                   str(minDisp) + " to " + str(maxDisp) + ")");
  }
}

void Window::gather(const std::vector<std::byte>& blob, int failClass, const std::string& failure) {
  // Every rank's descriptor to every rank (O(p) per rank): dynamic and shared windows, and the
  // rare creation that cannot use the board.
  auto all = comm_.allgather(blob);
  const auto p = static_cast<std::size_t>(comm_.size());
  targets_.resize(p);
  for (std::size_t i = 0; i < p; ++i) {
    InfoHeader t{};
    std::memcpy(&t, all[i].data(), sizeof t);
    if (t.failClass != kSuccess) {
      if (failClass != kSuccess) throw Error(failClass, failure);
      auto keyEnd = all[i].begin() + static_cast<std::ptrdiff_t>(sizeof t + t.keyLen);
      std::string theirs(reinterpret_cast<const char*>(&*keyEnd),
                         static_cast<std::size_t>(all[i].end() - keyEnd));
      throw Error(kErrOther, "rank " + std::to_string(i) + " failed: " + theirs);
    }
    if (failClass == kSuccess) {
      parseDescriptor(all[i], targets_[i], static_cast<int>(i));
    }
  }
  if (failClass != kSuccess) throw Error(failClass, failure);
  // The same summary publish() agrees on, from the gathered headers.
  std::int64_t sizeRank = -1;
  std::int64_t dispRank = -1;
  std::int64_t minSize = INT64_MAX;
  std::int64_t maxSize = 0;
  std::int64_t minDisp = INT64_MAX;
  std::int64_t maxDisp = 0;
  for (std::size_t i = p; i-- > 0;) {  // downwards: the lowest promising rank is kept
    InfoHeader t{};
    std::memcpy(&t, all[i].data(), sizeof t);
    if ((t.hintBits & kHintSameSize) != 0) sizeRank = static_cast<std::int64_t>(i);
    if ((t.hintBits & kHintSameDispUnit) != 0) dispRank = static_cast<std::int64_t>(i);
    minSize = std::min(minSize, static_cast<std::int64_t>(t.size));
    maxSize = std::max(maxSize, static_cast<std::int64_t>(t.size));
    minDisp = std::min(minDisp, t.dispUnit);
    maxDisp = std::max(maxDisp, t.dispUnit);
  }
  checkPromises(sizeRank, minSize, maxSize, dispRank, minDisp, maxDisp);
}

Window::Target& Window::resolve(int target) {
  Target& t = describe(target);
  if (!t.resolved) {
    if (target == comm_.rank()) {
      t.direct = static_cast<std::byte*>(base_);
      t.directHi = t.size;
    } else if (t.size > 0) {
      auto& ep = comm_.context().endpoint(comm_.worldRank(target));
      t.key = &dataKey(t, ep);
      // The part of the window that loads and stores reach, as window offsets.
      const transport::DirectSpan d = t.key->direct();
      const std::uint64_t lo = std::clamp(d.lo, t.base, t.base + t.size);
      const std::uint64_t hi = std::clamp(d.hi, lo, t.base + t.size);
      if (hi > lo) {
        t.directLo = lo - t.base;
        t.directHi = hi - t.base;
        t.direct = reinterpret_cast<std::byte*>(t.base + static_cast<std::uint64_t>(d.delta));
      }
    }
    SPDLOG_LOGGER_DEBUG(&log::core(), "window target {}: bytes [{}, {}) of {} direct", target,
                        t.directLo, t.directHi, t.size);
    t.settle();
    // On a window whose ranks agreed on CPU atomics from a few targets (agreeOnCpuAtomics), every
    // other target must be reachable alike: the transport's atomics would not be atomic with
    // the others' CPU atomics, so there is nothing to fall back to.
    if (cpuAtomics_ && !cpuReach(target, t)) {
      t.resolved = false;  // never used as if reachable
      t.whole = nullptr;
      throw Error(kErrOther, "rank " + str(target) +
                                 "'s window memory cannot be mapped into this process, although "
                                 "its neighbour's could (every rank of the window agreed at "
                                 "creation to update it with CPU atomics)");
    }
  }
  return t;
}

transport::RemoteKey& Window::dataKey(Target& t, transport::Endpoint& ep) {
  if (!t.ownKey) {
    t.ownKey = ep.unpackRkey(t.packedKey);
    std::vector<std::byte>().swap(t.packedKey);
  }
  return *t.ownKey;
}

transport::RemoteKey& Window::controlKey(Target& t, transport::Endpoint& ep) {
  if (!t.ctlKey) {
    // No key of its own: the control area is in the window's registration (allocate). (The
    // self transport packs every key empty, and any of its keys does for any address.)
    if (t.ctlPackedKey.empty()) return dataKey(t, ep);
    // A mapping of the target's control region kept from an earlier window of this context
    // (the target's context reuses freed windows' control regions, Context::takeScratch): no
    // new mapping (an attach here, a detach at MPI_Win_free) when it shows this window's nonce.
    // Else the target freed that region since (the mapping keeps the dead memory alive): gone.
    Context& ctx = comm_.context();
    const int world = comm_.worldRank(t.member);
    const auto nonceIn = [&](const transport::RemoteKey& key) {
      auto* w =
          static_cast<std::uint64_t*>(key.directPointer(t.ctlBase + std::uint64_t{kNonceWord} * 8));
      return w != nullptr &&
             std::atomic_ref<std::uint64_t>(*w).load(std::memory_order_acquire) == t.ctlNonce;
    };
    t.ctlKey = ctx.peerKey(world, t.ctlPackedKey, nonceIn);
    if (t.ctlKey) {
      ++ctlKeysReused_;
    } else {
      t.ctlKey = ep.unpackRkey(t.ctlPackedKey);
      if (nonceIn(*t.ctlKey)) ctx.keepPeerKey(world, t.ctlPackedKey, t.ctlKey);
    }
    std::vector<std::byte>().swap(t.ctlPackedKey);
  }
  return *t.ctlKey;
}

std::uint64_t Window::check(const char* what, const void* origin, std::int64_t ocount,
                            const Datatype& otype, int target, std::int64_t disp,
                            std::int64_t tcount, const Datatype& ttype) {
  if (freed_) throw Error(kErrWin, "window was freed");
  if (ocount < 0)
    throw Error(kErrCount, std::string("origin count ") + str(ocount) + " is negative");
  if (tcount < 0)
    throw Error(kErrCount, std::string("target count ") + str(tcount) + " is negative");
  const int p = comm_.size();
  if (target != kProcNull && (target < 0 || target >= p)) {
    throw Error(kErrRank, "target rank " + str(target) + " is not in the window's group (size " +
                              str(p) + ")");
  }
  if (epoch_ == Epoch::kNone) {
    const bool isGet = std::string_view(what) == "get";
    throw Error(kErrRmaSync, std::string(what) + (isGet ? " from rank " : " to rank ") +
                                 str(target) +
                                 " outside an access epoch (call MPI_Win_fence, MPI_Win_lock or "
                                 "MPI_Win_lock_all first)");
  }
  if (target != kProcNull && !isOpen(targets_[static_cast<std::size_t>(target)])) {
    throw Error(kErrRmaSync,
                std::string(what) + " to rank " + str(target) +
                    (epoch_ == Epoch::kPscw ? ", which is not in this rank's MPI_Win_start group"
                                            : ", which this rank has not locked (MPI_Win_lock)"));
  }
  if (!otype.committed()) {
    throw Error(kErrType, "origin datatype (" + otype.describe() +
                              ") is not committed (call MPI_Type_commit first)");
  }
  if (!ttype.committed()) {
    throw Error(kErrType, "target datatype (" + ttype.describe() +
                              ") is not committed (call MPI_Type_commit first)");
  }
  const bool isPut = what[0] == 'p';
  const bool sameShape = &otype == &ttype && ocount == tcount;  // the common case, no call
  if (!sameShape && !signaturesMatch(otype, static_cast<std::size_t>(ocount), ttype,
                                     static_cast<std::size_t>(tcount))) {
    const unsigned __int128 ob =
        static_cast<unsigned __int128>(otype.size()) * static_cast<std::uint64_t>(ocount);
    const unsigned __int128 tb =
        static_cast<unsigned __int128>(ttype.size()) * static_cast<std::uint64_t>(tcount);
    // MPI_ERR_TYPE for different amounts too (RMA has no receive to truncate); pack and
    // unpack report MPI_ERR_TRUNCATE.
    throw Error(kErrType, "origin " + str(ocount) + " x " + otype.describe() + " (" +
                              std::to_string(static_cast<std::uint64_t>(ob)) +
                              " bytes) does not match target " + str(tcount) + " x " +
                              ttype.describe() + " (" +
                              std::to_string(static_cast<std::uint64_t>(tb)) + " bytes)" +
                              (ob == tb ? ": the type signatures differ" : ""));
  }
  // A predefined type (MPI_Fetch_and_op, MPI_Put of doubles...): one run, no overlaps, and a
  // footprint by multiplication.
  const bool plain = sameShape && otype.isPredefined();
  std::int64_t olo = 0;
  std::int64_t ohi = 0;
  if (plain ? __builtin_mul_overflow(ocount, static_cast<std::int64_t>(otype.size()), &ohi)
            : !otype.footprint(static_cast<std::size_t>(ocount), olo, ohi)) {
    throw Error(kErrCount, "origin " + str(ocount) + " x " + otype.describe() +
                               " spans more than the address range");
  }
  // NULL is MPI_BOTTOM: fine with absolute addresses in the type, not for data near address 0.
  if (origin == nullptr && ohi > olo && olo < 4096) {
    throw Error(kErrBuffer, "origin buffer is NULL with count " + str(ocount));
  }
  // MPI-3.1 §11.7: a put (accumulate) must not write a target byte twice, and a get must not
  // write an origin byte twice; which byte wins would be undefined.
  if (isPut && !plain && ttype.overlaps(static_cast<std::size_t>(tcount))) {
    throw Error(kErrType, "target " + str(tcount) + " x " + ttype.describe() +
                              " has overlapping entries: a put may not write a byte twice");
  }
  if (!isPut && !plain && otype.overlaps(static_cast<std::size_t>(ocount))) {
    throw Error(kErrType, "origin " + str(ocount) + " x " + otype.describe() +
                              " has overlapping entries: a get may not write a byte twice");
  }
  if (disp < 0) throw Error(kErrDisp, "target displacement " + str(disp) + " is negative");
  if (target == kProcNull) return 0;
  const Target& t = describe(target);
  if (tcount == 0 || ttype.size() == 0) return 0;
  // The whole footprint of tcount elements, [disp * disp_unit + true_lb, disp * disp_unit +
  // true_ub of the last element), must lie in [0, size) of the target's window; computed
  // without overflow. A negative true lb may reach below the displacement.
  std::int64_t offset = 0;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t ub = 0;
  std::int64_t lb = 0;
  bool overflow = __builtin_mul_overflow(disp, static_cast<std::int64_t>(t.dispUnit), &offset);
  if (plain) {
    hi = ohi;  // the same type and count as the origin's
  } else {
    overflow = overflow || !ttype.footprint(static_cast<std::size_t>(tcount), lo, hi);
  }
  overflow = overflow || __builtin_add_overflow(offset, hi, &ub);
  overflow = overflow || __builtin_add_overflow(offset, lo, &lb);
  if (overflow || lb < 0 || static_cast<std::uint64_t>(ub) > t.size) {
    throw Error(kErrRmaRange, std::string(what) + " of " + str(tcount) + " x " + ttype.describe() +
                                  " at displacement " + str(disp) + " (disp_unit " +
                                  str(t.dispUnit) + ") reaches byte " +
                                  (overflow ? std::string("beyond 2^63")
                                   : lb < 0 ? str(lb)
                                            : str(ub)) +
                                  " of rank " + str(target) + "'s window of " +
                                  std::to_string(t.size) + " bytes");
  }
  if (flavor_ == Flavor::kDynamic) {
    dynamicRegion(what, target, static_cast<std::uint64_t>(lb), static_cast<std::uint64_t>(ub));
  }
  return static_cast<std::uint64_t>(offset);
}

namespace {

/// memmove, with the sizes of single elements (1, 2, 4, 8, 16 bytes) copied inline: an 8-byte
/// put to shared memory is a load and a store, not a library call. Loads come before stores, so
/// an overlapping self put is still a memmove.
inline void moveBytes(std::byte* dst, const std::byte* src, std::size_t n) {
  auto fixed = [&](auto word) {
    decltype(word) v;
    std::memcpy(&v, src, sizeof v);
    std::memcpy(dst, &v, sizeof v);
  };
  switch (n) {
    case 1:
      fixed(std::uint8_t{});
      return;
    case 2:
      fixed(std::uint16_t{});
      return;
    case 4:
      fixed(std::uint32_t{});
      return;
    case 8:
      fixed(std::uint64_t{});
      return;
    case 16: {
      std::uint64_t v[2];
      std::memcpy(v, src, 16);
      std::memcpy(dst, v, 16);
      return;
    }
    default:
      detail::moveBytesLarge(dst, src, n);
  }
}

template <std::size_t kN>
void stridedMoveN(std::byte* dst, std::ptrdiff_t ds, const std::byte* src, std::ptrdiff_t ss,
                  std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::byte v[kN];
    std::memcpy(v, src, kN);
    std::memcpy(dst, v, kN);
    dst += ds;
    src += ss;
  }
}

/// `count` blocks of n bytes, src + i * ss to dst + i * ds. Each block is loaded before it is
/// stored (a self put may overlap its origin, block by block as memmove would).
inline void stridedMove(std::byte* dst, std::ptrdiff_t ds, const std::byte* src, std::ptrdiff_t ss,
                        std::size_t count, std::size_t n) {
  switch (n) {
    case 4:
      return stridedMoveN<4>(dst, ds, src, ss, count);
    case 8:
      return stridedMoveN<8>(dst, ds, src, ss, count);
    case 16:
      return stridedMoveN<16>(dst, ds, src, ss, count);
    default:
      for (std::size_t i = 0; i < count; ++i) {
        detail::moveBytesLarge(dst, src, n);
        dst += ds;
        src += ss;
      }
  }
}

}  // namespace

template <bool kPut>
void Window::transfer(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                      std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  const std::uint64_t offset =
      check(kPut ? "put" : "get", origin, ocount, otype, target, disp, tcount, ttype);
  if (target == kProcNull) return;  // MPI-3.1 §11.3: no effect, but the epoch was required
  ++pendingOps_;
  needFence_ = true;
  if (tcount == 0 || ttype.size() == 0) return;
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved) [[unlikely]]
    resolve(target);
  auto* o = static_cast<std::byte*>(origin);
  if (t.whole != nullptr) {
    // Load / store path (same process or a shared-memory window): done when the copy is.
    // Strided on both sides with equal blocks, or strided on one side and contiguous on the
    // other: a copy loop with the block size fixed.
    detail::Strided os;
    detail::Strided ts;
    if (detail::asStrided(otype, static_cast<std::size_t>(ocount), os) &&
        detail::asStrided(ttype, static_cast<std::size_t>(tcount), ts) &&
        (os.count > 1 || ts.count > 1)) {
      // A contiguous side steps by the other side's block.
      if (os.count == 1)
        os = {os.offset, ts.blocklen, static_cast<std::ptrdiff_t>(ts.blocklen), ts.count};
      if (ts.count == 1)
        ts = {ts.offset, os.blocklen, static_cast<std::ptrdiff_t>(os.blocklen), os.count};
      if (os.blocklen == ts.blocklen) {
        std::byte* tp = t.direct + static_cast<std::int64_t>(offset) + ts.offset;
        std::byte* op = at(o, os.offset);
        if constexpr (kPut) {
          stridedMove(tp, ts.stride, op, os.stride, os.count, os.blocklen);
        } else {
          stridedMove(op, os.stride, tp, ts.stride, os.count, os.blocklen);
        }
        return;
      }
    }
    // memmove: a self put may overlap its own origin buffer.
    forEachPiece(o, static_cast<std::size_t>(ocount), otype, offset,
                 static_cast<std::size_t>(tcount), ttype,
                 [&](std::byte* op, std::uint64_t toff, std::size_t n) {
                   if constexpr (kPut) {
                     moveBytes(t.direct + toff, op, n);
                   } else {
                     moveBytes(op, t.direct + toff, n);
                   }
                 });
    return;
  }
  // Through the transport, except the part of each piece that lies in the direct span (the
  // whole pages of a create window shared by an on-node peer).
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  bool pending = false;
  // Pieces through the transport are batched: one putv / getv per up to kBatch pieces, which
  // transports that can move many pieces in one call (UCX's cross-memory attach) turn into
  // one system call instead of one per piece.
  constexpr std::size_t kBatch = 1024;
  batchIov_.clear();
  batchAddr_.clear();
  // One key per batch: in a dynamic window an access may span attached regions, each with its
  // own key (byRegion), and a batch ends where the key changes.
  transport::RemoteKey* batchKey = t.key;
  auto flushBatch = [&] {
    if (batchIov_.empty()) return;
    auto issue = kPut ? ep.putv(batchIov_, batchAddr_, *batchKey)
                      : ep.getv(batchIov_, batchAddr_, *batchKey);
    batchIov_.clear();
    batchAddr_.clear();
    if (issue == transport::Issue::kPending && !pending) {
      pending = true;
      // Operations complete in the call (cross-memory attach) need no flush at the fence.
      if (!isDirty_[static_cast<std::size_t>(target)]) {
        isDirty_[static_cast<std::size_t>(target)] = true;
        dirty_.push_back(target);
      }
    }
  };
  auto viaTransport = [&](std::byte* op, std::uint64_t toff, std::size_t n) {
    if (n == 0) return;
    if (amInts_ && n <= kMessageBytes) {
      // A partial page of a peer in the local message mode: one message to its inbox
      // (0.4 us) instead of a cross-memory attach call (about 2 us).
      messageTransfer(kPut, target, t, op, toff, n);
      return;
    }
    byRegion(
        t.key, t.base + toff, n,
        [&](transport::RemoteKey& key, std::uint64_t skip, std::uint64_t addr, std::uint64_t len) {
          if (&key != batchKey) {
            flushBatch();
            batchKey = &key;
          }
          batchIov_.push_back({op + skip, static_cast<std::size_t>(len)});
          batchAddr_.push_back(addr);
          if (batchIov_.size() == kBatch) flushBatch();
        });
  };
  auto piece = [&](std::byte* op, std::uint64_t toff, std::size_t n) {
    const std::uint64_t end = toff + n;
    const auto [a, b] = t.directPart(toff, end);
    viaTransport(op, toff, a - toff);
    if (b > a) {
      if constexpr (kPut) {
        detail::moveBytesLarge(t.direct + a, op + (a - toff), b - a);
      } else {
        detail::moveBytesLarge(op + (a - toff), t.direct + a, b - a);
      }
    }
    viaTransport(op + (b - toff), b, end - b);
  };
  const auto on = static_cast<std::size_t>(ocount);
  const auto tn = static_cast<std::size_t>(tcount);
  if (!packOrigin(on, otype, tn, ttype)) {
    forEachPiece(o, on, otype, offset, tn, ttype, piece);
    flushBatch();
    return;
  }
  // Packed: the origin side is the bounce buffer, chunk by chunk; the target side is walked
  // run by run. A put packs before issuing; a get unpacks once its operations are complete.
  detail::Cursor oc(otype, on);
  detail::Cursor tc(ttype, tn);
  const std::size_t total = oc.total();
  std::size_t done = 0;
  while (done < total) {
    std::size_t got = 0;
    std::size_t boff = 0;
    std::byte* buf = bounceSpace(total - done, got, boff);
    if constexpr (kPut) {
      Datatype::Segment s{0, 0};
      for (std::size_t k = 0; k < got; k += s.len) {
        oc.next(got - k, s);
        detail::copyRun(buf + k, at(o, s.offset), s.len);
      }
    }
    pending = false;
    Datatype::Segment s{0, 0};
    for (std::size_t k = 0; k < got; k += s.len) {
      tc.next(got - k, s);
      piece(buf + k, offset + static_cast<std::uint64_t>(s.offset), s.len);
    }
    flushBatch();
    if constexpr (!kPut) {
      if (pending) {
        unpacks_.push_back({boff, got, o, on, otype.hold(), done});
      } else {  // all complete already (direct span, cross-memory attach)
        Datatype::Segment u{0, 0};
        oc.seek(done);
        for (std::size_t k = 0; k < got; k += u.len) {
          oc.next(got - k, u);
          detail::copyRun(at(o, u.offset), buf + k, u.len);
        }
      }
    }
    done += got;
  }
}

std::byte* Window::bounceSpace(std::size_t want, std::size_t& got, std::size_t& offset) {
  const std::size_t cap = bounce_ ? bounce_->length() : 0;
  if (bounceUsed_ == cap || (bounceUsed_ == 0 && cap < std::min(want, kBounceMax))) {
    if (bounceUsed_ > 0) completeIssued();  // the pending operations read or fill it
    if (cap < std::min(want, kBounceMax)) {
      std::size_t n = kBounceMin;
      while (n < want && n < kBounceMax) n *= 2;
      bounce_.reset();
      bounce_ = comm_.context().transport().registerMemory(
          nullptr, n, transport::Placement::kAllocate, transport::Access::kLocal);
    }
  }
  offset = bounceUsed_;
  got = std::min(want, bounce_->length() - bounceUsed_);
  bounceUsed_ += got;
  return static_cast<std::byte*>(bounce_->base()) + offset;
}

void Window::completeIssued() {
  if (!dirty_.empty()) {
    auto& ctx = comm_.context();
    if (dirty_.size() > 4) {
      ctx.transport().flushAll();
    } else {
      for (int t : dirty_) ctx.endpoint(comm_.worldRank(t)).flush();
    }
    for (int t : dirty_) {
      isDirty_[static_cast<std::size_t>(t)] = false;
      ++targets_[static_cast<std::size_t>(t)].completions;
    }
    dirty_.clear();
  }
  // Gets through the bounce buffer have landed there: now into the origin buffers.
  for (const auto& u : unpacks_) {
    detail::Cursor c(*u.type, u.count);
    c.seek(u.pos);
    const std::byte* src = static_cast<const std::byte*>(bounce_->base()) + u.bounceOffset;
    Datatype::Segment s{0, 0};
    for (std::size_t k = 0; k < u.len; k += s.len) {
      c.next(u.len - k, s);
      detail::copyRun(at(u.origin, s.offset), src + k, s.len);
    }
  }
  unpacks_.clear();
  bounceUsed_ = 0;
}

void Window::markDirty(int target) {
  if (!isDirty_[static_cast<std::size_t>(target)]) {
    isDirty_[static_cast<std::size_t>(target)] = true;
    dirty_.push_back(target);
  }
}

void Window::complete(int target) {
  // Request tickets (request.cpp): this completes whatever is pending at the target(s), by
  // transfer or by active message.
  auto count = [&](std::size_t i) {
    if (isDirty_[i] || targets_[i].amPending) ++targets_[i].completions;
  };
  if (target >= 0) {
    count(static_cast<std::size_t>(target));
  } else {
    targets_.forEach([&](std::size_t i, const Target&) { count(i); });
  }
  if (target >= 0 && bounceUsed_ == 0) {
    if (isDirty_[static_cast<std::size_t>(target)]) {
      comm_.context().endpoint(comm_.worldRank(target)).flush();
      isDirty_[static_cast<std::size_t>(target)] = false;
      std::erase(dirty_, target);
    }
  } else if (!dirty_.empty() || bounceUsed_ != 0) {
    // Everything (also for one target while packed gets wait in the bounce buffer: their
    // unpacks run once all of its operations are complete).
    completeIssued();
  }
  amWait(target);
  // Stores on the load / store path: visible to the target before whatever signals completion.
  // On a shared window always: the program's own loads and stores are on it too.
  if (needFence_ || flavor_ == Flavor::kShared) {
    detail::fullBarrier();
    needFence_ = false;
  }
}

void Window::walk(std::byte* origin, std::size_t ocount, const Datatype& otype,
                  std::uint64_t toffset, std::size_t tcount, const Datatype& ttype,
                  const std::function<void(std::byte*, std::uint64_t, std::size_t)>& fn) {
  forEachPiece(origin, ocount, otype, toffset, tcount, ttype, fn);
}

template <bool kPut>
bool Window::fastDirect(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                        std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  // The common case in a handful of comparisons: the target open for access (a fence epoch,
  // lock_all, a lock of it or a PSCW access epoch that includes it; never on a freed window:
  // free ends every epoch and drops the targets), the same contiguous type and count on both
  // sides, a target in the group whose whole window is on the load / store path, and a
  // footprint inside it. Anything else, errors included, takes the general path, which checks
  // everything again in order and names what is wrong.
  if (&otype != &ttype || ocount != tcount || !otype.contiguous() || disp < 0 ||
      static_cast<unsigned>(target) >= targets_.size()) {
    return false;
  }
  std::int64_t bytes = 0;
  std::byte* tp = directFootprint(target, disp, ocount, otype.size(), bytes);
  if (tp == nullptr || bytes <= 0 || origin == nullptr) return false;
  ++pendingOps_;
  needFence_ = true;
  auto* o = static_cast<std::byte*>(origin);
  if constexpr (kPut) {
    moveBytes(tp, o, static_cast<std::size_t>(bytes));
  } else {
    moveBytes(o, tp, static_cast<std::size_t>(bytes));
  }
  return true;
}

template <bool kPut>
bool Window::fastRemote(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                        std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  // What transfer() does for one contiguous piece through the transport, without its general
  // walk: check()'s tests for this case (the same committed contiguous type and count on both
  // sides, an open target in the group, a footprint inside its window), then one put or get.
  // A target with any load / store span, a dynamic window, the local message mode and errors
  // take the general path, which checks everything again in order and names what is wrong.
  if (&otype != &ttype || ocount != tcount || !otype.contiguous() || !otype.committed() ||
      disp < 0 || origin == nullptr || static_cast<unsigned>(target) >= targets_.size() ||
      flavor_ == Flavor::kDynamic || amInts_) {
    return false;
  }
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved || t.direct != nullptr || t.key == nullptr || !isOpen(t)) return false;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
  if (!inWindow(t, disp, ocount, otype.size(), offset, bytes) || bytes <= 0) return false;
  ++pendingOps_;
  // No needFence_: nothing here loads or stores on the load / store path (the transport's own
  // completion orders its transfer), so the flush that completes it needs no full barrier.
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  const transport::Iov iov{origin, static_cast<std::size_t>(bytes)};
  const std::uint64_t raddr = t.base + static_cast<std::uint64_t>(offset);
  // putv / getv as transfer() issues them: UCX moves them by cross-memory attach on one node.
  const auto issue =
      kPut ? ep.putv({&iov, 1}, {&raddr, 1}, *t.key) : ep.getv({&iov, 1}, {&raddr, 1}, *t.key);
  if (issue == transport::Issue::kPending) markDirty(target);
  return true;
}

void Window::put(const void* origin, std::int64_t ocount, const Datatype& otype, int target,
                 std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  counters::get().puts.add();
  counters::get().putBytes.add(static_cast<std::uint64_t>(ocount) * otype.size());
  auto* o = const_cast<void*>(origin);
  if (fastDirect<true>(o, ocount, otype, target, disp, tcount, ttype) ||
      fastRemote<true>(o, ocount, otype, target, disp, tcount, ttype)) {
    return;
  }
  transfer<true>(o, ocount, otype, target, disp, tcount, ttype);
}

void Window::get(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                 std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  counters::get().gets.add();
  counters::get().getBytes.add(static_cast<std::uint64_t>(ocount) * otype.size());
  if (fastDirect<false>(origin, ocount, otype, target, disp, tcount, ttype) ||
      fastRemote<false>(origin, ocount, otype, target, disp, tcount, ttype)) {
    return;
  }
  transfer<false>(origin, ocount, otype, target, disp, tcount, ttype);
}

void Window::fence(int assertion) {
  if (freed_) throw Error(kErrWin, "window was freed");
  constexpr int kAllowed = kModeNostore | kModeNoput | kModeNoprecede | kModeNosucceed;
  if ((assertion & ~kAllowed) != 0) {
    throw Error(kErrAssert, "assertion " + str(assertion) +
                                " has bits that MPI_Win_fence does not accept (allowed: "
                                "MPI_MODE_NOSTORE, NOPUT, NOPRECEDE, NOSUCCEED)");
  }
  if (epoch_ == Epoch::kPassive) {
    throw Error(kErrRmaSync, "a passive-target epoch (MPI_Win_lock / MPI_Win_lock_all) is open");
  }
  if (epoch_ == Epoch::kPscw || posted_) {
    throw Error(kErrRmaSync, epoch_ == Epoch::kPscw
                                 ? "an access epoch of MPI_Win_start is open (MPI_Win_complete)"
                                 : "an exposure epoch of MPI_Win_post is open (MPI_Win_wait)");
  }
  if ((assertion & kModeNoprecede) != 0 && pendingOps_ > 0) {
    throw Error(kErrRmaSync, "MPI_MODE_NOPRECEDE given, but " + std::to_string(pendingOps_) +
                                 " operations were issued since the previous fence");
  }
  // Complete what this rank issued, at origin and target, before telling anybody; with a full
  // barrier in any case: this rank's own stores to its window precede the fence too.
  needFence_ = true;
  complete(-1);
  pendingOps_ = 0;
  // NOPRECEDE and NOSUCCEED together: no epoch ends and none begins, so there is nothing to
  // order with other ranks. NOSTORE / NOPUT save nothing here: the window is unified (one copy
  // of the memory), so there is no cache or staging copy to synchronise.
  const bool syncNeeded =
      (assertion & (kModeNoprecede | kModeNosucceed)) != (kModeNoprecede | kModeNosucceed);
  if (syncNeeded) sync_->barrier();
  epoch_ = (assertion & kModeNosucceed) != 0 ? Epoch::kNone : Epoch::kFence;
  allOpen_ = epoch_ == Epoch::kFence;
  ++epochs_;
}

void Window::free() {
  if (freed_) throw Error(kErrWin, "window was freed");
  if (epoch_ == Epoch::kPassive) {
    throw Error(kErrRmaSync,
                "a passive-target epoch (MPI_Win_lock / MPI_Win_lock_all) is still open");
  }
  if (epoch_ == Epoch::kPscw || posted_) {
    throw Error(kErrRmaSync, epoch_ == Epoch::kPscw
                                 ? "an access epoch of MPI_Win_start is still open "
                                   "(MPI_Win_complete first)"
                                 : "an exposure epoch of MPI_Win_post is still open "
                                   "(MPI_Win_wait first)");
  }
  if (pendingOps_ > 0) {
    throw Error(kErrRmaSync, std::to_string(pendingOps_) +
                                 " operations were not completed by a fence before the free");
  }
  // An exclusive unlock's last add, to rank 0's holder count, lands before anyone may go.
  if (masterAddPosted_) comm_.context().endpoint(comm_.worldRank(0)).flush();
  masterAddPosted_ = false;
  // Nobody may still be reading or writing our memory when it goes away.
  sync_->barrier();
  detachInbox();
  if (amMode_ && !amInts_) {
    // An applied count this rank pushed while it served messages in that barrier
    // (pushReplies) may still be on its way to an origin that learned it by a read instead:
    // complete them all, and let every rank know, before any control region goes.
    comm_.context().transport().flushAll();
    sync_->barrier();
  }
  releaseSlot();  // after the barrier: nobody reads this window's descriptor any more
  freed_ = true;
  epoch_ = Epoch::kNone;
  allOpen_ = false;
  // The sync region first: its destructor completes the last barrier's puts, which use
  // targets' control keys.
  sync_.reset();
  targets_.clear();
  dyn_.reset();
  // Nobody reads or writes the control region after the barriers above: a later window takes it.
  if (control_) {
    comm_.context().keepScratch(Context::ScratchUse::kWindowControl, std::move(control_), 0);
  }
  region_.reset();
  segment_.reset();
  bounce_.reset();
  unpacks_.clear();
  exposed_ = nullptr;
}

}  // namespace onesided
