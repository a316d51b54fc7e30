// SPDX-License-Identifier: BSD-3-Clause
// Dynamic windows: MPI_Win_create_dynamic, MPI_Win_attach, MPI_Win_detach.
//
// Each rank exposes an attach table (dynamic.hpp): a registered region of fixed size holding
// its attached regions (base, length, packed remote key), published with a seqlock. Attach and
// detach are local: the owner rewrites its table. An origin keeps a copy of each target's table
// with the keys unpacked, and checks every access against it before anything reaches the
// network:
//   - an access inside a cached region uses that region's key (no communication);
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
  for (const auto& r : d.attached) {
    const bool overlap = lo < r.base + r.len && r.base < lo + len;
    if (overlap || r.base == lo) {
      throw Error(kErrRmaAttach, "region " + range(lo, lo + len) + " overlaps region " +
                                     range(r.base, r.base + r.len) + " attached before");
    }
  }
  if (d.attached.size() == detail::kMaxAttach) {
    throw Error(kErrRmaAttach, "this rank has " + std::to_string(detail::kMaxAttach) +
                                   " regions attached already, the most a window takes");
  }
  detail::AttachedRegion r{lo, len, d.nextId, nullptr, {}};
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
  ++d.nextId;
  {
    // The inbox service (am.cpp) reads the list from the progress thread.
    std::unique_lock<std::mutex> l(comm_.context().inboxes().lock(), std::defer_lock);
    if (amMode_) l.lock();
    d.attached.push_back(std::move(r));
    std::sort(d.attached.begin(), d.attached.end(),
              [](const auto& a, const auto& b) { return a.base < b.base; });
  }
  publishTable();
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
  // Unpublish first, then drop the registration.
  auto gone = std::move(*it);
  {
    std::unique_lock<std::mutex> l(comm_.context().inboxes().lock(), std::defer_lock);
    if (amMode_) l.lock();
    d.attached.erase(it);
  }
  publishTable();
}

bool Window::exposes(std::uint64_t off, std::uint64_t len) const {
  if (flavor_ != Flavor::kDynamic) return off <= size_ && len <= size_ - off;
  for (const auto& r : dyn_->attached) {
    if (r.base <= off && len <= r.len && off - r.base <= r.len - len) return true;
  }
  return false;
}

void Window::publishTable() {
  auto& d = *dyn_;
  auto* table = static_cast<std::byte*>(d.table->base());
  const std::uint64_t version =
      std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(table))
          .load(std::memory_order_relaxed);
  publishWord(table, version + 1, std::memory_order_relaxed);  // odd: being written
  detail::fullBarrier();
  std::byte* e = table + sizeof(detail::TableHeader);
  for (const auto& r : d.attached) {
    detail::TableEntry entry{};
    entry.base = r.base;
    entry.len = r.len;
    entry.id = r.id;
    entry.keyLen = r.key.size();
    if (!r.key.empty()) std::memcpy(entry.key, r.key.data(), r.key.size());  // self: no key
    publishBytes(e, &entry, offsetof(detail::TableEntry, key) + ((r.key.size() + 7) & ~7ULL));
    e += sizeof(detail::TableEntry);
  }
  publishWord(table + 8, d.attached.size(), std::memory_order_relaxed);
  detail::fullBarrier();
  publishWord(table, version + 2, std::memory_order_release);
}

void Window::readTable(int target) {
  auto& d = *dyn_;
  detail::PeerTable& pt = d.peers[static_cast<std::size_t>(target)];
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  if (!pt.key) pt.key = ep.unpackRkey(pt.packedKey);
  auto read = [&](void* dst, std::uint64_t off, std::size_t n) {
    transport::Iov iov{dst, n};
    if (ep.get({&iov, 1}, pt.tableBase + off, *pt.key) == transport::Issue::kPending) ep.flush();
    detail::fullBarrier();
  };
  for (unsigned attempt = 0;; ++attempt) {
    detail::TableHeader h{};
    read(&h, 0, sizeof h);
    if ((h.version & 1) != 0) {  // the owner is writing it
      retryPause(attempt);
      continue;
    }
    if (h.version == pt.version) break;
    const std::size_t count = std::min<std::uint64_t>(h.count, detail::kMaxAttach);
    d.scratch.resize(count * sizeof(detail::TableEntry));
    if (count > 0) read(d.scratch.data(), sizeof h, d.scratch.size());
    std::uint64_t again = 0;
    read(&again, 0, sizeof again);
    if (again != h.version) {
      retryPause(attempt);
      continue;
    }
    std::vector<detail::CachedRegion> regions;
    for (std::size_t i = 0; i < count; ++i) {
      detail::TableEntry e{};
      std::memcpy(&e, d.scratch.data() + i * sizeof e, sizeof e);
      detail::CachedRegion c{e.base, e.len, e.id, nullptr};
      // A region still attached keeps the key already unpacked for it.
      auto old = std::find_if(pt.regions.begin(), pt.regions.end(),
                              [&](const auto& r) { return r.id == e.id; });
      if (old != pt.regions.end()) {
        c.key = std::move(old->key);
      } else if (e.len > 0) {
        c.key = ep.unpackRkey(
            std::span<const std::byte>(e.key, std::min<std::uint64_t>(e.keyLen, sizeof e.key)));
      }
      regions.push_back(std::move(c));
    }
    pt.regions = std::move(regions);
    pt.version = h.version;
    SPDLOG_LOGGER_DEBUG(&log::core(), "dynamic window: rank {} has {} regions (version {})", target,
                        pt.regions.size(), pt.version);
    break;
  }
  pt.epoch = epochs_;
}

void Window::dynamicRegion(const char* what, int target, std::uint64_t lo, std::uint64_t hi) {
  detail::PeerTable& pt = dyn_->peers[static_cast<std::size_t>(target)];
  auto find = [&]() -> const detail::CachedRegion* {
    for (const auto& r : pt.regions) {
      if (r.len > 0 && r.base <= lo && hi <= r.base + r.len) return &r;
    }
    return nullptr;
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
    std::string regions;
    for (std::size_t i = 0; i < pt.regions.size() && i < 4; ++i) {
      regions +=
          (i == 0 ? "" : ", ") + range(pt.regions[i].base, pt.regions[i].base + pt.regions[i].len);
    }
    if (pt.regions.size() > 4) regions += ", ...";
    throw Error(kErrRmaRange, std::string(what) + " of bytes " + range(lo, hi) + " at rank " +
                                  std::to_string(target) +
                                  ": not inside a region attached there (" +
                                  std::to_string(pt.regions.size()) + " attached" +
                                  (regions.empty() ? "" : ": " + regions) + ")");
  }
  targets_[static_cast<std::size_t>(target)].key = r->key.get();
}

}  // namespace onesided
