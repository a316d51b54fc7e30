// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/window.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "log.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/errors.hpp"
#include "transport/transport.hpp"
#include "window/sync.hpp"

namespace onesided {
namespace {

struct InfoHeader {
  std::uint64_t base;
  std::uint64_t size;
  std::int64_t dispUnit;
  std::uint64_t keyLen;
  std::int64_t failClass;
};

std::string str(std::int64_t v) { return std::to_string(v); }

/// Calls fn(originPtr, targetOffset, len) for each piece where an origin block and a target
/// block overlap, walking (ocount x otype) and (tcount x ttype) in step. Signatures match and
/// sizes are equal (checked before).
template <class Fn>
void forEachPiece(std::byte* origin, std::size_t ocount, const Datatype& otype,
                  std::uint64_t toffset, std::size_t tcount, const Datatype& ttype, Fn&& fn) {
  if (otype.contiguous() && ttype.contiguous()) {
    std::size_t n = ocount * otype.size();
    if (n != 0) fn(origin, toffset, n);
    return;
  }
  std::size_t oe = 0, ob = 0, te = 0, tb = 0;  // element and block cursors
  std::size_t oused = 0, tused = 0;            // bytes used of the current blocks
  const auto& oblocks = otype.blocks();
  const auto& tblocks = ttype.blocks();
  while (oe < ocount && te < tcount) {
    const auto& o = oblocks[ob];
    const auto& t = tblocks[tb];
    std::size_t n = std::min(o.len - oused, t.len - tused);
    std::byte* op = origin + static_cast<std::ptrdiff_t>(oe) * otype.extent() + o.offset +
                    static_cast<std::ptrdiff_t>(oused);
    std::uint64_t tp =
        toffset +
        static_cast<std::uint64_t>(static_cast<std::ptrdiff_t>(te) * ttype.extent() + t.offset) +
        tused;
    if (n != 0) fn(op, tp, n);
    oused += n;
    tused += n;
    if (oused == o.len) {
      oused = 0;
      if (++ob == oblocks.size()) {
        ob = 0;
        ++oe;
      }
    }
    if (tused == t.len) {
      tused = 0;
      if (++tb == tblocks.size()) {
        tb = 0;
        ++te;
      }
    }
  }
}

}  // namespace

Window::Window(Comm& comm, Flavor flavor, int dispUnit)
    : comm_(comm), flavor_(flavor), dispUnit_(dispUnit) {}

Window::~Window() {
  // Keys belong to endpoints and are released first; then the sync region and our memory.
  targets_.clear();
  sync_.reset();
  control_.reset();
  region_.reset();
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
                                       const Error* argError) {
  auto [cls, msg] = checkArgs(size, dispUnit, argError);
  if (cls == kSuccess && base == nullptr && size > 0) {
    cls = kErrBase;
    msg = "base is NULL but size is " + str(size);
  }
  std::unique_ptr<Window> w(new Window(comm, Flavor::kCreate, dispUnit));
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
                                         const Error* argError) {
  auto [cls, msg] = checkArgs(size, dispUnit, argError);
  std::unique_ptr<Window> w(new Window(comm, Flavor::kAllocate, dispUnit));
  const auto bytes = cls == kSuccess ? static_cast<std::size_t>(size) : 0;
  if (cls == kSuccess) {
    try {
      w->region_ = comm.context().transport().registerMemory(
          nullptr, bytes, transport::Placement::kAllocate, transport::Access::kRemoteAll);
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

void Window::setUp(void* base, std::size_t size, int failClass, const std::string& failure) {
  base_ = base;
  size_ = size;
  std::vector<int> members;
  for (int i = 0; i < comm_.size(); ++i) members.push_back(comm_.worldRank(i));
  if (failClass == kSuccess) {
    sync_ = std::make_unique<detail::SyncRegion>(comm_.context(), members, comm_.rank());
    control_ = comm_.context().transport().registerMemory(
        nullptr, kControlBytes, transport::Placement::kAllocate, transport::Access::kRemoteAll);
    std::memset(control_->base(), 0, kControlBytes);
  }
  // One allgather carries the window (base, size, disp_unit, key), the sync region, and
  // whether this rank failed, so that every rank fails together instead of waiting.
  std::vector<std::byte> key;
  std::vector<std::byte> sync;
  if (failClass == kSuccess) {
    key = exposed_->packRkey();
    // The control region travels in front of the sync region's info: base, key length, key.
    const auto ctlKey = control_->packRkey();
    const std::uint64_t ctl[2] = {reinterpret_cast<std::uint64_t>(control_->base()), ctlKey.size()};
    sync.resize(sizeof ctl + ctlKey.size());
    std::memcpy(sync.data(), ctl, sizeof ctl);
    std::copy(ctlKey.begin(), ctlKey.end(), sync.begin() + sizeof ctl);
    const auto syncInfo = sync_->localInfo();
    sync.insert(sync.end(), syncInfo.begin(), syncInfo.end());
  } else {
    sync.assign(failure.size(), std::byte{});
    std::memcpy(sync.data(), failure.data(), failure.size());
  }
  InfoHeader h{reinterpret_cast<std::uint64_t>(base), size, dispUnit_, key.size(), failClass};
  std::vector<std::byte> blob(sizeof h + key.size() + sync.size());
  std::memcpy(blob.data(), &h, sizeof h);
  std::copy(key.begin(), key.end(), blob.begin() + sizeof h);
  std::copy(sync.begin(), sync.end(),
            blob.begin() + static_cast<std::ptrdiff_t>(sizeof h + key.size()));
  auto all = comm_.allgather(blob);

  const auto p = static_cast<std::size_t>(comm_.size());
  targets_.resize(p);
  isDirty_.assign(p, false);
  std::vector<std::vector<std::byte>> syncInfos(p);
  for (std::size_t i = 0; i < p; ++i) {
    InfoHeader t{};
    std::memcpy(&t, all[i].data(), sizeof t);
    auto keyBegin = all[i].begin() + sizeof t;
    auto keyEnd = keyBegin + static_cast<std::ptrdiff_t>(t.keyLen);
    if (t.failClass != kSuccess) {
      if (failClass != kSuccess) throw Error(failClass, failure);
      std::string theirs(reinterpret_cast<const char*>(&*keyEnd),
                         static_cast<std::size_t>(all[i].end() - keyEnd));
      throw Error(kErrOther, "rank " + std::to_string(i) + " failed: " + theirs);
    }
    targets_[i].base = t.base;
    targets_[i].size = t.size;
    targets_[i].dispUnit = static_cast<int>(t.dispUnit);
    targets_[i].packedKey.assign(keyBegin, keyEnd);
    if (t.failClass == kSuccess && failClass == kSuccess) {
      std::uint64_t ctl[2] = {};
      std::memcpy(ctl, &*keyEnd, sizeof ctl);
      auto ctlKeyBegin = keyEnd + sizeof ctl;
      auto ctlKeyEnd = ctlKeyBegin + static_cast<std::ptrdiff_t>(ctl[1]);
      targets_[i].ctlBase = ctl[0];
      targets_[i].ctlPackedKey.assign(ctlKeyBegin, ctlKeyEnd);
      syncInfos[i].assign(ctlKeyEnd, all[i].end());
    }
  }
  if (failClass != kSuccess) throw Error(failClass, failure);
  sync_->connect(syncInfos);
  SPDLOG_LOGGER_DEBUG(&log::core(), "window {} bytes at {} (flavor {}), {} ranks", size, base,
                      static_cast<int>(flavor_), p);
}

Window::Target& Window::resolve(int target) {
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved) {
    if (target == comm_.rank()) {
      t.direct = static_cast<std::byte*>(base_);
      t.directHi = t.size;
    } else if (t.size > 0) {
      auto& ep = comm_.context().endpoint(comm_.worldRank(target));
      t.key = ep.unpackRkey(t.packedKey);
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
    t.resolved = true;
  }
  return t;
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
  if (!allOpen_ && target != kProcNull &&
      targets_[static_cast<std::size_t>(target)].lock == kLockNone) {
    throw Error(kErrRmaSync, std::string(what) + " to rank " + str(target) +
                                 ", which this rank has not locked (MPI_Win_lock)");
  }
  const bool sameShape = &otype == &ttype && ocount == tcount;  // the common case, no call
  if (!sameShape && !signaturesMatch(otype, static_cast<std::size_t>(ocount), ttype,
                                     static_cast<std::size_t>(tcount))) {
    throw Error(kErrType,
                "origin " + str(ocount) + " x " + otype.name() + " (" +
                    std::to_string(otype.size() * static_cast<std::size_t>(ocount)) +
                    " bytes) does not match target " + str(tcount) + " x " + ttype.name() + " (" +
                    std::to_string(ttype.size() * static_cast<std::size_t>(tcount)) + " bytes)");
  }
  if (origin == nullptr && ocount > 0 && otype.size() > 0) {
    throw Error(kErrBuffer, "origin buffer is NULL with count " + str(ocount));
  }
  if (disp < 0) throw Error(kErrDisp, "target displacement " + str(disp) + " is negative");
  if (target == kProcNull) return 0;
  const Target& t = targets_[static_cast<std::size_t>(target)];
  if (tcount == 0 || ttype.size() == 0) return 0;
  // The whole footprint [disp * disp_unit + true_lb, disp * disp_unit + true_ub) must lie in
  // [0, size) of the target's window; computed without overflow.
  std::int64_t offset = 0;
  std::int64_t ub = 0;
  bool overflow = __builtin_mul_overflow(disp, static_cast<std::int64_t>(t.dispUnit), &offset);
  overflow = overflow ||
             __builtin_add_overflow(offset, ttype.trueUb(static_cast<std::size_t>(tcount)), &ub);
  if (overflow || offset + ttype.trueLb() < 0 || static_cast<std::uint64_t>(ub) > t.size) {
    throw Error(kErrRmaRange, std::string(what) + " of " + str(tcount) + " x " + ttype.name() +
                                  " at displacement " + str(disp) + " (disp_unit " +
                                  str(t.dispUnit) + ") reaches byte " +
                                  (overflow ? std::string("beyond 2^63") : str(ub)) + " of rank " +
                                  str(target) + "'s window of " + std::to_string(t.size) +
                                  " bytes");
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
      std::memmove(dst, src, n);
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
  if (tcount == 0 || ttype.size() == 0) return;
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved) [[unlikely]]
    resolve(target);
  auto* o = static_cast<std::byte*>(origin);
  if (t.directLo == 0 && t.directHi == t.size) {
    // Load / store path (same process or a shared-memory window): done when the copy is.
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
  auto viaTransport = [&](std::byte* op, std::uint64_t toff, std::size_t n) {
    if (n == 0) return;
    transport::Iov iov{op, n};
    auto issue =
        kPut ? ep.put({&iov, 1}, t.base + toff, *t.key) : ep.get({&iov, 1}, t.base + toff, *t.key);
    pending = pending || issue == transport::Issue::kPending;
  };
  forEachPiece(o, static_cast<std::size_t>(ocount), otype, offset, static_cast<std::size_t>(tcount),
               ttype, [&](std::byte* op, std::uint64_t toff, std::size_t n) {
                 const std::uint64_t end = toff + n;
                 const std::uint64_t a = std::clamp(t.directLo, toff, end);
                 const std::uint64_t b = std::clamp(t.directHi, a, end);
                 viaTransport(op, toff, a - toff);
                 if (b > a) {
                   if constexpr (kPut) {
                     std::memmove(t.direct + a, op + (a - toff), b - a);
                   } else {
                     std::memmove(op + (a - toff), t.direct + a, b - a);
                   }
                 }
                 viaTransport(op + (b - toff), b, end - b);
               });
  // Operations complete in the call (cross-memory attach) need no flush at the fence.
  if (pending) markDirty(target);
}

void Window::markDirty(int target) {
  if (!isDirty_[static_cast<std::size_t>(target)]) {
    isDirty_[static_cast<std::size_t>(target)] = true;
    dirty_.push_back(target);
  }
}

void Window::complete(int target) {
  auto& ctx = comm_.context();
  if (target >= 0) {
    if (isDirty_[static_cast<std::size_t>(target)]) {
      ctx.endpoint(comm_.worldRank(target)).flush();
      isDirty_[static_cast<std::size_t>(target)] = false;
      std::erase(dirty_, target);
    }
  } else if (!dirty_.empty()) {
    if (dirty_.size() > 4) {
      ctx.transport().flushAll();
    } else {
      for (int t : dirty_) ctx.endpoint(comm_.worldRank(t)).flush();
    }
    for (int t : dirty_) isDirty_[static_cast<std::size_t>(t)] = false;
    dirty_.clear();
  }
  // Stores on the load / store path: visible to the target before whatever signals completion.
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void Window::walk(std::byte* origin, std::size_t ocount, const Datatype& otype,
                  std::uint64_t toffset, std::size_t tcount, const Datatype& ttype,
                  const std::function<void(std::byte*, std::uint64_t, std::size_t)>& fn) {
  forEachPiece(origin, ocount, otype, toffset, tcount, ttype, fn);
}

template <bool kPut>
bool Window::fastDirect(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                        std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  // The common case in a handful of comparisons: an open fence epoch (never on a freed window:
  // free ends it), the same contiguous type and count on both sides, a target in the group
  // whose whole window is on the load / store path, and a footprint inside it. Anything else,
  // errors included, takes the general path, which checks everything again in order and names
  // what is wrong.
  if (!allOpen_ || &otype != &ttype || ocount != tcount || !otype.contiguous() || disp < 0 ||
      static_cast<unsigned>(target) >= targets_.size()) {
    return false;
  }
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved || t.directLo != 0 || t.directHi != t.size || t.size == 0) return false;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
  std::int64_t end = 0;
  if (__builtin_mul_overflow(disp, static_cast<std::int64_t>(t.dispUnit), &offset) ||
      __builtin_mul_overflow(ocount, static_cast<std::int64_t>(otype.size()), &bytes) ||
      __builtin_add_overflow(offset, bytes, &end) || static_cast<std::uint64_t>(end) > t.size ||
      bytes <= 0 || origin == nullptr) {
    return false;
  }
  ++pendingOps_;
  auto* o = static_cast<std::byte*>(origin);
  if constexpr (kPut) {
    moveBytes(t.direct + offset, o, static_cast<std::size_t>(bytes));
  } else {
    moveBytes(o, t.direct + offset, static_cast<std::size_t>(bytes));
  }
  return true;
}

void Window::put(const void* origin, std::int64_t ocount, const Datatype& otype, int target,
                 std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  if (fastDirect<true>(const_cast<void*>(origin), ocount, otype, target, disp, tcount, ttype)) {
    return;
  }
  transfer<true>(const_cast<void*>(origin), ocount, otype, target, disp, tcount, ttype);
}

void Window::get(void* origin, std::int64_t ocount, const Datatype& otype, int target,
                 std::int64_t disp, std::int64_t tcount, const Datatype& ttype) {
  if (fastDirect<false>(origin, ocount, otype, target, disp, tcount, ttype)) return;
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
  if ((assertion & kModeNoprecede) != 0 && pendingOps_ > 0) {
    throw Error(kErrRmaSync, "MPI_MODE_NOPRECEDE given, but " + std::to_string(pendingOps_) +
                                 " operations were issued since the previous fence");
  }
  // Complete what this rank issued, at origin and target, before telling anybody.
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
}

void Window::free() {
  if (freed_) throw Error(kErrWin, "window was freed");
  if (epoch_ == Epoch::kPassive) {
    throw Error(kErrRmaSync,
                "a passive-target epoch (MPI_Win_lock / MPI_Win_lock_all) is still open");
  }
  if (pendingOps_ > 0) {
    throw Error(kErrRmaSync, std::to_string(pendingOps_) +
                                 " operations were not completed by a fence before the free");
  }
  // Nobody may still be reading or writing our memory when it goes away.
  sync_->barrier();
  freed_ = true;
  epoch_ = Epoch::kNone;
  allOpen_ = false;
  targets_.clear();
  sync_.reset();
  control_.reset();
  region_.reset();
  exposed_ = nullptr;
}

}  // namespace onesided
