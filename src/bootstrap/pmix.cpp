// SPDX-License-Identifier: BSD-3-Clause
// The bootstrap under a PMIx server: Slurm's srun --mpi=pmix, Open MPI's mpirun, prterun.
// Start-up data: Put + Commit, and each peer's blob read on first use with PMIx_Get_nb (direct
// modex), so start-up reads only the peers a rank talks to (publish / lookup).
// allgather = Put + Commit + Fence_nb(PMIX_COLLECT_DATA) + Get of every rank's key, driving the
// transport while the fence runs (UCX over tcp emulates RMA with active messages: a rank that
// sits in a blocking fence would stall its peers' puts). Every fence collects data, also a bare
// barrier: under Slurm 22.05's mpi/pmix a fence without PMIX_COLLECT_DATA synchronises only the
// ranks of one node (shared/recipes/launchers.md, gotcha 1).
#include <pmix.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "bootstrap/bootstrap.hpp"
#include "log.hpp"
#include "onesided/errors.hpp"

namespace onesided::bootstrap {
namespace {

std::string pmixError(pmix_status_t rc) {
  const char* s = PMIx_Error_string(rc);
  return s != nullptr ? s : std::to_string(rc);
}

/// Frees a PMIx value on every path.
struct ValuePtr {
  pmix_value_t* v = nullptr;
  ~ValuePtr() {
    if (v != nullptr) PMIX_VALUE_RELEASE(v);
  }
};

/// An event that means a rank of this job ended (or the server went away): the job cannot
/// complete any collective, so waits must end with a message instead of hanging.
bool isFatalEvent(pmix_status_t s) {
  switch (s) {
    case PMIX_ERR_PROC_ABORTED:
    case PMIX_ERR_PROC_ABORTING:
    case PMIX_ERR_LOST_CONNECTION:
    case PMIX_ERR_PROC_TERM_WO_SYNC:
    case PMIX_EVENT_PROC_TERMINATED:
    case PMIX_EVENT_JOB_END:
    case PMIX_EVENT_NODE_DOWN:
    case PMIX_ERR_PROC_KILLED_BY_CMD:
    case PMIX_ERR_PROC_ABORTED_BY_SIG:
    case PMIX_ERR_EXIT_NONZERO_TERM:
      return true;
    default:
      return false;
  }
}

class Pmix;
// PMIx is one client per process (PMIx_Init is reference-counted) and its event handlers get no
// user pointer, so the handler finds the bootstrap here.
std::atomic<Pmix*> gInstance{nullptr};

class Pmix final : public Bootstrap {
 public:
  Pmix() {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
      // PMIx_Init gives no singleton mode: a PMIx environment without its server is fatal.
      const char* ns = std::getenv("PMIX_NAMESPACE");
      throw Error(kErrOther, "bootstrap: no PMIx server reachable (PMIx_Init: " + pmixError(rc) +
                                 ", PMIX_NAMESPACE=" + (ns != nullptr ? ns : "unset") +
                                 "): start the program under srun --mpi=pmix or mpirun, or "
                                 "without PMIX_* variables");
    }
    initialized_ = true;
    rank_ = static_cast<int>(me_.rank);
    PMIX_LOAD_PROCID(&wild_, me_.nspace, PMIX_RANK_WILDCARD);
    {
      ValuePtr v;
      rc = PMIx_Get(&wild_, PMIX_JOB_SIZE, nullptr, 0, &v.v);
      if (rc != PMIX_SUCCESS || v.v == nullptr || v.v->type != PMIX_UINT32) {
        PMIx_Finalize(nullptr, 0);  // no destructor runs for a constructor that throws
        throw Error(kErrOther, "bootstrap: PMIx_Get(PMIX_JOB_SIZE): " + pmixError(rc));
      }
      size_ = static_cast<int>(v.v->data.uint32);
    }
    nodePeers_ = queryNodePeers();  // does not throw: falls back to this rank alone
    gInstance = this;
    // A default handler: every event no more specific handler takes, so a peer's death under
    // either launcher (whatever code it reports it with) reaches us.
    PMIx_Register_event_handler(nullptr, 0, nullptr, 0, &Pmix::onEvent, nullptr, nullptr);
    log::boot().debug("pmix: rank {} of {} in namespace {}, {} ranks on this node", rank_, size_,
                      me_.nspace, nodePeers_.size());
  }
  ~Pmix() override {
    gInstance = nullptr;
    if (initialized_) PMIx_Finalize(nullptr, 0);
  }
  Pmix(const Pmix&) = delete;
  Pmix& operator=(const Pmix&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::vector<int> nodePeers() const override { return nodePeers_; }
  [[nodiscard]] std::string kind() const override { return "pmix"; }
  [[nodiscard]] const std::atomic<bool>* failedFlag() const override { return &failed_; }
  [[nodiscard]] std::string failure() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return failure_;
  }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
    const std::string key = "onesided.ag." + std::to_string(seq_++);
    put(key.c_str(), mine);
    check(PMIx_Commit(), "PMIx_Commit");
    fence();
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) {
        out[static_cast<std::size_t>(r)].assign(mine.begin(), mine.end());
        continue;
      }
      const pmix_status_t st = getOnce(r, key.c_str(), out[static_cast<std::size_t>(r)]);
      if (st != PMIX_SUCCESS) getFailed(r, key.c_str(), st);
    }
    return out;
  }

  void barrier() override { fence(); }

  // Start-up data without a fence: Put + Commit here, and a peer's blob fetched only when this
  // rank first talks to it (PMIx_Get without a fence is a direct modex: the peer's server
  // answers once the peer has committed). Nothing at start-up grows with the job size.
  void publish(std::span<const std::byte> mine) override {
    mine_.assign(mine.begin(), mine.end());
    put(kInitKey, mine);
    check(PMIx_Commit(), "PMIx_Commit");
  }

  std::vector<std::byte> lookup(int rank) override {
    if (rank == rank_) return mine_;
    // A peer on this node that has not committed yet is NOT-FOUND at once (a remote one's
    // server holds the request until it has): ask again, a little later each time, until the
    // deadline. A peer that died is reported sooner, by the launcher's event.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kLookupTimeoutS);
    for (unsigned attempt = 0;; ++attempt) {
      std::vector<std::byte> out;
      const pmix_status_t st = getOnce(rank, kInitKey, out);
      if (st == PMIX_SUCCESS) return out;
      if (st != PMIX_ERR_NOT_FOUND || std::chrono::steady_clock::now() > deadline) {
        getFailed(rank, kInitKey, st);
      }
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(std::min(1000U, 10U << std::min(attempt, 7U)));
      while (std::chrono::steady_clock::now() < until) {
        throwIfFailed();
        progress();
        sched_yield();
      }
    }
  }

  void finalize() override {
    if (!initialized_) return;
    gInstance = nullptr;
    finalizing_.store(true, std::memory_order_release);
    pmix_status_t rc = PMIx_Finalize(nullptr, 0);
    initialized_ = false;
    if (rc != PMIX_SUCCESS) log::boot().warn("PMIx_Finalize: {}", pmixError(rc));
  }

  void abort(int code, std::string_view message) override {
    if (!initialized_) return;
    // Ends every rank of the job (mpirun and srun both honour it); may not return.
    PMIx_Abort(code, std::string(message).c_str(), nullptr, 0);
  }

 private:
  static void onEvent(std::size_t /*id*/, pmix_status_t status, const pmix_proc_t* source,
                      pmix_info_t info[], std::size_t ninfo, pmix_info_t* /*results*/,
                      std::size_t /*nresults*/, pmix_event_notification_cbfunc_fn_t cbfunc,
                      void* cbdata) {
    Pmix* self = gInstance.load(std::memory_order_acquire);
    log::boot().debug("pmix event {} from rank {}", pmixError(status),
                      source != nullptr ? static_cast<long>(source->rank) : -1L);
    if (self != nullptr && isFatalEvent(status) &&
        !self->finalizing_.load(std::memory_order_acquire)) {
      // Which rank: the affected proc if the launcher names one, else the event's source.
      std::string who;
      for (std::size_t i = 0; i < ninfo; ++i) {
        if (std::strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0 &&
            info[i].value.type == PMIX_PROC && info[i].value.data.proc != nullptr) {
          who = "rank " + std::to_string(info[i].value.data.proc->rank);
        }
      }
      if (who.empty() && source != nullptr && source->rank != PMIX_RANK_WILDCARD &&
          PMIX_CHECK_NSPACE(source->nspace, self->me_.nspace)) {
        who = "rank " + std::to_string(source->rank);
      }
      if (who.empty()) who = "a rank or the launcher";
      self->fail(who + " of the job ended abnormally (PMIx event " + pmixError(status) + ")");
    }
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
  }

  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.empty()) failure_ = "bootstrap: " + why;
    failed_.store(true, std::memory_order_release);
  }

  void throwIfFailed() const {
    if (failed_.load(std::memory_order_acquire)) throw Error(kErrOther, failure());
  }

  [[noreturn]] static void getFailed(int rank, const char* key, pmix_status_t st) {
    throw Error(kErrOther, std::string("bootstrap: PMIx_Get(") + key + ") from rank " +
                               std::to_string(rank) + ": " + pmixError(st));
  }

  /// One PMIx_Get_nb of rank r's byte blob under `key`, waited for while the transport
  /// progresses.
  pmix_status_t getOnce(int rank, const char* key, std::vector<std::byte>& out) {
    struct Got {
      std::atomic<bool> done{false};
      pmix_status_t status = PMIX_SUCCESS;
      std::vector<std::byte> bytes;
    };
    auto* g = new Got;  // outlives this frame if we leave by an exception before the callback
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me_.nspace, static_cast<pmix_rank_t>(rank));
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    int timeout = kLookupTimeoutS;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc = PMIx_Get_nb(
        &peer, key, &info, 1,
        [](pmix_status_t st, pmix_value_t* v, void* cbdata) {
          auto* gg = static_cast<Got*>(cbdata);
          gg->status = st;
          if (st == PMIX_SUCCESS && (v == nullptr || v->type != PMIX_BYTE_OBJECT)) {
            gg->status = PMIX_ERR_BAD_PARAM;
          } else if (st == PMIX_SUCCESS) {
            const auto* b = reinterpret_cast<const std::byte*>(v->data.bo.bytes);
            gg->bytes.assign(b, b + v->data.bo.size);  // the value is PMIx's after we return
          }
          gg->done.store(true, std::memory_order_release);
        },
        g);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
      delete g;
      return rc;
    }
    waitFor(g->done);
    const pmix_status_t st = g->status;
    out = std::move(g->bytes);
    delete g;
    return st;
  }

  static constexpr const char* kInitKey = "onesided.init";
  static constexpr int kLookupTimeoutS = 300;

  void put(const char* key, std::span<const std::byte> bytes) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    // PMIx_Put copies the value; a zero-length blob still needs a valid pointer.
    static char empty = 0;
    v.data.bo.bytes =
        bytes.empty() ? &empty : const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    v.data.bo.size = bytes.size();
    check(PMIx_Put(PMIX_GLOBAL, key, &v), "PMIx_Put");
  }

  /// Waits for a PMIx callback's flag while the transport progresses; ends with the launcher's
  /// message when a rank of the job died meanwhile.
  void waitFor(const std::atomic<bool>& done) {
    for (unsigned i = 0; !done.load(std::memory_order_acquire); ++i) {
      if (failed_.load(std::memory_order_acquire)) {
        // The callback may still fire later: its small record is leaked rather than raced on.
        throwIfFailed();
      }
      progress();
      if (i < 1024) continue;
      if (i < 4096) {
        sched_yield();
        continue;
      }
      // Ranks may outnumber cores (several per namespace host here): give the core away.
      timespec ts{0, 20 * 1000};
      nanosleep(&ts, nullptr);
    }
  }

  void check(pmix_status_t rc, const char* what) const {
    if (rc != PMIX_SUCCESS) {
      throwIfFailed();
      throw Error(kErrOther, std::string("bootstrap: ") + what + ": " + pmixError(rc));
    }
  }

  /// A fence over the whole namespace that collects data (see the file comment), waited for
  /// while the transport progresses. The callback runs on PMIx's progress thread.
  void fence() {
    struct Done {
      std::atomic<bool> done{false};
      pmix_status_t status = PMIX_SUCCESS;
    };
    auto* d = new Done;  // outlives this frame if we leave by an exception before the callback
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool collect = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence_nb(
        &wild_, 1, &info, 1,
        [](pmix_status_t st, void* cbdata) {
          auto* dd = static_cast<Done*>(cbdata);
          dd->status = st;
          dd->done.store(true, std::memory_order_release);
        },
        d);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
      delete d;
      check(rc, "PMIx_Fence_nb");
    }
    waitFor(d->done);
    pmix_status_t st = d->status;
    delete d;
    check(st, "PMIx_Fence_nb");
  }

  /// World ranks on this node, from PMIX_LOCAL_PEERS (both Slurm and Open MPI provide it);
  /// falls back to comparing PMIX_HOSTNAME, then to this rank alone.
  std::vector<int> queryNodePeers() {
    std::vector<int> peers;
    ValuePtr v;
    if (PMIx_Get(&wild_, PMIX_LOCAL_PEERS, nullptr, 0, &v.v) == PMIX_SUCCESS && v.v != nullptr &&
        v.v->type == PMIX_STRING && v.v->data.string != nullptr) {
      std::stringstream ss(v.v->data.string);
      std::string item;
      while (std::getline(ss, item, ',')) {
        if (!item.empty()) peers.push_back(std::atoi(item.c_str()));
      }
    } else {
      ValuePtr mine;
      pmix_status_t rc = PMIx_Get(&me_, PMIX_HOSTNAME, nullptr, 0, &mine.v);
      for (int r = 0; rc == PMIX_SUCCESS && r < size_; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(r));
        ValuePtr h;
        if (PMIx_Get(&p, PMIX_HOSTNAME, nullptr, 0, &h.v) == PMIX_SUCCESS && h.v != nullptr &&
            h.v->type == PMIX_STRING && mine.v->type == PMIX_STRING &&
            std::strcmp(h.v->data.string, mine.v->data.string) == 0) {
          peers.push_back(r);
        }
      }
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    if (std::find(peers.begin(), peers.end(), rank_) == peers.end()) {
      peers.insert(std::upper_bound(peers.begin(), peers.end(), rank_), rank_);
    }
    return peers;
  }

  std::vector<std::byte> mine_;  // this rank's start-up blob (publish)
  pmix_proc_t me_{};
  pmix_proc_t wild_{};
  bool initialized_ = false;
  int rank_ = 0;
  int size_ = 1;
  unsigned seq_ = 0;
  std::vector<int> nodePeers_;
  std::atomic<bool> failed_{false};
  std::atomic<bool> finalizing_{false};
  mutable std::mutex mu_;
  std::string failure_;
};

}  // namespace

std::unique_ptr<Bootstrap> makePmix() { return std::make_unique<Pmix>(); }

}  // namespace onesided::bootstrap
