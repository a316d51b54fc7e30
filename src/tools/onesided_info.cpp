// SPDX-License-Identifier: BSD-3-Clause
// onesided-info [--all | --settings] [--check [--timeout S]]
//
// What this build of onesided is and what it can use on this machine: version and build
// options; the transports compiled in and what each finds here (UCX's version and the
// resources a UCP context sees; every verbs device with its ports, state, link layer and GID
// table); which transport `auto` picks and why; every ONESIDED_* setting with its current value
// and default; the limits programs meet (tags, window slots, attach tables).
//
// --check runs a two-rank self test on each usable transport: this program again, as
// `onesided-run --timeout S -n 2 onesided-info --self-test-rank` with ONESIDED_TRANSPORT set,
// whose ranks do put, get, fetch-and-op, send/receive and allreduce to each other and check
// the values; one line per transport says what works (exit status 1 when any of them failed).
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "mpi.h"
#include "settings.hpp"
#include "transport/transport.hpp"
#include "window/am.hpp"
#include "window/dynamic.hpp"

#ifdef ONESIDED_HAVE_UCX
#include <ucp/api/ucp.h>
#endif
#ifdef ONESIDED_HAVE_VERBS
#include <infiniband/verbs.h>
#endif
#ifdef ONESIDED_HAVE_PMIX
#include <pmix.h>
#endif

namespace {

namespace st = onesided::settings;

// ---- version and build -------------------------------------------------------------------

void printBuild() {
  std::printf("== version and build\n");
  std::printf("  onesided            %s\n", ONESIDED_INFO_VERSION);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  std::printf("  library             %s\n", lib);
  std::printf("  MPI standard        %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
  std::printf("  build type          %s\n", ONESIDED_INFO_BUILD_TYPE);
  std::printf("  compiler            %s\n", ONESIDED_INFO_COMPILER);
  std::printf("  sanitizers          %s\n",
              *ONESIDED_INFO_SANITIZE != '\0' ? ONESIDED_INFO_SANITIZE : "none");
  std::string built = "self";
#ifdef ONESIDED_HAVE_UCX
  built += ", ucx";
#endif
#ifdef ONESIDED_HAVE_VERBS
  built += ", verbs";
#endif
  std::printf("  transports built in %s\n", built.c_str());
#ifdef ONESIDED_HAVE_PMIX
  std::printf("  PMIx bootstrap      yes\n");
#else
  std::printf("  PMIx bootstrap      no (built with ONESIDED_WITH_PMIX=OFF)\n");
#endif
}

// ---- transports --------------------------------------------------------------------------

#ifdef ONESIDED_HAVE_UCX
/// Whether a UCP context with the features the transport asks for (ucx/transport.cpp) can be
/// made here; `resources` gets the "tl on device" pairs it found (ucp_context_print_info).
bool ucxUsable(std::string& resources, std::string& error) {
  ucp_config_t* config = nullptr;
  if (ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
    error = std::string("ucp_config_read: ") + ucs_status_string(s);
    return false;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
  ucp_context_h ctx = nullptr;
  const ucs_status_t s = ucp_init(&params, config, &ctx);
  ucp_config_release(config);
  if (s != UCS_OK) {
    error = std::string("ucp_init: ") + ucs_status_string(s);
    return false;
  }
  char* buf = nullptr;
  std::size_t size = 0;
  if (FILE* f = open_memstream(&buf, &size); f != nullptr) {
    ucp_context_print_info(ctx, f);
    std::fclose(f);
    // Lines like "#     resource 0  :  md 0  dev 0  flags -- rc_verbs/mlx5_0:1".
    std::string text(buf, size);
    std::free(buf);
    std::size_t pos = 0;
    while ((pos = text.find("resource", pos)) != std::string::npos) {
      const std::size_t eol = text.find('\n', pos);
      const std::string line = text.substr(pos, eol - pos);
      const std::size_t sp = line.find_last_of(' ');
      if (sp != std::string::npos && line.find('/') != std::string::npos) {
        resources += (resources.empty() ? "" : " ") + line.substr(sp + 1);
      }
      pos = eol;
    }
  }
  ucp_cleanup(ctx);
  return true;
}
#endif

#ifdef ONESIDED_HAVE_VERBS
const char* linkLayer(std::uint8_t l) {
  switch (l) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet (RoCE)";
    default:
      return "unspecified";
  }
}
const char* gidType(std::uint32_t t) {
  switch (t) {
    case IBV_GID_TYPE_IB:
      return "IB";
    case IBV_GID_TYPE_ROCE_V1:
      return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2:
      return "RoCE v2";
    default:
      return "?";
  }
}
bool ipv4Mapped(const ibv_gid& g) {
  static const std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, sizeof prefix) == 0;
}

/// Every device, port and non-empty GID; returns the number of active ports. The GID the
/// verbs transport uses is marked: its rule is chooseGid() in verbs/transport.cpp (RoCE v2
/// with an IPv4 address, else RoCE v2 with IPv6, else index 0; ONESIDED_GID_INDEX overrides).
int printVerbs() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n == 0) {
    std::printf("  verbs: no RDMA device%s%s\n", list == nullptr ? ": " : "",
                list == nullptr ? std::strerror(errno) : "");
    if (list != nullptr) ibv_free_device_list(list);
    return 0;
  }
  const char* gidEnv = st::raw(st::Id::kGidIndex);
  const int gidOverride = gidEnv != nullptr && *gidEnv != '\0' ? std::atoi(gidEnv) : -1;
  int active = 0;
  for (int d = 0; d < n; ++d) {
    const char* name = ibv_get_device_name(list[d]);
    ibv_context* ctx = ibv_open_device(list[d]);
    if (ctx == nullptr) {
      std::printf("  verbs: %s: cannot open: %s\n", name, std::strerror(errno));
      continue;
    }
    ibv_device_attr dev{};
    if (ibv_query_device(ctx, &dev) != 0) {
      std::printf("  verbs: %s: ibv_query_device: %s\n", name, std::strerror(errno));
      ibv_close_device(ctx);
      continue;
    }
    std::printf("  verbs: %s (%d port%s, atomics %s)\n", name, dev.phys_port_cnt,
                dev.phys_port_cnt == 1 ? "" : "s",
                dev.atomic_cap == IBV_ATOMIC_NONE ? "none" : "yes");
    for (int port = 1; port <= dev.phys_port_cnt; ++port) {
      ibv_port_attr attr{};
      if (ibv_query_port(ctx, static_cast<std::uint8_t>(port), &attr) != 0) continue;
      if (attr.state == IBV_PORT_ACTIVE) ++active;
      std::printf("    port %d: %s, %s, MTU %d\n", port, ibv_port_state_str(attr.state),
                  linkLayer(attr.link_layer), 128 << attr.active_mtu);
      int v4 = -1, v6 = -1;
      for (int i = 0; i < attr.gid_tbl_len; ++i) {
        ibv_gid_entry e{};
        if (ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i),
                             &e, 0) != 0) {
          continue;
        }
        if (e.gid_type == IBV_GID_TYPE_ROCE_V2) {
          if (ipv4Mapped(e.gid) && v4 < 0) v4 = i;
          if (!ipv4Mapped(e.gid) && v6 < 0) v6 = i;
        }
      }
      const int chosen = gidOverride >= 0 ? gidOverride : v4 >= 0 ? v4 : v6 >= 0 ? v6 : 0;
      for (int i = 0; i < attr.gid_tbl_len; ++i) {
        ibv_gid_entry e{};
        if (ibv_query_gid_ex(ctx, static_cast<std::uint32_t>(port), static_cast<std::uint32_t>(i),
                             &e, 0) != 0) {
          continue;
        }
        char text[INET6_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET6, e.gid.raw, text, sizeof text);
        std::printf("      gid %-3d %-8s %s%s\n", i, gidType(e.gid_type), text,
                    attr.link_layer == IBV_LINK_LAYER_ETHERNET && i == chosen
                        ? "  <- used by the verbs transport"
                        : "");
      }
    }
    ibv_close_device(ctx);
  }
  ibv_free_device_list(list);
  return active;
}
#endif

void printTransports() {
  std::printf("== transports\n");
  std::printf("  self: in-process only (ranks as threads, or a singleton)\n");
#ifdef ONESIDED_HAVE_UCX
  {
    std::string resources, error;
    const bool ok = ucxUsable(resources, error);
    std::printf("  ucx: UCX %s (built against %d.%d), %s\n", ucp_get_version_string(),
                UCP_API_MAJOR, UCP_API_MINOR,
                ok ? "a UCP context starts here" : ("unusable here: " + error).c_str());
    if (ok) {
      std::printf("    resources: %s\n", resources.empty() ? "(none listed)" : resources.c_str());
    }
  }
#else
  std::printf("  ucx: not built in (ONESIDED_WITH_UCX=OFF)\n");
#endif
#ifdef ONESIDED_HAVE_VERBS
  printVerbs();
#else
  std::printf("  verbs: not built in (ONESIDED_WITH_VERBS=OFF)\n");
#endif
#ifdef ONESIDED_HAVE_PMIX
  std::printf("  pmix: %s\n", PMIx_Get_version());
#endif

  // The rule is makeTransport() in src/context.cpp: the environment's choice, else verbs when
  // an RDMA port is active, else UCX when built in, else self.
  const char* env = st::raw(st::Id::kTransport);
  const bool active = onesided::transport::verbsPortActive();
  std::printf("== selection\n");
  if (env != nullptr && *env != '\0' && std::strcmp(env, "auto") != 0) {
    std::printf("  transport: %s (ONESIDED_TRANSPORT says so)\n", env);
  }
  std::string why;
  if (active) {
    why = "verbs (an RDMA port is active)";
  } else {
#ifdef ONESIDED_HAVE_UCX
    why = "ucx (no active RDMA port";
#else
    why = "self (no active RDMA port, and no UCX in this build";
#endif
#ifndef ONESIDED_HAVE_VERBS
    why += ": no verbs in this build";
#endif
    why += ")";
  }
  std::printf("  auto would choose: %s\n", why.c_str());
}

// ---- settings and limits -----------------------------------------------------------------

std::string valueText(const st::Setting& s, const st::Value& v) {
  switch (s.type) {
    case st::Type::kCount:
      return std::to_string(v.number);
    case st::Type::kChoice:
      return v.choice >= 0 ? s.choices[v.choice] : "";
    case st::Type::kText:
      return v.text;
  }
  return "";
}

void printSettings() {
  std::printf("== settings (ONESIDED_*: current value, and its default)\n");
  for (const st::Setting& s : st::all()) {
    if (s.internal) continue;
    const char* raw = std::getenv(s.name);
    std::string now;
    if (raw == nullptr || *raw == '\0') {
      now = "(unset)";
    } else if (auto v = st::current(s)) {
      now = valueText(s, *v);
    } else {
      now = std::string("'") + raw + "' (not valid: the library refuses it)";
    }
    // The defaults are written for docs/settings.md: drop the backquotes.
    std::string dflt;
    for (const char* c = s.defaultText; *c != '\0'; ++c) {
      if (*c != '`') dflt += *c;
    }
    std::printf("  %-28s %-20s default: %s\n", s.name, now.c_str(), dflt.c_str());
  }
}

void printLimits() {
  namespace d = onesided::detail;
  std::printf("== limits\n");
  // MPI_TAG_UB's value (include/mpi.h: tags run from 0 to 2^31 - 1).
  std::printf("  tags                 0 .. %d (MPI_TAG_UB)\n", INT_MAX);
  std::printf("  accumulate inbox     %zu slots of %zu bytes, per window at each rank (am.hpp)\n",
              d::kSlotCount, d::kSlotBytes);
  std::printf("  attach regions       %zu at first, doubling as needed (dynamic.hpp)\n",
              d::kInitialAttach);
  std::printf("  remote key bytes     %zu at most per attached region\n", d::kAttachKeyMax);
}

// ---- the self test -----------------------------------------------------------------------

/// One rank of the two-rank test: put, get, fetch-and-op, send/receive, allreduce. Prints
/// "self-test: rank R: STEP: WHAT" and exits 1 at the first thing that fails.
int selfTestRank(int argc, char** argv) {
  int rank = -1;
  auto fail = [&rank](const char* step, const std::string& what) {
    std::fprintf(stderr, "self-test: rank %d: %s: %s\n", rank, step, what.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  };
  auto mpiError = [](int code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    return std::string(text, static_cast<std::size_t>(len));
  };
  if (int rc = MPI_Init(&argc, &argv); rc != MPI_SUCCESS) {
    std::fprintf(stderr, "self-test: MPI_Init: %s\n", mpiError(rc).c_str());
    return 1;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) return fail("start", "needs 2 ranks, has " + std::to_string(size));
  const int peer = 1 - rank;
  int rc = MPI_SUCCESS;
#define CHECK(step, call) \
  if ((rc = (call)) != MPI_SUCCESS) return fail(step, #call ": " + mpiError(rc))

  std::int64_t* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  CHECK("window", MPI_Win_allocate(2 * sizeof(std::int64_t), sizeof(std::int64_t), MPI_INFO_NULL,
                                   MPI_COMM_WORLD, &base, &win));
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  base[0] = -1;
  base[1] = 0;
  CHECK("window", MPI_Win_fence(0, win));

  const std::int64_t mine = 100 + rank;
  CHECK("put", MPI_Put(&mine, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win));
  CHECK("put", MPI_Win_fence(0, win));
  if (base[0] != 100 + peer) {
    return fail("put",
                "read " + std::to_string(base[0]) + ", expected " + std::to_string(100 + peer));
  }
  std::int64_t got = 0;
  CHECK("get", MPI_Get(&got, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win));
  CHECK("get", MPI_Win_fence(0, win));
  if (got != mine) {
    return fail("get", "read " + std::to_string(got) + ", expected " + std::to_string(mine));
  }
  const std::int64_t add = 5 + rank;
  std::int64_t old = -1;
  CHECK("atomics", MPI_Win_lock_all(0, win));
  CHECK("atomics", MPI_Fetch_and_op(&add, &old, MPI_INT64_T, peer, 1, MPI_SUM, win));
  CHECK("atomics", MPI_Win_unlock_all(win));
  CHECK("atomics", MPI_Barrier(MPI_COMM_WORLD));
  CHECK("atomics", MPI_Win_fence(0, win));
  if (old != 0 || base[1] != 5 + peer) {
    return fail("atomics", "fetched " + std::to_string(old) + " (expected 0), then read " +
                               std::to_string(base[1]) + " (expected " + std::to_string(5 + peer) +
                               ")");
  }
  CHECK("window", MPI_Win_free(&win));

  int in = -1;
  CHECK("messages", MPI_Sendrecv(&rank, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, peer, 7,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (in != peer) {
    return fail("messages",
                "received " + std::to_string(in) + ", expected " + std::to_string(peer));
  }
  const int one = rank + 1;
  int sum = 0;
  CHECK("collectives", MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (sum != 3) return fail("collectives", "allreduce gave " + std::to_string(sum) + ", not 3");
#undef CHECK
  MPI_Finalize();
  return 0;
}

/// Runs `argv` with ONESIDED_TRANSPORT=transport; returns its exit status (or -1) and its
/// output (stdout and stderr together).
int runJob(const std::vector<std::string>& args, const std::string& transport,
           std::string& output) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    output = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    output = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    setenv("ONESIDED_TRANSPORT", transport.c_str(), 1);
    std::vector<char*> av;
    for (const auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    execv(av[0], av.data());
    std::fprintf(stderr, "exec %s: %s\n", av[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t got = 0;
  while ((got = read(fds[0], buf, sizeof buf)) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buf, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The line that says why a run failed: the self test's own, else the launcher's first.
std::string reason(const std::string& output) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t eol = output.find('\n', pos);
    if (eol == std::string::npos) eol = output.size();
    if (eol > pos) lines.push_back(output.substr(pos, eol - pos));
    pos = eol + 1;
  }
  // The rank's own words first, then the library's, then the launcher's (not its warnings).
  for (const char* prefix : {"self-test: ", "onesided: ", "onesided-run: "}) {
    for (const auto& l : lines) {
      if (l.rfind(prefix, 0) == 0 && l.find(": warning:") == std::string::npos) {
        return l.substr(std::strlen(prefix));
      }
    }
  }
  return lines.empty() ? "no output" : lines.front();
}

int check(const std::string& launcher, const std::string& self, int timeout,
          const std::string& only) {
  bool allOk = true;
  int checked = 0;
  auto run = [&](const std::string& transport) {
    if (!only.empty() && transport != only) {
      std::printf("%s: not checked: --transport %s\n", transport.c_str(), only.c_str());
      return;
    }
    std::string output;
    const int rc = runJob({launcher, "--timeout", std::to_string(timeout), "--hang-timeout", "0",
                           "-n", "2", self, "--self-test-rank"},
                          transport, output);
    ++checked;
    if (rc == 0) {
      std::printf("%s: ok (put, get, atomics, messages, collectives)\n", transport.c_str());
    } else {
      allOk = false;
      std::printf("%s: FAILED (exit %d): %s\n", transport.c_str(), rc, reason(output).c_str());
    }
    std::fflush(stdout);
  };
#ifdef ONESIDED_HAVE_UCX
  run("ucx");
#else
  std::printf("ucx: not built in\n");
#endif
#ifdef ONESIDED_HAVE_VERBS
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list != nullptr) ibv_free_device_list(list);
  if (n == 0) {
    std::printf("verbs: not checked: no RDMA device\n");
  } else if (!onesided::transport::verbsPortActive()) {
    std::printf("verbs: not checked: no active RDMA port (%d device%s)\n", n, n == 1 ? "" : "s");
  } else {
    run("verbs");
  }
#else
  std::printf("verbs: not built in\n");
#endif
  std::printf("self: not checked: in-process only\n");
  return checked > 0 && allOk ? 0 : 1;
}

std::string selfPath(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--self-test-rank") == 0) {
    return selfTestRank(argc, argv);
  }
  const std::string self = selfPath(argv[0]);
  CLI::App app{"onesided-info: what this onesided build is and can use here", "onesided-info"};
  bool all = false, settingsOnly = false, doCheck = false;
  int timeout = 30;
  std::string launcher = (std::filesystem::path(self).parent_path() / "onesided-run").string();
  app.add_flag("--all", all, "every section (the default without --settings or --check)");
  app.add_flag("--settings", settingsOnly, "only the ONESIDED_* settings");
  app.add_flag("--check", doCheck,
               "run a two-rank self test on each usable transport, one line each");
  app.add_option("--timeout", timeout, "seconds each self test may take (default 30)")
      ->check(CLI::PositiveNumber);
  app.add_option("--launcher", launcher, "onesided-run to start the self tests with")
      ->capture_default_str();
  std::string only;
  app.add_option("--transport", only, "with --check: only this transport (ucx or verbs)")
      ->check(CLI::IsMember({"ucx", "verbs"}));
  CLI11_PARSE(app, argc, argv);

  const bool sections = all || (!settingsOnly && !doCheck);
  if (sections) {
    printBuild();
    printTransports();
  }
  if (sections || settingsOnly) printSettings();
  if (sections) printLimits();
  std::fflush(stdout);
  if (doCheck) {
    if (sections || settingsOnly) std::printf("== check\n");
    std::fflush(stdout);
    return check(launcher, self, timeout, only);
  }
  return 0;
}
