// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point messaging (src/p2p/) with ranks as threads, over every transport of this build
// (self_deferred has no load / store path: every message there is a put, a fence and the stamp's
// put, as on an RDMA NIC), with a small ring so messages wrap around it, and each rendezvous
// either by a plain copy or by the transport (ONESIDED_P2P_ATTACH=0).
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "p2p/engine.hpp"
#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int, bool /*attach*/>;

class Messages : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    auto [transport, n, attach] = GetParam();
    if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
    // 4 KiB rings: 64 cells, eager messages up to 976 bytes; everything wraps.
    setenv("ONESIDED_P2P_RING", "4096", 1);
    setenv("ONESIDED_P2P_ATTACH", attach ? "1" : "0", 1);
  }
  void TearDown() override {
    unsetenv("ONESIDED_P2P_RING");
    unsetenv("ONESIDED_P2P_ATTACH");
  }
  void run(const std::function<void(Context&)>& fn) {
    auto [transport, n, attach] = GetParam();
    spawn(n, transport, fn);
  }
};

const Datatype& byteType() { return datatypeOf<unsigned char>(); }

/// The byte a message (source, seq) holds at offset i.
unsigned char pattern(int source, int seq, std::size_t i) {
  return static_cast<unsigned char>(source * 31 + seq * 7 + static_cast<int>(i % 251));
}

std::size_t sizeOf(int source, int seq) {
  // Mostly small (eager), every fifth past the eager limit (rendezvous), some empty.
  const std::size_t k = static_cast<std::size_t>(source * 13 + seq * 17);
  if (seq % 7 == 3) return 0;
  return seq % 5 == 0 ? 1000 + k * 37 % 20000 : k % 900;
}

// Every rank sends `count` messages to every other rank (and itself), with tags from a small
// set, all nonblocking, then receives them in a scrambled order of tags: non-overtaking order
// per (source, tag) and every byte are checked.
TEST_P(Messages, AllToAllOrderAndData) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    const int n = w.size();
    const int me = w.rank();
    constexpr int kCount = 40;
    std::vector<std::vector<unsigned char>> out;
    std::vector<std::unique_ptr<p2p::Request>> sends;
    for (int seq = 0; seq < kCount; ++seq) {
      for (int d = 0; d < n; ++d) {
        std::vector<unsigned char> b(sizeOf(me, seq));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = pattern(me, seq, i);
        out.push_back(std::move(b));
        sends.push_back(std::make_unique<p2p::Request>());
        e.send(*sends.back(), out.back().data(), out.back().size(), byteType(), w.worldRank(d),
               w.p2pContext(), me, seq % 3, false);
      }
    }
    // Receive tag 2's messages first, then 0's, then 1's, from each source in turn.
    for (int tag : {2, 0, 1}) {
      for (int s = 0; s < n; ++s) {
        for (int seq = tag; seq < kCount; seq += 3) {
          std::vector<unsigned char> b(25000, 0xEE);
          p2p::Request r;
          e.recv(r, b.data(), b.size(), byteType(), w.p2pContext(), s, tag);
          e.wait(r);
          ASSERT_EQ(r.status.source, s);
          ASSERT_EQ(r.status.tag, tag);
          ASSERT_EQ(r.status.error, 0);
          ASSERT_EQ(r.status.bytes, sizeOf(s, seq)) << "from " << s << " seq " << seq;
          for (std::size_t i = 0; i < r.status.bytes; ++i) {
            ASSERT_EQ(b[i], pattern(s, seq, i)) << "byte " << i << " from " << s << " seq " << seq;
          }
          ASSERT_EQ(b[r.status.bytes], 0xEE);
        }
      }
    }
    for (auto& r : sends) e.wait(*r);
    w.barrier();
  });
}

// MPI_ANY_SOURCE with MPI_ANY_TAG takes each source's messages in the order sent.
TEST_P(Messages, WildcardsKeepEachSendersOrder) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    const int n = w.size();
    constexpr int kCount = 30;
    if (w.rank() != 0) {
      for (int seq = 0; seq < kCount; ++seq) {
        std::vector<int> v(seq % 4 == 0 ? 400 : 3, seq);
        p2p::Request r;
        e.send(r, v.data(), v.size(), datatypeOf<int>(), w.worldRank(0), w.p2pContext(), w.rank(),
               seq, false);
        e.wait(r);
      }
    } else {
      std::vector<int> next(static_cast<std::size_t>(n), 0);
      for (int k = 0; k < kCount * (n - 1); ++k) {
        std::vector<int> v(400, -1);
        p2p::Request r;
        e.recv(r, v.data(), v.size(), datatypeOf<int>(), w.p2pContext(), p2p::kAnySource,
               p2p::kAnyTag);
        e.wait(r);
        const int s = r.status.source;
        ASSERT_GT(s, 0);
        ASSERT_EQ(r.status.tag, next[static_cast<std::size_t>(s)]) << "from " << s;
        ASSERT_EQ(v[0], r.status.tag);
        ++next[static_cast<std::size_t>(s)];
      }
    }
    w.barrier();
  });
}

// A receive smaller than the message gets what fits and kErrTruncate; the next message is
// still received whole.
TEST_P(Messages, TruncationDeliversWhatFits) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    const int n = w.size();
    const int to = (w.rank() + 1) % n;
    const int from = (w.rank() + n - 1) % n;
    for (std::size_t len : {std::size_t{100}, std::size_t{50000}}) {
      std::vector<unsigned char> big(len);
      for (std::size_t i = 0; i < len; ++i) big[i] = pattern(w.rank(), 1, i);
      p2p::Request s1;
      p2p::Request s2;
      e.send(s1, big.data(), len, byteType(), w.worldRank(to), w.p2pContext(), w.rank(), 5, false);
      e.send(s2, big.data(), 10, byteType(), w.worldRank(to), w.p2pContext(), w.rank(), 6, false);
      std::vector<unsigned char> small(len / 2, 0);
      p2p::Request r;
      e.recv(r, small.data(), small.size(), byteType(), w.p2pContext(), from, 5);
      e.wait(r);
      EXPECT_EQ(r.status.error, kErrTruncate);
      EXPECT_EQ(r.status.bytes, len / 2);
      EXPECT_EQ(r.status.sent, len);
      for (std::size_t i = 0; i < small.size(); ++i) ASSERT_EQ(small[i], pattern(from, 1, i));
      p2p::Request r2;
      std::vector<unsigned char> ten(10);
      e.recv(r2, ten.data(), 10, byteType(), w.p2pContext(), from, 6);
      e.wait(r2);
      EXPECT_EQ(r2.status.error, 0);
      EXPECT_EQ(ten[9], pattern(from, 1, 9));
      e.wait(s1);
      e.wait(s2);
    }
    w.barrier();
  });
}

// A synchronous send completes only once a receive has matched it.
TEST_P(Messages, SynchronousSendWaitsForTheMatch) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    if (w.size() < 2) return;
    int v = 42;
    if (w.rank() == 0) {
      p2p::Request s;
      e.send(s, &v, 1, datatypeOf<int>(), w.worldRank(1), w.p2pContext(), 0, 9, true);
      for (int i = 0; i < 1000; ++i) e.poll();
      EXPECT_FALSE(s.complete);
      int go = 1;
      p2p::Request g;
      e.send(g, &go, 1, datatypeOf<int>(), w.worldRank(1), w.p2pContext(), 0, 10, false);
      e.wait(g);
      e.wait(s);
      EXPECT_TRUE(s.complete);
    } else if (w.rank() == 1) {
      int go = 0;
      p2p::Request g;
      e.recv(g, &go, 1, datatypeOf<int>(), w.p2pContext(), 0, 10);
      e.wait(g);
      int got = 0;
      p2p::Request r;
      e.recv(r, &got, 1, datatypeOf<int>(), w.p2pContext(), 0, 9);
      e.wait(r);
      EXPECT_EQ(got, 42);
    }
    w.barrier();
  });
}

// Derived types on both sides: a vector sent, received as contiguous ints and as another vector.
TEST_P(Messages, DerivedTypesBothSides) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    const int n = w.size();
    const int to = (w.rank() + 1) % n;
    const int from = (w.rank() + n - 1) % n;
    for (int count : {5, 3000}) {  // eager and rendezvous
      auto vec = Datatype::vector(count, 1, 3, datatypeOf<int>());
      vec->commit();
      std::vector<int> src(static_cast<std::size_t>(count) * 3);
      std::iota(src.begin(), src.end(), w.rank() * 100000);
      p2p::Request s;
      e.send(s, src.data(), 1, *vec, w.worldRank(to), w.p2pContext(), w.rank(), 1, false);
      std::vector<int> dst(static_cast<std::size_t>(count), -1);
      p2p::Request r;
      e.recv(r, dst.data(), dst.size(), datatypeOf<int>(), w.p2pContext(), from, 1);
      e.wait(r);
      for (int i = 0; i < count; ++i)
        ASSERT_EQ(dst[static_cast<std::size_t>(i)], from * 100000 + 3 * i);
      e.wait(s);
      // Contiguous out, strided in.
      p2p::Request s2;
      e.send(s2, dst.data(), dst.size(), datatypeOf<int>(), w.worldRank(to), w.p2pContext(),
             w.rank(), 2, false);
      std::vector<int> back(static_cast<std::size_t>(count) * 3, -7);
      p2p::Request r2;
      e.recv(r2, back.data(), 1, *vec, w.p2pContext(), from, 2);
      e.wait(r2);
      for (int i = 0; i < count; ++i) {
        ASSERT_EQ(back[static_cast<std::size_t>(3 * i)], ((from + n - 1) % n) * 100000 + 3 * i);
        ASSERT_EQ(back[static_cast<std::size_t>(3 * i + 1)], -7);
      }
      e.wait(s2);
    }
    w.barrier();
  });
}

// Messages on a duplicate of the world never match a receive on the world, and the reverse.
TEST_P(Messages, CommunicatorsNeverMix) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    auto d = w.dup();
    const int n = w.size();
    const int to = (w.rank() + 1) % n;
    const int from = (w.rank() + n - 1) % n;
    int a = 1;
    int b = 2;
    p2p::Request s1;
    p2p::Request s2;
    e.send(s1, &a, 1, datatypeOf<int>(), w.worldRank(to), d->p2pContext(), d->rank(), 0, false);
    e.send(s2, &b, 1, datatypeOf<int>(), w.worldRank(to), w.p2pContext(), w.rank(), 0, false);
    int x = 0;
    int y = 0;
    p2p::Request r1;
    e.recv(r1, &x, 1, datatypeOf<int>(), w.p2pContext(), p2p::kAnySource, p2p::kAnyTag);
    e.wait(r1);
    p2p::Request r2;
    e.recv(r2, &y, 1, datatypeOf<int>(), d->p2pContext(), from, 0);
    e.wait(r2);
    EXPECT_EQ(x, 2);
    EXPECT_EQ(y, 1);
    e.wait(s1);
    e.wait(s2);
    d->free();
  });
}

// A receive that nothing matches is cancelled; probing finds the envelope without taking it.
TEST_P(Messages, CancelAndProbe) {
  run([](Context& ctx) {
    auto& e = ctx.messages();
    Comm& w = ctx.world();
    int v = 0;
    p2p::Request r;
    e.recv(r, &v, 1, datatypeOf<int>(), w.p2pContext(), p2p::kAnySource, 77);
    EXPECT_TRUE(e.cancel(r));
    EXPECT_TRUE(r.complete);
    EXPECT_TRUE(r.status.cancelled);
    const int to = (w.rank() + 1) % w.size();
    std::vector<double> d(3000, 1.5);  // rendezvous
    p2p::Request s;
    e.send(s, d.data(), d.size(), datatypeOf<double>(), w.worldRank(to), w.p2pContext(), w.rank(),
           3, false);
    p2p::Status st;
    ctx.waitUntil([&] { return e.probe(w.p2pContext(), p2p::kAnySource, 3, st); });
    EXPECT_EQ(st.bytes, d.size() * sizeof(double));
    EXPECT_EQ(st.source, (w.rank() + w.size() - 1) % w.size());
    auto m = e.takeMatching(w.p2pContext(), st.source, 3);
    ASSERT_NE(m, nullptr);
    std::vector<double> got(3000, 0);
    p2p::Request r2;
    e.recvMessage(r2, got.data(), got.size(), datatypeOf<double>(), std::move(m));
    e.wait(r2);
    EXPECT_EQ(got[2999], 1.5);
    e.wait(s);
    w.barrier();
  });
}

std::string name(const ::testing::TestParamInfo<Param>& info) {
  auto [t, n, attach] = info.param;
  return t + "_" + std::to_string(n) + "ranks" + (attach ? "" : "_keyed");
}

INSTANTIATE_TEST_SUITE_P(All, Messages,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 5),
                                            ::testing::Values(true, false)),
                         name);

}  // namespace
}  // namespace onesided::test
