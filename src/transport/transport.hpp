// SPDX-License-Identifier: BSD-3-Clause
// The byte-oriented transport interface (DESIGN.md). The core flattens datatypes into Iov lists
// before anything reaches a transport, so transports never see MPI types.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace onesided::transport {

/// What remote peers may do to a registered region. Local-only buffers need none.
enum class Access : unsigned {
  kLocal = 0,
  kRemoteRead = 1,
  kRemoteWrite = 2,
  kRemoteAtomic = 4,
  kRemoteAll = 7,
};

/// Whether the transport allocates the memory (and may place it in shared memory, so on-node
/// peers can load / store it directly) or registers memory the caller owns. kExpose registers
/// memory the caller owns for a short time (one collective's buffer): nothing about its pages
/// changes (no sharing), so peers reach it by put / get only (cross-memory attach on a node).
enum class Placement { kAllocate, kRegister, kExpose };

enum class AtomicOp { kFetchAdd, kCompareSwap, kSwap };

/// `op` as a CPU atomic on the T at `where` (the self transport's atomics, and windows whose
/// atomics are all CPU atomics); returns the old value.
template <class T>
T cpuAtomic(AtomicOp op, void* where, T operand, T compare) {
  std::atomic_ref<T> a(*static_cast<T*>(where));
  switch (op) {
    case AtomicOp::kFetchAdd:
      return a.fetch_add(operand);
    case AtomicOp::kSwap:
      return a.exchange(operand);
    case AtomicOp::kCompareSwap:
      a.compare_exchange_strong(compare, operand);
      return compare;
  }
  return T{};
}

/// The time-based half of the back-off of every wait that may last long (Context::backoff,
/// the UCX transport's request waits), in one place so that they agree: once a wait has found
/// nothing to do for kSleepAfterNs, it sleeps 1/32 of the time it has been idle, at most
/// `maxSleepNs`. A late wake-up then costs a long wait at most 3 %, and a wait of seconds wakes
/// a thousand times a second, not tens of thousands. `idleSince` is when the wait began to idle
/// (steady clock, ns; 0: not yet, and set here); the caller clears it whenever it finds work.
/// Returns how long to sleep now (ns): 0 while the wait has idled less than kSleepAfterNs.
inline constexpr std::int64_t kSleepAfterNs = 2'000'000;
/// The steady clock in ns.
inline std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
/// A number new with each region a peer may keep a mapping of (a channel's scratch, a window's
/// control region), written into it and sent with its description: a kept mapping that shows
/// it maps that region, not one freed since whose successor packs to the same key. A region is
/// reused microseconds apart at the earliest, so the clock's nanoseconds differ; odd, never 0.
inline std::uint64_t regionNonce(const void* region) {
  return (static_cast<std::uint64_t>(nowNs()) ^ reinterpret_cast<std::uintptr_t>(region)) | 1;
}
inline std::int64_t idleSleepNs(std::int64_t& idleSince, std::int64_t maxSleepNs) {
  const std::int64_t now = nowNs();
  if (idleSince == 0) idleSince = now;
  const std::int64_t waited = now - idleSince;
  return waited < kSleepAfterNs ? 0 : std::min(waited / 32, maxSleepNs);
}

/// Whether an operation is complete when the call returns (UCS_OK) or after flush()
/// (UCS_INPROGRESS). Back-pressure is handled inside the transport.
enum class Issue { kDone, kPending };

/// One contiguous piece of local memory.
struct Iov {
  void* addr;
  std::size_t len;
};

/// Local registration. Owns the transport's registration (and, for kAllocate, the memory);
/// packRkey() gives the bytes a peer needs to reach it.
class MemoryRegion {
 public:
  virtual ~MemoryRegion() = default;
  [[nodiscard]] virtual void* base() const = 0;
  [[nodiscard]] virtual std::size_t length() const = 0;
  [[nodiscard]] virtual std::vector<std::byte> packRkey() const = 0;
};

/// The remote addresses [lo, hi) that this process can load from and store to directly (shared
/// memory, or the same process): remote address a is local address a + delta. Empty (lo == hi)
/// when only put / get reach the peer's memory.
struct DirectSpan {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::intptr_t delta = 0;
};

/// A peer's region as seen from here. Lives on (and must die before) its endpoint.
class RemoteKey {
 public:
  virtual ~RemoteKey() = default;
  /// Which part of the peer's memory is reachable by loads and stores.
  [[nodiscard]] virtual DirectSpan direct() const = 0;
  /// A local address through which the peer's memory at `raddr` can be loaded and stored
  /// directly, or nullptr when only put / get reach it.
  [[nodiscard]] void* directPointer(std::uint64_t raddr) const {
    const DirectSpan d = direct();
    if (raddr < d.lo || raddr >= d.hi) return nullptr;
    return reinterpret_cast<void*>(raddr + static_cast<std::uint64_t>(d.delta));  // NOLINT
  }
};

/// What an Endpoint::postAdd() waits for at the target.
enum class AddAfter {
  kWrites,     ///< the puts issued before it (gets and atomics before it may still run)
  kEverything  ///< every request issued before it, gets and atomics too (a lock's release)
};

/// One per peer; created lazily by the Transport. Operations are nonblocking: they are complete
/// at the origin and at the target after flush(). Not thread-safe (one rank, one thread).
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual std::unique_ptr<RemoteKey> unpackRkey(std::span<const std::byte> packed) = 0;
  /// Writes the concatenation of `src` to [raddr, raddr + total). Unless it returns kDone, the
  /// source must stay untouched until flush() returns.
  virtual Issue put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& key) = 0;
  /// Reads [raddr, raddr + total) into `dst`; valid now (kDone) or after flush().
  virtual Issue get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& key) = 0;
  /// Scatter / gather: local[i] to (putv) or from (getv) [raddr[i], raddr[i] + local[i].len),
  /// one operation per pair, for the pieces of a transfer with derived datatypes. Transports
  /// that can move many pieces in one call override it (UCX: one process_vm_writev for up to
  /// IOV_MAX pieces); the default issues them one by one.
  virtual Issue putv(std::span<const Iov> local, std::span<const std::uint64_t> raddr,
                     const RemoteKey& key) {
    Issue issue = Issue::kDone;
    for (std::size_t i = 0; i < local.size(); ++i) {
      if (put(local.subspan(i, 1), raddr[i], key) == Issue::kPending) issue = Issue::kPending;
    }
    return issue;
  }
  virtual Issue getv(std::span<const Iov> local, std::span<const std::uint64_t> raddr,
                     const RemoteKey& key) {
    Issue issue = Issue::kDone;
    for (std::size_t i = 0; i < local.size(); ++i) {
      if (get(local.subspan(i, 1), raddr[i], key) == Issue::kPending) issue = Issue::kPending;
    }
    return issue;
  }
  /// 4- or 8-byte atomic at raddr; the old value is stored to `result` (may be null for
  /// kFetchAdd when not needed). Blocking: complete when it returns.
  virtual void atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand, std::uint64_t compare,
                      void* result, std::uint64_t raddr, const RemoteKey& key) = 0;
  /// Completes every operation issued on this endpoint, at origin and target.
  virtual void flush() = 0;
  /// Orders: every put issued on this endpoint before it is in place at the target before any
  /// put issued after it, so a word written after the fence can announce the data written
  /// before it. Does not wait where the transport orders puts by itself; the default completes
  /// them (flush).
  virtual void fence() { flush(); }
  /// Adds `value` to the 8-byte aligned word at raddr once every put issued on this endpoint
  /// before it is in place at the target (kEverything: once every request before it has run
  /// there), without waiting (complete after flush()): a word that announces data written
  /// before it, at no round trip where the transport orders a remote atomic after earlier
  /// writes (InfiniBand RC: a responder executes an atomic after the writes before it on the
  /// QP, whose data it must then see; a fenced one also after earlier reads and atomics have
  /// completed). Returns false, doing nothing, where the transport does not (the caller then
  /// completes and adds, or fences and puts).
  virtual bool postAdd(std::uint64_t /*value*/, std::uint64_t /*raddr*/, const RemoteKey& /*key*/,
                       AddAfter /*after*/) {
    return false;
  }
  /// Starts an 8-byte fetch-add (kFetchAdd) or compare-and-swap (kCompareSwap: `compare`
  /// replaced by `operand`) on the 8-byte aligned word at raddr, in order after the requests
  /// before it as atomic() is, without waiting: the old value is in *result after flush(), so
  /// atomics on several targets take one round trip together. Returns false, doing nothing,
  /// where the transport cannot (the caller uses atomic()).
  virtual bool postFetch(AtomicOp /*op*/, std::uint64_t /*operand*/, std::uint64_t /*compare*/,
                         std::uint64_t* /*result*/, std::uint64_t /*raddr*/,
                         const RemoteKey& /*key*/) {
    return false;
  }
  /// Starts whatever this endpoint has staged (verbs batches work requests per doorbell), so
  /// it reaches the peer without a flush; does not wait. A no-op where operations start at once.
  virtual void post() {}
};

/// Factory and progress engine; one per Context (gloo's Device).
class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// This rank's address, exchanged by the bootstrap allgather at start-up.
  [[nodiscard]] virtual std::vector<std::byte> address() const = 0;
  /// Creates the endpoint to `peer` from its address bytes (the Context calls it lazily).
  virtual std::unique_ptr<Endpoint> connect(int peer, std::span<const std::byte> peerAddress) = 0;
  /// Registers `len` bytes at `base` (kRegister), or allocates `len` bytes (kAllocate; base
  /// ignored). len may be 0.
  virtual std::unique_ptr<MemoryRegion> registerMemory(void* base, std::size_t len,
                                                       Placement placement, Access access) = 0;
  /// Completes every operation issued on any endpoint.
  virtual void flushAll() = 0;
  /// Drives communication; returns the number of events handled (0 when idle).
  virtual unsigned progress() = 0;
};

struct UcxOptions {
  bool threadSerialized = false;  ///< UCS_THREAD_MODE_SERIALIZED instead of SINGLE
  /// A thread drives the UCX worker while the rank computes, so operations UCX runs in software
  /// at the target (atomics without device support, any RMA over tcp) complete without the
  /// target calling into the runtime. It sleeps in the worker's wakeup fd: no cost when idle.
  bool progressThread = false;
  /// Options::singleThreaded: user memory's partial end pages may be shared (shared_pages.hpp).
  bool sharePartialPages = false;
};

/// Transports built into this library, for ONESIDED_TRANSPORT and tests.
std::vector<std::string> availableTransports();
/// The in-process transport: every rank lives in this address space (threads as ranks, or a
/// singleton). Peers' memory is reached by memcpy. `deferred` ("self_deferred"): no load / store
/// path, and operations complete only at post() / flush(), as on an RDMA NIC (for tests of the
/// transport path with threads as ranks).
std::unique_ptr<Transport> makeSelfTransport(bool deferred = false);
/// UCX (ucp RMA + AMO); throws onesided::Error when UCX is not built in or fails to start.
std::unique_ptr<Transport> makeUcxTransport(const UcxOptions& options);
/// libibverbs + librdmacm; throws onesided::Error when not built in or no port is usable.
std::unique_ptr<Transport> makeVerbsTransport();
/// Whether this build has verbs and some RDMA port on this machine is active (auto selection,
/// and tests that skip the verbs transport where it cannot run).
bool verbsPortActive();

}  // namespace onesided::transport
