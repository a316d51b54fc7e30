// SPDX-License-Identifier: BSD-3-Clause
// Dynamic windows: MPI_Win_create_dynamic, MPI_Win_attach, MPI_Win_detach.
//
// Each rank exposes an attach table (dynamic.hpp): a header at a fixed registered address and
// an array of its attached regions (base, length, packed remote key) that grows by doubling,
// published with a seqlock. Attach and detach are local: the owner rewrites an entry or two.
// An origin keeps a copy of each target's table with the keys unpacked, sorted by address,
// and checks every access against it before anything reaches the network:
//   - an access inside a cached region uses that region's key (no communication); one that
//     spans adjacent regions, all attached, is cut at their boundaries, each part with its
//     region's key (an atomic on one element must lie in one region);
//   - a miss re-reads the target's table with one-sided gets (header, entries, header again,
//     retried while the owner is writing), then looks again; still outside every region ->
//     kErrRmaRange at the origin, with the regions that are attached;
//   - in each new epoch (fence, lock, lock_all) the first access to a target re-reads the
//     table's version word (one 8-byte get) and the whole table only if it changed, so a region
//     detached (and perhaps another attached at the same addresses) before the synchronisation
//     that the standard requires between detach and other ranks' accesses is never reached
//     with a stale key.
// A detach within an origin's epoch that the origin did not synchronise with is erroneous
// (MPI-3.1 §11.2.4); the origin may then still use its cached key until its next epoch. The
// transports check keys and bounds themselves (a NIC with an invalidated key fails the
// operation, which the flush reports), so that stays a clean error, not a fault.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "log.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "window/am.hpp"
#include "window/barrier.hpp"
#include "window/dynamic.hpp"

namespace onesided {
namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string range(std::uint64_t lo, std::uint64_t hi) {
  // Appended piece by piece: g++ 12 at -O3 warns (-Wrestrict, a false positive) on the
  // equivalent chain of operator+.
  std::string s = "[";
  s.append(hex(lo)).append(", ").append(hex(hi)).append(")");
  return s;
}

/// An 8-byte word of the published table, stored so that a concurrent reader (another thread
/// of this process as a rank, or a transport reading it) never sees it half-written.
void publishWord(std::byte* p, std::uint64_t v, std::memory_order order) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p)).store(v, order);
}

void publishBytes(std::byte* dst, const void* src, std::size_t n) {
  for (std::size_t k = 0; k < n; k += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, static_cast<const std::byte*>(src) + k, std::min<std::size_t>(8, n - k));
    publishWord(dst + k, v, std::memory_order_relaxed);
  }
}

std::byte* tableOf(detail::DynamicState& d) { return static_cast<std::byte*>(d.table->base()); }

/// The published entry array: in the table's registration until it grew.
std::byte* entryArray(detail::DynamicState& d) {
  return d.grown ? static_cast<std::byte*>(d.grown->base())
                 : tableOf(d) + sizeof(detail::TableHeader);
}

/// The seqlock's write side: version odd while the owner writes, even again after.
void beginWrite(detail::DynamicState& d) {
  std::byte* table = tableOf(d);
  const std::uint64_t version =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(table))
          .load(std::memory_order_relaxed);
  publishWord(table, version + 1, std::memory_order_relaxed);
  detail::fullBarrier();
}

void endWrite(detail::DynamicState& d) {
  std::byte* table = tableOf(d);
  detail::fullBarrier();
  const std::uint64_t version =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(table))
          .load(std::memory_order_relaxed);
  publishWord(table, version + 1, std::memory_order_release);
}

void writeEntry(std::byte* array, std::size_t slot, const detail::AttachedRegion& r) {
  detail::TableEntry entry{};
  entry.base = r.base;
  entry.len = r.len;
  entry.id = r.id;
  entry.keyLen = r.key.size();
  if (!r.key.empty()) std::memcpy(entry.key, r.key.data(), r.key.size());  // self: no key
  publishBytes(array + slot * sizeof(detail::TableEntry), &entry,
               offsetof(detail::TableEntry, key) + ((r.key.size() + 7) & ~7ULL));
}

void writeCount(detail::DynamicState& d) {
  publishWord(tableOf(d) + offsetof(detail::TableHeader, count), d.slotBase.size(),
              std::memory_order_relaxed);
}

/// The region of `attached` (sorted by base) whose base is `base`, or end().
auto regionAt(std::vector<detail::AttachedRegion>& attached, std::uint64_t base) {
  auto it = std::lower_bound(attached.begin(), attached.end(), base,
                             [](const auto& r, std::uint64_t b) { return r.base < b; });
  return it != attached.end() && it->base == base ? it : attached.end();
}

}  // namespace

std::unique_ptr<Window> Window::createDynamic(Comm& comm, const Error* argError,
                                              const WindowHints& hints) {
  std::unique_ptr<Window> w(new Window(comm, Flavor::kDynamic, 1));
  w->hints_ = hints;
  int cls = kSuccess;
  std::string msg;
  if (argError != nullptr) {
    cls = argError->errorClass();
    msg = argError->what();
  } else {
    try {
      w->dyn_ = std::make_unique<detail::DynamicState>();
      w->dyn_->table = comm.context().transport().registerMemory(nullptr, detail::kTableBytes,
                                                                 transport::Placement::kAllocate,
                                                                 transport::Access::kRemoteAll);
      std::memset(w->dyn_->table->base(), 0, detail::kTableBytes);
      publishWord(tableOf(*w->dyn_) + offsetof(detail::TableHeader, capacity),
                  detail::kInitialAttach, std::memory_order_relaxed);
      w->exposed_ = w->dyn_->table.get();
    } catch (const Error& e) {
      cls = e.errorClass();
      msg = e.what();
    }
  }
  // The creation allgather carries each rank's table (as its "window") and the rest as usual.
  w->setUp(cls == kSuccess ? w->dyn_->table->base() : nullptr, detail::kTableBytes, cls, msg);
  w->base_ = nullptr;  // MPI_WIN_BASE is MPI_BOTTOM, MPI_WIN_SIZE 0
  w->size_ = 0;
  w->dyn_->peers.resize(w->targets_.size());
  for (std::size_t i = 0; i < w->targets_.size(); ++i) {
    Target& t = w->targets_[i];
    detail::PeerTable& pt = w->dyn_->peers[i];
    pt.tableBase = t.base;
    pt.packedKey = std::move(t.packedKey);
    // Targets are absolute addresses: offset 0 is address 0 and the window spans everything;
    // dynamicRegion() bounds each access by the attached regions instead.
    t.base = 0;
    t.size = ~std::uint64_t{0};
    t.dispUnit = 1;
    t.settle();
  }
  return w;
}

void Window::attach(void* base, std::int64_t size) {
  requireLive();
  if (flavor_ != Flavor::kDynamic) {
    throw Error(kErrRmaFlavor, "the window was not made by MPI_Win_create_dynamic (flavor " +
                                   std::to_string(static_cast<int>(flavor_)) + ")");
  }
  if (size < 0) throw Error(kErrSize, "size " + std::to_string(size) + " is negative");
  const auto lo = reinterpret_cast<std::uint64_t>(base);
  const auto len = static_cast<std::uint64_t>(size);
  if (base == nullptr && size > 0) {
    throw Error(kErrBase, "base is NULL but size is " + std::to_string(size));
  }
  auto& d = *dyn_;
  // The neighbours by address: the last region starting at or before lo, and the next one.
  auto next = std::upper_bound(d.attached.begin(), d.attached.end(), lo,
                               [](std::uint64_t b, const auto& r) { return b < r.base; });
  auto clash = [&](const detail::AttachedRegion& r) {
    const bool overlap = lo < r.base + r.len && r.base < lo + len;
    if (overlap || r.base == lo) {
      throw Error(kErrRmaAttach, "region " + range(lo, lo + len) + " overlaps region " +
                                     range(r.base, r.base + r.len) + " attached before");
    }
  };
  if (next != d.attached.begin()) clash(*std::prev(next));
  if (next != d.attached.end()) clash(*next);
  detail::AttachedRegion r{lo, len, d.nextId, nullptr, {}, 0};
  if (len > 0) {
    // Memory from MPI_Alloc_mem is registered already.
    const transport::MemoryRegion* mr = comm_.context().findMemory(base, len);
    if (mr == nullptr) {
      r.own = comm_.context().transport().registerMemory(base, len, transport::Placement::kRegister,
                                                         transport::Access::kRemoteAll);
      mr = r.own.get();
    }
    r.key = mr->packRkey();
    if (r.key.size() > detail::kAttachKeyMax) {
      throw Error(kErrRmaAttach, "the transport's key for region " + range(lo, lo + len) +
                                     " takes " + std::to_string(r.key.size()) +
                                     " bytes, more than an attach table entry holds (" +
                                     std::to_string(detail::kAttachKeyMax) + ")");
    }
  }
  if (d.slotBase.size() == d.capacity) growTable();
  ++d.nextId;
  r.slot = d.slotBase.size();
  beginWrite(d);
  writeEntry(entryArray(d), r.slot, r);
  d.slotBase.push_back(lo);
  writeCount(d);
  endWrite(d);
  {
    // The inbox service (am.cpp) reads the list from the progress thread.
    std::unique_lock<std::mutex> l(comm_.context().inboxes().lock(), std::defer_lock);
    if (amMode_) l.lock();
    d.attached.insert(next, std::move(r));
  }
}

void Window::growTable() {
  // A new array of twice the capacity, the entries copied, its address and key in the header.
  // The old array stays registered (an origin may be reading it) until the window is freed.
  auto& d = *dyn_;
  const std::uint64_t capacity = d.capacity * 2;
  auto grown = comm_.context().transport().registerMemory(
      nullptr, capacity * sizeof(detail::TableEntry), transport::Placement::kAllocate,
      transport::Access::kRemoteAll);
  const std::vector<std::byte> key = grown->packRkey();
  if (key.size() > detail::kAttachKeyMax) {
    throw Error(kErrRmaAttach, "the transport's key for the attach table takes " +
                                   std::to_string(key.size()) +
                                   " bytes, more than its header holds (" +
                                   std::to_string(detail::kAttachKeyMax) + ")");
  }
  std::memcpy(grown->base(), entryArray(d), d.slotBase.size() * sizeof(detail::TableEntry));
  std::byte* table = tableOf(d);
  beginWrite(d);
  publishWord(table + offsetof(detail::TableHeader, entries),
              reinterpret_cast<std::uint64_t>(grown->base()), std::memory_order_relaxed);
  publishWord(table + offsetof(detail::TableHeader, capacity), capacity, std::memory_order_relaxed);
  publishWord(table + offsetof(detail::TableHeader, generation), d.generation + 1,
              std::memory_order_relaxed);
  publishWord(table + offsetof(detail::TableHeader, keyLen), key.size(), std::memory_order_relaxed);
  publishBytes(table + offsetof(detail::TableHeader, key), key.data(), key.size());
  endWrite(d);
  if (d.grown) d.retired.push_back(std::move(d.grown));
  d.grown = std::move(grown);
  d.capacity = capacity;
  ++d.generation;
  SPDLOG_LOGGER_DEBUG(&log::core(), "dynamic window: attach table grown to {} entries", capacity);
}

void Window::detach(const void* base) {
  requireLive();
  if (flavor_ != Flavor::kDynamic) {
    throw Error(kErrRmaFlavor, "the window was not made by MPI_Win_create_dynamic (flavor " +
                                   std::to_string(static_cast<int>(flavor_)) + ")");
  }
  auto& d = *dyn_;
  const auto lo = reinterpret_cast<std::uint64_t>(base);
  auto it = std::find_if(d.attached.begin(), d.attached.end(),
                         [&](const auto& r) { return r.base == lo; });
  if (it == d.attached.end()) {
    throw Error(kErrRmaAttach, "no region is attached at " + hex(lo) + " (" +
                                   std::to_string(d.attached.size()) + " attached)");
  }
  // Unpublish first (the last entry moves into its slot), then drop the registration.
  const std::size_t slot = it->slot;
  const std::size_t last = d.slotBase.size() - 1;
  beginWrite(d);
  if (slot != last) {
    auto moved = regionAt(d.attached, d.slotBase[last]);
    writeEntry(entryArray(d), slot, *moved);
    moved->slot = slot;
    d.slotBase[slot] = d.slotBase[last];
  }
  d.slotBase.pop_back();
  writeCount(d);
  endWrite(d);
  auto gone = std::move(*it);
  {
    std::unique_lock<std::mutex> l(comm_.context().inboxes().lock(), std::defer_lock);
    if (amMode_) l.lock();
    d.attached.erase(it);
  }
}

bool Window::exposes(std::uint64_t off, std::uint64_t len) const {
  if (flavor_ != Flavor::kDynamic) return off <= size_ && len <= size_ - off;
  // The region holding off, then the adjacent ones while the bytes go on (an access may span
  // adjacent attached regions).
  const auto& a = dyn_->attached;
  auto it = std::upper_bound(a.begin(), a.end(), off,
                             [](std::uint64_t b, const auto& r) { return b < r.base; });
  if (it == a.begin()) return false;
  --it;
  if (it->len == 0 || off - it->base >= it->len) return len == 0 && off == it->base + it->len;
  std::uint64_t end = it->base + it->len;
  if (len > ~std::uint64_t{0} - off) return false;
  while (end < off + len) {
    if (++it == a.end() || it->base != end || it->len == 0) return false;
    end += it->len;
  }
  return true;
}

void Window::readTable(int target) {
  auto& d = *dyn_;
  detail::PeerTable& pt = d.peers[static_cast<std::size_t>(target)];
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  if (!pt.key) pt.key = ep.unpackRkey(pt.packedKey);
  auto read = [&](void* dst, std::uint64_t addr, std::size_t n, transport::RemoteKey& key) {
    transport::Iov iov{dst, n};
    if (ep.get({&iov, 1}, addr, key) == transport::Issue::kPending) ep.flush();
    detail::fullBarrier();
  };
  auto version = [&] {
    std::uint64_t v = 0;
    read(&v, pt.tableBase, sizeof v, *pt.key);
    return v;
  };
  for (unsigned attempt = 0;; ++attempt) {
    std::uint64_t h[detail::kHeaderPrefix / 8] = {};
    read(h, pt.tableBase, sizeof h, *pt.key);
    const std::uint64_t v = h[0];
    if ((v & 1) != 0) {  // the owner is writing it
      retryPause(attempt);
      continue;
    }
    if (v == pt.version) break;
    const std::uint64_t capacity = h[3];
    const std::uint64_t generation = h[4];
    if (generation != 0 && generation != pt.generation) {
      // The array moved (it grew): its key, checked unchanged before it is unpacked.
      std::vector<std::byte> key(std::min<std::uint64_t>(h[5], detail::kAttachKeyMax));
      if (!key.empty()) {
        read(key.data(), pt.tableBase + offsetof(detail::TableHeader, key), key.size(), *pt.key);
      }
      if (version() != v) {
        retryPause(attempt);
        continue;
      }
      pt.entriesKey = ep.unpackRkey(key);
      pt.generation = generation;
    }
    const std::size_t count = std::min(h[1], capacity);
    const std::uint64_t array = generation == 0 ? pt.tableBase + sizeof(detail::TableHeader) : h[2];
    transport::RemoteKey& arrayKey = generation == 0 ? *pt.key : *pt.entriesKey;
    d.scratch.resize(count * sizeof(detail::TableEntry));
    if (count > 0) read(d.scratch.data(), array, d.scratch.size(), arrayKey);
    if (version() != v) {
      retryPause(attempt);
      continue;
    }
    // Regions still attached keep the keys already unpacked for them (by id).
    std::unordered_map<std::uint64_t, std::size_t> known;
    for (std::size_t i = 0; i < pt.regions.size(); ++i) known.emplace(pt.regions[i].id, i);
    std::vector<detail::CachedRegion> regions;
    regions.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      detail::TableEntry e{};
      std::memcpy(&e, d.scratch.data() + i * sizeof e, offsetof(detail::TableEntry, key));
      detail::CachedRegion c{e.base, e.len, e.id, nullptr};
      auto old = known.find(e.id);
      if (old != known.end() && pt.regions[old->second].key) {
        c.key = std::move(pt.regions[old->second].key);
      } else if (e.len > 0) {
        const std::size_t n = std::min<std::uint64_t>(e.keyLen, sizeof e.key);
        c.key = ep.unpackRkey(std::span<const std::byte>(
            d.scratch.data() + i * sizeof e + offsetof(detail::TableEntry, key), n));
      }
      regions.push_back(std::move(c));
    }
    std::sort(regions.begin(), regions.end(),
              [](const auto& a, const auto& b) { return a.base < b.base; });
    pt.regions = std::move(regions);
    pt.version = v;
    SPDLOG_LOGGER_DEBUG(&log::core(), "dynamic window: rank {} has {} regions (version {})", target,
                        pt.regions.size(), pt.version);
    break;
  }
  pt.epoch = epochs_;
}

void Window::dynamicRegion(const char* what, int target, std::uint64_t lo, std::uint64_t hi) {
  detail::PeerTable& pt = dyn_->peers[static_cast<std::size_t>(target)];
  // The region holding lo (the last starting at or before it), then, while the access goes
  // on, each next one if it starts where the previous ends.
  auto find = [&]() -> const detail::CachedRegion* {
    dynSpan_.clear();
    const auto& rs = pt.regions;
    auto it = std::upper_bound(rs.begin(), rs.end(), lo,
                               [](std::uint64_t b, const auto& r) { return b < r.base; });
    if (it == rs.begin()) return nullptr;
    const auto first = --it;
    if (first->len == 0 || lo - first->base >= first->len) return nullptr;
    std::uint64_t end = first->base + first->len;
    while (end < hi) {
      if (++it == rs.end() || it->base != end || it->len == 0) return nullptr;
      end += it->len;
    }
    if (it != first) {
      for (auto r = first;; ++r) {
        dynSpan_.push_back({std::max(r->base, lo), std::min(r->base + r->len, hi), r->key.get()});
        if (r == it) break;
      }
    }
    return &*first;
  };
  bool fresh = false;
  if (pt.epoch != epochs_) {  // once per epoch: has the table changed?
    readTable(target);
    fresh = true;
  }
  const detail::CachedRegion* r = find();
  if (r == nullptr && !fresh) {
    readTable(target);
    r = find();
  }
  if (r == nullptr) {
    // The regions around the address, for the message.
    const auto& rs = pt.regions;
    auto near = std::upper_bound(rs.begin(), rs.end(), lo,
                                 [](std::uint64_t b, const auto& x) { return b < x.base; });
    auto from = near - std::min<std::ptrdiff_t>(2, near - rs.begin());
    std::string regions;
    for (auto i = from; i != rs.end() && i - from < 4; ++i) {
      regions += (i == from ? "" : ", ") + range(i->base, i->base + i->len);
    }
    if (from != rs.begin() || rs.end() - from > 4) regions = "... " + regions + " ...";
    throw Error(kErrRmaRange, std::string(what) + " of bytes " + range(lo, hi) + " at rank " +
                                  std::to_string(target) +
                                  ": not inside a region attached there, nor adjacent ones (" +
                                  std::to_string(rs.size()) + " attached" +
                                  (regions.empty() ? "" : ", around it: " + regions) + ")");
  }
  targets_[static_cast<std::size_t>(target)].key = r->key.get();
}

transport::RemoteKey* Window::keyFor(transport::RemoteKey* key, std::uint64_t addr,
                                     std::uint64_t n) const {
  if (dynSpan_.empty()) return key;
  for (const SpanPart& part : dynSpan_) {
    if (part.lo <= addr && addr < part.hi) {
      if (n > part.hi - addr) {
        throw Error(kErrRmaRange, "an element of bytes " + range(addr, addr + n) +
                                      " crosses from one attached region into the next (at " +
                                      hex(part.hi) + "): an atomic needs it in one region");
      }
      return part.key;
    }
  }
  return key;
}

}  // namespace onesided
