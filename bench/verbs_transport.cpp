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
// Two transports in this process, one per thread ("rank 0" and "rank 1"): every byte goes
// through the HCA. Prints one JSON line per row; latencies are timed per iteration, as perftest
// times them: p50_us is the median (perftest's t_typical), avg_us the mean (its t_avg). This
// measures the transport; the MPI-level
// latencies (fence epochs) are bench/put_latency and friends.
// Usage: verbs_transport [--iters N]
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

}  // namespace

int main(int argc, char** argv) {
  int iters = 1000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0) iters = std::atoi(argv[i + 1]);
  }
  if (!verbsPortActive()) {
    std::fprintf(stderr, "verbs_transport: no active RDMA port\n");
    return 2;
  }
  auto t0 = makeVerbsTransport();
  auto t1 = makeVerbsTransport();
  constexpr std::size_t kBig = 1 << 20;
  auto w0 = t0->registerMemory(nullptr, 4096, Placement::kAllocate, Access::kRemoteAll);
  auto w1 = t1->registerMemory(nullptr, kBig, Placement::kAllocate, Access::kRemoteAll);
  auto src = t0->registerMemory(nullptr, kBig, Placement::kAllocate, Access::kLocal);
  auto src1 = t1->registerMemory(nullptr, 64, Placement::kAllocate, Access::kLocal);
  std::memset(w0->base(), 0, 4096);
  std::memset(w1->base(), 0, kBig);
  auto e01 = t0->connect(1, t1->address());
  auto e10 = t1->connect(0, t0->address());
  auto k1 = e01->unpackRkey(w1->packRkey());
  auto k0 = e10->unpackRkey(w0->packRkey());
  const auto b0 = reinterpret_cast<std::uint64_t>(w0->base());
  const auto b1 = reinterpret_cast<std::uint64_t>(w1->base());

  // put_lat: rank 0 writes n into rank 1's first word; rank 1 sees it and writes n back.
  {
    auto* mine0 = static_cast<volatile std::uint64_t*>(w0->base());
    auto* mine1 = static_cast<volatile std::uint64_t*>(w1->base());
    auto* out0 = static_cast<std::uint64_t*>(src->base());
    auto* out1 = static_cast<std::uint64_t*>(src1->base());
    const int total = iters + iters / 10;
    std::thread peer([&] {
      for (std::uint64_t n = 1; n <= static_cast<std::uint64_t>(total); ++n) {
        for (unsigned spin = 0; *mine1 != n; ++spin) {
          if ((spin & 1023U) == 1023U) t1->progress();
        }
        *out1 = n;
        Iov iov{out1, 8};
        e10->put({&iov, 1}, b0, *k0);
        e10->post();
      }
      e10->flush();
    });
    auto round = [&](std::uint64_t n) {
      *out0 = n;
      Iov iov{out0, 8};
      e01->put({&iov, 1}, b1, *k1);
      e01->post();
      for (unsigned spin = 0; *mine0 != n; ++spin) {
        if ((spin & 1023U) == 1023U) t0->progress();
      }
    };
    const auto warm = static_cast<std::uint64_t>(iters / 10);
    for (std::uint64_t n = 1; n <= warm; ++n) round(n);
    timed("put_lat", iters, 2, [&](int i) { round(warm + 1 + static_cast<std::uint64_t>(i)); });
    peer.join();
    e01->flush();
  }
  // get_lat and fadd_lat: blocking round trips from rank 0.
  {
    auto* in = static_cast<std::uint64_t*>(src->base());
    Iov iov{in, 8};
    for (int i = 0; i < iters / 10; ++i) {
      e01->get({&iov, 1}, b1, *k1);
      e01->flush();
    }
    timed("get_lat", iters, 1, [&](int) {
      e01->get({&iov, 1}, b1, *k1);
      e01->flush();
    });
    for (int i = 0; i < iters / 10; ++i) {
      e01->put({&iov, 1}, b1, *k1);
      e01->flush();
    }
    timed("putflush_lat", iters, 1, [&](int) {
      e01->put({&iov, 1}, b1, *k1);
      e01->flush();
    });
    std::uint64_t old = 0;
    for (int i = 0; i < iters / 10; ++i) e01->atomic(AtomicOp::kFetchAdd, 8, 1, 0, &old, b1, *k1);
    timed("fadd_lat", iters, 1,
          [&](int) { e01->atomic(AtomicOp::kFetchAdd, 8, 1, 0, &old, b1, *k1); });
  }
  // put_bw: 1 MiB puts, 16 per flush.
  {
    Iov iov{src->base(), kBig};
    const int rounds = std::max(2, iters / 100);
    for (int k = 0; k < 16; ++k) e01->put({&iov, 1}, b1, *k1);
    e01->flush();
    const double start = nowUs();
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < 16; ++k) e01->put({&iov, 1}, b1, *k1);
      e01->flush();
    }
    const double us = (nowUs() - start) / (rounds * 16.0);
    print("put_bw", kBig, rounds * 16, us, static_cast<double>(kBig) / us);
  }
  k1.reset();
  k0.reset();
  e01.reset();
  e10.reset();
  return 0;
}
