// SPDX-License-Identifier: BSD-3-Clause
// The ONESIDED_* settings table. Launcher-internal variables (ONESIDED_RANK ... ONESIDED_SECRET,
// which onesided-run sets for each rank) are listed, marked internal, and are no control
// variables: a rank's identity is MPI_Comm_rank's to tell, and ONESIDED_SECRET, the job's secret
// (bootstrap/wire.hpp), must not be readable by any tool linked into the program.
#include "settings.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace onesided::settings {
namespace {

constexpr const char* kTransportChoices[] = {"auto", "verbs",         "ucx",
                                             "self", "self_deferred", nullptr};
constexpr const char* kSharePagesChoices[] = {"all", "0", "whole", nullptr};
constexpr const char* kWaitChoices[] = {"adaptive", "spin", nullptr};
constexpr const char* kBalanceChoices[] = {"0", "1", nullptr};
constexpr const char* kAccumulateChoices[] = {"auto", "am", "lock", nullptr};
constexpr const char* kUcxThreadDirectChoices[] = {"0", "1", nullptr};
constexpr const char* kProgressThreadChoices[] = {"0", "1", nullptr};
constexpr const char* kCollAlgChoices[] = {"auto", "linear", "tree", nullptr};
constexpr const char* kCollShareChoices[] = {"auto", "always", "never", nullptr};
constexpr const char* kCollAttachChoices[] = {"auto", "0", "1", nullptr};
constexpr const char* kCopyBackwardChoices[] = {"measure", "0", "1", nullptr};
constexpr const char* kP2pAttachChoices[] = {"0", "1", nullptr};
constexpr const char* kBootstrapChoices[] = {"auto", "pmix", "tcp", "singleton", nullptr};

constexpr Setting kTable[] = {
    {"ONESIDED_TRANSPORT", Type::kChoice, "auto", kTransportChoices, 0, 0, Scope::kAllEq,
     Verbosity::kUserBasic, Category::kTransport, false, "`auto`",
     "`verbs`, `ucx`, `self` (in-process only; `self_deferred` completes at flush, for tests) or "
     "`auto`: verbs when an RDMA port is active, else UCX"},
    {"ONESIDED_DEVICE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kUserBasic,
     Category::kTransport, false, "first active port",
     "verbs: `device[:port]`, e.g. `mlx5_0:1` or `rxe0`"},
    {"ONESIDED_GID_INDEX", Type::kText, "auto", nullptr, 0, 0, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kTransport, false, "the RoCE v2 GID with an IPv4 address",
     "verbs on RoCE: the GID index"},
    {"ONESIDED_LOG", Type::kText, "off", nullptr, 0, 0, Scope::kLocal, Verbosity::kUserBasic,
     Category::kRuntime, false, "off",
     "spdlog levels: `debug`, or per subsystem `warn,ucx=trace` (`core ucx verbs coll capi boot`)"},
    {"ONESIDED_SHARE_PAGES", Type::kChoice, "all", kSharePagesChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRma, false,
     "whole pages, and partial ones too under `MPI_THREAD_SINGLE`",
     "`0`: do not share `MPI_Win_create` windows' pages with on-node peers; `whole`: whole pages "
     "only (also for collectives' send arguments)"},
    {"ONESIDED_WAIT", Type::kChoice, "adaptive", kWaitChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRuntime, false, "`adaptive`",
     "`adaptive`: spin, yield when oversubscribed, then sleep in growing steps; `spin`: never "
     "yield or sleep (one rank per core)"},
    {"ONESIDED_BALANCE", Type::kChoice, "1", kBalanceChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRuntime, false, "`1`",
     "with more ranks than CPUs on a node, a waiting rank on a crowded CPU moves itself to an idle "
     "one; `0`: never move"},
    {"ONESIDED_ACCUMULATE", Type::kChoice, "auto", kAccumulateChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerBasic, Category::kRma, false, "`auto`",
     "path of accumulates without NIC atomics: `auto` (active message across nodes, locked "
     "read-modify-write on one node), `am` or `lock`; same on every rank"},
    {"ONESIDED_UCX_THREAD_DIRECT", Type::kChoice, "1", kUcxThreadDirectChoices, 0, 0, Scope::kLocal,
     Verbosity::kMpidevDetail, Category::kTransport, false, "all memory directly",
     "`0`: ranks that are threads of one process reach each other as processes would (tests)"},
    {"ONESIDED_PROGRESS_THREAD", Type::kChoice, "1", kProgressThreadChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRma, false, "`1`",
     "a thread applies accumulate messages (and with UCX one drives the worker) while the rank "
     "computes; `0`: only inside MPI calls"},
    {"ONESIDED_COLL_ALG", Type::kChoice, "auto", kCollAlgChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerBasic, Category::kCollectives, false, "`auto`",
     "`linear` or `tree` forces the algorithm family (read when a communicator is made)"},
    {"ONESIDED_COLL_CHUNK", Type::kCount, "65536", nullptr, 8, std::uint64_t{64} << 20,
     Scope::kAllEq, Verbosity::kTunerDetail, Category::kCollectives, false, "64 KiB",
     "most payload bytes in one scratch chunk (at most half a ring)"},
    {"ONESIDED_COLL_INFLIGHT", Type::kCount, "4", nullptr, 1, std::uint64_t{1} << 20, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kCollectives, false, "`4`",
     "sends a collective phase has in flight at once"},
    {"ONESIDED_COLL_ZCOPY", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false, "16 KiB (see design.md)",
     "streams of a contiguous send buffer of at least this many bytes go by rendezvous: the "
     "receiver reads them straight from the send buffer (one copy); `0`: never; set, it applies to "
     "every path (tests use 8 and 64)"},
    {"ONESIDED_COLL_SHARE", Type::kChoice, "auto", kCollShareChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false, "`auto`",
     "on one node, large send buffers' pages moved into a memfd their receivers map: `auto` on "
     "second use from 32 KiB, `always` on first use, `never`"},
    {"ONESIDED_COLL_ATTACH", Type::kChoice, "auto", kCollAttachChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false, "`auto`",
     "on one node, rendezvous streams read with `process_vm_readv`: `auto` where measured fast "
     "enough, `1` wherever possible (tests), `0` never"},
    {"ONESIDED_COPY_BACKWARD", Type::kChoice, "measure", kCopyBackwardChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kRuntime, false, "measured once",
     "copies > 2 KiB whose destination is 1-63 bytes after the source mod 4 KiB: `1` backward, `0` "
     "memcpy"},
    {"ONESIDED_COLL_CELL", Type::kCount, "256", nullptr, 64, 4096, Scope::kAllEq,
     Verbosity::kMpidevDetail, Category::kCollectives, false, "`256`",
     "the rings' granule in bytes, a multiple of 64"},
    {"ONESIDED_COLL_RING", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false, "1 MiB / ranks (2-512 KiB)",
     "bytes of the scratch ring per pair of members: how far a sender may run ahead"},
    {"ONESIDED_P2P_RING", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kP2p, false, "4 MiB / ranks (16-128 KiB)",
     "bytes of the message ring per pair of ranks, a power of two; same on every rank"},
    {"ONESIDED_P2P_EAGER", Type::kText, "auto", nullptr, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kP2p, false, "8 KiB",
     "the largest message sent through the ring (at most a quarter ring less 48 bytes); larger "
     "ones go by rendezvous"},
    {"ONESIDED_P2P_ATTACH", Type::kChoice, "1", kP2pAttachChoices, 0, 0, Scope::kLocal,
     Verbosity::kMpidevDetail, Category::kP2p, false, "`1`",
     "a rendezvous on one node is read by cross-memory attach; `0`: through the transport (tests)"},
    {"ONESIDED_REGCACHE_MB", Type::kCount, "1024", nullptr, 0, std::uint64_t{1} << 44,
     Scope::kLocal, Verbosity::kTunerDetail, Category::kTransport, false, "`1024`",
     "verbs: MiB of unregistered origin buffers (32 KiB and up) kept registered; `0`: copy through "
     "bounce buffers"},
    {"ONESIDED_BOOTSTRAP", Type::kChoice, "auto", kBootstrapChoices, 0, 0, Scope::kAllEq,
     Verbosity::kUserDetail, Category::kLauncher, false, "from the environment",
     "`pmix`, `tcp` (onesided-run's rendezvous) or `singleton`"},
    {"ONESIDED_RANK", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the rank's place in the job and on the node"},
    {"ONESIDED_SIZE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the rank's place in the job and on the node"},
    {"ONESIDED_LOCAL_RANK", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the rank's place in the job and on the node"},
    {"ONESIDED_LOCAL_SIZE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the rank's place in the job and on the node"},
    {"ONESIDED_RENDEZVOUS", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run", "where and which job to join"},
    {"ONESIDED_JOBID", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run", "where and which job to join"},
    {"ONESIDED_SECRET", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the job's secret (hex), which the rank proves to the rendezvous "
     "([security](design.md#security-of-the-launcher))"},
    {"ONESIDED_REPORT_FD", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the hang report's signal and pipe ([hang report](design.md#the-hang-report))"},
    {"ONESIDED_REPORT_SIGNAL", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "set by onesided-run",
     "the hang report's signal and pipe ([hang report](design.md#the-hang-report))"},
};
static_assert(std::size(kTable) == static_cast<std::size_t>(Id::kNum_),
              "one table row per settings::Id, in the same order");

}  // namespace

std::span<const Setting> all() noexcept { return kTable; }

const Setting& get(Id id) noexcept { return kTable[static_cast<std::size_t>(id)]; }

const char* raw(Id id) noexcept { return std::getenv(get(id).name); }

std::optional<Value> parse(const Setting& s, const char* text) {
  const std::string_view v = text != nullptr && *text != '\0' ? text : s.dflt;
  Value out;
  switch (s.type) {
    case Type::kCount: {
      // As detail::envSize reads it: decimal digits only, within [lo, hi].
      if (v.empty() || v.size() > 20) return std::nullopt;
      std::uint64_t n = 0;
      for (const char c : v) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (n > (UINT64_MAX - d) / 10) return std::nullopt;
        n = n * 10 + d;
      }
      if (n < s.lo || n > s.hi) return std::nullopt;
      out.number = n;
      break;
    }
    case Type::kChoice: {
      // ONESIDED_PROGRESS_THREAD also takes on / off for 1 / 0.
      const std::string_view w = v == "on" ? "1" : v == "off" ? "0" : v;
      for (int i = 0; s.choices[i] != nullptr; ++i) {
        if (w == s.choices[i]) out.choice = i;
      }
      if (out.choice < 0) return std::nullopt;
      break;
    }
    case Type::kText:
      out.text = std::string(v);
      break;
  }
  return out;
}

std::optional<Value> current(const Setting& s) { return parse(s, std::getenv(s.name)); }

std::string markdownTable() {
  // One table per category, in the order a reader looks for them.
  constexpr std::pair<Category, const char*> kOrder[] = {
      {Category::kTransport, "Transport"}, {Category::kRuntime, "Runtime"},
      {Category::kRma, "Windows and RMA"}, {Category::kCollectives, "Collectives"},
      {Category::kP2p, "Point-to-point"},  {Category::kLauncher, "Launcher"}};
  std::string t;
  for (const auto& [cat, title] : kOrder) {
    t += std::string("### ") + title +
         "\n\n| setting | default | what it does |\n| --- | --- | --- |\n";
    for (const Setting& s : kTable) {
      if (s.category == cat) {
        t += std::string("| `") + s.name + "` | " + s.defaultText + " | " + s.meaning + " |\n";
      }
    }
    t += "\n";
  }
  return t;
}

}  // namespace onesided::settings
