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
     Verbosity::kUserBasic, Category::kTransport, false,
     "`verbs`, `ucx`, `self` (in-process only; `self_deferred` completes at flush like "
     "a NIC, for tests) or `auto` (default: verbs when an RDMA port is active, else "
     "UCX)"},
    {"ONESIDED_DEVICE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kUserBasic,
     Category::kTransport, false,
     "verbs: `device[:port]`, e.g. `mlx5_0:1` or `rxe0` (default: the first active "
     "port)"},
    {"ONESIDED_GID_INDEX", Type::kText, "auto", nullptr, 0, 0, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kTransport, false,
     "verbs on RoCE: the GID index (default: the RoCE v2 GID with an IPv4 address)"},
    {"ONESIDED_LOG", Type::kText, "off", nullptr, 0, 0, Scope::kLocal, Verbosity::kUserBasic,
     Category::kRuntime, false,
     "spdlog levels, off by default: `debug`, or per subsystem `warn,ucx=trace` "
     "(subsystems `core ucx verbs coll capi boot`)"},
    {"ONESIDED_SHARE_PAGES", Type::kChoice, "all", kSharePagesChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRma, false,
     "`0`: do not share the pages of `MPI_Win_create` windows with on-node peers; "
     "`whole`: only their whole pages (and only the whole pages of collectives' send "
     "arguments), also under `MPI_THREAD_SINGLE` (see above; default: the whole pages, "
     "and the partial ones at the ends too under `MPI_THREAD_SINGLE`)"},
    {"ONESIDED_WAIT", Type::kChoice, "adaptive", kWaitChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRuntime, false,
     "`adaptive` (default): a waiting rank spins (with more ranks than CPUs it yields "
     "after one poll, Open MPI's yield-when-idle, driving the transport's progress at "
     "every yield, or at every fourth in a collective's wait among ranks that store "
     "into each other's memory, which nothing through the transport can end; and when "
     "64 yields in a row find nothing else to run on its core it sleeps 20 us, so that "
     "the idle core takes over a rank from a crowded one); once a wait has lasted 2 ms "
     "with nothing to do it sleeps 1/32 of the time waited so far between polls (at "
     "most 10 ms), so a late wake-up costs a long wait at most 3 % and a rank idle in "
     "a barrier for seconds wakes only ~100 times a second; work found while waiting "
     "(a peer's atomic that UCX runs in software here, an active message) restarts the "
     "2 ms, so a rank that serves its peers from a long fence answers in about 0.7 us, "
     "not after a sleep (a `MPI_Fetch_and_op` to a sub-page `MPI_Win_create` window "
     "took 4-10 us before, 10 ms without the progress thread); `spin`: never yield or "
     "sleep (one rank per core)"},
    {"ONESIDED_BALANCE", Type::kChoice, "1", kBalanceChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRuntime, false,
     "`1` (default): with more ranks on a node than CPUs, a waiting rank shows the CPU "
     "it runs on (a word in its world scratch region, which its node peers map) and, "
     "when its CPU runs two more of the node's ranks than another CPU it may use, the "
     "last of them moves itself there (its affinity set to that CPU alone, then back "
     "to what it was: ranks pinned to one CPU never move). The scheduler leaves 4 "
     "ranks on 2 cores split 3 + 1 in about one launch of three (every rank is "
     "runnable and cache-hot) and took 40-185 ms here to even them out, while every "
     "small collective ran at 3.5-5 us instead of 2-2.5; a waiting rank moves within "
     "0.5-2 ms. 8 ranks on 2 cores: barrier 5.4-5.9 us against 6.1-7.5, alltoall "
     "9.0-9.6 against 10.0-11.3. Where node peers do not map each other's memory "
     "(verbs, UCX without shared memory) nobody moves. `0`: never move"},
    {"ONESIDED_ACCUMULATE", Type::kChoice, "auto", kAccumulateChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerBasic, Category::kRma, false,
     "`auto` (default): accumulates of types without NIC atomics go by active message "
     "on windows spanning nodes, by lock-protected read-modify-write on one node, and "
     "every accumulate and atomic by message on one-node create windows with partial "
     "pages (the local message mode, above); `am` or `lock` force one path (see below; "
     "no local message mode then). Must be the same on every rank"},
    {"ONESIDED_UCX_THREAD_DIRECT", Type::kChoice, "1", kUcxThreadDirectChoices, 0, 0, Scope::kLocal,
     Verbosity::kMpidevDetail, Category::kTransport, false,
     "`0`: ranks that are threads of one process reach each other's memory as "
     "processes would (mapped shared pages, cross-memory attach), so thread tests "
     "cover those paths (tests only; default: all memory directly)"},
    {"ONESIDED_PROGRESS_THREAD", Type::kChoice, "1", kProgressThreadChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kRma, false,
     "`1` (default): while the rank computes, a thread applies incoming accumulate "
     "messages, and with UCX another drives the UCX worker (operations UCX runs in "
     "software at the target; see below); `0`: both happen only when the rank calls "
     "into MPI"},
    {"ONESIDED_COLL_ALG", Type::kChoice, "auto", kCollAlgChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerBasic, Category::kCollectives, false,
     "`auto` (default), `linear` or `tree`: forces the collectives' algorithm family "
     "(see above; read when a communicator is made)"},
    {"ONESIDED_COLL_CHUNK", Type::kCount, "65536", nullptr, 8, std::uint64_t{64} << 20,
     Scope::kAllEq, Verbosity::kTunerDetail, Category::kCollectives, false,
     "most payload bytes in one scratch chunk (default 64 KiB, at most half a ring); "
     "tests use 40-64 to make every transfer many chunks"},
    {"ONESIDED_COLL_INFLIGHT", Type::kCount, "4", nullptr, 1, std::uint64_t{1} << 20, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kCollectives, false,
     "sends a collective phase has in flight at once (default 4)"},
    {"ONESIDED_COLL_ZCOPY", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false,
     "streams of at least this many bytes whose send buffer is contiguous go by "
     "rendezvous, read by the receiver from the exposed send buffer (default 16 KiB to "
     "peers reached by put; on shared memory 16 KiB for send buffers in "
     "`MPI_Alloc_mem` memory, read with loads, and for others to peers whose "
     "cross-memory-attach reads were measured fast enough 32 KiB in an exchange and "
     "128 KiB one way, see `ONESIDED_COLL_ATTACH`; 0: never; set, it applies to all of "
     "them); tests use 8 and 64 to send almost everything that way"},
    {"ONESIDED_COLL_SHARE", Type::kChoice, "auto", kCollShareChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false,
     "on one node, large send buffers' whole pages moved into a memfd their receivers "
     "map (one copy, see above): `auto` (default) on their second use in a collective, "
     "from 32 KiB; `always` on first use, from `ONESIDED_COLL_ZCOPY` bytes if set "
     "(tests); `never`"},
    {"ONESIDED_COLL_ATTACH", Type::kChoice, "auto", kCollAttachChoices, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false,
     "on one node, rendezvous streams read with `process_vm_readv` by the sender's "
     "pid: `auto` (default) where a read measured at most three copies' cost at the "
     "communicator's start, `1` wherever the kernel allows it (tests), `0` never (the "
     "ring, or a registered buffer's key); whatever the setting, not for streams the "
     "receiver folds with others or a gather's root takes with others (on 2 ranks the "
     "root's one stream of a gather or reduce goes by attach)"},
    {"ONESIDED_COPY_BACKWARD", Type::kChoice, "measure", kCopyBackwardChoices, 0, 0, Scope::kLocal,
     Verbosity::kTunerDetail, Category::kRuntime, false,
     "copies of more than 2 KiB whose destination is 1-63 bytes after the source "
     "modulo 4 KiB (a `malloc`ed buffer against a page-aligned window): `1` backward "
     "in 128-byte steps, `0` memcpy; unset, the first such copy of a process measures "
     "both once (16 KiB, best of five) and takes the faster: glibc's memcpy runs "
     "10-20x slower there on AMD EPYC, and 1.5-2x faster than the backward copy on an "
     "Intel Xeon"},
    {"ONESIDED_COLL_CELL", Type::kCount, "256", nullptr, 64, 4096, Scope::kAllEq,
     Verbosity::kMpidevDetail, Category::kCollectives, false,
     "the rings' granule in bytes (default 256, a multiple of 64): a chunk takes whole "
     "cells; tests use 64"},
    {"ONESIDED_COLL_RING", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kCollectives, false,
     "bytes of the scratch ring of each pair of members: how far a sender may run "
     "ahead of its receiver (default 1 MiB / ranks, between 2 KiB and 512 KiB)"},
    {"ONESIDED_P2P_RING", Type::kText, "auto", nullptr, 0, 0, Scope::kAllEq,
     Verbosity::kTunerDetail, Category::kP2p, false,
     "bytes of the message ring of each pair of ranks, a power of two (default 4 MiB / "
     "ranks, between 16 KiB and 128 KiB); must be the same on every rank"},
    {"ONESIDED_P2P_EAGER", Type::kText, "auto", nullptr, 0, 0, Scope::kLocal,
     Verbosity::kTunerBasic, Category::kP2p, false,
     "the largest message sent through the ring (default 8 KiB, at most a quarter ring "
     "less 48 bytes); larger ones go by rendezvous"},
    {"ONESIDED_P2P_ATTACH", Type::kChoice, "1", kP2pAttachChoices, 0, 0, Scope::kLocal,
     Verbosity::kMpidevDetail, Category::kP2p, false,
     "`1` (default): a rendezvous on one node is read with cross-memory attach where "
     "the kernel allows it; `0`: always through the transport with a registered buffer "
     "(tests)"},
    {"ONESIDED_REGCACHE_MB", Type::kCount, "1024", nullptr, 0, std::uint64_t{1} << 44,
     Scope::kLocal, Verbosity::kTunerDetail, Category::kTransport, false,
     "verbs: MiB of unregistered origin buffers (32 KiB and up) kept registered "
     "(default 1024; `0`: copy them through bounce buffers instead)"},
    {"ONESIDED_BOOTSTRAP", Type::kChoice, "auto", kBootstrapChoices, 0, 0, Scope::kAllEq,
     Verbosity::kUserDetail, Category::kLauncher, false,
     "`pmix`, `tcp` (onesided-run's rendezvous) or `singleton`; default: chosen from "
     "the environment (see \"Running under Slurm and mpirun\")"},
    {"ONESIDED_RANK", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "this rank's number in the job (set by `onesided-run`)"},
    {"ONESIDED_SIZE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "the job's number of ranks (set by `onesided-run`)"},
    {"ONESIDED_LOCAL_RANK", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "this rank's number on its node (set by `onesided-run`)"},
    {"ONESIDED_LOCAL_SIZE", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "the number of ranks on this node (set by `onesided-run`)"},
    {"ONESIDED_RENDEZVOUS", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true,
     "`HOST:PORT` of `onesided-run`'s rendezvous (set by `onesided-run`)"},
    {"ONESIDED_JOBID", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true, "the job's identifier (set by `onesided-run`)"},
    {"ONESIDED_SECRET", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true,
     "the job's secret, hex, which the rank proves to the rendezvous (set by "
     "`onesided-run`; see \"Security\" above)"},
    {"ONESIDED_REPORT_FD", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true,
     "the pipe a rank writes its hang report to (set by `onesided-run`)"},
    {"ONESIDED_REPORT_SIGNAL", Type::kText, "", nullptr, 0, 0, Scope::kLocal, Verbosity::kMpidevAll,
     Category::kLauncher, true,
     "the signal that asks a rank for its hang report (set by `onesided-run`)"},
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
  std::string t = "| variable | meaning |\n| --- | --- |\n";
  for (const Setting& s : kTable) {
    t += std::string("| `") + s.name + "` | " + s.meaning + " |\n";
  }
  return t;
}

}  // namespace onesided::settings
