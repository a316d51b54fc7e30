// SPDX-License-Identifier: BSD-3-Clause
// The UCX transport: ucp RMA and AMO on one worker per Context. Memory the transport allocates
// (UCP_MEM_MAP_ALLOCATE) lands in a shared-memory segment (UCX's posix memory domain: the runtime
// keeps UCX off System V segments, whose mode is 0660, unless UCX_TLS says otherwise), so
// ucp_rkey_ptr() maps it in an on-node peer and the core stores straight into it (DESIGN.md,
// "Facts measured"). Everything else goes through ucp_put_nbx / ucp_get_nbx, whose completion is
// collected by ep / worker flush.
#include <ucp/api/ucp.h>

#include <poll.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>

#include "log.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"
#include "transport/shared_pages.hpp"
#include "transport/transport.hpp"
#include "ucx/defaults.hpp"

namespace onesided::transport {
namespace {

int classOf(ucs_status_t s) {
  switch (s) {
    case UCS_ERR_NO_MEMORY:
      return kErrNoMem;
    case UCS_ERR_INVALID_PARAM:
      return kErrArg;
    case UCS_ERR_UNSUPPORTED:
      return kErrUnsupportedOperation;
    default:
      return kErrOther;
  }
}

void checkUcs(ucs_status_t s, const char* call) {
  if (s != UCS_OK) {
    throw Error(classOf(s), std::string("ucx: ") + call + " failed: " + ucs_status_string(s));
  }
}

/// Identifies "the same kernel and pid namespace": two ranks with equal ids can reach each
/// other's memory with process_vm_writev / process_vm_readv (cross-memory attach).
using NodeId = std::array<std::uint64_t, 2>;

NodeId localNodeId() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat st {};
  std::uint64_t pidns = ::stat("/proc/self/ns/pid", &st) == 0 ? st.st_ino : 0;
  return {std::hash<std::string>{}(boot), pidns};
}

/// What a packed key carries besides UCX's own rkey bytes. For memory the user owns
/// (MPI_Win_create) UCX's shared-memory transports cannot map it and its put needs the target
/// to progress. So an on-node origin maps the region's shared pages (shared_pages.hpp) and
/// stores into them, and reaches what is not shared (the partial pages at the ends, unless the
/// program is single-threaded) with cross-memory attach (the owner's pid), all with no target
/// involvement.
struct KeyHeader {
  std::uint64_t pid;
  std::uint64_t registered;  // 1: user memory (cross-memory attach allowed), 0: allocated
  NodeId node;
  std::uint64_t base;  // the region
  std::uint64_t len;
  SharedPagesInfo shared;
  std::uint64_t ucxLen;
};

/// The ucp context and this rank's worker, and (UcxOptions::progressThread) the thread that
/// drives the worker while the rank is away from the runtime.
///
/// Why the thread: UCX runs some operations in software at the target, as active messages its
/// worker handles inside ucp_worker_progress(): atomics where the device has none (rc_verbs on
/// soft-RoCE, tcp, user memory on one node) and every put / get over tcp. Without it, a target
/// that computes without calling MPI stalls its peers' locks, atomics and flushes until its next
/// call. The thread blocks in the worker's wakeup fd, armed for receives only (not for this
/// rank's own send completions), so a message wakes it at once. While the rank itself drives
/// progress (it is inside the runtime), the thread leaves the worker to it (see run()).
class UcpContext {
 public:
  explicit UcpContext(const UcxOptions& opt) : sharePartialPages_(opt.sharePartialPages) {
    ucp_config_t* config = nullptr;
    checkUcs(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
    // The runtime's own choices where the user made none (defaults.hpp: no System V segments,
    // and soft-RoCE's settings).
    for (const auto& c : ucx::chooseSettings(ucx::rdmaDevices("/sys/class/infiniband"),
                                             [](const char* v) { return std::getenv(v); })) {
      const ucs_status_t m = ucp_config_modify(config, c.name.c_str(), c.value.c_str());
      if (m != UCS_OK) {
        ucp_config_release(config);
        checkUcs(m, ("ucp_config_modify UCX_" + c.name + "=" + c.value).c_str());
      }
      SPDLOG_LOGGER_DEBUG(&log::ucx(), "UCX_{}={} ({}; set it to choose otherwise)", c.name,
                          c.value, c.why);
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 |
                      (opt.progressThread ? UCP_FEATURE_WAKEUP : 0);
    params.mt_workers_shared = opt.progressThread ? 1 : 0;
    ucs_status_t s = ucp_init(&params, config, &ctx_);
    ucp_config_release(config);
    checkUcs(s, "ucp_init");
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = opt.progressThread     ? UCS_THREAD_MODE_MULTI
                     : opt.threadSerialized ? UCS_THREAD_MODE_SERIALIZED
                                            : UCS_THREAD_MODE_SINGLE;
    if (opt.progressThread) {
      wp.field_mask |= UCP_WORKER_PARAM_FIELD_EVENTS;
      wp.events = UCP_WAKEUP_RX;  // requests from peers; not this rank's own completions
    }
    s = ucp_worker_create(ctx_, &wp, &worker_);
    if (s != UCS_OK) {
      ucp_cleanup(ctx_);
      checkUcs(s, "ucp_worker_create");
    }
    if (opt.progressThread) startThread();
  }
  ~UcpContext() {
    if (thread_.joinable()) {
      stop_.store(true, std::memory_order_release);
      ucp_worker_signal(worker_);
      thread_.join();
    }
    ucp_worker_destroy(worker_);
    ucp_cleanup(ctx_);
  }
  UcpContext(const UcpContext&) = delete;
  UcpContext& operator=(const UcpContext&) = delete;

  [[nodiscard]] ucp_context_h context() const { return ctx_; }
  [[nodiscard]] ucp_worker_h worker() const { return worker_; }
  /// UcxOptions::sharePartialPages.
  [[nodiscard]] bool sharePartialPages() const { return sharePartialPages_; }

  /// ucp_worker_progress from the rank's own thread (which tells the progress thread that the
  /// rank is driving the worker itself).
  unsigned progress() const {
    ownerPolls_.store(ownerPolls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return ucp_worker_progress(worker_);
  }

  /// Sleeps up to `ns` in a wait's back-off, woken early by anything arriving for the worker
  /// (its wakeup fd, when the progress thread runs): a waiting rank answers a peer's operation
  /// that UCX runs in software (any RMA over tcp) at once, not after the sleep.
  void sleep(std::int64_t ns) const {
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    if (efd_ < 0) {
      nanosleep(&ts, nullptr);
      return;
    }
    if (ucp_worker_arm(worker_) != UCS_OK) return;  // events came in meanwhile (or an error)
    pollfd p{efd_, POLLIN, 0};
    (void)::ppoll(&p, 1, &ts, nullptr);
  }

  /// Waits for a request from a *_nbx call, driving progress; throws on failure.
  void wait(ucs_status_ptr_t req, const char* what) const {
    if (req == nullptr) {
      // Done in place (the self endpoint, shared memory, an empty flush), yet the worker is
      // driven once: without device atomics (rc_verbs, tcp) UCX runs peers' atomics on this
      // rank by active message, so a rank spinning on its own window (a compare-and-swap loop
      // on a mutex it hosts) must keep serving them, or the holder's release never arrives.
      // Seen as a hang of 8 ranks over soft-RoCE: the home rank's CAS to itself completed in
      // place every time while the holder's CAS to it waited forever.
      progress();
      return;
    }
    if (UCS_PTR_IS_ERR(req)) checkUcs(UCS_PTR_STATUS(req), what);
    ucs_status_t s = UCS_INPROGRESS;
    unsigned spins = 0;
    std::int64_t since = 0;  // when the wait began to idle (ns); 0: not yet
    while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS) {
      if (progress() != 0) {
        spins = 0;
        since = 0;
        continue;
      }
      if (++spins <= 4096) continue;
      // A long wait (for a peer's progress over tcp, say): yield for 2 ms, then sleep in the
      // wakeup fd, woken by whatever arrives (at most 1/32 of the time waited, and 1 ms).
      // Yielding for ever kept the CPU busy for nothing where sched_yield gives way only
      // inside the rank's own scheduling group (autogroups, cgroups), while the peer waited
      // for, in another group, got only its group's share: 6 ranks in 3 autogroups on 2 cores
      // over tcp ran an accumulate test in 46-80 s, and 15-17 s with this back-off.
      const std::int64_t ns = idleSleepNs(since, 1'000'000);
      if (ns == 0) {
        sched_yield();
      } else {
        sleep(ns);
      }
    }
    ucp_request_free(req);
    checkUcs(s, what);
  }

 private:
  void startThread() {
    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
    int fd = -1;
    if (ucp_worker_query(worker_, &attr) != UCS_OK || attr.thread_mode != UCS_THREAD_MODE_MULTI ||
        ucp_worker_get_efd(worker_, &fd) != UCS_OK) {
      log::ucx().warn(
          "no progress thread: this UCX has no thread-safe worker or wakeup fd, so operations "
          "UCX runs in software at a target complete only when that target calls into MPI");
      return;
    }
    efd_ = fd;
    thread_ = std::thread([this] { run(); });
  }

  void run() const {
    // While the rank is in the runtime it drives the worker itself (ownerPolls_ moves): the
    // thread then does not touch the worker at all (arming it costs system calls, which under
    // the soft-RoCE VM's emulation doubled the MPI programs' time) and looks again every
    // kOwnerMs. Once the rank has been away that long, the thread serves the worker: it sleeps
    // in the wakeup fd, and since over rc_verbs on soft-RoCE that fd missed a request now and
    // then, it also looks after a time limit that starts at 1 ms after any work and doubles
    // while nothing happens, up to 64 ms (an idle rank wakes ~16 times a second).
    constexpr auto kOwnerMs = std::chrono::milliseconds(2);
    constexpr int kFirstMs = 1;
    constexpr int kLastMs = 64;
    int limitMs = kFirstMs;
    std::uint64_t seen = ownerPolls_.load(std::memory_order_relaxed);
    unsigned busy = 0;
    while (!stop_.load(std::memory_order_acquire)) {
      const std::uint64_t now = ownerPolls_.load(std::memory_order_relaxed);
      if (now != seen) {
        seen = now;
        limitMs = kFirstMs;
        std::this_thread::sleep_for(kOwnerMs);
        continue;
      }
      unsigned work = 0;
      for (unsigned n = 0; (n = ucp_worker_progress(worker_)) != 0;) work += n;
      if (work != 0) limitMs = kFirstMs;
      const ucs_status_t s = ucp_worker_arm(worker_);
      if (s == UCS_ERR_BUSY) {  // events came in meanwhile: progress again
        if (++busy > 64) sched_yield();
        continue;
      }
      busy = 0;
      if (s != UCS_OK) {
        log::ucx().warn("progress thread stops: ucp_worker_arm failed: {}", ucs_status_string(s));
        return;
      }
      pollfd p{efd_, POLLIN, 0};
      const int r = ::poll(&p, 1, limitMs);
      if (r < 0 && errno != EINTR) {
        log::ucx().warn("progress thread stops: poll failed: {}", std::strerror(errno));
        return;
      }
      // Nothing signalled: look anyway, and wait longer next time.
      limitMs = r == 0 ? std::min(2 * limitMs, kLastMs) : kFirstMs;
    }
  }

  bool sharePartialPages_;
  ucp_context_h ctx_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  mutable std::atomic<std::uint64_t> ownerPolls_{0};  // written by the rank's thread only
  int efd_ = -1;  // the worker's wakeup fd, when the progress thread runs
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class UcxRegion final : public MemoryRegion {
 public:
  UcxRegion(std::shared_ptr<UcpContext> ctx, void* base, std::size_t len, Placement placement,
            const NodeId& node)
      : ctx_(std::move(ctx)), len_(len) {
    if (len == 0) {
      base_ = base;
      return;  // nothing to register; bounds checks keep peers away from it
    }
    // Before ucp_mem_map: sharing replaces the pages, and UCX must register the new ones.
    if (placement == Placement::kRegister) {
      shared_ = SharedPages::share(base, len, true, ctx_->sharePartialPages());
    }
    ucp_mem_map_params_t p{};
    p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                   UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    p.address = placement == Placement::kAllocate ? nullptr : base;
    p.length = len;
    p.flags = placement == Placement::kAllocate ? UCP_MEM_MAP_ALLOCATE : 0;
    checkUcs(ucp_mem_map(ctx_->context(), &p, &memh_), "ucp_mem_map");
    ucp_mem_attr_t attr{};
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    ucs_status_t s = ucp_mem_query(memh_, &attr);
    if (s != UCS_OK) {
      ucp_mem_unmap(ctx_->context(), memh_);
      checkUcs(s, "ucp_mem_query");
    }
    base_ = attr.address;
    void* buf = nullptr;
    std::size_t size = 0;
    s = ucp_rkey_pack(ctx_->context(), memh_, &buf, &size);
    if (s != UCS_OK) {
      ucp_mem_unmap(ctx_->context(), memh_);
      checkUcs(s, "ucp_rkey_pack");
    }
    KeyHeader h{static_cast<std::uint64_t>(getpid()),
                placement != Placement::kAllocate ? 1U : 0U,
                node,
                reinterpret_cast<std::uint64_t>(base_),
                len,
                shared_ != nullptr ? shared_->info() : SharedPagesInfo{},
                size};
    rkey_.resize(sizeof h + size);
    std::memcpy(rkey_.data(), &h, sizeof h);
    std::memcpy(rkey_.data() + sizeof h, buf, size);
    ucp_rkey_buffer_release(buf);
    SPDLOG_LOGGER_DEBUG(&log::ucx(), "mapped {} bytes at {} ({}), rkey {} bytes", len, base_,
                        placement == Placement::kAllocate   ? "allocated"
                        : placement == Placement::kRegister ? "registered"
                                                            : "exposed",
                        size);
  }
  ~UcxRegion() override {
    if (memh_ != nullptr) {
      if (ucs_status_t s = ucp_mem_unmap(ctx_->context(), memh_); s != UCS_OK) {
        log::ucx().warn("ucp_mem_unmap failed: {}", ucs_status_string(s));
      }
    }
  }
  UcxRegion(const UcxRegion&) = delete;
  UcxRegion& operator=(const UcxRegion&) = delete;
  [[nodiscard]] void* base() const override { return base_; }
  [[nodiscard]] std::size_t length() const override { return len_; }
  [[nodiscard]] std::vector<std::byte> packRkey() const override { return rkey_; }

 private:
  std::shared_ptr<UcpContext> ctx_;
  std::unique_ptr<SharedPages> shared_;  // restored after ucp_mem_unmap (destroyed last)
  ucp_mem_h memh_ = nullptr;
  void* base_ = nullptr;
  std::size_t len_;
  std::vector<std::byte> rkey_;
};

/// Whether ranks in one process (threads) reach all of each other's memory directly; with
/// ONESIDED_UCX_THREAD_DIRECT=0 they reach it as separate processes would (mapped shared pages,
/// cross-memory attach for the rest), so that thread tests cover those paths.
bool threadsShareAll() {
  const char* v = settings::raw(settings::Id::kUcxThreadDirect);
  return v == nullptr || std::string_view(v) != "0";
}

class UcxKey final : public RemoteKey {
 public:
  UcxKey() = default;
  /// `onNode`: the owner shares this kernel and pid namespace (its memory can be mapped, and
  /// user memory reached by cross-memory attach).
  UcxKey(ucp_rkey_h rkey, const KeyHeader& h, bool onNode)
      : rkey_(rkey), pid_(onNode && h.registered != 0 ? static_cast<pid_t>(h.pid) : 0) {
    if (onNode && static_cast<pid_t>(h.pid) == getpid() && threadsShareAll()) {
      direct_ = {0, UINTPTR_MAX, 0};  // one address space (ranks as threads)
      return;
    }
    void* p = nullptr;
    if (h.len > 0 && ucp_rkey_ptr(rkey_, h.base, &p) == UCS_OK) {
      direct_ = {h.base, h.base + h.len,
                 reinterpret_cast<std::intptr_t>(p) - static_cast<std::intptr_t>(h.base)};
    } else if (pid_ != 0 && (pages_ = PeerPages::attach(pid_, h.shared)) != nullptr) {
      direct_ = {h.shared.lo, h.shared.hi,
                 reinterpret_cast<std::intptr_t>(pages_->local()) -
                     static_cast<std::intptr_t>(h.shared.lo)};
    }
  }
  ~UcxKey() override {
    pages_.reset();
    if (rkey_ != nullptr) ucp_rkey_destroy(rkey_);
  }
  UcxKey(const UcxKey&) = delete;
  UcxKey& operator=(const UcxKey&) = delete;
  [[nodiscard]] DirectSpan direct() const override { return direct_; }
  [[nodiscard]] ucp_rkey_h get() const { return rkey_; }
  /// Cross-memory attach: writes (or reads) all bytes, or returns false when the kernel
  /// refuses (no ptrace permission), after which this key uses UCX. A dead owner is an error.
  template <bool kWrite>
  bool cma(const Iov& local, std::uint64_t raddr, int peer) const {
    if (pid_ == 0 || cmaRefused_) return false;
    std::size_t done = 0;
    while (done < local.len) {
      iovec l{static_cast<char*>(local.addr) + done, local.len - done};
      iovec r{reinterpret_cast<void*>(raddr + done), local.len - done};  // NOLINT
      ssize_t n = kWrite ? process_vm_writev(pid_, &l, 1, &r, 1, 0)
                         : process_vm_readv(pid_, &l, 1, &r, 1, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPERM || errno == ENOSYS || errno == EACCES) {
          log::ucx().debug("cross-memory attach to peer {} refused ({}), using ucx", peer,
                           std::strerror(errno));
          cmaRefused_ = true;
          if (done == 0) return false;
        }
        throw Error(kErrOther, std::string("ucx: ") + (kWrite ? "put" : "get") + " to peer " +
                                   std::to_string(peer) + " (pid " + std::to_string(pid_) +
                                   ") failed: " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// Many pieces in one process_vm_writev / readv per IOV_MAX (a strided transfer of 8-byte
  /// blocks would otherwise cost one system call per block). False when cross-memory attach is
  /// not available (nothing moved); a piece the kernel moved only in part is finished by cma().
  template <bool kWrite>
  bool cmaV(std::span<const Iov> local, std::span<const std::uint64_t> raddr, int peer) const {
    if (pid_ == 0 || cmaRefused_) return false;
    constexpr std::size_t kMax = 1024;  // IOV_MAX on Linux
    std::array<iovec, kMax> l{};
    std::array<iovec, kMax> r{};
    for (std::size_t first = 0; first < local.size(); first += kMax) {
      const std::size_t n = std::min(kMax, local.size() - first);
      std::size_t total = 0;
      for (std::size_t i = 0; i < n; ++i) {
        l[i] = {local[first + i].addr, local[first + i].len};
        r[i] = {reinterpret_cast<void*>(raddr[first + i]), local[first + i].len};  // NOLINT
        total += local[first + i].len;
      }
      ssize_t done = kWrite ? process_vm_writev(pid_, l.data(), n, r.data(), n, 0)
                            : process_vm_readv(pid_, l.data(), n, r.data(), n, 0);
      if (done < 0) {
        if (first == 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES)) {
          log::ucx().debug("cross-memory attach to peer {} refused ({}), using ucx", peer,
                           std::strerror(errno));
          cmaRefused_ = true;
          return false;
        }
        if (errno != EINTR && errno != EPERM && errno != ENOSYS && errno != EACCES) {
          throw Error(kErrOther, std::string("ucx: ") + (kWrite ? "put" : "get") + " to peer " +
                                     std::to_string(peer) + " (pid " + std::to_string(pid_) +
                                     ") failed: " + std::strerror(errno));
        }
        done = 0;  // retried, or refused, piece by piece below
      }
      if (static_cast<std::size_t>(done) == total) continue;
      // The rest piece by piece (cma() retries, reports refusal and errors).
      auto left = static_cast<std::size_t>(done);
      for (std::size_t i = first; i < first + n; ++i) {
        const std::size_t skip = std::min(left, local[i].len);
        left -= skip;
        if (skip == local[i].len) continue;
        Iov rest{static_cast<std::byte*>(local[i].addr) + skip, local[i].len - skip};
        if (!cma<kWrite>(rest, raddr[i] + skip, peer)) {
          throw Error(kErrOther, std::string("ucx: cross-memory attach to peer ") +
                                     std::to_string(peer) + " was refused in the middle of a " +
                                     (kWrite ? "put" : "get"));
        }
      }
    }
    return true;
  }

 private:
  ucp_rkey_h rkey_ = nullptr;
  pid_t pid_ = 0;  // the owner's pid when cross-memory attach reaches it from here, else 0
  std::unique_ptr<PeerPages> pages_;
  DirectSpan direct_;
  mutable bool cmaRefused_ = false;
};

class UcxEndpoint final : public Endpoint {
 public:
  UcxEndpoint(std::shared_ptr<UcpContext> ctx, int peer, std::span<const std::byte> address,
              const NodeId& node)
      : ctx_(std::move(ctx)), peer_(peer), node_(node) {
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    p.address = reinterpret_cast<const ucp_address_t*>(address.data());
    p.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    checkUcs(ucp_ep_create(ctx_->worker(), &p, &ep_), "ucp_ep_create");
    SPDLOG_LOGGER_DEBUG(&log::ucx(), "connected to peer {}", peer_);
  }
  ~UcxEndpoint() override {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = 0;  // flush mode: every operation completes before the endpoint goes away
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep_, &p);
    try {
      ctx_->wait(req, "ucp_ep_close_nbx");
    } catch (const Error& e) {
      log::ucx().warn("closing endpoint to peer {}: {}", peer_, e.what());
    }
  }
  UcxEndpoint(const UcxEndpoint&) = delete;
  UcxEndpoint& operator=(const UcxEndpoint&) = delete;

  std::unique_ptr<RemoteKey> unpackRkey(std::span<const std::byte> packed) override {
    if (packed.empty()) return std::make_unique<UcxKey>();
    KeyHeader h{};
    if (packed.size() < sizeof h) throw Error(kErrIntern, "ucx: truncated remote key");
    std::memcpy(&h, packed.data(), sizeof h);
    ucp_rkey_h rkey = nullptr;
    checkUcs(ucp_ep_rkey_unpack(ep_, packed.data() + sizeof h, &rkey), "ucp_ep_rkey_unpack");
    return std::make_unique<UcxKey>(rkey, h, h.node == node_);
  }

  Issue put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& key) override {
    return rma<true>(src, raddr, static_cast<const UcxKey&>(key));
  }

  Issue get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& key) override {
    return rma<false>(dst, raddr, static_cast<const UcxKey&>(key));
  }

  Issue putv(std::span<const Iov> local, std::span<const std::uint64_t> raddr,
             const RemoteKey& key) override {
    if (static_cast<const UcxKey&>(key).cmaV<true>(local, raddr, peer_)) return Issue::kDone;
    return Endpoint::putv(local, raddr, key);
  }

  Issue getv(std::span<const Iov> local, std::span<const std::uint64_t> raddr,
             const RemoteKey& key) override {
    if (static_cast<const UcxKey&>(key).cmaV<false>(local, raddr, peer_)) return Issue::kDone;
    return Endpoint::getv(local, raddr, key);
  }

  void atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand, std::uint64_t compare,
              void* result, std::uint64_t raddr, const RemoteKey& key) override {
    if (bytes != 4 && bytes != 8) {
      throw Error(kErrIntern, "ucx: atomic of " + std::to_string(bytes) + " bytes");
    }
    ucp_rkey_h rkey = static_cast<const UcxKey&>(key).get();
    // CSWAP (ucp.h): "Result=Y; if (X==Y) then Y=Z" with X in `buffer` (the compare value)
    // and Z in the reply buffer (the value swapped in, replaced by the result).
    const bool cswap = op == AtomicOp::kCompareSwap;
    std::uint64_t value = cswap ? compare : operand;
    std::uint64_t reply = cswap ? operand : 0;
    auto value32 = static_cast<std::uint32_t>(value);
    auto reply32 = static_cast<std::uint32_t>(reply);
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    p.datatype = ucp_dt_make_contig(bytes);
    p.reply_buffer = bytes == 8 ? static_cast<void*>(&reply) : static_cast<void*>(&reply32);
    ucp_atomic_op_t uop = op == AtomicOp::kFetchAdd ? UCP_ATOMIC_OP_ADD
                          : op == AtomicOp::kSwap   ? UCP_ATOMIC_OP_SWAP
                                                    : UCP_ATOMIC_OP_CSWAP;
    const void* buf =
        bytes == 8 ? static_cast<const void*>(&value) : static_cast<const void*>(&value32);
    ctx_->wait(ucp_atomic_op_nbx(ep_, uop, buf, 1, raddr, rkey, &p), "ucp_atomic_op_nbx");
    if (result != nullptr) {
      std::memcpy(result, bytes == 8 ? static_cast<void*>(&reply) : static_cast<void*>(&reply32),
                  bytes);
    }
  }

  void flush() override {
    ucp_request_param_t p{};
    ctx_->wait(ucp_ep_flush_nbx(ep_, &p), "ucp_ep_flush_nbx");
  }

  /// ucp_worker_fence (ucp.h): operations issued on the worker before it complete before any
  /// issued after it; UCX waits only where its transport does not order them itself. (Puts by
  /// cross-memory attach are complete when issued.)
  void fence() override { checkUcs(ucp_worker_fence(ctx_->worker()), "ucp_worker_fence"); }

 private:
  /// Each piece goes by cross-memory attach when the key allows it (complete at once), else
  /// through ucp_put_nbx / ucp_get_nbx (complete after flush).
  template <bool kPut>
  Issue rma(std::span<const Iov> local, std::uint64_t raddr, const UcxKey& k) {
    ucp_request_param_t p{};
    Issue issue = Issue::kDone;
    for (const auto& l : local) {
      if (l.len == 0) continue;
      if (!k.cma<kPut>(l, raddr, peer_)) {
        issue = kPut ? release(ucp_put_nbx(ep_, l.addr, l.len, raddr, k.get(), &p), "ucp_put_nbx")
                     : release(ucp_get_nbx(ep_, l.addr, l.len, raddr, k.get(), &p), "ucp_get_nbx");
      }
      raddr += l.len;
    }
    return issue;
  }

  /// A put / get whose request is NULL completed in place; otherwise flush() collects it.
  /// (A NULL put is locally complete only, so UCX puts count as pending either way.)
  static Issue release(ucs_status_ptr_t req, const char* what) {
    if (req == nullptr) return Issue::kPending;
    if (UCS_PTR_IS_ERR(req)) checkUcs(UCS_PTR_STATUS(req), what);
    ucp_request_free(req);  // completion is collected by flush()
    return Issue::kPending;
  }

  std::shared_ptr<UcpContext> ctx_;
  int peer_;
  NodeId node_;
  ucp_ep_h ep_ = nullptr;
};

class UcxTransport final : public Transport {
 public:
  explicit UcxTransport(const UcxOptions& opt)
      : ctx_(std::make_shared<UcpContext>(opt)), node_(localNodeId()) {
    ucp_address_t* addr = nullptr;
    std::size_t len = 0;
    checkUcs(ucp_worker_get_address(ctx_->worker(), &addr, &len), "ucp_worker_get_address");
    auto* b = reinterpret_cast<std::byte*>(addr);
    address_.assign(b, b + len);
    ucp_worker_release_address(ctx_->worker(), addr);
  }
  [[nodiscard]] std::string name() const override { return "ucx"; }
  [[nodiscard]] std::vector<std::byte> address() const override { return address_; }
  std::unique_ptr<Endpoint> connect(int peer, std::span<const std::byte> peerAddress) override {
    return std::make_unique<UcxEndpoint>(ctx_, peer, peerAddress, node_);
  }
  std::unique_ptr<MemoryRegion> registerMemory(void* base, std::size_t len, Placement placement,
                                               Access /*access*/) override {
    return std::make_unique<UcxRegion>(ctx_, base, len, placement, node_);
  }
  void flushAll() override {
    ucp_request_param_t p{};
    ctx_->wait(ucp_worker_flush_nbx(ctx_->worker(), &p), "ucp_worker_flush_nbx");
  }
  unsigned progress() override { return ctx_->progress(); }

 private:
  std::shared_ptr<UcpContext> ctx_;
  NodeId node_;
  std::vector<std::byte> address_;
};

}  // namespace

std::unique_ptr<Transport> makeUcxTransport(const UcxOptions& options) {
  return std::make_unique<UcxTransport>(options);
}

}  // namespace onesided::transport
