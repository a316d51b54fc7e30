// SPDX-License-Identifier: BSD-3-Clause
// The verbs transport measured the way perftest measures the device, so the two can be put side
// by side in one run (bench/rxe_compare.sh does, inside the soft-RoCE VM):
//   put_lat   ping-pong of 8-byte puts, each side polling its own memory: half the round trip
//             (ib_write_lat's method);
//   get_lat   one 8-byte get, then flush: a read round trip (ib_read_lat);
//   putflush_lat  one 8-byte put, then flush: a write and its acknowledgement (MPI_Put +
//             MPI_Win_flush at the transport, no perftest counterpart);
//   fadd_lat  one 8-byte fetch-and-add, blocking (ib_atomic_lat);
//   put_bw    1 MiB puts from registered memory, flushed every 16 (ib_write_bw).
// Two processes, as perftest's server and client ("rank 0" forks "rank 1"; they swap addresses
// and keys over a socket pair), or with --threads two transports in one process, one per
// thread: every byte goes through the HCA either way. Prints one JSON line per row; latencies
// are timed per iteration, as perftest times them: p50_us is the median (perftest's
// t_typical), avg_us the mean (its t_avg). This measures the transport; the MPI-level
// latencies (fence epochs) are bench/put_latency and friends.
// Usage: verbs_transport [--iters N] [--threads]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/transport.hpp"

using namespace onesided::transport;  // NOLINT(google-build-using-namespace)

namespace {

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void print(const char* bench, std::size_t bytes, int iters, double us, double mbps,
           double avg = -1) {
  std::printf(
      "{\"bench\":\"%s\",\"system\":\"onesided-verbs\",\"bytes\":%zu,\"iters\":%d,"
      "\"p50_us\":%.3f,\"avg_us\":%.3f,\"mbps\":%.1f}\n",
      bench, bytes, iters, us, avg < 0 ? us : avg, mbps);
  std::fflush(stdout);
}

/// Runs op() `iters` times, timing each, and prints the median (perftest's t_typical) and the
/// mean (its t_avg), divided by `per` (2 for a ping-pong's half round trip).
template <class Op>
void timed(const char* bench, int iters, double per, Op&& op) {
  std::vector<double> t(static_cast<std::size_t>(iters));
  double prev = nowUs();
  const double start = prev;
  for (int i = 0; i < iters; ++i) {
    op(i);
    const double now = nowUs();
    t[static_cast<std::size_t>(i)] = (now - prev) / per;
    prev = now;
  }
  const double avg = (prev - start) / iters / per;
  std::nth_element(t.begin(), t.begin() + iters / 2, t.end());
  const double p50 = t[static_cast<std::size_t>(iters / 2)];
  print(bench, 8, iters, p50, 8 / p50, avg);
}

constexpr std::size_t kBig = 1 << 20;

/// One side of the benchmark: its transport, its window (kBig bytes, reachable by the other
/// side), its registered source buffer, and once connected its endpoint to the other side with
/// the other side's key and window address.
struct Side {
  std::unique_ptr<Transport> t = makeVerbsTransport();
  std::unique_ptr<MemoryRegion> win =
      t->registerMemory(nullptr, kBig, Placement::kAllocate, Access::kRemoteAll);
  std::unique_ptr<MemoryRegion> src =
      t->registerMemory(nullptr, kBig, Placement::kAllocate, Access::kLocal);
  std::unique_ptr<Endpoint> ep;
  std::unique_ptr<RemoteKey> key;
  std::uint64_t remote = 0;

  Side() { std::memset(win->base(), 0, kBig); }
  /// What the other side needs: address, packed key, window address.
  [[nodiscard]] std::vector<std::byte> card() const {
    std::vector<std::byte> a = t->address();
    std::vector<std::byte> k = win->packRkey();
    std::vector<std::byte> out;
    auto add = [&](const void* p, std::size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      out.insert(out.end(), b, b + n);
    };
    const std::uint64_t sizes[3] = {a.size(), k.size(),
                                    reinterpret_cast<std::uint64_t>(win->base())};
    add(sizes, sizeof sizes);
    add(a.data(), a.size());
    add(k.data(), k.size());
    return out;
  }
  void connect(int peer, const std::vector<std::byte>& card) {
    std::uint64_t sizes[3];
    std::memcpy(sizes, card.data(), sizeof sizes);
    const std::span<const std::byte> rest(card.data() + sizeof sizes, card.size() - sizeof sizes);
    ep = t->connect(peer, rest.first(sizes[0]));
    key = ep->unpackRkey(rest.subspan(sizes[0], sizes[1]));
    remote = sizes[2];
  }
};

/// The put ping-pong's two halves: the origin writes n into the other side's first word and
/// waits for n in its own; the echo waits for n and writes it back.
void putTo(Side& s, std::uint64_t n) {
  auto* out = static_cast<std::uint64_t*>(s.src->base());
  *out = n;
  Iov iov{out, 8};
  s.ep->put({&iov, 1}, s.remote, *s.key);
  s.ep->post();
}
void await(Side& s, std::uint64_t n) {
  auto* mine = static_cast<volatile std::uint64_t*>(s.win->base());
  for (unsigned spin = 0; *mine != n; ++spin) {
    if ((spin & 1023U) == 1023U) s.t->progress();
  }
}
void echo(Side& s, int total) {
  for (std::uint64_t n = 1; n <= static_cast<std::uint64_t>(total); ++n) {
    await(s, n);
    putTo(s, n);
  }
  s.ep->flush();
}

/// Length-prefixed messages between the two processes (an empty one is a signal); any
/// failure ends the benchmark.
void fullIo(int fd, void* buf, std::size_t n, bool out) {
  auto* p = static_cast<char*>(buf);
  for (std::size_t done = 0; done < n;) {
    const ssize_t r = out ? write(fd, p + done, n - done) : read(fd, p + done, n - done);
    if (r <= 0) {
      std::perror(out ? "verbs_transport: write" : "verbs_transport: read");
      std::exit(2);
    }
    done += static_cast<std::size_t>(r);
  }
}
void sendBlob(int fd, std::vector<std::byte> b) {
  std::uint64_t n = b.size();
  fullIo(fd, &n, sizeof n, true);
  fullIo(fd, b.data(), b.size(), true);
}
std::vector<std::byte> recvBlob(int fd) {
  std::uint64_t n = 0;
  fullIo(fd, &n, sizeof n, false);
  std::vector<std::byte> b(n);
  fullIo(fd, b.data(), b.size(), false);
  return b;
}

/// Everything rank 0 measures once the ping-pong's echo runs somewhere (`echoDone` waits for
/// it to finish).
template <class EchoDone>
void measure(Side& s, int iters, EchoDone&& echoDone) {
  const auto warm = static_cast<std::uint64_t>(iters / 10);
  auto round = [&](std::uint64_t n) {
    putTo(s, n);
    await(s, n);
  };
  for (std::uint64_t n = 1; n <= warm; ++n) round(n);
  timed("put_lat", iters, 2, [&](int i) { round(warm + 1 + static_cast<std::uint64_t>(i)); });
  echoDone();
  s.ep->flush();
  Endpoint& e = *s.ep;
  const RemoteKey& k = *s.key;
  // get_lat, putflush_lat and fadd_lat: blocking round trips, each after iters / 10 to warm up.
  auto roundTrips = [&](const char* bench, auto op) {
    for (int i = 0; i < iters / 10; ++i) op(i);
    timed(bench, iters, 1, op);
  };
  Iov iov{s.src->base(), 8};
  roundTrips("get_lat", [&](int) {
    e.get({&iov, 1}, s.remote, k);
    e.flush();
  });
  roundTrips("putflush_lat", [&](int) {
    e.put({&iov, 1}, s.remote, k);
    e.flush();
  });
  std::uint64_t old = 0;
  roundTrips("fadd_lat", [&](int) { e.atomic(AtomicOp::kFetchAdd, 8, 1, 0, &old, s.remote, k); });
  // put_bw: 1 MiB puts, 16 per flush.
  Iov big{s.src->base(), kBig};
  const int rounds = std::max(2, iters / 100);
  for (int i = 0; i < 16; ++i) e.put({&big, 1}, s.remote, k);
  e.flush();
  const double start = nowUs();
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 16; ++i) e.put({&big, 1}, s.remote, k);
    e.flush();
  }
  const double us = (nowUs() - start) / (rounds * 16.0);
  print("put_bw", kBig, rounds * 16, us, static_cast<double>(kBig) / us);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 1000;
  bool threads = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--threads") == 0) threads = true;
  }
  if (!verbsPortActive()) {
    std::fprintf(stderr, "verbs_transport: no active RDMA port\n");
    return 2;
  }
  const int total = iters + iters / 10;  // the ping-pong's rounds, warm-up included
  if (threads) {
    Side s0;
    Side s1;
    s0.connect(1, s1.card());
    s1.connect(0, s0.card());
    std::thread peer([&] { echo(s1, total); });
    measure(s0, iters, [&] { peer.join(); });
    return 0;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    std::perror("verbs_transport: socketpair");
    return 2;
  }
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    std::perror("verbs_transport: fork");
    return 2;
  }
  const int fd = fds[child == 0 ? 1 : 0];
  close(fds[child == 0 ? 0 : 1]);
  Side s;
  sendBlob(fd, s.card());
  s.connect(child == 0 ? 0 : 1, recvBlob(fd));
  if (child == 0) {
    echo(s, total);
    // Rank 0 reads and writes this window until it says it is done.
    sendBlob(fd, {});
    recvBlob(fd);
    return 0;
  }
  measure(s, iters, [&] { recvBlob(fd); });
  sendBlob(fd, {});
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
