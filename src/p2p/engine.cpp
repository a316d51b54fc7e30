// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point messaging (engine.hpp has the design, wire.hpp the remote layout).
#include "p2p/engine.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

#include <sys/uio.h>
#include <unistd.h>

#include "copy.hpp"
#include "counters.hpp"
#include "datatype/loop.hpp"
#include "env.hpp"
#include "hang.hpp"
#include "log.hpp"
#include "onesided/context.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"
#include "transport/transport.hpp"

namespace onesided::p2p {
namespace {

using wire::kCell;

constexpr std::size_t kHeader = sizeof(wire::Header);
// The peer-info blob: [region address][nonce][pid][ring bytes][packed key].
constexpr std::size_t kInfoFixed = 32;

std::uint64_t loadAcquire(const std::byte* p) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): atomic_ref needs a non-const lvalue
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}
void storeRelease(std::byte* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .store(v, std::memory_order_release);
}

/// The default ring per pair: 4 MiB of rings in all, from 16 KiB to 128 KiB per pair.
std::size_t defaultRing(int size) {
  const std::size_t per = (std::size_t{4} << 20) / static_cast<std::size_t>(std::max(size, 1));
  return std::clamp<std::size_t>(std::bit_floor(per), std::size_t{16} << 10,
                                 std::size_t{128} << 10);
}

[[noreturn]] void attachFailed(int world, int err) {
  throw Error(kErrOther, "reading rank " + std::to_string(world) +
                             "'s message by cross-memory attach: " + std::strerror(err));
}

/// process_vm_readv of [raddr, raddr + len) of `pid` into dst, in as many calls as it takes.
bool readAttached(pid_t pid, std::byte* dst, std::uint64_t raddr, std::size_t len, int& err) {
  while (len > 0) {
    iovec l{dst, len};
    iovec r{reinterpret_cast<void*>(raddr), len};  // NOLINT(performance-no-int-to-ptr)
    const ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      return false;
    }
    dst += n;
    raddr += static_cast<std::uint64_t>(n);
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Request::~Request() = default;

void unpackPrefix(const std::byte* in, std::size_t len, void* buf, std::size_t count,
                  const Datatype& type) {
  if (len == 0) return;
  const std::size_t size = type.size();
  if (type.contiguous()) {
    detail::copyBytes(buf, in, len);
    return;
  }
  const std::size_t whole = len / size;
  if (whole > 0) unpack(in, whole * size, buf, whole, type);
  const std::size_t rest = len - whole * size;
  if (rest == 0 || whole >= count) return;
  // The part of element `whole` that arrived, by the type map's runs.
  const auto base = reinterpret_cast<std::uintptr_t>(buf) +
                    static_cast<std::uintptr_t>(static_cast<std::ptrdiff_t>(whole) * type.extent());
  detail::Cursor c(type, 1);
  Datatype::Segment s{};
  const std::byte* from = in + whole * size;
  std::size_t left = rest;
  while (left > 0 && c.next(left, s)) {
    detail::copyBytes(reinterpret_cast<std::byte*>(base + static_cast<std::uintptr_t>(s.offset)),
                      from, s.len);
    from += s.len;
    left -= s.len;
  }
}

struct Engine::Peer {
  int world = 0;
  bool resolved = false;
  std::uint64_t base = 0;  // its region's address
  std::uint64_t nonce = 0;
  std::int64_t pid = 0;
  std::unique_ptr<transport::RemoteKey> key;
  transport::Endpoint* ep = nullptr;
  std::byte* direct = nullptr;  // its region mapped here (the load / store path), or null
  int attach = -1;              // attaches(): -1 not yet checked, 0 no, 1 yes
  // Writing into my ring in its region.
  std::uint64_t sentSeq = 0;
  std::uint64_t sentCells = 0;
  std::deque<Out> pending;
  // Reading its ring in my region.
  std::uint64_t recvSeq = 0;
  std::uint64_t recvCells = 0;
  std::uint64_t reported = 0;
  std::uint64_t reportOut = 0;  // a consumed report's source word on the put path
};

Engine::Engine(Context& ctx) : ctx_(ctx), me_(ctx.rank()), size_(ctx.size()) {
  settings_.ringBytes = detail::envSize(settings::get(settings::Id::kP2pRing).name,
                                        defaultRing(size_), 4096, std::size_t{1} << 30);
  if (!std::has_single_bit(settings_.ringBytes)) {
    throw Error(kErrArg, "ONESIDED_P2P_RING=" + std::to_string(settings_.ringBytes) +
                             ": expected a power of two");
  }
  // A message takes at most a quarter of the ring, so that a sender always finds room once the
  // receiver has read and reported what came before (it reports every quarter ring). 8 KiB by
  // default: from there a rendezvous (one copy) beats two copies through the ring
  // (docs/performance.md, "The eager limit").
  const std::size_t eagerMax = settings_.ringBytes / 4 - kHeader;
  settings_.eagerBytes =
      detail::envSize(settings::get(settings::Id::kP2pEager).name,
                      std::min<std::size_t>(std::size_t{8} << 10, eagerMax), 0, eagerMax);
  ringCells_ = settings_.ringBytes / kCell;
  ringMask_ = ringCells_ - 1;  // a power of two
  attachAllowed_ = detail::envSize(settings::get(settings::Id::kP2pAttach).name, 1, 0, 1) == 1;
  const auto n = static_cast<std::size_t>(size_);
  ringsOff_ = sizeof(wire::Identity) + n * sizeof(wire::Consumed);
  region_ = ctx_.transport().registerMemory(nullptr, ringsOff_ + n * settings_.ringBytes,
                                            transport::Placement::kAllocate,
                                            transport::Access::kRemoteAll);
  local_ = static_cast<std::byte*>(region_->base());
  // Transports hand out memory as it is (a freed region's stamps would pass for messages);
  // no peer writes here before this rank has published the region's address.
  std::memset(local_, 0, ringsOff_ + n * settings_.ringBytes);
  nonce_ = transport::regionNonce(local_);
  auto* id = reinterpret_cast<wire::Identity*>(local_);
  id->pid = ctx_.pid();
  storeRelease(local_, nonce_);
  peers_.resize(n);
  staging_.resize(kHeader + settings_.eagerBytes + 4096);
}

Engine::~Engine() = default;

std::vector<std::byte> Engine::localInfo() const {
  const std::vector<std::byte> key = region_->packRkey();
  std::vector<std::byte> out(kInfoFixed + key.size());
  const std::uint64_t fixed[4] = {reinterpret_cast<std::uintptr_t>(local_), nonce_,
                                  static_cast<std::uint64_t>(ctx_.pid()), settings_.ringBytes};
  std::memcpy(out.data(), fixed, kInfoFixed);
  std::copy(key.begin(), key.end(), out.begin() + kInfoFixed);
  return out;
}

Engine::Peer& Engine::peer(int world) {
  auto& p = peers_[static_cast<std::size_t>(world)];
  if (!p) {
    p = std::make_unique<Peer>();
    p->world = world;
  }
  return *p;
}

Engine::Peer& Engine::resolve(int world) {
  Peer& p = peer(world);
  if (p.resolved) return p;
  const std::vector<std::byte> info = ctx_.p2pInfo(world);
  std::uint64_t fixed[4] = {};
  if (info.size() < kInfoFixed) {
    throw Error(kErrOther, "rank " + std::to_string(world) + " published malformed messaging data");
  }
  std::memcpy(fixed, info.data(), kInfoFixed);
  if (fixed[3] != settings_.ringBytes) {
    throw Error(kErrArg, "rank " + std::to_string(world) + " has ONESIDED_P2P_RING " +
                             std::to_string(fixed[3]) + ", this rank " +
                             std::to_string(settings_.ringBytes) +
                             ": it must be the same everywhere");
  }
  p.base = fixed[0];
  p.nonce = fixed[1];
  p.pid = static_cast<std::int64_t>(fixed[2]);
  p.ep = &ctx_.endpoint(world);
  p.key = p.ep->unpackRkey(std::span(info).subspan(kInfoFixed));
  const std::size_t bytes = ringsOff_ + static_cast<std::size_t>(size_) * settings_.ringBytes;
  auto* lo = static_cast<std::byte*>(p.key->directPointer(p.base));
  auto* hi = static_cast<std::byte*>(p.key->directPointer(p.base + bytes - 1));
  p.direct = lo != nullptr && hi == lo + bytes - 1 ? lo : nullptr;
  p.resolved = true;
  log::core().debug("messages to world rank {}: {}", world, p.direct ? "direct" : "transport");
  return p;
}

std::byte* Engine::ringOf(int world) const {
  return local_ + ringsOff_ + static_cast<std::size_t>(world) * settings_.ringBytes;
}

std::uint64_t Engine::cellsFor(std::size_t bytes) const { return (bytes + kCell - 1) / kCell; }

bool Engine::attaches(Peer& p) {
  if (p.attach >= 0) return p.attach == 1;
  p.attach = 0;
  if (!attachAllowed_) {
    // ONESIDED_P2P_ATTACH=0: every rendezvous by the transport (tests of that path).
  } else if (p.pid == ctx_.pid()) {
    p.attach = 1;  // ranks of one process: a plain copy
  } else if (p.direct != nullptr) {
    std::uint64_t seen = 0;
    int err = 0;
    if (readAttached(static_cast<pid_t>(p.pid), reinterpret_cast<std::byte*>(&seen), p.base, 8,
                     err) &&
        seen == p.nonce) {
      p.attach = 1;
    }
  }
  log::core().debug("messages from world rank {}: read by {}", p.world,
                    p.attach == 1 ? "cross-memory attach" : "the transport");
  return p.attach == 1;
}

void Engine::writeAt(Peer& p, std::uint64_t pos, wire::Header& h, const Body* o) {
  h.stamp = ++p.sentSeq;
  std::size_t payload = 0;
  const std::uint64_t off =
      ringsOff_ + static_cast<std::uint64_t>(me_) * settings_.ringBytes + pos * kCell;
  auto fill = [&](std::byte* at) {
    if (o == nullptr) return;
    if (h.kind == wire::Kind::kEager) {
      payload = h.bytes;
      if (payload != 0) pack(o->buf, o->count, *o->type, at, payload);
    } else {
      payload = o->bytes.size();
      if (payload != 0) std::memcpy(at, o->bytes.data(), payload);
    }
  };
  if (p.direct != nullptr) {
    std::byte* dst = p.direct + off;
    fill(dst + kHeader);
    std::memcpy(dst + 8, reinterpret_cast<const std::byte*>(&h) + 8, kHeader - 8);
    storeRelease(dst, h.stamp);
    // The next message's cell and one 8 cells on, for writing: their transfers from the
    // receiver's cache then overlap this call's return and the caller's next one, instead of
    // stalling a store of the next message (the collectives' rings do the same, postChunk).
    std::byte* ring = p.direct + ringsOff_ + static_cast<std::size_t>(me_) * settings_.ringBytes;
    const std::uint64_t next = pos + cellsFor(kHeader + payload);
    __builtin_prefetch(ring + (next & ringMask_) * kCell, 1, 3);
    __builtin_prefetch(ring + ((next + 8) & ringMask_) * kCell, 1, 3);
    return;
  }
  const std::size_t need = kHeader + (o == nullptr                   ? 0
                                      : h.kind == wire::Kind::kEager ? h.bytes
                                                                     : o->bytes.size());
  if (staging_.size() < need) staging_.resize(need);
  fill(staging_.data() + kHeader);
  std::memcpy(staging_.data(), &h, kHeader);
  // The body, then (ordered after it) the stamp that announces it; complete before the staging
  // buffer is used again.
  transport::Iov body{staging_.data() + 8, kHeader - 8 + payload};
  p.ep->put(std::span(&body, 1), p.base + off + 8, *p.key);
  p.ep->fence();
  transport::Iov stamp{staging_.data(), 8};
  p.ep->put(std::span(&stamp, 1), p.base + off, *p.key);
  p.ep->post();
  p.ep->flush();
}

bool Engine::tryWrite(Peer& p, wire::Header& h, const Body& body) {
  const std::size_t payload = h.kind == wire::Kind::kEager ? h.bytes : body.bytes.size();
  const std::uint64_t cells = cellsFor(kHeader + payload);
  std::uint64_t pos = p.sentCells & ringMask_;
  const std::uint64_t room = ringCells_ - pos;
  const std::uint64_t need = cells > room ? room + cells : cells;
  const std::uint64_t consumed = loadAcquire(
      local_ + sizeof(wire::Identity) + static_cast<std::size_t>(p.world) * sizeof(wire::Consumed));
  if (p.sentCells + need - consumed > ringCells_) return false;
  if (cells > room) {
    wire::Header pad{};
    pad.kind = wire::Kind::kPad;
    writeAt(p, pos, pad, nullptr);
    p.sentCells += room;
    pos = 0;
  }
  writeAt(p, pos, h, &body);
  p.sentCells += cells;
  return true;
}

bool Engine::tryWrite(Peer& p, Out& o) {
  const Body body{o.req != nullptr ? o.req->buf : nullptr, o.req != nullptr ? o.req->count : 0,
                  o.req != nullptr ? o.req->type.get() : nullptr, o.payload};
  return tryWrite(p, o.h, body);
}

bool Engine::sendNow(const void* buf, std::size_t count, const Datatype& type, int world,
                     std::uint64_t context, int source, int tag) {
  if (world == me_) return false;
  Peer* p = peers_[static_cast<std::size_t>(world)].get();
  if (p == nullptr || p->direct == nullptr || !p->pending.empty()) return false;
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * type.size();
  if (bytes > settings_.eagerBytes) return false;
  wire::Header h{};
  h.kind = wire::Kind::kEager;
  h.context = context;
  h.tag = tag;
  h.source = source;
  h.bytes = bytes;
  if (!tryWrite(*p, h, Body{buf, count, &type, {}})) return false;
  counters::get().sendsEager.add();
  counters::get().sendBytes.add(bytes);
  return true;
}

void Engine::enqueue(Peer& p, Out o) {
  if (p.pending.empty()) ++pendingPeers_;
  p.pending.push_back(std::move(o));
}

bool Engine::writePending(Peer& p) {
  bool worked = false;
  while (!p.pending.empty() && tryWrite(p, p.pending.front())) {
    Out& o = p.pending.front();
    if (o.req != nullptr && !o.req->waitsReply) o.req->complete = true;
    p.pending.pop_front();
    worked = true;
  }
  if (worked && p.pending.empty()) --pendingPeers_;
  return worked;
}

void Engine::send(Request& r, const void* buf, std::size_t count, const Datatype& type, int world,
                  std::uint64_t context, int source, int tag, bool sync) {
  r.kind = Request::Kind::kSend;
  r.complete = false;
  r.status = Status{};
  r.buf = const_cast<void*>(buf);  // NOLINT(cppcoreguidelines-pro-type-const-cast): only read
  r.count = count;
  r.type = type.hold();
  r.world = world;
  r.sync = sync;
  r.waitsReply = false;
  r.cancelAsked = false;
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * type.size();
  counters::get().sendBytes.add(bytes);
  if (world == me_) {
    counters::get().sendsEager.add();  // copied, or held until received: no rendezvous
    // To this rank itself: straight to matching. A standard send's data is copied (it then
    // completes at once, as a send to oneself must not deadlock for want of a buffer); a
    // synchronous one waits, holding its data, until a receive takes it.
    Incoming in;
    in.context = context;
    in.source = source;
    in.tag = tag;
    in.world = me_;
    in.bytes = bytes;
    in.sync = sync;
    if (sync) {
      r.waitsReply = true;
      in.selfSend = &r;
      arrive(in, nullptr);
    } else {
      in.data.resize(bytes);
      if (bytes != 0) pack(buf, count, type, in.data.data(), bytes);
      r.complete = true;
      arrive(in, nullptr);
    }
    return;
  }
  Peer& p = resolve(world);
  Out o;
  o.req = &r;
  o.h.context = context;
  o.h.tag = tag;
  o.h.source = source;
  o.h.bytes = bytes;
  if (bytes > settings_.eagerBytes) {
    // Rendezvous: the receiver reads the data where it is (packed first if it is not one run).
    counters::get().sendsRendezvous.add();
    o.h.kind = wire::Kind::kRts;
    const std::byte* data = static_cast<const std::byte*>(buf);
    if (!type.contiguous()) {
      r.packed.resize(bytes);
      pack(buf, count, type, r.packed.data(), bytes);
      data = r.packed.data();
    }
    wire::Rts rts{reinterpret_cast<std::uintptr_t>(data), 0};
    std::vector<std::byte> key;
    if (!attaches(p)) {
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): exposed for remote reads only
      r.exposed = ctx_.transport().registerMemory(const_cast<std::byte*>(data), bytes,
                                                  transport::Placement::kExpose,
                                                  transport::Access::kRemoteRead);
      key = r.exposed->packRkey();
      rts.keyBytes = key.size();
    }
    o.payload.resize(sizeof rts + key.size());
    std::memcpy(o.payload.data(), &rts, sizeof rts);
    std::copy(key.begin(), key.end(), o.payload.begin() + sizeof rts);
    r.waitsReply = true;
  } else {
    counters::get().sendsEager.add();
    o.h.kind = wire::Kind::kEager;
    if (sync) {
      o.h.flags = wire::kSync;
      r.waitsReply = true;
    }
  }
  if (r.waitsReply) {
    r.sendId = nextSendId_++;
    o.h.sendId = r.sendId;
    awaiting_[r.sendId] = &r;
  }
  if (p.pending.empty() && tryWrite(p, o)) {
    if (!r.waitsReply) r.complete = true;
    return;
  }
  enqueue(p, std::move(o));
}

bool Engine::matches(std::uint64_t context, int source, int tag, const Incoming& in) noexcept {
  return context == in.context && (source == kAnySource || source == in.source) &&
         (tag == kAnyTag || tag == in.tag);
}

void Engine::recv(Request& r, void* buf, std::size_t count, const Datatype& type,
                  std::uint64_t context, int source, int tag) {
  r.kind = Request::Kind::kRecv;
  r.complete = false;
  r.status = Status{};
  r.buf = buf;
  r.count = count;
  r.type = type.hold();
  r.context = context;
  r.source = source;
  r.tag = tag;
  if (std::unique_ptr<Incoming> m = takeUnexpected(r.context, r.source, r.tag); m != nullptr) {
    deliver(r, *m, nullptr);
    return;
  }
  post(r);
}

void Engine::post(Request& r) noexcept {
  r.posted = true;
  r.nextPosted = nullptr;
  r.prevPosted = postedTail_;
  if (postedTail_ != nullptr) {
    postedTail_->nextPosted = &r;
  } else {
    postedHead_ = &r;
  }
  postedTail_ = &r;
}

void Engine::unpost(Request& r) noexcept {
  if (!r.posted) return;
  (r.prevPosted != nullptr ? r.prevPosted->nextPosted : postedHead_) = r.nextPosted;
  (r.nextPosted != nullptr ? r.nextPosted->prevPosted : postedTail_) = r.prevPosted;
  r.prevPosted = r.nextPosted = nullptr;
  r.posted = false;
}

void Engine::recvMessage(Request& r, void* buf, std::size_t count, const Datatype& type,
                         std::unique_ptr<Incoming> msg) {
  r.kind = Request::Kind::kRecv;
  r.complete = false;
  r.status = Status{};
  r.buf = buf;
  r.count = count;
  r.type = type.hold();
  r.context = msg->context;
  r.source = msg->source;
  r.tag = msg->tag;
  deliver(r, *msg, nullptr);
}

bool Engine::probe(std::uint64_t context, int source, int tag, Status& st) {
  poll();
  auto it = findUnexpected(context, source, tag);
  if (it == unexpected_.end()) return false;
  st = (*it)->envelope();
  return true;
}

std::deque<std::unique_ptr<Incoming>>::iterator Engine::findUnexpected(std::uint64_t context,
                                                                       int source, int tag) {
  return std::find_if(unexpected_.begin(), unexpected_.end(),
                      [&](const auto& m) { return matches(context, source, tag, *m); });
}

std::unique_ptr<Incoming> Engine::takeUnexpected(std::uint64_t context, int source, int tag) {
  auto it = findUnexpected(context, source, tag);
  if (it == unexpected_.end()) return nullptr;
  std::unique_ptr<Incoming> m = std::move(*it);
  unexpected_.erase(it);
  counters::get().unexpected.set(unexpected_.size());
  return m;
}

std::unique_ptr<Incoming> Engine::takeMatching(std::uint64_t context, int source, int tag) {
  poll();
  return takeUnexpected(context, source, tag);
}

void Engine::arrive(Incoming& in, const std::byte* eagerData) {
  for (Request* r = postedHead_; r != nullptr; r = r->nextPosted) {
    if (matches(r->context, r->source, r->tag, in)) {
      unpost(*r);
      deliver(*r, in, eagerData);
      return;
    }
  }
  auto m = std::make_unique<Incoming>(std::move(in));
  if (eagerData != nullptr && m->bytes != 0) m->data.assign(eagerData, eagerData + m->bytes);
  unexpected_.push_back(std::move(m));
  counters::get().unexpected.set(unexpected_.size());
}

void Engine::deliver(Request& r, Incoming& in, const std::byte* eagerData) {
  const std::uint64_t capacity = static_cast<std::uint64_t>(r.count) * r.type->size();
  const std::size_t n = static_cast<std::size_t>(std::min(in.bytes, capacity));
  r.status = Status{};
  r.status.source = in.source;
  r.status.tag = in.tag;
  r.status.bytes = n;
  r.status.sent = in.bytes;
  counters::get().recvs.add();
  counters::get().recvBytes.add(n);
  if (in.bytes > capacity) r.status.error = kErrTruncate;
  if (in.selfSend != nullptr) {
    Request& s = *in.selfSend;
    if (n != 0) {
      if (s.type->contiguous() && r.type->contiguous()) {
        detail::copyBytes(r.buf, s.buf, n);
      } else {
        std::vector<std::byte> tmp(in.bytes);
        pack(s.buf, s.count, *s.type, tmp.data(), tmp.size());
        unpackPrefix(tmp.data(), n, r.buf, r.count, *r.type);
      }
    }
    s.complete = true;
    s.waitsReply = false;
  } else if (in.rts) {
    if (n != 0) {
      if (r.type->contiguous()) {
        readRemote(in, static_cast<std::byte*>(r.buf), n);
      } else {
        std::vector<std::byte> tmp(n);
        readRemote(in, tmp.data(), n);
        unpackPrefix(tmp.data(), n, r.buf, r.count, *r.type);
      }
    }
    reply(in, wire::Kind::kFin);
  } else {
    unpackPrefix(eagerData != nullptr ? eagerData : in.data.data(), n, r.buf, r.count, *r.type);
    if (in.sync) {
      if (in.world == me_) {
        completeSend(in.sendId, false);
      } else {
        reply(in, wire::Kind::kAck);
      }
    }
  }
  r.complete = true;
}

void Engine::readRemote(const Incoming& in, std::byte* dst, std::size_t len) {
  wire::Rts rts{};
  std::memcpy(&rts, in.data.data(), sizeof rts);
  Peer& p = resolve(in.world);
  if (rts.keyBytes == 0) {
    if (p.pid == ctx_.pid()) {
      detail::copyBytes(dst, reinterpret_cast<const void*>(rts.addr), len);  // NOLINT
      return;
    }
    int err = 0;
    if (!readAttached(static_cast<pid_t>(p.pid), dst, rts.addr, len, err))
      attachFailed(p.world, err);
    return;
  }
  auto key = p.ep->unpackRkey(std::span(in.data).subspan(sizeof rts, rts.keyBytes));
  if (void* from = key->directPointer(rts.addr);
      from != nullptr &&
      key->directPointer(rts.addr + len - 1) == static_cast<std::byte*>(from) + len - 1) {
    detail::copyBytes(dst, from, len);
    return;
  }
  transport::Iov iov{dst, len};
  if (p.ep->get(std::span(&iov, 1), rts.addr, *key) == transport::Issue::kPending) p.ep->flush();
}

void Engine::reply(const Incoming& in, wire::Kind kind) {
  Peer& p = resolve(in.world);
  Out o;
  o.h.kind = kind;
  o.h.sendId = in.sendId;
  if (p.pending.empty() && tryWrite(p, o)) return;
  enqueue(p, std::move(o));
}

void Engine::completeSend(std::uint64_t sendId, bool cancelled) {
  auto it = awaiting_.find(sendId);
  if (it == awaiting_.end()) {
    log::core().warn("a reply names send {}, which is not waiting for one", sendId);
    return;
  }
  Request& r = *it->second;
  if (cancelled) {
    r.status = Status{};
    r.status.cancelled = true;
  }
  awaiting_.erase(it);
  r.exposed.reset();
  r.packed.clear();
  r.packed.shrink_to_fit();
  r.waitsReply = false;
  r.complete = true;
}

bool Engine::readOne(Peer& p) {
  std::byte* ring = ringOf(p.world);
  const std::uint64_t pos = p.recvCells & ringMask_;
  std::byte* at = ring + pos * kCell;
  if (loadAcquire(at) != p.recvSeq + 1) return false;
  wire::Header h{};
  std::memcpy(&h, at, kHeader);
  const std::byte* payload = at + kHeader;
  std::uint64_t cells = 1;
  switch (h.kind) {
    case wire::Kind::kPad:
      cells = ringCells_ - pos;
      break;
    case wire::Kind::kEager:
    case wire::Kind::kRts: {
      const bool rts = h.kind == wire::Kind::kRts;
      Incoming in;
      in.context = h.context;
      in.source = h.source;
      in.tag = h.tag;
      in.world = p.world;
      in.bytes = h.bytes;
      in.sendId = h.sendId;
      in.sync = (h.flags & wire::kSync) != 0;
      in.rts = rts;
      std::size_t len = h.bytes;
      if (rts) {
        wire::Rts rec{};
        std::memcpy(&rec, payload, sizeof rec);
        len = sizeof rec + rec.keyBytes;
        in.data.assign(payload, payload + len);
      }
      cells = cellsFor(kHeader + len);
      if (len > settings_.ringBytes / 4) {
        throw Error(kErrIntern, "a message from rank " + std::to_string(p.world) + " claims " +
                                    std::to_string(len) + " bytes in its ring");
      }
      // Consumed only after it is handled: its payload is read from the ring.
      arrive(in, rts ? nullptr : payload);
      break;
    }
    case wire::Kind::kFin:
    case wire::Kind::kAck:
      completeSend(h.sendId, false);
      break;
    case wire::Kind::kCancelled:
      completeSend(h.sendId, true);
      break;
    case wire::Kind::kCancelRefused:
      break;  // the send completes by its kFin / kAck
    case wire::Kind::kCancel: {
      Incoming in;
      in.world = p.world;
      in.sendId = h.sendId;
      auto it = std::find_if(unexpected_.begin(), unexpected_.end(), [&](const auto& m) {
        return m->world == p.world && m->sendId == h.sendId && (m->rts || m->sync);
      });
      const bool dropped = it != unexpected_.end();
      if (dropped) unexpected_.erase(it);
      counters::get().unexpected.set(unexpected_.size());
      reply(in, dropped ? wire::Kind::kCancelled : wire::Kind::kCancelRefused);
      break;
    }
    default:
      throw Error(kErrIntern, "a message of unknown kind " +
                                  std::to_string(static_cast<unsigned>(h.kind)) + " from rank " +
                                  std::to_string(p.world));
  }
  consume(p, cells);
  return true;
}

void Engine::consume(Peer& p, std::uint64_t cells) {
  ++p.recvSeq;
  p.recvCells += cells;
  if (p.recvCells - p.reported < ringCells_ / 4) return;
  p.reported = p.recvCells;
  Peer& q = resolve(p.world);
  const std::uint64_t off =
      sizeof(wire::Identity) + static_cast<std::uint64_t>(me_) * sizeof(wire::Consumed);
  if (q.direct != nullptr) {
    storeRelease(q.direct + off, p.reported);
    return;
  }
  q.reportOut = p.reported;
  transport::Iov iov{&q.reportOut, 8};
  q.ep->put(std::span(&iov, 1), q.base + off, *q.key);
  q.ep->post();
  q.ep->flush();
}

bool Engine::cancel(Request& r) {
  if (r.complete) return false;
  if (r.kind == Request::Kind::kRecv) {
    if (!r.posted) return false;
    unpost(r);
  } else if (r.world == me_) {
    auto it = std::find_if(unexpected_.begin(), unexpected_.end(),
                           [&](const auto& m) { return m->selfSend == &r; });
    if (it == unexpected_.end()) return false;
    unexpected_.erase(it);
    counters::get().unexpected.set(unexpected_.size());
    counters::get().unexpected.set(unexpected_.size());
  } else {
    Peer& p = peer(r.world);
    auto it =
        std::find_if(p.pending.begin(), p.pending.end(), [&](const Out& o) { return o.req == &r; });
    if (it == p.pending.end()) {
      // Written: the receiver drops it if no receive has taken it, and says which (kCancel).
      // A standard eager send is complete already and cannot be taken back.
      if (r.waitsReply && !r.cancelAsked) {
        r.cancelAsked = true;
        Incoming to;
        to.world = r.world;
        to.sendId = r.sendId;
        reply(to, wire::Kind::kCancel);
      }
      return false;
    }
    p.pending.erase(it);
    if (p.pending.empty()) --pendingPeers_;
    if (r.waitsReply) awaiting_.erase(r.sendId);
    r.exposed.reset();
  }
  r.status = Status{};
  r.status.cancelled = true;
  r.waitsReply = false;
  r.complete = true;
  return true;
}

void Engine::forget(Request& r) noexcept {
  unpost(r);
  if (r.waitsReply) awaiting_.erase(r.sendId);
  std::erase_if(unexpected_, [&](const auto& m) { return m->selfSend == &r; });
  counters::get().unexpected.set(unexpected_.size());
  if (r.kind == Request::Kind::kSend && r.world != me_ &&
      peers_[static_cast<std::size_t>(r.world)]) {
    Peer& p = *peers_[static_cast<std::size_t>(r.world)];
    const bool had = !p.pending.empty();
    std::erase_if(p.pending, [&](const Out& o) { return o.req == &r; });
    if (had && p.pending.empty()) --pendingPeers_;
  }
  r.waitsReply = false;
}

void Engine::orphan(std::unique_ptr<Request> r) {
  if (r->complete) return;
  orphans_.push_back(std::move(r));
}

void Engine::sweepOrphans() {
  std::erase_if(orphans_, [](const std::unique_ptr<Request>& r) { return r->complete; });
}

bool Engine::poll() {
  if (polling_ || closed_) return false;
  polling_ = true;
  struct Reset {
    bool& b;
    ~Reset() { b = false; }
  } reset{polling_};
  bool worked = false;
  if (pendingPeers_ != 0) {
    for (auto& p : peers_) {
      if (p && !p->pending.empty()) worked = writePending(*p) || worked;
    }
  }
  for (int s = 0; s < size_; ++s) {
    if (s == me_) continue;
    std::byte* at = ringOf(s);
    Peer* p = peers_[static_cast<std::size_t>(s)].get();
    const std::uint64_t seq = p != nullptr ? p->recvSeq : 0;
    const std::uint64_t pos = p != nullptr ? p->recvCells & ringMask_ : 0;
    if (loadAcquire(at + pos * kCell) != seq + 1) continue;
    Peer& q = peer(s);
    while (readOne(q)) worked = true;
  }
  if (!orphans_.empty()) sweepOrphans();
  return worked;
}

void Engine::wait(Request& r) {
  if (r.complete) return;
  const hang::Waiting waiting = r.kind == Request::Kind::kRecv
                                    ? hang::Waiting(hang::For::kMessage, r.source, r.tag)
                                    : hang::Waiting(hang::For::kReceiver, r.world);
  ctx_.waitUntil([&] {
    if (r.complete) return true;
    poll();
    return r.complete;
  });
}

void Engine::drain() {
  ctx_.waitUntil([&] {
    poll();
    return pendingPeers_ == 0;
  });
  closed_ = true;
}

}  // namespace onesided::p2p
