// SPDX-License-Identifier: BSD-3-Clause
// onesided-run -n N [--timeout S] prog args...
//
// Starts N ranks on this machine, each in its own process group, and serves their rendezvous
// (src/bootstrap/wire.hpp) on 127.0.0.1. When a rank fails (non-zero exit, signal, MPI_Abort, or
// exit without MPI_Finalize) it prints one line naming the rank, stops the others (SIGTERM to
// each process group, SIGKILL after a short grace) and exits non-zero. Ctrl-C / SIGTERM /
// SIGHUP are forwarded the same way. No process of the job outlives it.
//
// The rendezvous is authenticated and bounded (wire.hpp): the job's secret goes to the ranks in
// their environment only; a connection that does not prove it within kAuthSeconds, sends
// anything before its proof, or claims a rank already claimed is dropped with a line on stderr
// (at most a few of each kind); unauthenticated connections are at most kMaxPending at a time
// and buffer at most one hello each; every message has a maximum length, checked before its
// payload is buffered; every step of the loop is bounded, so signals are always answered.
//
// The hang report (--hang-timeout S, or SIGQUIT): once the job has run S seconds, or when the
// launcher gets SIGQUIT, every rank that has reached MPI_Init is sent kReportSignal; its handler
// (src/hang.cpp) writes one line saying what it is doing (the MPI call, its communicator or
// window, how long it has waited and for whom) into a pipe the launcher made for the job
// (ONESIDED_REPORT_FD). The launcher prints the lines in rank order (at most kReportSeconds
// after asking), then ends the job non-zero. With stdout not a terminal (CI, a batch job) the
// default is kDefaultHangTimeout, announced at start-up; on a terminal there is none (SIGQUIT,
// Ctrl-backslash, asks for the report).
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
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bootstrap/hmac.hpp"
#include "bootstrap/wire.hpp"
#include "settings.hpp"

namespace {

namespace wire = onesided::bootstrap::wire;
using wire::Header;
using wire::Type;

constexpr double kGraceSeconds = 0.3;
/// --hang-timeout's default when stdout is not a terminal.
constexpr double kDefaultHangTimeout = 600;
/// How long the ranks have to answer the hang report.
constexpr double kReportSeconds = 2;
/// The signal that asks a rank for its line (SIGRTMIN + this; the ranks are told the number).
constexpr int kReportSignalOffset = 4;
/// A connection must prove the secret within this many seconds of being accepted.
constexpr double kAuthSeconds = 5;
/// Unauthenticated connections held at once; beyond it the oldest is dropped. A rank proves
/// itself within a round trip of connecting, so only a flood ever reaches this.
constexpr std::size_t kMaxPending = 128;
/// Connections accepted per turn of the loop, and bytes read per rank per turn: bounded, so a
/// flood cannot keep the loop from its signals.
constexpr int kAcceptsPerTurn = 64;
constexpr std::size_t kReadPerTurn = 1 << 20;
/// The poll entries before the connections': the signalfd, the listening socket, the report pipe.
constexpr std::size_t kFixedFds = 3;
/// Lines of each kind of refused connection printed; further ones are counted only.
constexpr int kNotesPerKind = 5;

double now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void say(const std::string& line) {
  std::string l = "onesided-run: " + line + "\n";
  (void)!::write(STDERR_FILENO, l.data(), l.size());
}

void randomBytes(std::span<std::byte> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
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
  std::string in;                                      // bytes received, not yet parsed
  std::optional<std::vector<char>> gather;             // this rank's blob of the current allgather
  std::deque<std::shared_ptr<const std::string>> out;  // messages to send, the first from outPos
  std::size_t outPos = 0;
};

/// A connection that has not proved the secret yet: it was sent `nonce`, and nothing but one
/// kHello (header and kHelloLen bytes) is read from it.
struct Pending {
  Fd conn;
  double deadline = 0;
  std::array<std::byte, wire::kNonceBytes> nonce{};
  std::array<char, sizeof(Header) + wire::kHelloLen> in{};
  std::size_t got = 0;
};

/// What next() found at the front of a rank's input.
enum class Frame { kIncomplete, kMessage, kBad };

/// Pops one complete message off `in` into `h` and `payload`. A header whose type a rank does
/// not send or whose length exceeds that type's maximum is kBad, before any payload is kept.
Frame next(std::string& in, Header& h, std::string& payload) {
  if (in.size() < sizeof h) return Frame::kIncomplete;
  std::memcpy(&h, in.data(), sizeof h);
  if (!wire::knownFromRank(h.type) || h.len > wire::maxLenFromRank(h.type)) return Frame::kBad;
  if (in.size() - sizeof h < h.len) return Frame::kIncomplete;  // h.len is small: no wrap
  payload.assign(in, sizeof h, static_cast<std::size_t>(h.len));
  in.erase(0, sizeof h + static_cast<std::size_t>(h.len));
  return Frame::kMessage;
}

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
  Launcher(int n, double timeout, double hangTimeout, bool bind, std::vector<std::string> argv)
      : n_(n),
        timeout_(timeout),
        hangTimeout_(hangTimeout),
        bind_(bind ? coreBindings(n) : std::vector<cpu_set_t>{}),
        argv_(std::move(argv)),
        ranks_(static_cast<std::size_t>(n)),
        aborted_(static_cast<std::size_t>(n), false) {
    randomBytes(secret_);
  }

  int run() {
    listen();
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, &oldMask_);
    sigfd_ = Fd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigfd_) {
      say(std::string("signalfd: ") + std::strerror(errno));
      return 1;
    }
    if (hangTimeout_ < 0) {  // the default
      hangTimeout_ = isatty(STDOUT_FILENO) == 1 ? 0 : kDefaultHangTimeout;
      if (hangTimeout_ > 0) {
        say("warning: stdout is not a terminal: a job still running after " + fmt(hangTimeout_) +
            " s gets a hang report and is ended (--hang-timeout S to change it, 0: never)");
      }
    }
    jobid_ = std::to_string(getpid()) + "." + std::to_string(time(nullptr));
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0) {
      say(std::string("pipe: ") + std::strerror(errno));
      return 1;
    }
    reportIn_ = Fd(pipeFds[0]);
    reportOut_ = Fd(pipeFds[1]);
    for (int r = 0; r < n_; ++r) spawn(r);
    reportOut_.reset();  // the ranks hold it
    const double start = now();
    const double deadline = timeout_ > 0 ? start + timeout_ : 0;
    const double hangAt = hangTimeout_ > 0 ? start + hangTimeout_ : 0;
    while (alive() > 0) {
      // fds[kFixedFds..]: pending connections, then ranks' connections; `who` says which each is,
      // as it was when polled (handling one entry may promote a pending connection to a rank's).
      expirePending();
      if (acceptPausedUntil_ > 0 && now() >= acceptPausedUntil_) acceptPausedUntil_ = 0;
      std::vector<pollfd> fds;
      std::vector<int> who;  // >= 0: rank; < 0: pending connection -1 - k
      fds.push_back({sigfd_.get(), POLLIN, 0});
      // Not while accept() is out of descriptors: the socket would stay readable and spin.
      fds.push_back({acceptPausedUntil_ == 0 ? listen_.get() : -1, POLLIN, 0});
      fds.push_back({reportIn_.get(), POLLIN, 0});  // ranks' report lines (only when asked)
      for (std::size_t k = 0; k < pending_.size(); ++k) {
        fds.push_back({pending_[k].conn.get(), POLLIN, 0});
        who.push_back(-1 - static_cast<int>(k));
      }
      for (int r = 0; r < n_; ++r) {
        const auto& rk = ranks_[static_cast<std::size_t>(r)];
        if (rk.conn) {
          const short events = static_cast<short>(POLLIN | (rk.out.empty() ? 0 : POLLOUT));
          fds.push_back({rk.conn.get(), events, 0});
          who.push_back(r);
        }
      }
      double wake = -1;
      auto wakeBy = [&wake](double t) {
        if (wake < 0 || t < wake) wake = t;
      };
      if (deadline > 0 && !stopping_) wakeBy(deadline);
      if (hangAt > 0 && !stopping_ && reportUntil_ == 0) wakeBy(hangAt);
      if (reportUntil_ > 0) wakeBy(reportUntil_);
      if (stopping_ && !killed_) wakeBy(killAt_);
      if (!pending_.empty()) wakeBy(pending_.front().deadline);  // the earliest: FIFO
      if (acceptPausedUntil_ > 0) wakeBy(acceptPausedUntil_);
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
          if (fds[i + kFixedFds].revents == 0) continue;
          if (who[i] < 0) {
            readPending(static_cast<std::size_t>(-1 - who[i]));
          } else if (ranks_[static_cast<std::size_t>(who[i])].conn.get() == fds[i + kFixedFds].fd) {
            if ((fds[i + kFixedFds].revents & POLLOUT) != 0) flush(who[i]);
            if ((fds[i + kFixedFds].revents & ~POLLOUT) != 0) readRank(who[i]);
          }
        }
        std::erase_if(pending_, [](const Pending& p) { return !p.conn; });
        if (fds[1].revents != 0) accept();
        if (fds[2].revents != 0) readReport();
      }
      if (hangAt > 0 && !stopping_ && reportUntil_ == 0 && now() >= hangAt) {
        say("warning: the job has run " + fmt(hangTimeout_) +
            " s (--hang-timeout): asking every rank what it is doing, then ending the job");
        askReport(124);
      }
      if (reportUntil_ > 0 && (answered() || now() >= reportUntil_)) printReport();
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

  void spawn(int r) {
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
      setenv("ONESIDED_JOBID", jobid_.c_str(), 1);
      // The hang report's pipe and signal (src/hang.cpp), kept open across exec.
      if (fcntl(reportOut_.get(), F_SETFD, 0) == 0) {
        setenv("ONESIDED_REPORT_FD", std::to_string(reportOut_.get()).c_str(), 1);
        setenv("ONESIDED_REPORT_SIGNAL", std::to_string(reportSignal()).c_str(), 1);
      }
      // The secret: in the environment only (readable by this user and root, as the rank's
      // memory is), never in argv (ps shows argv to everyone) nor in a file.
      setenv("ONESIDED_SECRET", onesided::bootstrap::toHex(secret_).c_str(), 1);
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

  /// Accepts what is waiting (a bounded number per turn) and sends each its challenge.
  void accept() {
    for (int i = 0; i < kAcceptsPerTurn; ++i) {
      int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: free the oldest unauthenticated one, or rest a little.
          if (!pending_.empty()) {
            note(kDropFlood, "out of descriptors: dropping the oldest unauthenticated connection");
            pending_.erase(pending_.begin());
            continue;
          }
          acceptPausedUntil_ = now() + 0.1;
        }
        return;
      }
      acceptPausedUntil_ = 0;
      Pending p;
      p.conn = Fd(fd);
      p.deadline = now() + kAuthSeconds;
      randomBytes(p.nonce);
      std::array<char, sizeof(Header) + wire::kNonceBytes> challenge{};
      const Header h{Type::kChallenge, 0, wire::kNonceBytes};
      std::memcpy(challenge.data(), &h, sizeof h);
      std::memcpy(challenge.data() + sizeof h, p.nonce.data(), p.nonce.size());
      // A fresh socket's buffer takes 48 bytes at once; anything else is not worth waiting for.
      if (::send(fd, challenge.data(), challenge.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
          static_cast<ssize_t>(challenge.size())) {
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (pending_.size() >= kMaxPending) {
        note(kDropFlood, "more than " + std::to_string(kMaxPending) +
                             " unauthenticated connections: dropping the oldest");
        pending_.erase(pending_.begin());
      }
      pending_.push_back(std::move(p));
    }
  }

  /// Drops the connections whose time to prove the secret is up (pending_ is in accept order).
  void expirePending() {
    const double t = now();
    while (!pending_.empty() && pending_.front().deadline <= t) {
      note(kDropTimeout,
           "dropped a connection that did not authenticate within " + fmt(kAuthSeconds) + " s");
      pending_.erase(pending_.begin());
    }
  }

  /// Reads a pending connection's hello, never more than it: whatever follows stays in the
  /// socket until the connection is a rank's.
  void readPending(std::size_t k) {
    Pending& p = pending_[k];
    if (!p.conn) return;
    ssize_t n = ::recv(p.conn.get(), p.in.data() + p.got, p.in.size() - p.got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {  // closed (or failed) before proving anything: nothing to say
      p.conn.reset();
      return;
    }
    p.got += static_cast<std::size_t>(n);
    if (p.got < sizeof(Header)) return;
    Header h{};
    std::memcpy(&h, p.in.data(), sizeof h);
    if (h.type != Type::kHello || h.len != wire::kHelloLen) {
      note(kDropFrame, "dropped a connection whose first message is not a hello (type " +
                           std::to_string(static_cast<std::uint32_t>(h.type)) + ", length " +
                           std::to_string(h.len) + ")");
      p.conn.reset();
      return;
    }
    if (p.got < p.in.size()) return;
    std::int32_t r = -1;
    std::memcpy(&r, p.in.data() + sizeof h, 4);
    const auto* theirs = reinterpret_cast<const std::byte*>(p.in.data() + sizeof h + 4);
    const std::span<const std::byte> theirNonce(theirs, wire::kNonceBytes);
    const auto* mac = theirs + wire::kNonceBytes;
    const onesided::bootstrap::Digest expect =
        wire::proof(wire::kRankLabel, secret_, p.nonce, theirNonce, r, jobid_);
    if (!onesided::bootstrap::equalConstantTime(std::span(mac, wire::kProofBytes), expect)) {
      note(kDropAuth, "dropped a connection that failed to authenticate (it claimed rank " +
                          std::to_string(r) + ")");
      refuse(p.conn, "authentication failed");
      return;
    }
    if (r < 0 || r >= n_) {  // proved the secret, so one of ours, confused
      note(kDropClaim, "dropped an authenticated connection claiming rank " + std::to_string(r) +
                           " of " + std::to_string(n_));
      refuse(p.conn, "rank " + std::to_string(r) + " is not in [0, " + std::to_string(n_) + ")");
      return;
    }
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    if (rk.connected) {
      note(kDropClaim, "dropped a second claim of rank " + std::to_string(r) +
                           " (a rank is claimed once; the first claim stands)");
      refuse(p.conn, "rank " + std::to_string(r) + " is already claimed by another connection");
      return;
    }
    rk.connected = true;
    rk.conn = std::move(p.conn);
    const onesided::bootstrap::Digest ours =
        wire::proof(wire::kLauncherLabel, secret_, p.nonce, theirNonce, r, jobid_);
    auto welcome = std::make_shared<std::string>(sizeof(Header), '\0');
    const Header w{Type::kWelcome, 0, ours.size()};
    std::memcpy(welcome->data(), &w, sizeof w);
    welcome->append(reinterpret_cast<const char*>(ours.data()), ours.size());
    rk.out.push_back(std::move(welcome));
    flush(r);
  }

  /// Tells a refused connection why (the text proves nothing), then closes it.
  static void refuse(Fd& conn, const std::string& why) {
    std::string m(sizeof(Header), '\0');
    const Header h{Type::kRefused, 0, why.size()};
    std::memcpy(m.data(), &h, sizeof h);
    m += why;
    (void)::send(conn.get(), m.data(), m.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    conn.reset();
  }

  enum NoteKind { kDropTimeout, kDropFrame, kDropAuth, kDropClaim, kDropFlood, kNoteKinds };
  /// A line about a refused connection: the first kNotesPerKind of each kind, then one saying
  /// the rest are not shown (a flood must not flood stderr).
  void note(NoteKind kind, const std::string& line) {
    const int c = ++notes_[kind];
    if (c <= kNotesPerKind) say(line);
    if (c == kNotesPerKind) say("(further lines of this kind are not shown)");
  }

  void readRank(int r) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    bool open = drain(rk.conn, rk.in, r);
    if (!open) rk.conn.reset();  // the exit (seen through SIGCHLD) decides what it meant
  }

  /// Reads what is there (at most kReadPerTurn) and handles each complete message as it comes,
  /// so the buffer holds at most one message and a read; false on EOF or error.
  bool drain(Fd& fd, std::string& in, int r) {
    char buf[65536];
    for (std::size_t total = 0; total < kReadPerTurn && fd;) {
      ssize_t n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
        total += static_cast<std::size_t>(n);
        handle(r);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      return false;
    }
    return static_cast<bool>(fd);
  }

  void handle(int r) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    Header h{};
    std::string payload;
    for (;;) {
      const Frame f = next(rk.in, h, payload);
      if (f == Frame::kIncomplete) return;
      if (f == Frame::kBad) {
        protocolError(r, "message type " + std::to_string(static_cast<std::uint32_t>(h.type)) +
                             " of " + std::to_string(h.len) + " bytes (at most " +
                             std::to_string(wire::maxLenFromRank(h.type)) + " for that type)");
        return;
      }
      switch (h.type) {
        case Type::kAllgather:
          if (rk.gather) {  // a rank waits for the reply before its next allgather
            protocolError(r, "a second allgather before the first completed");
            return;
          }
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
          protocolError(r, "message type " + std::to_string(static_cast<std::uint32_t>(h.type)) +
                               " after the hello");
          return;
      }
    }
  }

  void protocolError(int r, const std::string& what) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    if (!stopping_) {
      say("protocol error from rank " + std::to_string(r) + ": " + what);
      stop(1);
    }
    rk.in.clear();
    rk.conn.reset();
  }

  void maybeCompleteAllgather() {
    for (const auto& r : ranks_) {
      if (!r.gather) return;
    }
    auto reply = std::make_shared<std::string>(sizeof(Header), '\0');
    for (const auto& r : ranks_) {
      std::uint64_t n = r.gather->size();
      reply->append(reinterpret_cast<const char*>(&n), 8);
      reply->append(r.gather->data(), r.gather->size());
    }
    const Header h{Type::kAllgather, 0, reply->size() - sizeof(Header)};
    std::memcpy(reply->data(), &h, sizeof h);
    for (int r = 0; r < n_; ++r) {
      auto& rk = ranks_[static_cast<std::size_t>(r)];
      rk.gather.reset();
      if (rk.conn) {
        rk.out.push_back(reply);
        flush(r);
      }
    }
  }

  /// Sends what a rank's queue holds as far as its socket takes it now; the loop waits for
  /// POLLOUT for the rest, so a rank that does not read cannot stall the launcher.
  void flush(int r) {
    auto& rk = ranks_[static_cast<std::size_t>(r)];
    while (rk.conn && !rk.out.empty()) {
      const std::string& m = *rk.out.front();
      ssize_t n = ::send(rk.conn.get(), m.data() + rk.outPos, m.size() - rk.outPos,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return;
        rk.conn.reset();  // the exit (seen through SIGCHLD) decides what it meant
        break;
      }
      rk.outPos += static_cast<std::size_t>(n);
      if (rk.outPos == m.size()) {
        rk.out.pop_front();
        rk.outPos = 0;
      }
    }
    if (!rk.conn) {
      rk.out.clear();
      rk.outPos = 0;
    }
  }

  void signals() {
    signalfd_siginfo si{};
    while (::read(sigfd_.get(), &si, sizeof si) == sizeof si) {
      if (si.ssi_signo == SIGCHLD) {
        reap();
      } else if (si.ssi_signo == SIGQUIT) {
        if (!stopping_ && reportUntil_ == 0) {
          say("received SIGQUIT: asking every rank what it is doing, then ending the job");
          askReport(128 + SIGQUIT);
        }
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
        if (rk.conn && !drain(rk.conn, rk.in, r)) rk.conn.reset();
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

  static int reportSignal() { return SIGRTMIN + kReportSignalOffset; }

  /// Asks every rank that has reached MPI_Init for its line (the others get one written here);
  /// the job ends with `code` once all have answered or kReportSeconds have passed.
  void askReport(int code) {
    reportCode_ = code;
    reportUntil_ = now() + kReportSeconds;
    lines_.assign(static_cast<std::size_t>(n_), std::string());
    for (int r = 0; r < n_; ++r) {
      auto& rk = ranks_[static_cast<std::size_t>(r)];
      auto& line = lines_[static_cast<std::size_t>(r)];
      if (!rk.alive) {
        line =
            "rank " + std::to_string(r) + ": ended" + (rk.finalized ? " (after MPI_Finalize)" : "");
      } else if (!rk.connected) {
        line = "rank " + std::to_string(r) + ": not in MPI (has not reached MPI_Init)";
      } else if (::kill(rk.pid, reportSignal()) != 0) {
        line = "rank " + std::to_string(r) + ": cannot be asked (" + std::strerror(errno) + ")";
      }
    }
  }

  [[nodiscard]] bool answered() const {
    return std::all_of(lines_.begin(), lines_.end(),
                       [](const std::string& l) { return !l.empty(); });
  }

  /// Reads the ranks' lines ("rank R: ...\n", each written whole).
  void readReport() {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(reportIn_.get(), buf, sizeof buf)) > 0) {
      if (reportBuf_.size() < (1U << 20)) reportBuf_.append(buf, static_cast<std::size_t>(n));
    }
    if (n == 0) reportIn_.reset();  // no rank holds it any more: poll no longer
    for (std::size_t eol; (eol = reportBuf_.find('\n')) != std::string::npos;) {
      std::string line = reportBuf_.substr(0, eol);
      reportBuf_.erase(0, eol + 1);
      int r = -1;
      if (std::sscanf(line.c_str(), "rank %d:", &r) == 1 && r >= 0 && r < n_ && reportUntil_ > 0) {
        lines_[static_cast<std::size_t>(r)] = std::move(line);
      }
    }
  }

  void printReport() {
    say("hang report:");
    for (int r = 0; r < n_; ++r) {
      const auto& l = lines_[static_cast<std::size_t>(r)];
      say(l.empty() ? "rank " + std::to_string(r) + ": did not answer within " +
                          fmt(kReportSeconds) + " s"
                    : l);
    }
    reportUntil_ = 0;
    stop(reportCode_);
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
  double hangTimeout_;           // < 0: the default (decided in run())
  std::vector<cpu_set_t> bind_;  // rank r's CPUs (--bind-to core), or empty: unbound
  std::vector<std::string> argv_;
  std::vector<Rank> ranks_;
  std::vector<Pending> pending_;
  std::vector<bool> aborted_;  // ranks that sent kAbort (their exit status is theirs to pick)
  std::array<std::byte, wire::kSecretBytes> secret_{};
  std::string jobid_;
  std::array<int, kNoteKinds> notes_{};
  double acceptPausedUntil_ = 0;
  Fd listen_;
  Fd sigfd_;
  Fd reportIn_;   // the ranks' hang report lines
  Fd reportOut_;  // its write end, until the ranks are started
  std::string reportBuf_;
  std::vector<std::string> lines_;  // the report's line of each rank (empty: none yet)
  double reportUntil_ = 0;          // > 0: a report is being gathered until then
  int reportCode_ = 0;
  int port_ = 0;
  sigset_t oldMask_{};
  bool stopping_ = false;
  bool killed_ = false;
  double killAt_ = 0;
  int exit_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: onesided-run -n N [--timeout S] [--hang-timeout S] [--bind-to core|none] [--] prog "
      "[args...]";
  // The launcher's own options come first and are parsed strictly: an option it does not know
  // is an error, never taken for the program. The first word that is not an option (or follows
  // "--") is the program; it and everything after it are passed through untouched.
  // MPI launchers spell it -np; CLI11 takes single-dash options of one letter only.
  // docs/settings.md's tables, from the one settings table (src/settings.cpp).
  if (argc == 2 && std::strcmp(argv[1], "--settings-table") == 0) {
    std::fputs(onesided::settings::markdownTable().c_str(), stdout);
    return 0;
  }
  std::vector<std::string> ours{argv[0]};
  std::vector<std::string> prog;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      prog.assign(argv + i + 1, argv + argc);
      break;
    }
    if (a.empty() || a[0] != '-') {
      prog.assign(argv + i, argv + argc);
      break;
    }
    if (a == "-np") a = "-n";
    // Unknown options first, so that the error names them (and not, say, a missing -n when
    // "--hang-timeout 5" made "5" look like the program).
    const std::string name = a.compare(0, 2, "--") == 0 ? a.substr(0, a.find('=')) : a.substr(0, 2);
    if (name != "-h" && name != "--help" && name != "-n" && name != "--np" && name != "--timeout" &&
        name != "--hang-timeout" && name != "--bind-to") {
      std::fprintf(stderr,
                   "onesided-run: unknown option %s\n%s\n(onesided-run --help lists the options)\n",
                   a.c_str(), kUsage);
      return 2;
    }
    ours.push_back(a);
    const bool takesValue =
        a == "-n" || a == "--np" || a == "--timeout" || a == "--hang-timeout" || a == "--bind-to";
    if (takesValue && i + 1 < argc) ours.emplace_back(argv[++i]);
  }
  CLI::App app{"onesided-run: start an MPI program's ranks on this machine", "onesided-run"};
  int n = 1;
  double timeout = 0;
  app.add_option("-n,--np", n, "number of ranks (-np is also taken)")
      ->required()
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--timeout", timeout, "seconds before the job is killed (0: never, the default)")
      ->check(CLI::NonNegativeNumber);
  double hangTimeout = -1;
  app.add_option("--hang-timeout", hangTimeout,
                 "seconds after which every rank reports what it is doing (the MPI call, its "
                 "communicator or window, whom it waits for) and the job is ended (0: never; "
                 "default: 600 when stdout is not a terminal, never when it is); SIGQUIT to "
                 "onesided-run does the same at once")
      ->check(CLI::NonNegativeNumber);
  std::string bindTo = "none";
  app.add_option("--bind-to", bindTo,
                 "core: bind each rank to a core of its own when the ranks fit on the cores; "
                 "none: do not bind (default)")
      ->check(CLI::IsMember({"core", "none"}));
  app.footer(std::string(kUsage) +
             "\nThe first word that is not an option (or the word after --) is the program; it "
             "and its arguments are passed through.\naliases: mpirun, mpiexec");
  std::vector<const char*> cargs;
  for (auto& a : ours) cargs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    std::string unknown;
    for (const auto& a : app.remaining()) unknown += (unknown.empty() ? "" : " ") + a;
    std::fprintf(stderr,
                 "onesided-run: unknown option %s\n%s\n(onesided-run --help lists the options)\n",
                 unknown.c_str(), kUsage);
    return 2;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "onesided-run: %s\n%s\n(onesided-run --help lists the options)\n",
                 e.what(), kUsage);
    return 2;
  }
  if (prog.empty()) {
    std::fprintf(stderr, "onesided-run: no program given\n%s\n", kUsage);
    return 2;
  }
  try {
    return Launcher(n, timeout, hangTimeout, bindTo == "core", std::move(prog)).run();
  } catch (const std::exception& e) {
    say(e.what());
    return 1;
  }
}
