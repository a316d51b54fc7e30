// SPDX-License-Identifier: BSD-3-Clause
// The hang report's rank side (hang.hpp): the snapshot, and the signal handler that writes it.
#include "hang.hpp"
#include "settings.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace onesided::hang {

Snapshot gSnapshot;

namespace {

int gFd = -1;    // where the line goes (the launcher's pipe)
int gRank = -1;  // this rank (ONESIDED_RANK)

std::int64_t monotonicNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// A line built without allocating (async-signal-safe); what does not fit is cut.
class Line {
 public:
  Line& operator<<(const char* s) {
    for (; s != nullptr && *s != '\0' && n_ < sizeof buf_ - 1; ++s) buf_[n_++] = *s;
    return *this;
  }
  Line& operator<<(std::int64_t v) {
    char d[24];
    int k = 0;
    const bool neg = v < 0;
    std::uint64_t u = neg ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    do {
      d[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (neg) *this << "-";
    while (k > 0 && n_ < sizeof buf_ - 1) buf_[n_++] = d[--k];
    return *this;
  }
  Line& operator<<(int v) { return *this << static_cast<std::int64_t>(v); }
  /// Nanoseconds as seconds with one decimal.
  void seconds(std::int64_t ns) {
    const std::int64_t tenths = ns / 100'000'000;
    *this << tenths / 10 << "." << tenths % 10 << " s";
  }
  void end() {
    buf_[n_++] = '\n';
    std::size_t off = 0;
    while (off < n_) {
      const ssize_t w = ::write(gFd, buf_ + off, n_ - off);
      if (w <= 0) return;
      off += static_cast<std::size_t>(w);
    }
  }

 private:
  char buf_[512];  // below PIPE_BUF: the launcher gets the line in one piece
  std::size_t n_ = 0;
};

void object(Line& l, std::uint64_t on) {
  const int kind = static_cast<int>((on >> 32) & 0x7fffffff);
  const int handle = static_cast<int>(static_cast<std::uint32_t>(on));
  if (kind == kOnComm) {
    l << " (communicator ";
    if (handle == 1) {
      l << "MPI_COMM_WORLD";
    } else if (handle == 2) {
      l << "MPI_COMM_SELF";
    } else {
      l << handle;
    }
    l << ")";
  } else if (kind == kOnWin) {
    l << " (window " << handle << ")";
  }
}

void ranks(Line& l, int n, int first) {
  l << (n == 1 ? " rank" : " ranks");
  const int shown = n < kArgs - first ? n : kArgs - first;
  for (int i = 0; i < shown; ++i) {
    l << (i == 0 ? " " : ", ") << gSnapshot.arg[first + i].load(std::memory_order_relaxed);
  }
  if (n > shown) l << ", ...";
}

void waitingFor(Line& l, std::uint64_t on) {
  const int a = gSnapshot.arg[0].load(std::memory_order_relaxed);
  const int b = gSnapshot.arg[1].load(std::memory_order_relaxed);
  switch (static_cast<For>(gSnapshot.what.load(std::memory_order_acquire))) {
    case For::kNothing:
      return;
    case For::kRank:
      l << ", waiting for rank " << a;
      return;
    case For::kMessage:
      l << ", waiting for a message from ";
      if (a == kAny) {
        l << "any source";
      } else {
        l << "rank " << a;
      }
      l << " with ";
      if (b == kAny) {
        l << "any tag";
      } else {
        l << "tag " << b;
      }
      // A receive's source is a rank of its communicator, the same as a world rank in
      // MPI_COMM_WORLD only.
      if ((on & ~kInside) != pack(kOnComm, 1)) l << " (a rank of its communicator)";
      return;
    case For::kReceiver:
      l << ", waiting for rank " << a << " to receive its message (tag " << b << ")";
      return;
    case For::kPosts:
      l << ", waiting for MPI_Win_post from its start group (" << a << ":";
      ranks(l, a, 1);
      l << ")";
      return;
    case For::kCompletes:
      l << ", waiting for MPI_Win_complete from its post group (" << a << ":";
      ranks(l, a, 1);
      l << ")";
      return;
    case For::kLock:
      l << ", waiting for the lock at rank " << a;
      return;
  }
}

void report(int /*sig*/) {
  const int savedErrno = errno;
  Line l;
  l << "rank " << gRank << ": ";
  const char* call = gSnapshot.call.load(std::memory_order_relaxed);
  const std::uint64_t on = gSnapshot.on.load(std::memory_order_relaxed);
  if (call == nullptr) {
    l << "not in MPI (no MPI call yet)";
  } else if ((on & kInside) == 0) {
    l << "computing (not in MPI); its last MPI call was " << call;
    object(l, on);
  } else {
    l << "in " << call;
    object(l, on);
    const std::int64_t since = gSnapshot.waitSince.load(std::memory_order_relaxed);
    if (since != 0 && gSnapshot.waitCall.load(std::memory_order_relaxed) == call &&
        gSnapshot.waitOn.load(std::memory_order_relaxed) == (on & ~kInside)) {
      l << " for ";
      l.seconds(monotonicNs() - since);
    }
    waitingFor(l, on);
  }
  l.end();
  errno = savedErrno;
}

int envInt(const char* name, int otherwise) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return otherwise;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' && x >= 0 && x < (1L << 30) ? static_cast<int>(x) : otherwise;
}

}  // namespace

void waitBegan() noexcept {
  const std::uint64_t on = gSnapshot.on.load(std::memory_order_relaxed);
  gSnapshot.waitCall.store(gSnapshot.call.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  gSnapshot.waitOn.store(on & ~kInside, std::memory_order_relaxed);
  gSnapshot.waitSince.store(monotonicNs(), std::memory_order_relaxed);
}

void install() noexcept {
  static bool done = false;
  if (done) return;
  done = true;
  const int fd = envInt(settings::get(settings::Id::kReportFd).name, -1);
  const int sig = envInt(settings::get(settings::Id::kReportSignal).name, -1);
  if (fd < 0 || sig <= 0 || sig >= NSIG) return;
  gFd = fd;
  gRank = envInt(settings::get(settings::Id::kRank).name, -1);
  struct sigaction sa {};
  sa.sa_handler = report;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

}  // namespace onesided::hang
