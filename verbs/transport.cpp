// SPDX-License-Identifier: BSD-3-Clause
// The verbs transport: RC queue pairs over libibverbs, connected with librdmacm.
//
// Connections are made lazily, on the first operation to a peer: start-up opens one device,
// one PD, one CQ and one rdma_cm listener, whatever the job size. The peer's side of a
// connection is accepted by a small thread that sleeps in poll() on the listener's event
// channel, so a peer that is computing (not inside any MPI call) still gets connected to, and
// one-sided operations never wait for the target's CPU. rdma_cm rather than exchanging QP
// attributes over the bootstrap: the bootstrap's allgather is collective, so it cannot set up
// one pair on demand, and rdma_cm also resolves the route, GID and path MTU for RoCE and IB.
// Each rank sends only on the connections it made (an accepted QP is never posted to), so two
// ranks that connect to each other at the same moment simply hold two connections.
//
// Posting follows mscclpp's stage / post split: put() and get() stage work requests per
// endpoint; a batch is posted with one ibv_post_send (one doorbell) when it is full, when it
// takes a request of kPostAtOnce bytes or more (the device starts on that while the next ones
// are staged), or at flush(), and only the last request of a batch is signalled. Send-queue slots
// and CQ entries are counted, so neither can overflow at any message rate.
//
// Local buffers: a put of at most max_inline_data bytes is inlined; a buffer inside memory this
// transport registered (windows, MPI_Alloc_mem) uses that registration; a buffer of at least
// kZeroCopyMin bytes elsewhere is registered through the registration cache
// (src/transport/regcache.hpp: bounded, and emptied of memory the program unmaps, so a freed and
// reused address never sends stale pages); anything else, or everything when the cache is off,
// goes through registered bounce buffers, chunked (put: copied in at staging; get: copied out
// when its completion arrives). Below kZeroCopyMin a copy costs less than even a cache lookup's
// share of the request, and a first-time registration (a system call and page pinning) would
// cost many times the transfer.
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "log.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"
#include "transport/regcache.hpp"
#include "transport/transport.hpp"

namespace onesided::transport {
namespace {

constexpr int kConnectTimeoutMs = 30000;
constexpr std::uint32_t kSendDepth = 128;       // send-queue slots per connection
constexpr std::uint32_t kBatch = 32;            // work requests per doorbell (last one signalled)
constexpr std::size_t kPostAtOnce = 64 << 10;   // a request this large posts its batch at once
constexpr std::size_t kBounceSize = 64 << 10;   // one bounce buffer
constexpr std::size_t kBounceCount = 64;        // bounce buffers per transport
constexpr std::size_t kZeroCopyMin = 32 << 10;  // unregistered buffers from here on: registered

std::string errnoText(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

[[noreturn]] void fail(int cls, const std::string& what) { throw Error(cls, "verbs: " + what); }

/// The device and port this rank uses, and the address its rdma_cm listener binds.
struct Port {
  ibv_context* ctx = nullptr;  // owned by rdma_cm's device list (rdma_get_devices)
  std::string device;
  std::uint8_t num = 0;
  ibv_port_attr attr{};
  ibv_device_attr dev{};
  int gidIndex = -1;
  sockaddr_storage ip{};  // the port's IP address (from its RoCE v2 GID, or the netdev)
};

bool ipv4Mapped(const ibv_gid& g) {
  static const std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, sizeof prefix) == 0;
}

/// RoCE: the RoCE v2 GID with an IPv4 address, else RoCE v2 with IPv6, else index 0;
/// ONESIDED_GID_INDEX overrides. InfiniBand: GIDs are not needed for routing (LIDs are), index 0.
void chooseGid(Port& p) {
  if (const char* env = settings::raw(settings::Id::kGidIndex); env != nullptr && *env != '\0') {
    p.gidIndex = std::atoi(env);
  }
  int v6 = -1;
  for (int i = 0; i < p.attr.gid_tbl_len && p.gidIndex < 0; ++i) {
    ibv_gid_entry e{};
    if (ibv_query_gid_ex(p.ctx, p.num, static_cast<std::uint32_t>(i), &e, 0) != 0) continue;
    if (e.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    if (ipv4Mapped(e.gid)) {
      p.gidIndex = i;
    } else if (v6 < 0) {
      v6 = i;
    }
  }
  if (p.gidIndex < 0) p.gidIndex = v6 >= 0 ? v6 : 0;
  ibv_gid gid{};
  if (ibv_query_gid(p.ctx, p.num, p.gidIndex, &gid) != 0) {
    fail(kErrOther, "ibv_query_gid(" + p.device + ", index " + std::to_string(p.gidIndex) +
                        "): " + std::strerror(errno));
  }
  if (ipv4Mapped(gid)) {
    auto* in = reinterpret_cast<sockaddr_in*>(&p.ip);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, gid.raw + 12, 4);
  } else if (gid.global.subnet_prefix != 0 || gid.global.interface_id != 0) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&p.ip);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, gid.raw, 16);
  }
  if (p.ip.ss_family == 0) {
    fail(kErrOther, p.device + " port " + std::to_string(p.num) +
                        " has no IP address in its GID table: rdma_cm needs one (RoCE: an address "
                        "on the netdev; InfiniBand: an IPoIB address)");
  }
}

/// ONESIDED_DEVICE=name[:port], else the first active port of any device rdma_cm knows.
Port openPort() {
  std::string wantDev;
  int wantPort = 0;
  if (const char* env = settings::raw(settings::Id::kDevice); env != nullptr && *env != '\0') {
    wantDev = env;
    if (auto colon = wantDev.find(':'); colon != std::string::npos) {
      wantPort = std::atoi(wantDev.c_str() + colon + 1);
      wantDev.resize(colon);
    }
  }
  int n = 0;
  ibv_context** list = rdma_get_devices(&n);
  if (list == nullptr || n == 0) {
    if (list != nullptr) rdma_free_devices(list);
    fail(kErrOther, "no RDMA device (rdma_get_devices found none)");
  }
  Port found;
  for (int d = 0; d < n && found.ctx == nullptr; ++d) {
    const char* name = ibv_get_device_name(list[d]->device);
    if (!wantDev.empty() && wantDev != name) continue;
    ibv_device_attr dev{};
    if (ibv_query_device(list[d], &dev) != 0) continue;
    for (int port = 1; port <= dev.phys_port_cnt; ++port) {
      if (wantPort != 0 && port != wantPort) continue;
      ibv_port_attr attr{};
      if (ibv_query_port(list[d], static_cast<std::uint8_t>(port), &attr) != 0) continue;
      if (attr.state != IBV_PORT_ACTIVE) continue;
      found.ctx = list[d];
      found.device = name;
      found.num = static_cast<std::uint8_t>(port);
      found.attr = attr;
      found.dev = dev;
      break;
    }
  }
  rdma_free_devices(list);  // the contexts stay open for the life of the process
  if (found.ctx == nullptr) {
    fail(kErrOther, wantDev.empty() ? std::string("no active RDMA port")
                                    : "ONESIDED_DEVICE=" + wantDev +
                                          (wantPort != 0 ? ":" + std::to_string(wantPort) : "") +
                                          ": no such active port");
  }
  chooseGid(found);
  return found;
}

/// What peers need to connect to us: the listener's IP address and port.
struct WireAddress {
  sockaddr_storage addr;
};

/// A packed key: base address, length, rkey (what VerbsEndpoint::unpackRkey reads).
std::vector<std::byte> packKey(const void* base, std::uint64_t len, std::uint32_t rkey) {
  std::vector<std::byte> out(sizeof(std::uint64_t) * 2 + sizeof(std::uint32_t));
  const auto b = reinterpret_cast<std::uint64_t>(base);
  std::memcpy(out.data(), &b, 8);
  std::memcpy(out.data() + 8, &len, 8);
  std::memcpy(out.data() + 16, &rkey, 4);
  return out;
}

/// A region registered with exactly the access it needs; owns allocated memory.
class VerbsRegion final : public MemoryRegion {
 public:
  VerbsRegion(ibv_pd* pd, void* base, std::size_t len, Placement placement, Access access,
              std::function<void(VerbsRegion*, bool)> track)
      : len_(len), track_(std::move(track)) {
    if (placement == Placement::kAllocate) {
      void* p = nullptr;
      // Page-aligned, padded to 8 bytes: 8-byte atomics reach every aligned word inside.
      if (posix_memalign(&p, 4096, std::max<std::size_t>(8, (len + 7) & ~std::size_t{7})) != 0) {
        throw std::bad_alloc();
      }
      owned_ = p;
      base = p;
    }
    base_ = base;
    if (len > 0) {
      const auto a = static_cast<unsigned>(access);
      // Exposed for remote reads only (a collective's send buffer, which may be read-only
      // memory): no local write access, which ibv_reg_mr refuses on read-only pages.
      int flags = placement == Placement::kExpose && a == static_cast<unsigned>(Access::kRemoteRead)
                      ? 0
                      : IBV_ACCESS_LOCAL_WRITE;
      if ((a & static_cast<unsigned>(Access::kRemoteRead)) != 0) flags |= IBV_ACCESS_REMOTE_READ;
      if ((a & static_cast<unsigned>(Access::kRemoteWrite)) != 0) flags |= IBV_ACCESS_REMOTE_WRITE;
      if ((a & static_cast<unsigned>(Access::kRemoteAtomic)) != 0) {
        flags |= IBV_ACCESS_REMOTE_ATOMIC;
      }
      mr_ = ibv_reg_mr(pd, base_, len_, flags);
      if (mr_ == nullptr) {
        const int e = errno;
        std::free(owned_);  // NOLINT(cppcoreguidelines-no-malloc)
        fail(e == ENOMEM ? kErrNoMem : kErrOther,
             "ibv_reg_mr of " + std::to_string(len) + " bytes: " + std::strerror(e));
      }
      track_(this, true);
    }
  }
  ~VerbsRegion() override {
    if (mr_ != nullptr) {
      track_(this, false);
      if (ibv_dereg_mr(mr_) != 0) log::verbs().warn("ibv_dereg_mr: {}", std::strerror(errno));
    }
    std::free(owned_);  // NOLINT(cppcoreguidelines-no-malloc)
  }
  VerbsRegion(const VerbsRegion&) = delete;
  VerbsRegion& operator=(const VerbsRegion&) = delete;
  [[nodiscard]] void* base() const override { return base_; }
  [[nodiscard]] std::size_t length() const override { return len_; }
  [[nodiscard]] std::vector<std::byte> packRkey() const override {
    return packKey(base_, len_, mr_ != nullptr ? mr_->rkey : 0);
  }
  [[nodiscard]] std::uint32_t lkey() const { return mr_->lkey; }

 private:
  void* base_ = nullptr;
  void* owned_ = nullptr;
  std::size_t len_;
  ibv_mr* mr_ = nullptr;
  std::function<void(VerbsRegion*, bool)> track_;
};

/// A buffer exposed for remote reads through a registration of the cache (a collective's send
/// buffer): holds the entry, so it stays registered until this goes.
class CachedRegion final : public MemoryRegion {
 public:
  CachedRegion(RegCache& cache, RegCache::Entry* e, void* base, std::size_t len)
      : cache_(cache), entry_(e), base_(base), len_(len) {}
  ~CachedRegion() override { cache_.release(entry_); }
  CachedRegion(const CachedRegion&) = delete;
  CachedRegion& operator=(const CachedRegion&) = delete;
  [[nodiscard]] void* base() const override { return base_; }
  [[nodiscard]] std::size_t length() const override { return len_; }
  [[nodiscard]] std::vector<std::byte> packRkey() const override {
    return packKey(base_, len_, static_cast<ibv_mr*>(entry_->reg.handle)->rkey);
  }

 private:
  RegCache& cache_;
  RegCache::Entry* entry_;
  void* base_;
  std::size_t len_;
};

class VerbsKey final : public RemoteKey {
 public:
  VerbsKey(std::uint64_t base, std::uint64_t len, std::uint32_t rkey)
      : base_(base), len_(len), rkey_(rkey) {}
  /// Everything goes through the NIC, also to ranks in this process: the transport is what
  /// the tests exercise, and loopback through the HCA is what a real job does across nodes.
  [[nodiscard]] DirectSpan direct() const override { return {}; }
  [[nodiscard]] std::uint32_t rkey() const { return rkey_; }
  [[nodiscard]] std::uint64_t base() const { return base_; }
  [[nodiscard]] std::uint64_t len() const { return len_; }

 private:
  std::uint64_t base_;
  std::uint64_t len_;
  std::uint32_t rkey_;
};

class VerbsTransport;

/// What one staged request holds until it completes: a bounce buffer (copied out, for a get,
/// when its completion arrives) or a registration-cache entry.
struct Bounce {
  std::byte* buf = nullptr;
  void* copyTo = nullptr;  // get: where the data goes on completion
  std::size_t len = 0;
  RegCache::Entry* reg = nullptr;
  [[nodiscard]] bool holds() const { return buf != nullptr || reg != nullptr; }
};

class VerbsEndpoint final : public Endpoint {
 public:
  VerbsEndpoint(VerbsTransport& t, int peer, const WireAddress& addr);
  ~VerbsEndpoint() override;
  VerbsEndpoint(const VerbsEndpoint&) = delete;
  VerbsEndpoint& operator=(const VerbsEndpoint&) = delete;

  std::unique_ptr<RemoteKey> unpackRkey(std::span<const std::byte> packed) override {
    if (packed.empty()) return std::make_unique<VerbsKey>(0, 0, 0);
    if (packed.size() < 20) fail(kErrIntern, "truncated remote key");
    std::uint64_t b = 0;
    std::uint64_t l = 0;
    std::uint32_t k = 0;
    std::memcpy(&b, packed.data(), 8);
    std::memcpy(&l, packed.data() + 8, 8);
    std::memcpy(&k, packed.data() + 16, 4);
    return std::make_unique<VerbsKey>(b, l, k);
  }
  Issue put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& key) override;
  Issue get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& key) override;
  void atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand, std::uint64_t compare,
              void* result, std::uint64_t raddr, const RemoteKey& key) override;
  bool postFetch(AtomicOp op, std::uint64_t operand, std::uint64_t compare, std::uint64_t* result,
                 std::uint64_t raddr, const RemoteKey& key) override;
  void flush() override;
  void post() override;
  bool postAdd(std::uint64_t value, std::uint64_t raddr, const RemoteKey& key,
               AddAfter after) override;

  /// A completion for this endpoint: `seq` is the sequence number of the signalled request.
  void completed(std::uint64_t seq, ibv_wc_status status, ibv_wr_opcode opcode);
  [[nodiscard]] int peer() const { return peer_; }

 private:
  friend class VerbsTransport;
  void connect(const WireAddress& addr);
  void checkBroken() const;
  /// An 8-byte NIC atomic on the word at raddr (fetch-and-add: compareAdd is the addend), its
  /// local sge still to attach: what postAdd, postFetch and atomic() post.
  static ibv_send_wr atomicRequest(ibv_wr_opcode opc, std::uint64_t raddr, const RemoteKey& key,
                                   std::uint64_t compareAdd, std::uint64_t swap);
  /// postAdd's and postFetch's checks: an 8-byte aligned target (`what` names the request in
  /// the error) and a working connection.
  void checkPostable(std::uint64_t raddr, const char* what) const;
  /// Stages one request; posts the batch when it is full.
  void stage(ibv_wr_opcode op, void* local, std::uint32_t lkey, std::size_t len,
             std::uint64_t raddr, std::uint32_t rkey, bool inlined, Bounce bounce);
  /// Adds a built request to the batch; posts the batch when it is full.
  void enqueue(const ibv_send_wr& wr, const ibv_sge& sge, Bounce bounce);
  void dropStaged();
  void rdma(bool isPut, std::span<const Iov> local, std::uint64_t raddr, const VerbsKey& key);

  VerbsTransport& t_;
  int peer_;
  rdma_cm_id* id_ = nullptr;
  ibv_qp* qp_ = nullptr;
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
  std::vector<Bounce> stagedBounces_;
  std::uint32_t number_ = 0;  // this endpoint's number in work-request ids
  std::uint32_t sendDepth_ = kSendDepth;
  std::uint64_t posted_ = 0;            // requests posted so far (sequence of the last one)
  std::uint64_t lastReadOrAtomic_ = 0;  // sequence a read or atomic was (or will be) posted at
  std::uint64_t completed_ = 0;  // requests known complete (a signalled completion covers all
                                 // requests before it on this QP)
  std::deque<std::pair<std::uint64_t, Bounce>> bounces_;  // posted requests holding a bounce
  std::string broken_;  // why the connection failed; empty while it works
};

/// ONESIDED_REGCACHE_MB (default 1024; 0 turns the cache off) bounds the bytes the
/// registration cache keeps pinned; at most 1024 registrations.
RegCache::Limits regcacheLimits() {
  RegCache::Limits l;
  if (const char* v = settings::raw(settings::Id::kRegcacheMb); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0') {
      fail(kErrArg, std::string("ONESIDED_REGCACHE_MB=") + v + ": not a number of MiB");
    }
    l.maxBytes = static_cast<std::size_t>(mb) << 20;
    if (mb == 0) l.maxEntries = 0;
  }
  return l;
}

class VerbsTransport final : public Transport {
 public:
  VerbsTransport() : port_(openPort()) {
    pd_ = ibv_alloc_pd(port_.ctx);
    if (pd_ == nullptr) fail(kErrOther, errnoText("ibv_alloc_pd"));
    cqDepth_ = std::min(4096, port_.dev.max_cqe);
    cq_ = ibv_create_cq(port_.ctx, cqDepth_, nullptr, nullptr, 0);
    passiveCq_ = ibv_create_cq(port_.ctx, 16, nullptr, nullptr, 0);
    if (cq_ == nullptr || passiveCq_ == nullptr) fail(kErrOther, errnoText("ibv_create_cq"));
    maxInline_ = 0;
    // Bounce buffers: one registration, lent in turn.
    bounceRegion_ = std::make_unique<VerbsRegion>(pd_, nullptr, kBounceSize * kBounceCount,
                                                  Placement::kAllocate, Access::kLocal,
                                                  [](VerbsRegion*, bool) {});
    for (std::size_t i = 0; i < kBounceCount; ++i) {
      freeBounces_.push_back(static_cast<std::byte*>(bounceRegion_->base()) + i * kBounceSize);
    }
    scratch_ = std::make_unique<VerbsRegion>(pd_, nullptr, 64, Placement::kAllocate, Access::kLocal,
                                             [](VerbsRegion*, bool) {});
    regcache_ = std::make_unique<RegCache>(
        [this](void* base, std::size_t len, RegCache::Registration& out) {
          // Local write: a get lands in the buffer. Read-only memory fails here and is copied.
          // Remote read: a collective exposes its send buffers from this cache (kExpose).
          ibv_mr* mr = ibv_reg_mr(pd_, base, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
          if (mr == nullptr) return false;
          out.handle = mr;
          out.lkey = mr->lkey;
          return true;
        },
        [](const RegCache::Registration& r) {
          if (ibv_dereg_mr(static_cast<ibv_mr*>(r.handle)) != 0) {
            log::verbs().warn("{}", errnoText("ibv_dereg_mr (registration cache)"));
          }
        },
        regcacheLimits());
    listen();
    log::verbs().debug("device {} port {} ({}), gid index {}, listening", port_.device, port_.num,
                       port_.attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
                       port_.gidIndex);
  }

  ~VerbsTransport() override {
    stopListener();
    regcache_.reset();
    scratch_.reset();
    bounceRegion_.reset();
    if (cq_ != nullptr) ibv_destroy_cq(cq_);
    if (passiveCq_ != nullptr) ibv_destroy_cq(passiveCq_);
    if (pd_ != nullptr && ibv_dealloc_pd(pd_) != 0) {
      log::verbs().warn("ibv_dealloc_pd: {} (a region outlived the transport?)",
                        std::strerror(errno));
    }
    if (activeChannel_ != nullptr) rdma_destroy_event_channel(activeChannel_);
  }
  VerbsTransport(const VerbsTransport&) = delete;
  VerbsTransport& operator=(const VerbsTransport&) = delete;

  [[nodiscard]] std::string name() const override { return "verbs"; }
  [[nodiscard]] std::vector<std::byte> address() const override {
    std::vector<std::byte> out(sizeof(WireAddress));
    std::memcpy(out.data(), &listenAddr_, sizeof listenAddr_);
    return out;
  }
  std::unique_ptr<Endpoint> connect(int peer, std::span<const std::byte> peerAddress) override {
    if (peerAddress.size() != sizeof(WireAddress)) fail(kErrIntern, "bad peer address");
    WireAddress a{};
    std::memcpy(&a, peerAddress.data(), sizeof a);
    return std::make_unique<VerbsEndpoint>(*this, peer, a);
  }
  std::unique_ptr<MemoryRegion> registerMemory(void* base, std::size_t len, Placement placement,
                                               Access access) override {
    if (placement == Placement::kExpose && access == Access::kRemoteRead && len > 0) {
      // Collectives expose the same buffers call after call: the cache saves the pinning.
      if (RegCache::Entry* e = cached(base, len); e != nullptr) {
        return std::make_unique<CachedRegion>(*regcache_, e, base, len);
      }
    }
    return std::make_unique<VerbsRegion>(pd_, base, len, placement, access,
                                         [this](VerbsRegion* r, bool add) { track(r, add); });
  }
  void flushAll() override {
    for (VerbsEndpoint* ep : endpoints_) ep->flush();
  }
  /// Starts every staged batch, then reaps completions.
  unsigned progress() override {
    for (VerbsEndpoint* ep : endpoints_) ep->post();
    return poll();
  }

  // ---- used by the endpoints ----
  [[nodiscard]] ibv_pd* pd() const { return pd_; }
  [[nodiscard]] ibv_cq* cq() const { return cq_; }
  [[nodiscard]] const Port& port() const { return port_; }
  [[nodiscard]] std::uint32_t maxInline() const { return maxInline_; }
  void setMaxInline(std::uint32_t n) { maxInline_ = n; }
  rdma_event_channel* activeChannel() {
    if (activeChannel_ == nullptr) {
      activeChannel_ = rdma_create_event_channel();
      if (activeChannel_ == nullptr) fail(kErrOther, errnoText("rdma_create_event_channel"));
    }
    return activeChannel_;
  }
  /// Registers an endpoint; returns its number for work-request ids. Grows the CQ so that it
  /// holds every connection's whole send queue: even when every request fails (each then
  /// completes with an error, signalled or not) the CQ cannot overflow.
  std::uint32_t add(VerbsEndpoint* ep) {
    endpoints_.push_back(ep);
    const int want = static_cast<int>((endpoints_.size() + 1) * kSendDepth);
    if (want > cqDepth_ && want <= port_.dev.max_cqe) {
      if (ibv_resize_cq(cq_, want) == 0) {
        cqDepth_ = want;
      } else {
        log::verbs().warn("ibv_resize_cq to {}: {}", want, std::strerror(errno));
      }
    }
    byNumber_[++lastNumber_] = ep;
    return lastNumber_;
  }
  void remove(VerbsEndpoint* ep, std::uint32_t number) {
    std::erase(endpoints_, ep);
    byNumber_.erase(number);
  }
  /// The lkey of a registered region holding all of [p, p + len), or 0 (none).
  [[nodiscard]] std::uint32_t lkeyFor(const void* p, std::size_t len) const {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = regions_.upper_bound(a);
    if (it == regions_.begin()) return 0;
    --it;
    const VerbsRegion* r = it->second;
    const auto b = reinterpret_cast<std::uintptr_t>(r->base());
    return a + len <= b + r->length() ? r->lkey() : 0;
  }
  /// A free bounce buffer, completing requests until one is free.
  std::byte* bounce() {
    while (freeBounces_.empty()) {
      // Bounces are held by staged or posted requests: post everything, then reap.
      for (VerbsEndpoint* ep : endpoints_) ep->post();
      poll();
    }
    std::byte* b = freeBounces_.back();
    freeBounces_.pop_back();
    return b;
  }
  /// Gives back what a request held.
  void release(const Bounce& b) {
    if (b.buf != nullptr) freeBounces_.push_back(b.buf);
    if (b.reg != nullptr) regcache_->release(b.reg);
  }
  /// A held registration covering [p, p + len) from the cache, or nullptr (cache off or the
  /// memory cannot be registered: the caller copies through bounce buffers).
  RegCache::Entry* cached(const void* p, std::size_t len) {
    return regcache_->active() ? regcache_->acquire(p, len) : nullptr;
  }
  [[nodiscard]] std::uint32_t bounceLkey() const { return bounceRegion_->lkey(); }
  [[nodiscard]] std::uint64_t* scratch() const {
    return static_cast<std::uint64_t*>(scratch_->base());
  }
  [[nodiscard]] std::uint32_t scratchLkey() const { return scratch_->lkey(); }
  /// Takes one CQ slot for a signalled request, reaping completions while none is free.
  void reserveCqe() {
    while (cqUsed_ >= cqDepth_) poll();
    ++cqUsed_;
  }
  /// Reaps completions; returns how many. A work request's id is its endpoint's number and its
  /// sequence number on that endpoint (every request carries one: a failed unsignalled request
  /// completes with an error too).
  unsigned poll() {
    ibv_wc wc[32];
    const int n = ibv_poll_cq(cq_, 32, wc);
    if (n < 0) fail(kErrOther, "ibv_poll_cq failed");
    for (int i = 0; i < n; ++i) {
      // Signalled requests hold a counted CQ slot; error completions of unsignalled ones fit
      // because the CQ holds every send queue whole.
      const std::uint64_t id = wc[i].wr_id;
      if ((id & kSignalled) != 0) --cqUsed_;
      auto it = byNumber_.find(static_cast<std::uint32_t>((id >> kSeqBits) & kNumberMask));
      if (it == byNumber_.end()) continue;  // its endpoint is gone
      // wc.opcode is undefined in an error completion: the request's own opcode is in its id.
      it->second->completed(id & kSeqMask, wc[i].status,
                            static_cast<ibv_wr_opcode>((id >> kOpcodeShift) & 0x7f));
    }
    return static_cast<unsigned>(n);
  }
  // A work request's id: bit 63 signalled, bits 56..62 its ibv_wr_opcode, bits 40..55 its
  // endpoint's number, bits 0..39 its sequence number on that endpoint.
  static constexpr unsigned kSeqBits = 40;
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << kSeqBits) - 1;
  static constexpr std::uint64_t kNumberMask = 0xffff;
  static constexpr unsigned kOpcodeShift = 56;
  static std::uint64_t wrId(std::uint32_t number, ibv_wr_opcode op, std::uint64_t seq) {
    return (static_cast<std::uint64_t>(op) << kOpcodeShift) |
           (static_cast<std::uint64_t>(number & kNumberMask) << kSeqBits) | (seq & kSeqMask);
  }
  static constexpr std::uint64_t kSignalled = std::uint64_t{1} << 63;

 private:
  void track(VerbsRegion* r, bool add) {
    const auto b = reinterpret_cast<std::uintptr_t>(r->base());
    if (add) {
      regions_[b] = r;
    } else if (auto it = regions_.find(b); it != regions_.end() && it->second == r) {
      regions_.erase(it);
    }
  }

  void listen() {
    listenChannel_ = rdma_create_event_channel();
    if (listenChannel_ == nullptr) fail(kErrOther, errnoText("rdma_create_event_channel"));
    if (rdma_create_id(listenChannel_, &listener_, nullptr, RDMA_PS_TCP) != 0) {
      fail(kErrOther, errnoText("rdma_create_id"));
    }
    sockaddr_storage a = port_.ip;  // port 0: the kernel picks one
    if (rdma_bind_addr(listener_, reinterpret_cast<sockaddr*>(&a)) != 0) {
      fail(kErrOther, errnoText("rdma_bind_addr"));
    }
    if (rdma_listen(listener_, 64) != 0) fail(kErrOther, errnoText("rdma_listen"));
    listenAddr_.addr = port_.ip;
    const std::uint16_t p = rdma_get_src_port(listener_);
    if (listenAddr_.addr.ss_family == AF_INET) {
      reinterpret_cast<sockaddr_in*>(&listenAddr_.addr)->sin_port = p;
    } else {
      reinterpret_cast<sockaddr_in6*>(&listenAddr_.addr)->sin6_port = p;
    }
    wake_ = eventfd(0, EFD_CLOEXEC);
    if (wake_ < 0) fail(kErrOther, errnoText("eventfd"));
    acceptor_ = std::thread([this] { acceptLoop(); });
  }

  void stopListener() {
    if (acceptor_.joinable()) {
      const std::uint64_t one = 1;
      if (write(wake_, &one, sizeof one) < 0) log::verbs().warn("{}", errnoText("eventfd write"));
      acceptor_.join();
    }
    std::lock_guard<std::mutex> lock(passiveMutex_);
    for (rdma_cm_id* id : passive_) {
      rdma_destroy_qp(id);
      rdma_destroy_id(id);
    }
    passive_.clear();
    if (listener_ != nullptr) rdma_destroy_id(listener_);
    if (listenChannel_ != nullptr) rdma_destroy_event_channel(listenChannel_);
    if (wake_ >= 0) close(wake_);
  }

  /// The accepting side of every connection (its own thread; see the file comment).
  void acceptLoop() {
    pollfd fds[2] = {{listenChannel_->fd, POLLIN, 0}, {wake_, POLLIN, 0}};
    for (;;) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        log::verbs().error("{}", errnoText("poll (rdma_cm listener)"));
        return;
      }
      if ((fds[1].revents & POLLIN) != 0) return;
      rdma_cm_event* ev = nullptr;
      if (rdma_get_cm_event(listenChannel_, &ev) != 0) continue;
      rdma_cm_id* id = ev->id;
      const rdma_cm_event_type type = ev->event;
      // The request's values arrive swapped to our point of view: responder_resources is the
      // number of RDMA reads / atomics the initiator keeps in flight, which we must accept.
      const std::uint8_t depth = ev->param.conn.responder_resources;
      rdma_ack_cm_event(ev);
      if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
        accept(id, depth);
      } else if (type == RDMA_CM_EVENT_DISCONNECTED) {
        std::lock_guard<std::mutex> lock(passiveMutex_);
        if (std::erase(passive_, id) > 0) {
          rdma_destroy_qp(id);
          rdma_destroy_id(id);
        }
      }
    }
  }

  /// `depth`: the RDMA reads / atomics the initiator keeps in flight.
  void accept(rdma_cm_id* id, std::uint8_t depth) {
    ibv_qp_init_attr qa{};
    qa.send_cq = passiveCq_;
    qa.recv_cq = passiveCq_;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = 1;
    qa.cap.max_recv_wr = 1;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id, pd_, &qa) != 0) {
      log::verbs().error("accepting a connection: {}", errnoText("rdma_create_qp"));
      rdma_reject(id, nullptr, 0);
      rdma_destroy_id(id);
      return;
    }
    rdma_conn_param p{};
    p.responder_resources =
        static_cast<std::uint8_t>(std::min<int>(depth, port_.dev.max_qp_rd_atom));
    p.initiator_depth = 0;
    p.rnr_retry_count = 7;
    if (rdma_accept(id, &p) != 0) {
      log::verbs().error("accepting a connection: {}", errnoText("rdma_accept"));
      rdma_destroy_qp(id);
      rdma_destroy_id(id);
      return;
    }
    std::lock_guard<std::mutex> lock(passiveMutex_);
    passive_.push_back(id);
    log::verbs().debug("accepted a connection");
  }

  Port port_;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_cq* passiveCq_ = nullptr;
  int cqDepth_ = 0;
  int cqUsed_ = 0;
  std::uint32_t maxInline_ = 0;
  std::unique_ptr<VerbsRegion> bounceRegion_;
  std::vector<std::byte*> freeBounces_;
  std::unique_ptr<VerbsRegion> scratch_;
  std::unique_ptr<RegCache> regcache_;
  std::map<std::uintptr_t, VerbsRegion*> regions_;
  std::vector<VerbsEndpoint*> endpoints_;
  std::map<std::uint32_t, VerbsEndpoint*> byNumber_;
  std::uint32_t lastNumber_ = 0;
  rdma_event_channel* activeChannel_ = nullptr;
  // The listener and its thread.
  rdma_event_channel* listenChannel_ = nullptr;
  rdma_cm_id* listener_ = nullptr;
  WireAddress listenAddr_{};
  int wake_ = -1;
  std::thread acceptor_;
  std::mutex passiveMutex_;
  std::vector<rdma_cm_id*> passive_;
};

// ---- endpoint ----------------------------------------------------------------------------

const char* eventName(rdma_cm_event_type t) { return rdma_event_str(t); }

VerbsEndpoint::VerbsEndpoint(VerbsTransport& t, int peer, const WireAddress& addr)
    : t_(t), peer_(peer) {
  wrs_.reserve(kBatch);
  sges_.reserve(kBatch);
  connect(addr);
  number_ = t_.add(this);
}

VerbsEndpoint::~VerbsEndpoint() {
  try {
    if (broken_.empty()) flush();
  } catch (const Error& e) {
    log::verbs().warn("closing the connection to rank {}: {}", peer_, e.what());
  }
  t_.remove(this, number_);
  for (auto& [seq, b] : bounces_) t_.release(b);
  dropStaged();
  if (id_ != nullptr) {
    rdma_disconnect(id_);
    if (qp_ != nullptr) rdma_destroy_qp(id_);
    rdma_destroy_id(id_);
  }
}

/// Waits for the next event on `ch` for `id`, up to the connect timeout. Events for other ids
/// (a peer that went away) are acknowledged and skipped.
rdma_cm_event_type waitEvent(rdma_event_channel* ch, rdma_cm_id* id, int peer, const char* step) {
  pollfd fd{ch->fd, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&fd, 1, kConnectTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      fail(kErrOther, "connecting to rank " + std::to_string(peer) + ": no answer to " + step +
                          " within " + std::to_string(kConnectTimeoutMs / 1000) + " s");
    }
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) != 0) fail(kErrOther, errnoText("rdma_get_cm_event"));
    const bool mine = ev->id == id;
    const rdma_cm_event_type type = ev->event;
    const int status = ev->status;
    rdma_ack_cm_event(ev);
    if (!mine) continue;
    if (status != 0 && type != RDMA_CM_EVENT_ESTABLISHED) {
      fail(kErrOther, "connecting to rank " + std::to_string(peer) + ": " + step + " ended with " +
                          eventName(type) + " (status " + std::to_string(status) + ")");
    }
    return type;
  }
}

void VerbsEndpoint::connect(const WireAddress& addr) {
  rdma_event_channel* ch = t_.activeChannel();
  if (rdma_create_id(ch, &id_, this, RDMA_PS_TCP) != 0)
    fail(kErrOther, errnoText("rdma_create_id"));
  sockaddr_storage dst = addr.addr;
  auto expect = [&](rdma_cm_event_type want, const char* step) {
    const rdma_cm_event_type got = waitEvent(ch, id_, peer_, step);
    if (got != want) {
      fail(kErrOther, "connecting to rank " + std::to_string(peer_) + ": " + step + " ended with " +
                          eventName(got));
    }
  };
  sockaddr_storage src = t_.port().ip;  // leave through the chosen device
  if (rdma_resolve_addr(id_, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst),
                        kConnectTimeoutMs) != 0) {
    fail(kErrOther, errnoText("rdma_resolve_addr"));
  }
  expect(RDMA_CM_EVENT_ADDR_RESOLVED, "address resolution");
  if (rdma_resolve_route(id_, kConnectTimeoutMs) != 0) {
    fail(kErrOther, errnoText("rdma_resolve_route"));
  }
  expect(RDMA_CM_EVENT_ROUTE_RESOLVED, "route resolution");
  if (id_->verbs != t_.port().ctx) {
    fail(kErrOther, "rank " + std::to_string(peer_) + " is reached through another RDMA device");
  }
  ibv_qp_init_attr qa{};
  qa.send_cq = t_.cq();
  qa.recv_cq = t_.cq();
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 0;
  qa.cap.max_send_wr =
      std::min<std::uint32_t>(kSendDepth, static_cast<std::uint32_t>(t_.port().dev.max_qp_wr));
  qa.cap.max_recv_wr = 1;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = 256;
  if (rdma_create_qp(id_, t_.pd(), &qa) != 0) {
    qa.cap.max_inline_data = 0;  // the device may not inline at all
    if (rdma_create_qp(id_, t_.pd(), &qa) != 0) fail(kErrOther, errnoText("rdma_create_qp"));
  }
  qp_ = id_->qp;
  sendDepth_ = qa.cap.max_send_wr;
  t_.setMaxInline(qa.cap.max_inline_data);
  rdma_conn_param p{};
  p.initiator_depth = static_cast<std::uint8_t>(std::min(16, t_.port().dev.max_qp_init_rd_atom));
  p.responder_resources = 0;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  if (rdma_connect(id_, &p) != 0) fail(kErrOther, errnoText("rdma_connect"));
  expect(RDMA_CM_EVENT_ESTABLISHED, "connection");
  log::verbs().debug("connected to rank {} (inline {} bytes)", peer_, qa.cap.max_inline_data);
}

void VerbsEndpoint::checkBroken() const {
  if (!broken_.empty()) throw Error(kErrOther, broken_);
}

void VerbsEndpoint::stage(ibv_wr_opcode op, void* local, std::uint32_t lkey, std::size_t len,
                          std::uint64_t raddr, std::uint32_t rkey, bool inlined, Bounce bounce) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(local);
  sge.length = static_cast<std::uint32_t>(len);
  sge.lkey = lkey;
  ibv_send_wr wr{};
  wr.opcode = op;
  wr.num_sge = 1;
  wr.send_flags = inlined ? IBV_SEND_INLINE : 0;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  enqueue(wr, sge, bounce);
}

void VerbsEndpoint::enqueue(const ibv_send_wr& wr, const ibv_sge& sge, Bounce bounce) {
  sges_.push_back(sge);
  wrs_.push_back(wr);
  stagedBounces_.push_back(bounce);
  if (wr.opcode != IBV_WR_RDMA_WRITE) lastReadOrAtomic_ = posted_ + wrs_.size();  // post()'s seq
  // A large transfer starts at once: the doorbell costs little beside it, and the device works
  // on it while the requests after it are staged.
  if (wrs_.size() == kBatch || sge.length >= kPostAtOnce) post();
}

void VerbsEndpoint::dropStaged() {
  for (auto& b : stagedBounces_) {
    t_.release(b);
  }
  wrs_.clear();
  sges_.clear();
  stagedBounces_.clear();
}

void VerbsEndpoint::post() {
  if (wrs_.empty()) return;
  const auto n = static_cast<std::uint64_t>(wrs_.size());
  // Room in the send queue: requests not yet known complete stay in it.
  while (posted_ + n - completed_ > sendDepth_ && broken_.empty()) t_.poll();
  if (!broken_.empty()) {
    dropStaged();
    checkBroken();
  }
  for (std::size_t i = 0; i < wrs_.size(); ++i) {
    wrs_[i].sg_list = &sges_[i];
    wrs_[i].next = i + 1 < wrs_.size() ? &wrs_[i + 1] : nullptr;
    wrs_[i].wr_id = VerbsTransport::wrId(number_, wrs_[i].opcode, posted_ + i + 1);
    if (stagedBounces_[i].holds()) {
      bounces_.emplace_back(posted_ + i + 1, stagedBounces_[i]);
    }
  }
  ibv_send_wr& last = wrs_.back();
  last.send_flags |= IBV_SEND_SIGNALED;
  last.wr_id |= VerbsTransport::kSignalled;
  t_.reserveCqe();
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_, wrs_.data(), &bad);
  wrs_.clear();
  sges_.clear();
  stagedBounces_.clear();
  if (rc != 0) {
    broken_ = "verbs: posting to rank " + std::to_string(peer_) + " failed: " + std::strerror(rc);
    checkBroken();
  }
  posted_ += n;
}

void VerbsEndpoint::completed(std::uint64_t seq, ibv_wc_status status, ibv_wr_opcode opcode) {
  if (status != IBV_WC_SUCCESS && broken_.empty()) {
    const char* op = opcode == IBV_WR_RDMA_READ              ? "RDMA read"
                     : opcode == IBV_WR_RDMA_WRITE           ? "RDMA write"
                     : opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? "atomic fetch-add"
                     : opcode == IBV_WR_ATOMIC_CMP_AND_SWP   ? "atomic compare-and-swap"
                                                             : "operation";
    broken_ = "verbs: " + std::string(op) + " to rank " + std::to_string(peer_) +
              " failed: " + ibv_wc_status_str(status) +
              (status == IBV_WC_RETRY_EXC_ERR ? " (the peer is unreachable or dead)" : "");
  }
  completed_ = std::max(completed_, seq);
  while (!bounces_.empty() && bounces_.front().first <= completed_) {
    Bounce& b = bounces_.front().second;
    if (b.copyTo != nullptr && status == IBV_WC_SUCCESS) std::memcpy(b.copyTo, b.buf, b.len);
    t_.release(b);
    bounces_.pop_front();
  }
}

void VerbsEndpoint::rdma(bool isPut, std::span<const Iov> local, std::uint64_t raddr,
                         const VerbsKey& key) {
  checkBroken();
  const std::size_t maxMsg = std::max<std::uint32_t>(t_.port().attr.max_msg_sz, 4096);
  for (const Iov& l : local) {
    auto* p = static_cast<std::byte*>(l.addr);
    std::size_t left = l.len;
    if (left == 0) continue;
    if (isPut && left <= t_.maxInline()) {
      stage(IBV_WR_RDMA_WRITE, p, 0, left, raddr, key.rkey(), true, {});
      raddr += left;
      continue;
    }
    std::uint32_t lkey = t_.lkeyFor(p, left);
    RegCache::Entry* reg = nullptr;
    if (lkey == 0 && left >= kZeroCopyMin && (reg = t_.cached(p, left)) != nullptr) {
      lkey = reg->reg.lkey;
    }
    if (lkey != 0) {
      bool first = true;  // acquire() gave one hold: the first request takes it
      while (left > 0) {
        const std::size_t n = std::min(left, maxMsg);
        if (reg != nullptr && !first) RegCache::hold(reg);
        first = false;
        Bounce h;
        h.reg = reg;
        stage(isPut ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, p, lkey, n, raddr, key.rkey(), false,
              h);
        p += n;
        raddr += n;
        left -= n;
      }
      continue;
    }
    while (left > 0) {
      const std::size_t n = std::min(left, kBounceSize);
      Bounce b{t_.bounce(), isPut ? nullptr : p, n};
      if (isPut) std::memcpy(b.buf, p, n);
      stage(isPut ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, b.buf, t_.bounceLkey(), n, raddr,
            key.rkey(), false, b);
      p += n;
      raddr += n;
      left -= n;
    }
  }
}

Issue VerbsEndpoint::put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& key) {
  rdma(true, src, raddr, static_cast<const VerbsKey&>(key));
  return Issue::kPending;
}

Issue VerbsEndpoint::get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& key) {
  rdma(false, dst, raddr, static_cast<const VerbsKey&>(key));
  return Issue::kPending;
}

void VerbsEndpoint::flush() {
  post();
  while (completed_ < posted_ && broken_.empty()) t_.poll();
  checkBroken();
}

ibv_send_wr VerbsEndpoint::atomicRequest(ibv_wr_opcode opc, std::uint64_t raddr,
                                         const RemoteKey& key, std::uint64_t compareAdd,
                                         std::uint64_t swap) {
  ibv_send_wr wr{};
  wr.opcode = opc;
  wr.num_sge = 1;
  wr.wr.atomic.remote_addr = raddr;
  wr.wr.atomic.rkey = static_cast<const VerbsKey&>(key).rkey();
  wr.wr.atomic.compare_add = compareAdd;
  wr.wr.atomic.swap = swap;
  return wr;
}

void VerbsEndpoint::checkPostable(std::uint64_t raddr, const char* what) const {
  if (raddr % 8 != 0) {
    fail(kErrIntern, std::string(what) + " on rank " + std::to_string(peer_) + " at address " +
                         std::to_string(raddr) + ", which is not 8-byte aligned");
  }
  checkBroken();
}

bool VerbsEndpoint::postAdd(std::uint64_t value, std::uint64_t raddr, const RemoteKey& key,
                            AddAfter after) {
  checkPostable(raddr, "remote add");
  // Staged behind the writes before it, in the same send queue: the responder executes it
  // after them. The old value lands in the scratch region's second word, which no one reads.
  ibv_sge sge{reinterpret_cast<std::uint64_t>(t_.scratch() + 1), 8, t_.scratchLkey()};
  ibv_send_wr wr = atomicRequest(IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, key, value, 0);
  // The responder may run a request before an earlier read or atomic has completed (what
  // IBV_SEND_FENCE is for), but only while one may still be running; the fence is set only
  // then, since a device may hold a fenced request for more than that (soft-RoCE holds it until
  // every request before it is acknowledged, writes too).
  if (after == AddAfter::kEverything && lastReadOrAtomic_ > completed_) {
    wr.send_flags = IBV_SEND_FENCE;
  }
  enqueue(wr, sge, {});
  return true;
}

bool VerbsEndpoint::postFetch(AtomicOp op, std::uint64_t operand, std::uint64_t compare,
                              std::uint64_t* result, std::uint64_t raddr, const RemoteKey& key) {
  if (op == AtomicOp::kSwap) return false;  // no NIC swap: atomic()'s compare-and-swap loop
  checkPostable(raddr, "remote atomic");
  // The old value lands in a bounce buffer and is copied to *result when the request's
  // completion (or a later one's: selective signalling) is reaped.
  Bounce b{t_.bounce(), result, 8};
  ibv_sge sge{reinterpret_cast<std::uint64_t>(b.buf), 8, t_.bounceLkey()};
  const ibv_send_wr wr =
      op == AtomicOp::kFetchAdd
          ? atomicRequest(IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, key, operand, 0)
          : atomicRequest(IBV_WR_ATOMIC_CMP_AND_SWP, raddr, key, compare, operand);
  enqueue(wr, sge, b);
  return true;
}

void VerbsEndpoint::atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand,
                           std::uint64_t compare, void* result, std::uint64_t raddr,
                           const RemoteKey& key) {
  const auto& k = static_cast<const VerbsKey&>(key);
  if (bytes != 4 && bytes != 8) {
    fail(kErrIntern, "atomic of " + std::to_string(bytes) + " bytes");
  }
  if (raddr % bytes != 0) {
    fail(kErrArg, "atomic on rank " + std::to_string(peer_) + " at address " +
                      std::to_string(raddr) + ", which is not " + std::to_string(bytes) +
                      "-byte aligned");
  }
  // One 8-byte NIC atomic, on the aligned word that holds the target.
  auto nic = [&](ibv_wr_opcode opc, std::uint64_t word, std::uint64_t add, std::uint64_t cmp,
                 std::uint64_t swap) -> std::uint64_t {
    // In order after everything this endpoint issued (the responder executes an atomic after
    // the requests before it), without waiting for those first: waiting for this one's
    // completion, which comes after theirs, completes them too (a ticket for an accumulate
    // message after the previous one's acknowledgement: one round trip instead of two).
    post();
    std::uint64_t* res = t_.scratch();
    ibv_sge sge{reinterpret_cast<std::uint64_t>(res), 8, t_.scratchLkey()};
    ibv_send_wr wr =
        atomicRequest(opc, word, key, opc == IBV_WR_ATOMIC_FETCH_AND_ADD ? add : cmp, swap);
    wr.sg_list = &sge;
    wr.send_flags = IBV_SEND_SIGNALED;
    t_.reserveCqe();
    wr.wr_id = VerbsTransport::kSignalled | VerbsTransport::wrId(number_, opc, posted_ + 1);
    lastReadOrAtomic_ = posted_ + 1;
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(qp_, &wr, &bad); rc != 0) {
      broken_ = "verbs: posting an atomic to rank " + std::to_string(peer_) +
                " failed: " + std::strerror(rc);
    }
    checkBroken();
    ++posted_;
    while (completed_ < posted_ && broken_.empty()) t_.poll();
    checkBroken();
    return *res;
  };
  if (bytes == 8) {
    std::uint64_t old = 0;
    switch (op) {
      case AtomicOp::kFetchAdd:
        old = nic(IBV_WR_ATOMIC_FETCH_AND_ADD, raddr, operand, 0, 0);
        break;
      case AtomicOp::kCompareSwap:
        old = nic(IBV_WR_ATOMIC_CMP_AND_SWP, raddr, 0, compare, operand);
        break;
      case AtomicOp::kSwap: {
        // No NIC swap: compare-and-swap until the compare value was the current one.
        std::uint64_t guess = 0;
        while ((old = nic(IBV_WR_ATOMIC_CMP_AND_SWP, raddr, 0, guess, operand)) != guess) {
          guess = old;
        }
        break;
      }
    }
    if (result != nullptr) std::memcpy(result, &old, 8);
    return;
  }
  // 4 bytes: compare-and-swap on the 8-byte word that holds them, changing only our half
  // (little endian: the half at the lower address is the low 32 bits).
  const std::uint64_t word = raddr & ~std::uint64_t{7};
  if (word < k.base() || word + 8 > k.base() + k.len()) {
    fail(kErrArg, "4-byte atomic on rank " + std::to_string(peer_) +
                      ": the aligned 8-byte word around it is not all inside the window, and "
                      "this device has no 4-byte atomics");
  }
  const unsigned shift = (raddr - word) * 8;
  const std::uint64_t mask = std::uint64_t{0xffffffff} << shift;
  std::uint64_t cur = nic(IBV_WR_ATOMIC_FETCH_AND_ADD, word, 0, 0, 0);  // read the word
  for (;;) {
    const auto old32 = static_cast<std::uint32_t>((cur & mask) >> shift);
    std::uint32_t new32 = old32;
    if (op == AtomicOp::kFetchAdd) new32 = old32 + static_cast<std::uint32_t>(operand);
    if (op == AtomicOp::kSwap) new32 = static_cast<std::uint32_t>(operand);
    if (op == AtomicOp::kCompareSwap) {
      new32 = old32 == static_cast<std::uint32_t>(compare) ? static_cast<std::uint32_t>(operand)
                                                           : old32;
    }
    if (new32 == old32 && op == AtomicOp::kCompareSwap) {
      if (result != nullptr) std::memcpy(result, &old32, 4);
      return;
    }
    const std::uint64_t next = (cur & ~mask) | (std::uint64_t{new32} << shift);
    const std::uint64_t seen = nic(IBV_WR_ATOMIC_CMP_AND_SWP, word, 0, cur, next);
    if (seen == cur) {
      if (result != nullptr) std::memcpy(result, &old32, 4);
      return;
    }
    cur = seen;
  }
}

}  // namespace

bool verbsPortActive() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) return false;
  bool active = false;
  for (int d = 0; d < n && !active; ++d) {
    ibv_context* ctx = ibv_open_device(list[d]);
    if (ctx == nullptr) continue;
    ibv_device_attr dev{};
    if (ibv_query_device(ctx, &dev) == 0) {
      for (int port = 1; port <= dev.phys_port_cnt && !active; ++port) {
        ibv_port_attr attr{};
        active = ibv_query_port(ctx, static_cast<std::uint8_t>(port), &attr) == 0 &&
                 attr.state == IBV_PORT_ACTIVE;
      }
    }
    ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  return active;
}

std::unique_ptr<Transport> makeVerbsTransport() { return std::make_unique<VerbsTransport>(); }

}  // namespace onesided::transport
