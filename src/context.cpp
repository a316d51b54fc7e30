// SPDX-License-Identifier: BSD-3-Clause
#include "onesided/context.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "balance.hpp"
#include "bootstrap/bootstrap.hpp"
#include "call_lock.hpp"
#include "collectives/channel.hpp"
#include "counters.hpp"
#include "hang.hpp"
#include "log.hpp"
#include "onesided/comm.hpp"
#include "onesided/errors.hpp"
#include "p2p/engine.hpp"
#include "settings.hpp"
#include "transport/shared_pages.hpp"
#include "transport/transport.hpp"
#include "window/am.hpp"
#include "window/sync.hpp"

namespace onesided {
namespace {

std::unique_ptr<transport::Transport> makeTransport(const Options& options, bool progressThread) {
  std::string name = options.transport;
  if (name.empty()) {
    const char* env = settings::raw(settings::Id::kTransport);
    name = env != nullptr && *env != '\0' ? env : "auto";
  }
  if (name == "auto") {
#ifdef ONESIDED_HAVE_UCX
    name = "ucx";
#else
    name = "self";
#endif
    if (transport::verbsPortActive()) name = "verbs";
  }
  if (name == "self") return transport::makeSelfTransport();
  if (name == "self_deferred") return transport::makeSelfTransport(/*deferred=*/true);
  if (name == "verbs") return transport::makeVerbsTransport();
  if (name == "ucx") {
    transport::UcxOptions u;
    u.threadSerialized = options.threadSerialized;
    u.progressThread = progressThread;
    u.sharePartialPages = options.singleThreaded;
    return transport::makeUcxTransport(u);
  }
  std::string known;
  for (const auto& t : transport::availableTransports()) known += " " + t;
  throw Error(kErrArg, "ONESIDED_TRANSPORT: unknown transport '" + name +
                           "' (this build has:" + known + ", auto)");
}

// Pack [address][sync info] into one blob so start-up is a single allgather.
std::vector<std::byte> concat(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  std::vector<std::byte> out(8 + a.size() + b.size());
  std::uint64_t n = a.size();
  std::memcpy(out.data(), &n, 8);
  std::copy(a.begin(), a.end(), out.begin() + 8);
  std::copy(b.begin(), b.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(a.size()));
  return out;
}

/// The two parts of a blob made by concat() (checked when it was looked up: peerBlob).
std::span<const std::byte> firstPart(const std::vector<std::byte>& blob) {
  std::uint64_t n = 0;
  std::memcpy(&n, blob.data(), 8);
  return {blob.data() + 8, static_cast<std::size_t>(n)};
}
std::vector<std::byte> secondPart(const std::vector<std::byte>& blob) {
  const auto first = firstPart(blob);
  return {first.data() + first.size(), blob.data() + blob.size()};
}
/// A start-up blob's second part is [world communicator's info][messaging info], by concat().
std::vector<std::byte> worldInfo(const std::vector<std::byte>& blob) {
  const auto second = secondPart(blob);
  if (second.size() < 8) return {};
  const auto w = firstPart(second);
  return {w.begin(), w.end()};
}

}  // namespace

Context::Context(std::unique_ptr<bootstrap::Bootstrap> boot, const Options& options)
    : boot_(std::move(boot)),
      cancel_(options.cancel),
      singleThreaded_(options.singleThreaded),
      pid_(getpid()) {
  callLock_ = options.callLock;
  log::init();
  if (const char* w = settings::raw(settings::Id::kWait); w != nullptr && *w != '\0') {
    const std::string_view v(w);
    if (v == "spin") {
      spinWait_ = true;
    } else if (v != "adaptive") {
      throw Error(kErrArg, std::string("ONESIDED_WAIT=") + w + ": expected spin or adaptive");
    }
  }
  {
    std::string acc = options.accumulate;
    if (acc.empty()) {
      const char* env = settings::raw(settings::Id::kAccumulate);
      acc = env != nullptr && *env != '\0' ? env : "auto";
    }
    if (acc == "am") {
      accMode_ = AccMode::kMessage;
    } else if (acc == "lock") {
      accMode_ = AccMode::kLock;
    } else if (acc != "auto") {
      throw Error(kErrArg, "ONESIDED_ACCUMULATE=" + acc + ": expected am, lock or auto");
    }
    int thread = options.progressThread;
    if (thread < 0) {
      const char* env = settings::raw(settings::Id::kProgressThread);
      const std::string_view v = env != nullptr ? env : "";
      if (v.empty() || v == "1" || v == "on") {
        thread = 1;
      } else if (v == "0" || v == "off") {
        thread = 0;
      } else {
        throw Error(kErrArg, std::string("ONESIDED_PROGRESS_THREAD=") + env +
                                 ": expected 1 / on or 0 / off");
      }
    }
    progressThread_ = thread != 0;
  }
  rank_ = boot_->rank();
  size_ = boot_->size();
  nodePeers_ = boot_->nodePeers();
  {
    struct stat ns {};
    pidNamespace_ = ::stat("/proc/self/ns/pid", &ns) == 0 ? static_cast<std::int64_t>(ns.st_ino)
                                                          : -1 - static_cast<std::int64_t>(rank_);
  }
  // A launcher that reports dead ranks (PMIx) ends transport waits too, not just its own.
  if (cancel_ == nullptr) cancel_ = boot_->failedFlag();
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    // More ranks on this node than CPUs this process may run on.
    oversubscribed_ = static_cast<int>(nodePeers_.size()) > cpus;
    bool balance = true;
    if (const char* b = settings::raw(settings::Id::kBalance); b != nullptr && *b != '\0') {
      const std::string_view v(b);
      if (v != "0" && v != "1") {
        throw Error(kErrArg, std::string("ONESIDED_BALANCE=") + b + ": expected 0 or 1");
      }
      balance = v == "1";
    }
    // Ranks that are processes only: a rank in a thread of this process reaches the others'
    // regions at their own addresses, gone with them, where a process keeps its mappings.
    if (balance && oversubscribed_ && !spinWait_ && cpus >= 2 && boot_->kind() != "inproc") {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus_.push_back(c);
      }
      placeWords_ = std::make_unique<std::atomic<std::uint64_t*>[]>(nodePeers_.size());
      balance_ = true;
    }
  }
  transport_ = makeTransport(options, progressThread_);
  if (transport_->name().starts_with("self") && boot_->kind() != "inproc" && size_ > 1) {
    throw Error(kErrArg, "transport self reaches only ranks in this process, but the job has " +
                             std::to_string(size_) + " processes");
  }
  auto* t = transport_.get();
  boot_->setProgressHook([t] { t->progress(); });
  endpoints_.resize(static_cast<std::size_t>(size_));

  std::vector<int> all(static_cast<std::size_t>(size_));
  for (int i = 0; i < size_; ++i) all[static_cast<std::size_t>(i)] = i;
  world_ = std::make_unique<Comm>(*this, all);
  world_->channel().showPlacement();
  self_ = std::make_unique<Comm>(*this, std::vector<int>{rank_});
  self_->p2pContext_ = 2;

  // One blob per rank, published through the bootstrap and read per peer on first use: under
  // PMIx start-up then costs a rank the same at any job size (Bootstrap::publish).
  blobs_.resize(static_cast<std::size_t>(size_));
  p2p_ = std::make_unique<p2p::Engine>(*this);
  blobs_[static_cast<std::size_t>(rank_)] =
      concat(transport_->address(), concat(world_->localInfo(), p2p_->localInfo()));
  boot_->publish(blobs_[static_cast<std::size_t>(rank_)]);
  world_->connectLazily([this](int r) { return worldInfo(peerBlob(r)); });
  self_->connect({self_->localInfo()});
  log::core().debug("rank {} of {} up: transport {}, bootstrap {}, node peers {}", rank_, size_,
                    transport_->name(), boot_->kind(), fmt::join(nodePeers_, ","));
}

std::unique_ptr<Context> Context::create(std::unique_ptr<bootstrap::Bootstrap> boot,
                                         const Options& options) {
  return std::unique_ptr<Context>(new Context(std::move(boot), options));
}

std::unique_ptr<Context> Context::fromEnvironment(const Options& options) {
  return create(bootstrap::makeFromEnvironment(), options);
}

Context::~Context() {
  inboxes_.reset();  // the progress thread ends
  if (!finalized_) {
    try {
      // Not collective here: just release everything in order.
      p2p_.reset();
      world_.reset();
      self_.reset();
      dropKept();
      endpoints_.clear();
      allocations_.clear();
    } catch (const std::exception& e) {
      log::core().warn("context teardown: {}", e.what());
    }
  }
}

const std::vector<std::byte>& Context::peerBlob(int worldRank) {
  auto& b = blobs_[static_cast<std::size_t>(worldRank)];
  if (b.empty()) {
    auto got = boot_->lookup(worldRank);
    std::uint64_t n = 0;
    if (got.size() >= 8) std::memcpy(&n, got.data(), 8);
    if (got.size() < 8 || n > got.size() - 8) {
      throw Error(kErrOther, "bootstrap: rank " + std::to_string(worldRank) +
                                 " published malformed start-up data (" +
                                 std::to_string(got.size()) + " bytes)");
    }
    b = std::move(got);  // kept only once it parses
  }
  return b;
}

std::vector<std::byte> Context::p2pInfo(int worldRank) {
  const auto second = secondPart(peerBlob(worldRank));
  std::uint64_t n = 0;
  if (second.size() >= 8) std::memcpy(&n, second.data(), 8);
  if (second.size() < 8 || n > second.size() - 8) {
    throw Error(kErrOther, "bootstrap: rank " + std::to_string(worldRank) +
                               " published malformed start-up data");
  }
  return secondPart(second);
}

std::string Context::transportName() const { return transport_->name(); }

transport::Endpoint& Context::endpoint(int worldRank) {
  auto& ep = endpoints_[static_cast<std::size_t>(worldRank)];
  if (!ep) {
    try {
      ep = transport_->connect(worldRank, firstPart(peerBlob(worldRank)));
    } catch (const Error& e) {
      // Say which peer: across hosts this usually means that rank (or its host) is gone.
      throw Error(e.errorClass(),
                  "connecting to rank " + std::to_string(worldRank) + ": " + e.what());
    }
  }
  return *ep;
}

void* Context::allocMemory(std::size_t len) {
  // A unique, usable address even for 0 bytes, as malloc gives.
  auto r =
      transport_->registerMemory(nullptr, std::max<std::size_t>(len, 64),
                                 transport::Placement::kAllocate, transport::Access::kRemoteAll);
  void* base = r->base();
  allocations_[reinterpret_cast<std::uintptr_t>(base)] = Allocation{std::move(r), {}};
  return base;
}

bool Context::freeMemory(void* p) {
  if (allocations_.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) return false;
  ++memoryFrees_;
  return true;
}

transport::SharedPagesCache& Context::sharedSends(bool firstUse) {
  if (!sharedSends_) {
    sharedSends_ = std::make_unique<transport::SharedPagesCache>(firstUse, singleThreaded_);
  }
  return *sharedSends_;
}

std::unique_ptr<transport::MemoryRegion> Context::takeScratch(ScratchUse use, std::size_t bytes,
                                                              std::uint64_t& state) {
  for (auto it = scratch_.rbegin(); it != scratch_.rend(); ++it) {
    if (it->use == use && it->region->length() == bytes) {
      auto r = std::move(it->region);
      state = it->state;
      scratch_.erase(std::next(it).base());
      return r;
    }
  }
  return nullptr;
}

void Context::keepScratch(ScratchUse use, std::unique_ptr<transport::MemoryRegion> region,
                          std::uint64_t state) {
  const auto same = [&](const Scratch& s) { return s.use == use; };
  if (static_cast<std::size_t>(std::ranges::count_if(scratch_, same)) == kScratchKept) {
    scratch_.erase(std::ranges::find_if(scratch_, same));
  }
  scratch_.push_back({use, std::move(region), state});
}

std::shared_ptr<transport::RemoteKey> Context::peerKey(
    int worldRank, std::span<const std::byte> packed,
    const std::function<bool(const transport::RemoteKey&)>& mapsIt) {
  for (auto it = peerKeys_.begin(); it != peerKeys_.end(); ++it) {
    if (it->worldRank == worldRank && std::ranges::equal(it->packed, packed)) {
      if (!mapsIt(*it->key)) {  // the dead memory the mapping keeps alive goes with it
        peerKeys_.erase(it);
        return nullptr;
      }
      auto key = it->key;
      std::rotate(it, std::next(it), peerKeys_.end());  // now the most recently used
      return key;
    }
  }
  return nullptr;
}

void Context::keepPeerKey(int worldRank, std::span<const std::byte> packed,
                          std::shared_ptr<transport::RemoteKey> key) {
  forgetPeerKey(worldRank, packed);
  if (peerKeys_.size() == kPeerKeysKept) peerKeys_.erase(peerKeys_.begin());
  peerKeys_.push_back({worldRank, {packed.begin(), packed.end()}, std::move(key)});
}

void Context::forgetPeerKey(int worldRank, std::span<const std::byte> packed) {
  std::erase_if(peerKeys_, [&](const PeerKey& k) {
    return k.worldRank == worldRank && std::ranges::equal(k.packed, packed);
  });
}

std::int64_t& Context::reachablePid(int worldRank) {
  if (reachablePids_.empty()) reachablePids_.assign(static_cast<std::size_t>(size_), 0);
  return reachablePids_.at(static_cast<std::size_t>(worldRank));
}

void Context::dropKept() {
  peerKeys_.clear();
  scratch_.clear();
}

const std::vector<std::byte>* Context::memoryKey(const void* p, std::size_t len) {
  const Allocation* a = findAllocation(p, len);
  if (a == nullptr) return nullptr;
  if (a->key.empty()) a->key = a->region->packRkey();
  return &a->key;
}

const Context::Allocation* Context::findAllocation(const void* p, std::size_t len) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocations_.upper_bound(a);
  if (it == allocations_.begin()) return nullptr;
  --it;
  return a + len <= it->first + it->second.region->length() ? &it->second : nullptr;
}

const transport::MemoryRegion* Context::findMemory(const void* p, std::size_t len) const {
  const Allocation* a = findAllocation(p, len);
  return a != nullptr ? a->region.get() : nullptr;
}

bool Context::sameNode(const Comm& comm) const { return sameNode(comm.worldRanks()); }

bool Context::sameNode(std::span<const int> worldRanks) const {
  // Every member answers alike: it is on one node with all others exactly when all of them are
  // on its node.
  return std::ranges::all_of(worldRanks, [&](int r) {
    return std::binary_search(nodePeers_.begin(), nodePeers_.end(), r);
  });
}

bool Context::accumulateByMessage(const Comm& comm) const {
  if (accMode_ != AccMode::kAuto) return accMode_ == AccMode::kMessage;
  return !sameNode(comm);
}

detail::Inboxes& Context::inboxes() {
  if (!inboxes_) inboxes_ = std::make_unique<detail::Inboxes>(progressThread_);
  return *inboxes_;
}

bool Context::serviceInboxes() { return inboxes_ && inboxes_->serviceFromOwner(); }

bool Context::progress() {
  bool worked = transport_->progress() != 0;
  if (inboxes_) worked = inboxes_->serviceFromOwner() || worked;
  if (p2p_) worked = p2p_->poll() || worked;
  if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) {
    std::string why = boot_->failure();
    throw Error(kErrOther, why.empty() ? "cancelled: another rank failed" : why);
  }
  return worked;
}

void Context::placementWord(int worldRank, std::uint64_t* word) noexcept {
  if (!balance_) return;
  auto it = std::lower_bound(nodePeers_.begin(), nodePeers_.end(), worldRank);
  if (it == nodePeers_.end() || *it != worldRank) return;
  placeWords_[static_cast<std::size_t>(it - nodePeers_.begin())].store(word,
                                                                       std::memory_order_release);
}

void Context::clearPlacement() noexcept {
  if (!balance_) return;
  // No look in progress uses a word after this: a look claims `looking_` and rereads them.
  while (looking_.exchange(true, std::memory_order_acquire)) sched_yield();
  for (std::size_t i = 0; i < nodePeers_.size(); ++i) {
    placeWords_[i].store(nullptr, std::memory_order_relaxed);
  }
  looking_.store(false, std::memory_order_release);
}

void Context::balanceCores(std::int64_t now) noexcept {
  // With more ranks than CPUs the scheduler may leave them unevenly spread for a whole run:
  // 4 ranks on 2 cores split 3 + 1 in about one launch of three, and every small collective
  // then took 3.5-5 us instead of 2-2.5 (the crowded core runs three ranks in turn per call).
  // It evens them out by itself only after 40-185 ms here: every rank is runnable and
  // cache-hot all the time. A rank that sees its CPU crowded moves itself (within 0.5-2 ms):
  // its affinity set to the emptier CPU alone, then back to what it was, which leaves it there.
  constexpr std::int64_t kLookEveryNs = 50'000;
  constexpr std::int64_t kStayNs = 2'000'000;  // after a move, how long a rank stays put
  if (!balance_ || now < nextLook_.load(std::memory_order_relaxed)) return;
  if (looking_.exchange(true, std::memory_order_acquire)) return;  // another thread looks
  nextLook_.store(now + kLookEveryNs, std::memory_order_relaxed);
  const std::size_t me = static_cast<std::size_t>(
      std::lower_bound(nodePeers_.begin(), nodePeers_.end(), rank_) - nodePeers_.begin());
  const int cpu = sched_getcpu();
  std::uint64_t* mine = placeWords_[me].load(std::memory_order_acquire);
  if (cpu >= 0 && mine != nullptr && cpu != cpuShown_) {
    std::atomic_ref<std::uint64_t>(*mine).store(static_cast<std::uint64_t>(cpu) + 1,
                                                std::memory_order_relaxed);
    cpuShown_ = cpu;
  }
  auto done = [&] { looking_.store(false, std::memory_order_release); };
  if (cpu < 0 || mine == nullptr || now < stayUntil_) return done();
  detail::SmallVec<int, 16> shown;
  for (std::size_t i = 0; i < nodePeers_.size(); ++i) {
    std::uint64_t* w = placeWords_[i].load(std::memory_order_acquire);
    const std::uint64_t v =
        w != nullptr ? std::atomic_ref<std::uint64_t>(*w).load(std::memory_order_relaxed) : 0;
    shown.push_back(static_cast<int>(v) - 1);
  }
  const int to = detail::balanceTarget(std::span<const int>(shown.data(), shown.size()), me, cpus_);
  if (to < 0) return done();
  cpu_set_t now_set;
  CPU_ZERO(&now_set);
  if (sched_getaffinity(0, sizeof now_set, &now_set) == 0 && CPU_ISSET(to, &now_set) &&
      CPU_COUNT(&now_set) >= 2) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) {
      (void)sched_setaffinity(0, sizeof now_set, &now_set);
      std::atomic_ref<std::uint64_t>(*mine).store(static_cast<std::uint64_t>(to) + 1,
                                                  std::memory_order_relaxed);
      cpuShown_ = to;
      SPDLOG_LOGGER_DEBUG(&log::core(), "rank {} moves from CPU {} to {}", rank_, cpu, to);
    }
  }
  stayUntil_ = now + kStayNs;
  done();
}

void Context::yieldShared(unsigned& alone) {
  // Alone on its core: every yield comes straight back (0.6 us here, against 3 us when another
  // task runs meanwhile). With more ranks than cores, the others then crowd the other cores
  // (4 ranks on 2 cores split 3 + 1), each getting a third of one, and the scheduler does not
  // move one over while all of them are runnable: one launch in three ran a 4-rank alltoall
  // of 256 KiB at 83-86 us instead of 54-55. Sleeping a moment leaves this core idle, and an
  // idle core pulls a waiting task over.
  constexpr std::int64_t kSwitched = 1500;  // ns: a yield this long ran another task
  constexpr unsigned kAloneYields = 64;
  constexpr long kRoomNs = 20'000;
  const std::int64_t t0 = transport::nowNs();
  balanceCores(t0);
  sched_yield();
  if (transport::nowNs() - t0 > kSwitched) {
    alone = 0;
    return;
  }
  if (++alone < kAloneYields) return;
  alone = 0;
  timespec ts{0, kRoomNs};
  nanosleep(&ts, nullptr);
}

void Context::yieldCallLock() {
  if (callLock_ != nullptr) callLock_->yield();
}

void Context::backoff(unsigned spins, std::int64_t& since, unsigned& alone, Drive drive) {
  // This wait's first back-off (waitPastTight's polls start at tightSpins(); the back-off comes
  // at every poll oversubscribed, at every 16th otherwise): the hang report's "for 12.0 s".
  if (spins == tightSpins() + (oversubscribed_ ? 0U : 15U)) [[unlikely]]
    hang::waitBegan();
  // Work done here (a peer's software atomic or active message served, say) restarts the
  // wait's clock: a rank that serves its peers while it waits stays as quick to answer as in
  // the first 2 ms, and only a wait with nothing to do falls back to sleeping. (A target in a
  // long fence while its peer ran fetch_and_op on a create window answered in 4-10 us from
  // the progress thread, or 10 ms without it, instead of 1 us.)
  if (callLock_ != nullptr) callLock_->yield();  // other threads' MPI calls run meanwhile
  if (drive == Drive::kAlways || !oversubscribed_ || (spins & 3U) == 3U) {
    if (progress()) since = 0;
  }
  if (spinWait_) return;  // ONESIDED_WAIT=spin: one rank per core, never give it up
  // Spin first (latency). With more ranks than cores, yield at once instead: the rank this one
  // waits for needs the core now (Open MPI's yield_when_idle: 4 ranks on 2 cores, a barrier
  // took 110-190 us spinning 4096 rounds first, against 5 us yielding at once).
  // `spins` counts polls; oversubscribed, every poll comes here and yields.
  constexpr unsigned kSpin = 1U << 12;
  constexpr unsigned kYield = 1U << 14;
  if (!oversubscribed_ && spins < kSpin) return;
  // What follows gives the core away: other threads' calls (a nonblocking collective's thread,
  // say) run meanwhile instead of waiting for this thread's sleep to end.
  const detail::CallLock::Released released(callLock_);
  if (oversubscribed_ && spins < kYield) {
    yieldShared(alone);
    return;
  }
  // Then, once the wait has idled 2 ms, sleep in proportion to how long it has idled
  // (transport::idleSleepNs; at most 10 ms here). Fixed short sleeps (1-64 us) cost a rank that
  // waits in a fence while its peer streams data a fifth of the bandwidth over soft-RoCE: every
  // wake-up is a timer interrupt and a context switch on the CPUs that also run the transfer.
  constexpr std::int64_t kMaxSleep = 10'000'000;
  const std::int64_t ns = transport::idleSleepNs(since, kMaxSleep);
  if (ns == 0) {
    if (oversubscribed_) sched_yield();
    return;
  }
  counters::get().waitSleepNs.add(static_cast<std::uint64_t>(ns));  // MPI_T's wait_sleep_time
  timespec ts{0, static_cast<long>(ns)};
  nanosleep(&ts, nullptr);
}

void Context::finalize() {
  if (finalized_) return;
  inboxes_.reset();
  p2p_->drain();  // every message written; from here on this rank writes into no peer's region
  transport_->flushAll();
  world_->barrier();
  p2p_.reset();  // every rank has drained: nobody writes into this region any more
  world_.reset();
  self_.reset();
  dropKept();
  endpoints_.clear();
  allocations_.clear();
  boot_->barrier();  // nobody tears its worker down while a peer still closes endpoints to it
  boot_->finalize();
  finalized_ = true;
}

}  // namespace onesided
