// SPDX-License-Identifier: BSD-3-Clause
// onesided-run -n N [--timeout S] prog args...
//
// Starts N ranks on this machine, each in its own process group, and serves their rendezvous
// (src/bootstrap/wire.hpp) on 127.0.0.1. When a rank fails (non-zero exit, signal, MPI_Abort, or
// exit without MPI_Finalize) it prints one line naming the rank, stops the others (SIGTERM to
// each process group, SIGKILL after a short grace) and exits non-zero. Ctrl-C / SIGTERM /
// SIGHUP are forwarded the same way. No process of the job outlives it.
//
// Binding (--bind-to core; the default is none): when the ranks fit on the cores this launcher
// may run on (its own affinity: taskset, a Slurm allocation), rank r is bound to the r-th of
// those cores in hwloc's order (all of its hardware threads), as Open MPI's mpirun binds 1-2
// ranks. It is not the default because this runtime's ranks wait by polling, with helper threads
// (UCX's, the progress thread) beside them, and a bound rank cannot move away from whatever else
// wakes on its core: on this 2-core machine, 2 ranks, 7 runs each, bcast of 512 KiB took
// 150-839 us bound against 38-61 unbound, scatter of 128 KiB 16-337 against 14-17 (allgather
// of 128 KiB 16-20 bound, 17-46 unbound). More ranks than cores are never bound.
#include <arpa/inet.h>
#include <fcntl.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/wire.hpp"

namespace {

using onesided::bootstrap::wire::Header;
using onesided::bootstrap::wire::Type;

constexpr double kGraceSeconds = 0.3;

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void say(const std::string& line) {
  std::string l = "onesided-run: " + line + "\n";
  (void)!::write(STDERR_FILENO, l.data(), l.size());
}

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Rank {
  pid_t pid = -1;
  bool alive = false;
  bool connected = false;
  bool finalized = false;
  Fd conn;
  std::string in;                           // bytes received, not yet parsed
  std::optional<std::vector<char>> gather;  // this rank's blob of the current allgather
};

/// A connection that has not said hello yet.
struct Pending {
  Fd conn;
  std::string in;
};

/// The CPU sets of `n` ranks bound one per core (hwloc's order, within this process's own
/// affinity); empty when they do not fit or the topology cannot be read (then nothing is bound).
std::vector<cpu_set_t> coreBindings(int n) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return {};
  std::vector<cpu_set_t> sets;
  if (hwloc_topology_load(topo) == 0) {
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine != nullptr && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0) {
      hwloc_topology_restrict(topo, mine, 0);
    }
    hwloc_bitmap_free(mine);
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    if (hwloc_get_nbobjs_by_type(topo, type) <= 0) type = HWLOC_OBJ_PU;  // no core information
    if (n <= hwloc_get_nbobjs_by_type(topo, type)) {
      for (int r = 0; r < n; ++r) {
        const hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(r));
        cpu_set_t set;
        CPU_ZERO(&set);
        if (core == nullptr ||
            hwloc_cpuset_to_glibc_sched_affinity(topo, core->cpuset, &set, sizeof set) != 0) {
          sets.clear();
          break;
        }
        sets.push_back(set);
      }
    }
  }
  hwloc_topology_destroy(topo);
  return sets;
}

class Launcher {
 public:
  Launcher(int n, double timeout, bool bind, std::vector<std::string> argv)
      : n_(n),
        timeout_(timeout),
        bind_(bind ? coreBindings(n) : std::vector<cpu_set_t>{}),
        argv_(std::move(argv)),
        ranks_(static_cast<std::size_t>(n)),
        aborted_(static_cast<std::size_t>(n), false) {}

  int run() {
    listen();
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, &oldMask_);
    sigfd_ = Fd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigfd_) {
      say(std::string("signalfd: ") + std::strerror(errno));
      return 1;
    }
    const std::string jobid = std::to_string(getpid()) + "." + std::to_string(time(nullptr));
    for (int r = 0; r < n_; ++r) spawn(r, jobid);
    const double deadline = timeout_ > 0 ? now() + timeout_ : 0;
    while (alive() > 0) {
      // fds[2..]: pending connections, then ranks' connections; `who` says which each is, as
      // it was when polled (handling one entry may promote a pending connection to a rank's).
      std::vector<pollfd> fds;
      std::vector<int> who;  // >= 0: rank; < 0: pending connection -1 - k
      fds.push_back({sigfd_.get(), POLLIN, 0});
      fds.push_back({listen_.get(), POLLIN, 0});
      for (std::size_t k = 0; k < pending_.size(); ++k) {
        fds.push_back({pending_[k].conn.get(), POLLIN, 0});
        who.push_back(-1 - static_cast<int>(k));
      }
      for (int r = 0; r < n_; ++r) {
        if (ranks_[static_cast<std::size_t>(r)].conn) {
          fds.push_back({ranks_[static_cast<std::size_t>(r)].conn.get(), POLLIN, 0});
          who.push_back(r);
        }
      }
      double wake = -1;
      if (deadline > 0 && !stopping_) wake = deadline;
      if (stopping_ && !killed_) wake = killAt_;
      int timeoutMs = -1;
      if (wake > 0) timeoutMs = std::max(0, static_cast<int>((wake - now()) * 1000) + 1);
      int rc = ::poll(fds.data(), fds.size(), timeoutMs);
      if (rc < 0 && errno != EINTR) {
        say(std::string("poll: ") + std::strerror(errno));
        stop(1);
      }
      if (rc > 0) {
        // Exits first: when a rank dies, its peers' errors that follow from it arrive at the
        // same time, and the line printed must name the cause, not a consequence.
        if (fds[0].revents != 0) signals();
        for (std::size_t i = 0; i < who.size(); ++i) {
          if (fds[i + 2].revents == 0) continue;
          if (who[i] < 0) {
            readPending(static_cast<std::size_t>(-1 - who[i]));
          } else if (ranks_[static_cast<std::size_t>(who[i])].conn.get() == fds[i + 2].fd) {
            readRank(who[i]);
          }
        }
        if (fds[1].revents != 0) accept();
        std::erase_if(pending_, [](const Pending& p) { return !p.conn; });
      }
      if (deadline > 0 && !stopping_ && now() >= deadline) {
        say("timeout after " + fmt(timeout_) + " s, killing " + std::to_string(alive()) + " ranks");
        stop(124);
      }
      if (stopping_ && !killed_ && now() >= killAt_) {
        killAll(SIGKILL);
        killed_ = true;
      }
    }
    // Whatever a rank left behind in its process group goes too.
    for (auto& r : ranks_) {
      if (r.pid > 0) ::kill(-r.pid, SIGKILL);
    }
    return exit_;
  }

 private:
  static std::string fmt(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", s);
    return b;
  }

  [[nodiscard]] int alive() const {
    int a = 0;
    for (const auto& r : ranks_) a += r.alive ? 1 : 0;
    return a;
  }

  void listen() {
    listen_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (!listen_ || ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(listen_.get(), 1024) != 0 ||
        ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
      say(std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno));
      std::exit(1);
    }
    port_ = ntohs(sa.sin_port);
  }

  void spawn(int r, const std::string& jobid) {
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
      say(std::string("fork: ") + std::strerror(errno));
      stop(1);
      return;
    }
    if (pid == 0) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);  // the launcher died before prctl
      sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
      if (r != 0) {
        int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
          dup2(devnull, STDIN_FILENO);
          ::close(devnull);
        }
      }
      if (!bind_.empty()) {
        // Best effort: a rank that cannot be bound runs unbound.
        (void)sched_setaffinity(0, sizeof(cpu_set_t), &bind_[static_cast<std::size_t>(r)]);
      }
      setenv("ONESIDED_RANK", std::to_string(r).c_str(), 1);
      setenv("ONESIDED_SIZE", std::to_string(n_).c_str(), 1);
      setenv("ONESIDED_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("ONESIDED_LOCAL_SIZE", std::to_string(n_).c_str(), 1);
      setenv("ONESIDED_RENDEZVOUS", ("127.0.0.1:" + std::to_string(port_)).c_str(), 1);
      setenv("ONESIDED_JOBID", jobid.c_str(), 1);
      std::vector<char*> args;
      for (auto& a : argv_) args.push_back(a.data());
      args.push_back(nullptr);
      execvp(args[0], args.data());
      std::string msg =
          "onesided-run: cannot execute " + argv_[0] + ": " + std::strerror(errno) + "\n";
      (void)!::write(STDERR_FILENO, msg.data(), msg.size());
      _exit(127);
    }
    setpgid(pid, pid);  // also here, so a kill right after fork reaches the group
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    rk.pid = pid;
    rk.alive = true;
  }

  void accept() {
    for (;;) {
      int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      pending_.push_back({Fd(fd), {}});
    }
  }

  /// Reads what is there; false on EOF or error.
  static bool drain(Fd& fd, std::string& in) {
    char buf[65536];
    for (;;) {
      ssize_t n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      return false;
    }
  }

  /// Pops one complete message off `in`.
  static bool next(std::string& in, Header& h, std::string& payload) {
    if (in.size() < sizeof h) return false;
    std::memcpy(&h, in.data(), sizeof h);
    if (in.size() < sizeof h + h.len) return false;
    payload = in.substr(sizeof h, h.len);
    in.erase(0, sizeof h + h.len);
    return true;
  }

  void readPending(std::size_t k) {
    Pending& p = pending_[k];
    bool open = drain(p.conn, p.in);
    Header h{};
    std::string payload;
    if (next(p.in, h, payload)) {
      std::int32_t r = -1;
      if (h.type == Type::kHello && payload.size() == 4) std::memcpy(&r, payload.data(), 4);
      if (r < 0 || r >= n_ || ranks_[static_cast<std::size_t>(r)].connected) {
        say("protocol error: bad hello from a rank");
        p.conn.reset();
        return;
      }
      auto& rk = ranks_[static_cast<std::size_t>(r)];
      rk.connected = true;
      rk.conn = std::move(p.conn);
      rk.in = std::move(p.in);
      handle(r);
      return;
    }
    if (!open) p.conn.reset();
  }

  void readRank(int r) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    bool open = drain(rk.conn, rk.in);
    handle(r);
    if (!open) rk.conn.reset();  // the exit (seen through SIGCHLD) decides what it meant
  }

  void handle(int r) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    Header h{};
    std::string payload;
    while (next(rk.in, h, payload)) {
      switch (h.type) {
        case Type::kAllgather:
          rk.gather.emplace(payload.begin(), payload.end());
          maybeCompleteAllgather();
          break;
        case Type::kFinalize:
          rk.finalized = true;
          break;
        case Type::kAbort: {
          std::int32_t code = 1;
          if (payload.size() >= 4) std::memcpy(&code, payload.data(), 4);
          std::string text = payload.size() > 4 ? payload.substr(4) : "";
          aborted_[static_cast<std::size_t>(r)] = true;
          if (!stopping_) {
            say("rank " + std::to_string(r) + " called MPI_Abort with code " +
                std::to_string(code) + (text.empty() ? "" : ": " + text));
            stop((code & 0xff) != 0 ? (code & 0xff) : 1);
          }
          break;
        }
        default:
          if (!stopping_) {
            say("protocol error from rank " + std::to_string(r));
            stop(1);
          }
      }
    }
  }

  void maybeCompleteAllgather() {
    for (const auto& r : ranks_) {
      if (!r.gather) return;
    }
    std::string reply;
    for (const auto& r : ranks_) {
      std::uint64_t n = r.gather->size();
      reply.append(reinterpret_cast<const char*>(&n), 8);
      reply.append(r.gather->data(), r.gather->size());
    }
    Header h{Type::kAllgather, 0, reply.size()};
    for (auto& r : ranks_) {
      r.gather.reset();
      if (r.conn &&
          !(sendAll(r.conn, &h, sizeof h) && sendAll(r.conn, reply.data(), reply.size()))) {
        r.conn.reset();
      }
    }
  }

  static bool sendAll(Fd& fd, const void* data, std::size_t len) {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
      ssize_t n = ::send(fd.get(), p, len, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) {
          pollfd pfd{fd.get(), POLLOUT, 0};
          ::poll(&pfd, 1, 100);
          continue;
        }
        return false;
      }
      p += n;
      len -= static_cast<std::size_t>(n);
    }
    return true;
  }

  void signals() {
    signalfd_siginfo si{};
    while (::read(sigfd_.get(), &si, sizeof si) == sizeof si) {
      if (si.ssi_signo == SIGCHLD) {
        reap();
      } else if (!stopping_) {
        const int sig = static_cast<int>(si.ssi_signo);
        say(std::string("received ") + strsignal(sig) + ", stopping " + std::to_string(alive()) +
            " ranks");
        stop(128 + sig);
      }
    }
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int r = 0; r < n_; ++r) {
        auto& rk = ranks_[static_cast<std::size_t>(r)];
        if (rk.pid != pid) continue;
        rk.alive = false;
        // A kAbort or kFinalize sent right before exiting must be seen before the exit.
        if (rk.conn) {
          drain(rk.conn, rk.in);
          handle(r);
        }
        const std::string who = "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ")";
        if (stopping_) {
          // A rank that failed on its own while the job was coming down (not by our SIGTERM /
          // SIGKILL) may be the real cause of the failure reported first: say so too.
          std::string also;
          if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGKILL) {
            also = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                   strsignal(WTERMSIG(status)) + ")";
          } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
                     !aborted_[static_cast<std::size_t>(r)]) {
            also = "exited with status " + std::to_string(WEXITSTATUS(status));
          } else if (WIFEXITED(status) && rk.connected && !rk.finalized &&
                     !aborted_[static_cast<std::size_t>(r)]) {
            also = "exited without calling MPI_Finalize";
          }
          if (!also.empty()) say("also: " + who + " " + also);
          break;
        }
        if (WIFSIGNALED(status)) {
          int sig = WTERMSIG(status);
          say(who + " killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")");
          stop(128 + sig);
        } else if (WEXITSTATUS(status) != 0) {
          say(who + " exited with status " + std::to_string(WEXITSTATUS(status)));
          stop(WEXITSTATUS(status));
        } else if (rk.connected && !rk.finalized) {
          say(who + " exited without calling MPI_Finalize");
          stop(1);
        }
        break;
      }
    }
  }

  void stop(int code) {
    if (stopping_) return;
    stopping_ = true;
    exit_ = code;
    killAll(SIGTERM);
    killAt_ = now() + kGraceSeconds;
  }

  void killAll(int sig) {
    for (auto& r : ranks_) {
      if (r.alive) ::kill(-r.pid, sig);
    }
  }

  int n_;
  double timeout_;
  std::vector<cpu_set_t> bind_;  // rank r's CPUs (--bind-to core), or empty: unbound
  std::vector<std::string> argv_;
  std::vector<Rank> ranks_;
  std::vector<Pending> pending_;
  std::vector<bool> aborted_;  // ranks that sent kAbort (their exit status is theirs to pick)
  Fd listen_;
  Fd sigfd_;
  int port_ = 0;
  sigset_t oldMask_{};
  bool stopping_ = false;
  bool killed_ = false;
  double killAt_ = 0;
  int exit_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  // MPI launchers spell it -np; CLI11 takes single-dash options of one letter only.
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-np") args[i] = "-n";
    if (!args[i].empty() && args[i][0] != '-') break;  // the program starts here
  }
  CLI::App app{"onesided-run: start an MPI program's ranks on this machine"};
  int n = 1;
  double timeout = 0;
  app.add_option("-n,--np", n, "number of ranks")->required()->check(CLI::Range(1, 1 << 16));
  app.add_option("--timeout", timeout, "seconds before the job is killed (0: never)")
      ->check(CLI::NonNegativeNumber);
  std::string bindTo = "none";
  app.add_option("--bind-to", bindTo,
                 "core: bind each rank to a core of its own when the ranks fit on the cores; "
                 "none: do not bind (default)")
      ->check(CLI::IsMember({"core", "none"}));
  app.prefix_command();
  app.footer(
      "usage: onesided-run -n N [--timeout S] [--bind-to core|none] prog [args...]\n"
      "aliases: mpirun, mpiexec");
  std::vector<const char*> cargs;
  for (auto& a : args) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  std::vector<std::string> prog = app.remaining();
  if (!prog.empty() && prog[0] == "--") prog.erase(prog.begin());
  if (prog.empty()) {
    std::fprintf(stderr, "onesided-run: no program given\n%s", app.help().c_str());
    return 2;
  }
  try {
    return Launcher(n, timeout, bindTo == "core", std::move(prog)).run();
  } catch (const std::exception& e) {
    say(e.what());
    return 1;
  }
}
