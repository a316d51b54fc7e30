// SPDX-License-Identifier: BSD-3-Clause
// Communicators and collectives with ranks as threads, over every transport of this build (the
// self_deferred transport has no load / store path, so there every chunk and counter goes
// through put + flush as on an RDMA NIC), with each algorithm forced, with streams from 64 bytes
// by rendezvous (the receiver reads the sender's buffer), and with a tiny scratch chunk so every
// transfer is many chunks through the two halves of a slot.
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collectives/channel.hpp"
#include "onesided/collectives.hpp"
#include "rank_test.hpp"

namespace onesided::test {
namespace {

using Param = std::tuple<std::string, int, std::string /*alg*/, int /*chunk, 0 = default*/>;

class Collectives : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    auto [transport, n, alg, chunk] = GetParam();
    if (!transportAvailable(transport)) GTEST_SKIP() << transport << " not built";
    setenv("ONESIDED_COLL_ALG", alg.c_str(), 1);
    // Small rings (8 and 11 cells), so every test wraps around them many times.
    if (chunk != 0) {
      setenv("ONESIDED_COLL_CHUNK", std::to_string(chunk).c_str(), 1);
      setenv("ONESIDED_COLL_INFLIGHT", "1", 1);
      setenv("ONESIDED_COLL_RING", "2048", 1);
    } else {
      // Streams of 64 bytes and more by rendezvous, smaller ones through the rings, so both
      // meet in one collective (with tiny chunks no key fits a chunk: every stream is copied).
      setenv("ONESIDED_COLL_ZCOPY", "64", 1);
      setenv("ONESIDED_COLL_RING", "704", 1);  // 11 cells: chunks meet its end unaligned
      // 64-byte cells: a ready-to-send chunk takes several, so some meet the ring's end.
      setenv("ONESIDED_COLL_CELL", "64", 1);
    }
  }
  void TearDown() override {
    unsetenv("ONESIDED_COLL_ALG");
    unsetenv("ONESIDED_COLL_CHUNK");
    unsetenv("ONESIDED_COLL_INFLIGHT");
    unsetenv("ONESIDED_COLL_ZCOPY");
    unsetenv("ONESIDED_COLL_RING");
    unsetenv("ONESIDED_COLL_CELL");
  }
};

const Datatype& intType() { return datatypeOf<int>(); }

int v(int from, int to, int k) { return from * 1000000 + to * 1000 + k; }

// Every collective family on `c`, checked against the serial answer.
void families(Comm& c) {
  const int p = c.size();
  const int me = c.rank();
  const Datatype* it = &intType();
  // Allgather of blobs of different sizes (what communicator creation uses).
  std::vector<std::byte> blob(static_cast<std::size_t>(me * 37 + 1), std::byte(me));
  auto all = c.allgather(blob);
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(all[static_cast<std::size_t>(r)].size(), static_cast<std::size_t>(r * 37 + 1));
    EXPECT_EQ(all[static_cast<std::size_t>(r)].back(), std::byte(r));
  }
  for (int root = 0; root < p; ++root) {
    // Gather / scatter of 50 ints per rank.
    std::vector<int> s(50), r(static_cast<std::size_t>(p) * 50, -1);
    for (int k = 0; k < 50; ++k) s[static_cast<std::size_t>(k)] = v(me, root, k);
    coll::gather(c, s.data(), 50, it, r.data(), 50, it, root);
    if (me == root) {
      for (int i = 0; i < p; ++i) {
        for (int k = 0; k < 50; ++k) {
          ASSERT_EQ(r[static_cast<std::size_t>(i * 50 + k)], v(i, root, k)) << "gather " << i;
        }
      }
      for (int i = 0; i < p; ++i) {
        for (int k = 0; k < 50; ++k) r[static_cast<std::size_t>(i * 50 + k)] = v(root, i, k);
      }
    }
    std::vector<int> got(50, -1);
    coll::scatter(c, r.data(), 50, it, got.data(), 50, it, root);
    for (int k = 0; k < 50; ++k) ASSERT_EQ(got[static_cast<std::size_t>(k)], v(root, me, k));
    // Bcast of 3000 ints (many chunks with the tiny chunk).
    std::vector<int> b(3000);
    for (int k = 0; k < 3000; ++k) b[static_cast<std::size_t>(k)] = me == root ? k * 3 + root : -1;
    coll::bcast(c, b.data(), 3000, it, root);
    for (int k = 0; k < 3000; ++k) ASSERT_EQ(b[static_cast<std::size_t>(k)], k * 3 + root);
    // Bcast of 20000 ints, twice from one buffer: from 32 KiB on one node, linear by default
    // (every member reads the root's buffer; shared from its second use).
    std::vector<int> big(20000);
    for (int round = 0; round < 2; ++round) {
      for (int k = 0; k < 20000; ++k) {
        big[static_cast<std::size_t>(k)] = me == root ? k * 7 + root + round : -1;
      }
      coll::bcast(c, big.data(), 20000, it, root);
      for (int k = 0; k < 20000; ++k) {
        ASSERT_EQ(big[static_cast<std::size_t>(k)], k * 7 + root + round) << "round " << round;
      }
    }
    // Reduce.
    long x = me + 1, sum = 0;
    coll::reduce(c, &x, &sum, 1, &datatypeOf<long>(), Op::kSum, root);
    if (me == root) {
      EXPECT_EQ(sum, static_cast<long>(p) * (p + 1) / 2);
    }
  }
  // Alltoallv: i sends (i + j) % 7 ints to j.
  std::vector<int> sc(static_cast<std::size_t>(p)), sd(sc.size()), rc(sc.size()), rd(sc.size());
  int so = 0, ro = 0;
  for (int j = 0; j < p; ++j) {
    const auto u = static_cast<std::size_t>(j);
    sc[u] = (me + j) % 7;
    sd[u] = so;
    so += sc[u];
    rc[u] = (j + me) % 7;
    rd[u] = ro;
    ro += rc[u];
  }
  std::vector<int> s(static_cast<std::size_t>(so) + 1), r(static_cast<std::size_t>(ro) + 1, -1);
  for (int j = 0; j < p; ++j) {
    for (int k = 0; k < sc[static_cast<std::size_t>(j)]; ++k) {
      s[static_cast<std::size_t>(sd[static_cast<std::size_t>(j)] + k)] = v(me, j, k);
    }
  }
  coll::alltoallv(c, s.data(), sc.data(), sd.data(), it, r.data(), rc.data(), rd.data(), it);
  for (int i = 0; i < p; ++i) {
    for (int k = 0; k < rc[static_cast<std::size_t>(i)]; ++k) {
      ASSERT_EQ(r[static_cast<std::size_t>(rd[static_cast<std::size_t>(i)] + k)], v(i, me, k));
    }
  }
  // Alltoallw: the same blocks, sent as ints 8 bytes apart (a resized int) to odd ranks and
  // packed to even ones, received packed, at byte displacements with a 4-byte hole after each.
  {
    auto wide = Datatype::resized(0, 2 * sizeof(int), intType());
    wide->commit();
    std::vector<const Datatype*> wst(sc.size()), wrt(sc.size(), it);
    std::vector<int> wsd(sc.size()), wrd(sc.size());
    std::vector<int> ws, wr;
    for (int j = 0; j < p; ++j) {
      const auto u = static_cast<std::size_t>(j);
      wst[u] = j % 2 == 1 ? wide.get() : it;
      wsd[u] = static_cast<int>(ws.size() * sizeof(int));
      for (int k = 0; k < sc[u]; ++k) {
        ws.push_back(v(me, j, k));
        if (j % 2 == 1) ws.push_back(-8);  // skipped: the resized int's second half
      }
      ws.push_back(-8);
      wrd[u] = static_cast<int>(wr.size() * sizeof(int));
      wr.insert(wr.end(), static_cast<std::size_t>(rc[u]) + 1, -1);
    }
    coll::alltoallw(c, ws.data(), sc.data(), wsd.data(), wst.data(), wr.data(), rc.data(),
                    wrd.data(), wrt.data());
    for (int i = 0; i < p; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const auto at = static_cast<std::size_t>(wrd[u]) / sizeof(int);
      for (int k = 0; k < rc[u]; ++k) {
        ASSERT_EQ(wr[at + static_cast<std::size_t>(k)], v(i, me, k)) << "alltoallw from " << i;
      }
      ASSERT_EQ(wr[at + static_cast<std::size_t>(rc[u])], -1) << "the hole after block " << i;
    }
  }
  // Allreduce and reduce_scatter_block.
  std::vector<double> d(100), out(100);
  for (int k = 0; k < 100; ++k) d[static_cast<std::size_t>(k)] = me * 100 + k;
  coll::allreduce(c, d.data(), out.data(), 100, &datatypeOf<double>(), Op::kMax);
  for (int k = 0; k < 100; ++k) ASSERT_EQ(out[static_cast<std::size_t>(k)], (p - 1) * 100 + k);
  std::vector<int> in(static_cast<std::size_t>(p) * 3);
  std::iota(in.begin(), in.end(), me);
  int mine[3];
  coll::reduceScatterBlock(c, in.data(), mine, 3, it, Op::kSum);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(mine[k], p * (me * 3 + k) + p * (p - 1) / 2);
  coll::barrier(c);
}

TEST_P(Collectives, FamiliesOnWorldSplitAndDup) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    families(ctx.world());
    families(ctx.self());
    auto half = ctx.world().split(ctx.rank() % 2, -ctx.rank());
    ASSERT_NE(half, nullptr);
    EXPECT_EQ(half->size(), ctx.rank() % 2 == 0 ? (n + 1) / 2 : n / 2);
    families(*half);
    auto d = half->dup();
    families(*d);
    d->free();
    auto none = ctx.world().split(ctx.rank() == 0 ? kUndefined : 0, 0);
    EXPECT_EQ(none == nullptr, ctx.rank() == 0);
    if (none) {
      families(*none);
      none->free();
    }
    half->free();
  });
}

// No member leaves a barrier before every member has entered it, with some members late to
// every barrier in turn: on one node (the flat exchange from 3 to 8 members: world of 3, 5 and
// 8, halves of 3 and 4) and with a node per rank (dissemination).
TEST_P(Collectives, BarrierLetsNobodyOutBeforeEveryoneIsIn) {
  auto [transport, n, alg, chunk] = GetParam();
  if (alg != "auto" || chunk != 0) GTEST_SKIP() << "the barrier has no algorithm or chunk to force";
  for (const int perNode : {0, 1}) {
    // A node per thread: each spins as if it had a core of its own, so fewer rounds.
    const int rounds = perNode == 0 ? 200 : 30;
    std::atomic<int> inWorld{0};
    std::array<std::atomic<int>, 2> inHalf{};
    spawn(
        n, transport,
        [&, n = n](Context& ctx) {
          auto half = ctx.world().split(ctx.rank() % 2, ctx.rank());
          ASSERT_NE(half, nullptr);
          auto& halfIn = inHalf[static_cast<std::size_t>(ctx.rank() % 2)];
          for (int it = 0; it < rounds; ++it) {
            if ((it + ctx.rank()) % 7 == 0) {
              std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
            inWorld.fetch_add(1);
            ctx.world().barrier();
            ASSERT_GE(inWorld.load(), n * (it + 1)) << "iteration " << it;
            halfIn.fetch_add(1);
            half->barrier();
            ASSERT_GE(halfIn.load(), half->size() * (it + 1)) << "iteration " << it;
          }
          half->free();
        },
        perNode);
  }
}

// A freed communicator's scratch region goes to the next one of its size: mapped already here
// and by its peers, whose kept mappings are checked against the new channel's nonce and used.
// Its rings were cleared as their chunks were consumed; every collective on the new
// communicator still gets the serial answer.
TEST_P(Collectives, FreedRegionsAndPeerMappingsAreReused) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    for (int i = 0; i < 3; ++i) {
      auto d = ctx.world().dup();
      EXPECT_EQ(d->channel().regionReused(), i > 0) << "dup " << i;
      families(*d);
      // The same collectives reach the same peers: from the second dup on, each of them
      // mapped on the load / store path comes from the kept mappings.
      if (i > 0) {
        EXPECT_EQ(d->channel().keysReused(), d->channel().directPeers()) << "dup " << i;
      }
      d->free();
    }
    // Not freed (destroyed as after a failure, or at finalize without MPI_Comm_free): its
    // region is not kept.
    { auto d = ctx.world().dup(); }
    auto d = ctx.world().dup();
    EXPECT_FALSE(d->channel().regionReused());
    d->free();
  });
}

// A chunk sent but never received (an erroneous program) is still in the receiver's ring when
// the communicator is freed: the next communicator given that region clears it all, and does
// not take the stale chunk for its own first one.
TEST_P(Collectives, AChunkNobodyReceivedDoesNotReachTheNextCommunicator) {
  auto [transport, n, alg, chunk] = GetParam();
  if (n < 2) GTEST_SKIP() << "needs a peer";
  spawn(n, transport, [&](Context& ctx) {
    const Datatype& bytes = datatypeOf<std::byte>();
    auto d = ctx.world().dup();
    const std::int32_t stale[2] = {-7, -7};
    std::vector<detail::SendOp> sends;
    if (d->rank() == 0) sends.push_back({1, {stale, sizeof stale, &bytes}});
    d->channel().run(sends, {});
    d->free();
    d.reset();  // as MPI_Comm_free does: the region goes back to the context here
    auto e = ctx.world().dup();
    EXPECT_TRUE(e->channel().regionReused());
    std::int32_t mine[2] = {e->rank(), 1};
    std::int32_t got[2] = {0, 0};
    std::vector<detail::SendOp> to;
    std::vector<detail::RecvOp> from;
    if (e->rank() == 0) {
      to.push_back({1, {mine, sizeof mine, &bytes}});
      // Rank 1 looks at its ring first: a stale chunk there would be taken now, not raced.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (e->rank() == 1) from.push_back({0, {got, sizeof got, &bytes}});
    e->channel().run(to, from);
    if (e->rank() == 1) {
      EXPECT_EQ(got[0], 0);
      EXPECT_EQ(got[1], 1);
    }
    families(*e);
    e->free();
  });
}

// A user operation that does not commute (composing affine maps x -> a x + b, mod 2^64: "in,
// then inout") on elements {a, gap, b} (a vector type with extent 24), through every reduction
// that takes one: the results are the ranks' maps composed in rank order, and the gap words stay
// untouched. Then the scans with a predefined operation on a gapped type.
TEST_P(Collectives, UserOperationInRankOrder) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    constexpr std::uint64_t kGap = 0x5a5a5a5a5a5a5a5aULL;
    auto elem = Datatype::vector(2, 1, 2, datatypeOf<std::uint64_t>());
    elem->commit();
    int calls = 0;
    coll::UserOp compose;
    compose.combine = [&calls](const void* in, void* inout, int count) {
      ++calls;
      const auto* x = static_cast<const std::uint64_t*>(in);
      auto* y = static_cast<std::uint64_t*>(inout);
      for (int i = 0; i < count; ++i, x += 3, y += 3) {
        y[2] = y[0] * x[2] + y[2];
        y[0] = x[0] * y[0];
      }
    };
    const coll::Reduction op(compose);
    auto va = [](int r, int i) { return static_cast<std::uint64_t>(2 * r + 3 + 5 * i); };
    auto vb = [](int r, int i) { return static_cast<std::uint64_t>(7 * r + i + 1); };
    auto fill = [&](std::vector<std::uint64_t>& b, int count, int r) {
      b.assign(static_cast<std::size_t>(count) * 3 + 3, kGap);
      for (int i = 0; i < count; ++i) {
        b[static_cast<std::size_t>(i) * 3] = va(r, i);
        b[static_cast<std::size_t>(i) * 3 + 2] = vb(r, i);
      }
    };
    // Elements [0, count) of b against ranks lo..hi composed, element first + i.
    auto expect = [&](const char* what, const std::vector<std::uint64_t>& b, int count, int lo,
                      int hi, int first) {
      for (int i = 0; i < count; ++i) {
        std::uint64_t a = 1, bb = 0;
        for (int r = lo; r <= hi; ++r) {
          bb = va(r, first + i) * bb + vb(r, first + i);
          a *= va(r, first + i);
        }
        const auto k = static_cast<std::size_t>(i) * 3;
        ASSERT_EQ(b[k], a) << what << " element " << i;
        ASSERT_EQ(b[k + 2], bb) << what << " element " << i;
        ASSERT_EQ(b[k + 1], kGap) << what << " gap of element " << i;
      }
    };
    std::vector<std::uint64_t> in, out;
    // 700 x 16 packed bytes: many chunks; 2100: the large vectors' algorithms (allreduce as a
    // reduce_scatter and an allgather, scans along the chain).
    for (const int count : {1, 700, 2100}) {
      for (int root = 0; root < p; ++root) {
        fill(in, count, me);
        fill(out, count, -1);
        coll::reduce(c, in.data(), out.data(), count, elem.get(), op, root);
        if (me == root) expect("reduce", out, count, 0, p - 1, 0);
      }
      fill(in, count, me);
      coll::allreduce(c, coll::inPlace(), in.data(), count, elem.get(), op);
      expect("allreduce in place", in, count, 0, p - 1, 0);
      fill(in, count, me);
      fill(out, count, -1);
      coll::scan(c, in.data(), out.data(), count, elem.get(), op);
      expect("scan", out, count, 0, me, 0);
      coll::exscan(c, in.data(), out.data(), count, elem.get(), op);
      // Rank 0's buffer keeps the scan's result, its own map.
      expect("exscan", out, count, 0, me == 0 ? 0 : me - 1, 0);
      // Reduce_scatter: rank r gets r % 3 * count / 2 elements.
      std::vector<int> counts(static_cast<std::size_t>(p));
      int total = 0, first = 0;
      for (int r = 0; r < p; ++r) {
        counts[static_cast<std::size_t>(r)] = r % 3 * count / 2;
        if (r < me) first += counts[static_cast<std::size_t>(r)];
        total += counts[static_cast<std::size_t>(r)];
      }
      fill(in, total, me);
      fill(out, count, -1);
      coll::reduceScatter(c, in.data(), out.data(), counts.data(), elem.get(), op);
      expect("reduce_scatter", out, counts[static_cast<std::size_t>(me)], 0, p - 1, first);
      // The same blocks with a predefined operation (one exchange, or reduce and scatter).
      std::vector<long> lin(static_cast<std::size_t>(total) + 1),
          lout(static_cast<std::size_t>(count) + 1, -1);
      for (int k = 0; k < total; ++k) lin[static_cast<std::size_t>(k)] = me * 100000L + k;
      coll::reduceScatter(c, lin.data(), lout.data(), counts.data(), &datatypeOf<long>(), Op::kSum);
      for (int k = 0; k < counts[static_cast<std::size_t>(me)]; ++k) {
        ASSERT_EQ(lout[static_cast<std::size_t>(k)],
                  100000L * p * (p - 1) / 2 + static_cast<long>(p) * (first + k))
            << "predefined reduce_scatter element " << k;
      }
      ASSERT_EQ(lout[static_cast<std::size_t>(counts[static_cast<std::size_t>(me)])], -1);
    }
    if (p > 1 && me == 0) {
      EXPECT_GT(calls, 0);
    }
    // Scans with a predefined operation, on ints with a gap after each.
    auto gapped = Datatype::vector(1, 1, 2, intType());
    auto every2 = Datatype::resized(0, 2 * sizeof(int), *gapped);
    every2->commit();
    int iv[6] = {me + 1, -9, 10 * me, -9, me, -9};
    int ir[6] = {-1, -2, -1, -2, -1, -2};
    coll::scan(c, iv, ir, 3, every2.get(), Op::kSum);
    ASSERT_EQ(ir[0], (me + 1) * (me + 2) / 2);
    ASSERT_EQ(ir[2], 10 * me * (me + 1) / 2);
    ASSERT_EQ(ir[4], me * (me + 1) / 2);
    ASSERT_EQ(ir[1], -2);
    ASSERT_EQ(ir[3], -2);
    coll::exscan(c, coll::inPlace(), iv, 3, every2.get(), Op::kMax);
    if (me > 0) {
      ASSERT_EQ(iv[0], me);
      ASSERT_EQ(iv[2], 10 * (me - 1));
      ASSERT_EQ(iv[4], me - 1);
    } else {
      ASSERT_EQ(iv[0], 1);
    }
    ASSERT_EQ(iv[1], -9);
  });
}

// The v-collectives with random counts (zeros included) and gapped displacements on a random
// split, against the serial answer; every rank draws the same numbers from the printed seed.
TEST_P(Collectives, RandomVariants) {
  auto [transport, n, alg, chunk] = GetParam();
  const std::uint64_t seed = 20261123;
  SCOPED_TRACE("seed " + std::to_string(seed));
  spawn(n, transport, [&](Context& ctx) {
    std::mt19937_64 colorRng(seed);
    std::vector<int> colors(static_cast<std::size_t>(n));
    for (auto& c : colors) c = static_cast<int>(colorRng() % 2);
    auto sub = ctx.world().split(colors[static_cast<std::size_t>(ctx.rank())], 0);
    Comm& c = *sub;
    const int p = c.size();
    const int me = c.rank();
    const auto P = static_cast<std::size_t>(p);
    const Datatype* it = &intType();
    for (int round = 0; round < 4; ++round) {
      std::mt19937_64 rng(seed * 7 + static_cast<std::uint64_t>(round) * 131 +
                          static_cast<std::uint64_t>(colors[static_cast<std::size_t>(ctx.rank())]));
      std::vector<int> cnt(P * P), gap(P);
      for (auto& x : cnt) x = rng() % 4 == 0 ? 0 : static_cast<int>(rng() % 300);
      for (auto& g : gap) g = static_cast<int>(rng() % 3);
      const int root = static_cast<int>(rng() % P);
      auto at = [&](int i, int j) {
        return cnt[static_cast<std::size_t>(i) * P + static_cast<std::size_t>(j)];
      };
      // gatherv and scatterv through `root`, allgatherv of cnt[i][i], alltoallv of cnt[i][j].
      std::vector<int> rc(P), rd(P), sc(P), sd(P);
      int ro = 0, so = 0;
      for (int i = 0; i < p; ++i) {
        const auto u = static_cast<std::size_t>(i);
        rc[u] = at(i, root);
        rd[u] = ro;
        ro += rc[u] + gap[u];
      }
      std::vector<int> s(static_cast<std::size_t>(at(me, root)) + 1),
          r(static_cast<std::size_t>(ro) + 1, -7);
      for (int k = 0; k < at(me, root); ++k) s[static_cast<std::size_t>(k)] = v(me, root, k);
      coll::gatherv(c, s.data(), at(me, root), it, r.data(), rc.data(), rd.data(), it, root);
      if (me == root) {
        for (int i = 0; i < p; ++i) {
          const auto u = static_cast<std::size_t>(i);
          for (int k = 0; k < rc[u]; ++k)
            ASSERT_EQ(r[static_cast<std::size_t>(rd[u] + k)], v(i, root, k));
          for (int g = 0; g < gap[u]; ++g)
            ASSERT_EQ(r[static_cast<std::size_t>(rd[u] + rc[u] + g)], -7);
        }
      }
      for (int j = 0; j < p; ++j) {
        const auto u = static_cast<std::size_t>(j);
        sc[u] = at(root, j);
        sd[u] = so;
        so += sc[u] + gap[u];
      }
      std::vector<int> big(static_cast<std::size_t>(so) + 1),
          mine(static_cast<std::size_t>(at(root, me)) + 1, -7);
      for (int j = 0; j < p; ++j) {
        for (int k = 0; k < sc[static_cast<std::size_t>(j)]; ++k) {
          big[static_cast<std::size_t>(sd[static_cast<std::size_t>(j)] + k)] = v(root, j, k);
        }
      }
      coll::scatterv(c, big.data(), sc.data(), sd.data(), it, mine.data(), at(root, me), it, root);
      for (int k = 0; k < at(root, me); ++k)
        ASSERT_EQ(mine[static_cast<std::size_t>(k)], v(root, me, k));
      // alltoallv
      so = ro = 0;
      for (int j = 0; j < p; ++j) {
        const auto u = static_cast<std::size_t>(j);
        sc[u] = at(me, j);
        sd[u] = so;
        so += sc[u] + gap[u];
        rc[u] = at(j, me);
        rd[u] = ro;
        ro += rc[u] + gap[(u + 1) % P];
      }
      std::vector<int> as(static_cast<std::size_t>(so) + 1),
          ar(static_cast<std::size_t>(ro) + 1, -7);
      for (int j = 0; j < p; ++j) {
        for (int k = 0; k < sc[static_cast<std::size_t>(j)]; ++k) {
          as[static_cast<std::size_t>(sd[static_cast<std::size_t>(j)] + k)] = v(me, j, k);
        }
      }
      coll::alltoallv(c, as.data(), sc.data(), sd.data(), it, ar.data(), rc.data(), rd.data(), it);
      for (int i = 0; i < p; ++i) {
        const auto u = static_cast<std::size_t>(i);
        for (int k = 0; k < rc[u]; ++k)
          ASSERT_EQ(ar[static_cast<std::size_t>(rd[u] + k)], v(i, me, k));
      }
      // allgatherv
      ro = 0;
      for (int i = 0; i < p; ++i) {
        const auto u = static_cast<std::size_t>(i);
        rc[u] = at(i, i);
        rd[u] = ro;
        ro += rc[u] + gap[u];
      }
      std::vector<int> gs(static_cast<std::size_t>(at(me, me)) + 1),
          gr(static_cast<std::size_t>(ro) + 1, -7);
      for (int k = 0; k < at(me, me); ++k) gs[static_cast<std::size_t>(k)] = v(me, me, k);
      coll::allgatherv(c, gs.data(), at(me, me), it, gr.data(), rc.data(), rd.data(), it);
      for (int i = 0; i < p; ++i) {
        const auto u = static_cast<std::size_t>(i);
        for (int k = 0; k < rc[u]; ++k)
          ASSERT_EQ(gr[static_cast<std::size_t>(rd[u] + k)], v(i, i, k));
      }
    }
    sub->free();
  });
}

// Buffers from MPI_Alloc_mem (Context::allocMemory): their senders expose them with the
// region's own key, and receivers read them where they are mapped (load / store transports) or
// with gets (self_deferred), keeping the key unpacked from call to call. Alltoall into a strided
// receive type, allreduce folding from the senders' memory, and rounds that free and allocate
// again (new keys, reused addresses) with a check of every element.
TEST_P(Collectives, AllocMemBuffers) {
  auto [transport, n, alg, chunk] = GetParam();
  // The path is the same for every algorithm, and a tiny chunk holds no key (no rendezvous).
  if (alg != "auto" || chunk != 0) GTEST_SKIP() << "run with the default algorithm and chunk";
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    for (int round = 0; round < 4; ++round) {
      const int count = round % 2 == 0 ? 3000 : 40;  // by rendezvous from 64 bytes (SetUp)
      const auto u = static_cast<std::size_t>(count) * static_cast<std::size_t>(p);
      auto* s = static_cast<int*>(ctx.allocMemory(u * sizeof(int)));
      auto* r = static_cast<int*>(ctx.allocMemory(2 * u * sizeof(int)));
      for (int j = 0; j < p; ++j) {
        for (int k = 0; k < count; ++k) s[j * count + k] = v(me, j, k + round);
      }
      std::fill(r, r + 2 * u, -7);
      const std::uint64_t unpacked = c.channel().allocKeysUnpacked();
      coll::alltoall(c, s, count, &intType(), r, count, &intType());
      for (int j = 0; j < p; ++j) {
        for (int k = 0; k < count; ++k) {
          ASSERT_EQ(r[j * count + k], v(j, me, k + round)) << "round " << round << " from " << j;
        }
      }
      // Every other int: the receiver's type map, not the stream's layout.
      auto every2 = Datatype::vector(count, 1, 2, intType());
      every2->commit();
      auto blk = Datatype::resized(0, 2 * count * static_cast<std::int64_t>(sizeof(int)), *every2);
      blk->commit();
      std::fill(r, r + 2 * u, -7);
      coll::alltoall(c, s, count, &intType(), r, 1, blk.get());
      for (int j = 0; j < p; ++j) {
        for (int k = 0; k < count; ++k) {
          ASSERT_EQ(r[2 * (j * count + k)], v(j, me, k + round)) << "strided, from " << j;
          ASSERT_EQ(r[2 * (j * count + k) + 1], -7) << "a gap written, from " << j;
        }
      }
      // Both alltoalls read each peer's s (by rendezvous from 64 bytes, SetUp): its key is
      // unpacked once (the cache was dropped, since the peer freed memory last round).
      EXPECT_EQ(c.channel().allocKeysUnpacked() - unpacked, static_cast<std::uint64_t>(p - 1))
          << "round " << round;
      for (int k = 0; k < count; ++k) s[k] = (me + 1) * (k % 100);
      coll::allreduce(c, s, r, count, &intType(), Op::kSum);
      for (int k = 0; k < count; ++k) ASSERT_EQ(r[k], p * (p + 1) / 2 * (k % 100)) << k;
      ASSERT_TRUE(ctx.freeMemory(r));
      ASSERT_TRUE(ctx.freeMemory(s));
    }
    // Threads of one process reach each other's memory on the self and UCX transports (not on
    // self_deferred and verbs: put / get only): there, streams above came by loads from the
    // sender's buffer.
    if (p > 1) {
      const detail::Channel& ch = c.channel();
      if (transport != "self_deferred" && transport != "verbs") {
        EXPECT_GT(ch.mappedReads(), 0U);
      }
    }
  });
}

// Streams by rendezvous (from 64 bytes, SetUp) to peers on the load / store path: read with
// cross-memory attach by the sender's pid and address (nothing registered), or with
// ONESIDED_COLL_ATTACH=0 by the key of the sender's registration (the default measures which
// is faster). Both give every family's
// serial answer; the counters show which path ran.
TEST_P(Collectives, RendezvousByAttachOrKey) {
  auto [transport, n, alg, chunk] = GetParam();
  if (chunk != 0 || n < 2) GTEST_SKIP() << "rendezvous runs with the default chunk, 2+ ranks";
  for (const bool attach : {true, false}) {
    setenv("ONESIDED_COLL_ATTACH", attach ? "1" : "0", 1);  // 1: whatever it costs here
    setenv("ONESIDED_COLL_SHARE", "never", 1);
    spawn(n, transport, [&](Context& ctx) {
      families(ctx.world());
      families(ctx.world());  // the first collectives go by key: a peer probes when it resolves
      const detail::Channel& ch = ctx.world().channel();
      // Peers on the load / store path: the self and UCX transports (threads of one process).
      if (transport != "self_deferred" && transport != "verbs" && attach) {
        EXPECT_GT(ch.attachedReads(), 0U);
      } else {
        EXPECT_EQ(ch.attachedReads(), 0U);
      }
    });
    unsetenv("ONESIDED_COLL_ATTACH");
    unsetenv("ONESIDED_COLL_SHARE");
  }
}

// Send buffers shared with on-node receivers (ONESIDED_COLL_SHARE): the whole pages of a
// stream go into a memfd the receiver maps, the partial pages at its ends in the ready chunk.
// Checked: every family's serial answer with sharing on first use (always) and on second use
// (auto), a buffer changed between calls, and buffers unmapped and mapped again at (usually)
// the same address with new content, which must never be read through the old memfd.
TEST_P(Collectives, SharedSendPages) {
  auto [transport, n, alg, chunk] = GetParam();
  if (chunk != 0 || n < 2) GTEST_SKIP() << "rendezvous runs with the default chunk, 2+ ranks";
  unsetenv("ONESIDED_COLL_RING");  // room in the ready chunk for the partial pages
  unsetenv("ONESIDED_COLL_CELL");
  const bool loadStore = transport != "self_deferred" && transport != "verbs";
  for (const char* mode : {"always", "auto"}) {
    setenv("ONESIDED_COLL_SHARE", mode, 1);
    spawn(n, transport, [&](Context& ctx) {
      Comm& c = ctx.world();
      const int p = c.size();
      const int me = c.rank();
      families(c);
      families(c);
      const detail::Channel& ch = c.channel();
      constexpr int kCount = 9000;  // 36000 bytes a block: 8 whole pages and two partial ones
      const std::size_t u = static_cast<std::size_t>(kCount) * static_cast<std::size_t>(p);
      // Fresh pages (heap pages may still be shared from an earlier test's ranks, at other
      // offsets: a range that partly overlaps one is not shared).
      const std::size_t bytes = u * sizeof(int) + 100;
      void* sm = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ASSERT_NE(sm, MAP_FAILED);
      int* s = reinterpret_cast<int*>(static_cast<char*>(sm) + 100);
      std::vector<int> r(u);
      // The same buffer, new content each time; blocks of half the size first, so that the
      // larger blocks' ranges contain ranges shared before (taken over by a new memfd).
      for (int round = 0; round < 5; ++round) {
        const int n = round < 2 ? kCount / 2 : kCount;
        for (int j = 0; j < p; ++j) {
          for (int k = 0; k < n; ++k) s[j * n + k] = v(me, j, k + round);
        }
        std::fill(r.begin(), r.end(), -7);
        coll::alltoall(c, s, n, &intType(), r.data(), n, &intType());
        for (int j = 0; j < p; ++j) {
          for (int k = 0; k < n; ++k) {
            ASSERT_EQ(r[j * n + k], v(j, me, k + round)) << "round " << round << " from " << j;
          }
        }
      }
      // Without memory events (a build without UCX) nothing is shared.
      const bool shares = loadStore && ctx.sharedSends(false).active();
      if (shares) {
        EXPECT_GT(ch.sharedReads(), 0U) << mode;
      }
      // The send buffer's pages are shared as one range, so a block that starts or ends inside
      // a page reads it from the mapping too: only the buffer's two outer partial pages go in
      // ready chunks (a block each: 36000 bytes end mid-page, so block by block every stream
      // would carry up to two partial pages). The same for alltoallv's blocks when they tile
      // the buffer in rank order; with a gap between them, block by block again.
      const std::uint64_t ends = ch.sharedEndBytes();
      coll::alltoall(c, s, kCount, &intType(), r.data(), kCount, &intType());
      for (int j = 0; j < p; ++j) {
        ASSERT_EQ(r[j * kCount], v(j, me, 4)) << "from " << j;
      }
      if (shares) {
        EXPECT_LE(ch.sharedEndBytes() - ends, 2U * 4096U) << mode;
      }
      for (const int gap : {0, 1}) {
        std::vector<int> counts(static_cast<std::size_t>(p), kCount / 2);
        std::vector<int> displs(static_cast<std::size_t>(p));
        for (int j = 0; j < p; ++j) {
          displs[static_cast<std::size_t>(j)] = j * (kCount / 2 + gap);
          for (int k = 0; k < kCount / 2; ++k) s[j * (kCount / 2 + gap) + k] = v(me, j, k + gap);
        }
        std::fill(r.begin(), r.end(), -7);
        for (int call = 0; call < 2; ++call) {  // auto shares on the second
          const std::uint64_t before = ch.sharedEndBytes();
          coll::alltoallv(c, s, counts.data(), displs.data(), &intType(), r.data(), counts.data(),
                          displs.data(), &intType());
          for (int j = 0; j < p; ++j) {
            for (int k = 0; k < kCount / 2; ++k) {
              ASSERT_EQ(r[j * (kCount / 2 + gap) + k], v(j, me, k + gap))
                  << "gap " << gap << " from " << j;
            }
          }
          if (shares && gap == 0 && call == 1) {
            EXPECT_LE(ch.sharedEndBytes() - before, 2U * 4096U) << mode;
          }
        }
      }
      ASSERT_EQ(munmap(sm, bytes), 0);
      // Memory unmapped and mapped again: the receivers must see the new pages' content.
      for (int round = 0; round < 4; ++round) {
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(m, MAP_FAILED);
        int* b = reinterpret_cast<int*>(static_cast<char*>(m) + 100);  // unaligned blocks
        for (int call = 0; call < 2; ++call) {                         // auto shares on the second
          for (int j = 0; j < p; ++j) {
            for (int k = 0; k < kCount; ++k) b[j * kCount + k] = v(me, j, k + 7 * round + call);
          }
          coll::alltoall(c, b, kCount, &intType(), r.data(), kCount, &intType());
          for (int j = 0; j < p; ++j) {
            for (int k = 0; k < kCount; ++k) {
              ASSERT_EQ(r[j * kCount + k], v(j, me, k + 7 * round + call))
                  << "mapping " << round << " call " << call << " from " << j;
            }
          }
        }
        ASSERT_EQ(munmap(m, bytes), 0);
      }
    });
    unsetenv("ONESIDED_COLL_SHARE");
  }
}

// Cross-memory attach puts a stream's whole copy on its receiver, so the streams of a receiver
// that takes several (a reduce's or gather's root on more than 2 ranks) go through the ring even
// where attach is forced; a root's one stream (2 ranks) reads by attach, a reduce's straight into
// the result (or, in place, aside and then folded), and so does an exchange (alltoall). Results
// are checked too.
TEST_P(Collectives, AttachWhereTheReceiverTakesOneStream) {
  auto [transport, n, alg, chunk] = GetParam();
  if (chunk != 0 || n < 2) GTEST_SKIP() << "rendezvous runs with the default chunk, 2+ ranks";
  if (transport == "self_deferred" || transport == "verbs") {
    GTEST_SKIP() << "no load / store path between the ranks";
  }
  setenv("ONESIDED_COLL_ATTACH", "1", 1);
  setenv("ONESIDED_COLL_SHARE", "never", 1);
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    constexpr int kCount = 4096;  // 32 KiB of long per member: every stream by rendezvous
    const Datatype& lt = datatypeOf<long>();
    std::vector<long> s(static_cast<std::size_t>(kCount) * static_cast<std::size_t>(p));
    std::vector<long> r(s.size());
    for (int to = 0; to < p; ++to) {
      for (int k = 0; k < kCount; ++k) s[static_cast<std::size_t>(to * kCount + k)] = v(me, to, k);
    }
    coll::alltoall(c, s.data(), kCount, &lt, r.data(), kCount, &lt);  // peers resolve and probe
    const detail::Channel& ch = c.channel();
    // Attach reads at this rank in the reduces, the in-place reduces and the gathers.
    std::uint64_t reduced = 0, inPlace = 0, gathered = 0;
    auto counting = [&](std::uint64_t& n, auto&& call) {
      const std::uint64_t at = ch.attachedReads();
      call();
      n += ch.attachedReads() - at;
    };
    for (int root = 0; root < p; ++root) {
      std::vector<long> sum(kCount, -1);
      counting(reduced,
               [&] { coll::reduce(c, s.data(), sum.data(), kCount, &lt, Op::kSum, root); });
      std::vector<long> acc(s.begin(), s.begin() + kCount);  // the root's vector, reduced in place
      counting(inPlace, [&] {
        coll::reduce(c, me == root ? coll::inPlace() : s.data(), acc.data(), kCount, &lt, Op::kSum,
                     root);
      });
      counting(gathered,
               [&] { coll::gather(c, s.data(), kCount, &lt, r.data(), kCount, &lt, root); });
      if (me != root) continue;
      for (int k = 0; k < kCount; ++k) {
        long want = 0;
        for (int i = 0; i < p; ++i) want += v(i, 0, k);
        ASSERT_EQ(sum[static_cast<std::size_t>(k)], want) << "reduce element " << k;
        ASSERT_EQ(acc[static_cast<std::size_t>(k)], want) << "in-place reduce element " << k;
        for (int i = 0; i < p; ++i) {
          ASSERT_EQ(r[static_cast<std::size_t>(i * kCount + k)], v(i, 0, k)) << "gather " << i;
        }
      }
    }
    // Each rank is the root once, and reads the other's one stream by attach on 2 ranks.
    const std::uint64_t one = p == 2 ? 1U : 0U;
    EXPECT_EQ(reduced, one) << "reduces' attach reads at this rank";
    EXPECT_EQ(inPlace, one) << "in-place reduces' attach reads at this rank";
    EXPECT_EQ(gathered, one) << "gathers' attach reads at this rank";
    const std::uint64_t before = ch.attachedReads();
    coll::alltoall(c, s.data(), kCount, &lt, r.data(), kCount, &lt);
    for (int i = 0; i < p; ++i) {
      for (int k = 0; k < kCount; ++k) {
        ASSERT_EQ(r[static_cast<std::size_t>(i * kCount + k)], v(i, me, k)) << "alltoall " << i;
      }
    }
    EXPECT_GT(ch.attachedReads(), before) << "the alltoall did not read by attach";
  });
  unsetenv("ONESIDED_COLL_ATTACH");
  unsetenv("ONESIDED_COLL_SHARE");
}

// Allreduce of a vector of 80 KiB (recursive halving on 2 and 8 ranks): a count that does
// not divide by the number of ranks, out of place and in place, every rank checked element by
// element against the serial sum.
TEST_P(Collectives, LargeAllreduce) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    for (const int count : {20003}) {
      const auto u = static_cast<std::size_t>(count);
      std::vector<int> in(u), out(u + 1, -7);
      for (int k = 0; k < count; ++k) in[static_cast<std::size_t>(k)] = me * 7 + k % 1000;
      auto expect = [&](int k) { return 7 * p * (p - 1) / 2 + p * (k % 1000); };
      coll::allreduce(c, in.data(), out.data(), count, &intType(), Op::kSum);
      for (int k = 0; k < count; ++k) ASSERT_EQ(out[static_cast<std::size_t>(k)], expect(k)) << k;
      ASSERT_EQ(out[u], -7) << "written past the end";
      coll::allreduce(c, coll::inPlace(), in.data(), count, &intType(), Op::kSum);
      for (int k = 0; k < count; ++k) ASSERT_EQ(in[static_cast<std::size_t>(k)], expect(k)) << k;
      std::vector<double> d(u), dmax(u);
      for (int k = 0; k < count; ++k) d[static_cast<std::size_t>(k)] = (k + me) % p;
      coll::allreduce(c, d.data(), dmax.data(), count, &datatypeOf<double>(), Op::kMax);
      for (int k = 0; k < count; ++k) ASSERT_EQ(dmax[static_cast<std::size_t>(k)], p - 1) << k;
    }
  });
}

// Allreduce of a few elements (one exchange on 3-8 ranks; recursive doubling, or reduce and
// bcast, otherwise): every rank ends with the same bits where the order of a floating-point sum
// matters; in place; a strided type whose holes stay untouched; and a rank whose count differs
// makes every rank fail with a count error instead of hanging, after which the communicator
// still works.
TEST_P(Collectives, SmallAllreduce) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    const Datatype* dt = &datatypeOf<double>();
    const std::vector<double> d = {me == 0 ? 1e16 : 1.0 + 0.1 * me, me % 2 == 0 ? -1e16 : 3.3,
                                   1.0 / (me + 1)};
    std::vector<double> out(3);
    coll::allreduce(c, d.data(), out.data(), 3, dt, Op::kSum);
    std::vector<double> all(3 * static_cast<std::size_t>(p));
    coll::allgather(c, out.data(), 3, dt, all.data(), 3, dt);
    for (int r = 0; r < p; ++r) {
      ASSERT_EQ(std::memcmp(&all[3 * static_cast<std::size_t>(r)], out.data(), 3 * sizeof(double)),
                0)
          << "rank " << r << " ended with other bits";
    }
    int iv[2] = {me, 1};
    int ires[2] = {0, 0};
    coll::allreduce(c, iv, ires, 2, &intType(), Op::kSum);
    ASSERT_EQ(ires[0], p * (p - 1) / 2);
    ASSERT_EQ(ires[1], p);
    coll::allreduce(c, coll::inPlace(), iv, 2, &intType(), Op::kMax);
    ASSERT_EQ(iv[0], p - 1);
    ASSERT_EQ(iv[1], 1);
    auto strided = Datatype::vector(2, 1, 2, intType());
    strided->commit();
    int sb[4] = {me, -1, 2 * me, -1};
    int rb[4] = {-5, -5, -5, -5};
    coll::allreduce(c, sb, rb, 1, strided.get(), Op::kSum);
    ASSERT_EQ(rb[0], p * (p - 1) / 2);
    ASSERT_EQ(rb[2], p * (p - 1));
    ASSERT_EQ(rb[1], -5);
    ASSERT_EQ(rb[3], -5);
    if (p > 1) {
      int x[3] = {1, 2, 3};
      int y[3] = {0, 0, 0};
      try {
        coll::allreduce(c, x, y, me == 0 ? 3 : 2, &intType(), Op::kSum);
        ADD_FAILURE() << "rank " << me << ": a count that differs went unnoticed";
      } catch (const Error& e) {
        EXPECT_TRUE(e.errorClass() == kErrTruncate || e.errorClass() == kErrCount)
            << "rank " << me << ": " << e.what();
      }
      coll::allreduce(c, iv, ires, 2, &intType(), Op::kSum);
      ASSERT_EQ(ires[0], p * (p - 1));
    }
  });
}

// A root whose own block does not match in size (gather's sendcount, scatter's recvcount) gets
// MPI_ERR_TRUNCATE, and only it: the others' blocks still move, both where the root copies its
// own block before the phase (small) and where it copies it while the phase waits (from 32
// KiB), and the next collective works. In an allgather every rank fails.
TEST_P(Collectives, OwnBlockMismatchFailsOnlyTheRoot) {
  auto [transport, n, alg, chunk] = GetParam();
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    if (p < 2) return;
    const Datatype& lt = datatypeOf<long>();
    for (const int count : {16, 8192}) {
      const auto u = static_cast<std::size_t>(count);
      std::vector<long> s(u * static_cast<std::size_t>(p) + 1), r(u * static_cast<std::size_t>(p));
      for (std::size_t k = 0; k < s.size(); ++k) s[k] = me * 100000 + static_cast<long>(k);
      const int root = p - 1;
      auto expectTruncateAtRoot = [&](const char* what, auto&& call) {
        try {
          call();
          EXPECT_NE(me, root) << what << ": the root's mismatch went unnoticed";
        } catch (const Error& e) {
          EXPECT_EQ(me, root) << what << ": " << e.what();
          EXPECT_EQ(e.errorClass(), kErrTruncate) << what << ": " << e.what();
        }
      };
      std::fill(r.begin(), r.end(), -1);
      expectTruncateAtRoot("gather", [&] {
        coll::gather(c, s.data(), me == root ? count + 1 : count, &lt, r.data(), count, &lt, root);
      });
      if (me == root) {
        for (int i = 0; i < p - 1; ++i) {
          for (int k = 0; k < count; ++k) {
            ASSERT_EQ(r[static_cast<std::size_t>(i * count + k)], i * 100000 + k)
                << "gather, block " << i << ", count " << count;
          }
        }
      }
      std::fill(r.begin(), r.end(), -1);
      expectTruncateAtRoot("scatter", [&] {
        coll::scatter(c, s.data(), count, &lt, r.data(), me == root ? count - 1 : count, &lt, root);
      });
      if (me != root) {
        for (int k = 0; k < count; ++k) {
          ASSERT_EQ(r[static_cast<std::size_t>(k)], root * 100000 + me * count + k)
              << "scatter, count " << count;
        }
      }
      // Allgather: a rank whose own block mismatches sends that size to the others too, so
      // every rank fails, and none is left waiting (the tree carries the error down).
      try {
        coll::allgather(c, s.data(), me == root ? count + 1 : count, &lt, r.data(), count, &lt);
        ADD_FAILURE() << "rank " << me << ": allgather's mismatch went unnoticed";
      } catch (const Error& e) {
        EXPECT_TRUE(e.errorClass() == kErrTruncate || e.errorClass() == kErrCount)
            << "rank " << me << ": " << e.what();
      }
      coll::allreduce(c, s.data(), r.data(), 1, &lt, Op::kSum);
      ASSERT_EQ(r[0], 100000L * p * (p - 1) / 2);
    }
  });
}

// Members whose counts select different algorithms (an erroneous program: the standard wants
// them equal), or of which one fails a check of its own arguments and never starts, leave no
// member waiting for ever: every call returns, some rank with an error, and the world
// communicator works afterwards. Each case runs on a dup, since collectives whose members went
// out of step fail from then on.
TEST_P(Collectives, OutOfStepMembersFailInsteadOfHanging) {
  auto [transport, n, alg, chunk] = GetParam();
  if (std::string(alg) != "auto" || chunk != 0) GTEST_SKIP() << "count-selected algorithms only";
  spawn(n, transport, [&](Context& ctx) {
    Comm& c = ctx.world();
    const int p = c.size();
    const int me = c.rank();
    if (p < 2) return;
    const Datatype& dt = datatypeOf<double>();
    const int odd = p - 1;
    std::vector<double> s(std::size_t{8192} * 8), r(s.size());
    auto attempt = [&](const char* what, auto&& call) {
      auto d = c.dup();
      int failed = 0;
      try {
        call(*d);
      } catch (const Error& e) {
        failed = 1;
        EXPECT_TRUE(e.errorClass() == kErrOther || e.errorClass() == kErrCount ||
                    e.errorClass() == kErrTruncate)
            << what << ", rank " << me << ": " << e.what();
      }
      coll::allreduce(c, coll::inPlace(), &failed, 1, &intType(), Op::kMax);
      EXPECT_EQ(failed, 1) << what << ": no rank noticed";
    };
    // Allreduce: recursive doubling against halving (64 KiB, a power-of-two number of ranks),
    // one direct exchange against the rest (256 bytes, 3-8 ranks).
    attempt("allreduce of 32 / 64 KiB", [&](Comm& d) {
      coll::allreduce(d, s.data(), r.data(), me == odd ? 8192 : 4096, &dt, Op::kSum);
    });
    attempt("allreduce of 256 / 512 bytes", [&](Comm& d) {
      coll::allreduce(d, s.data(), r.data(), me == odd ? 64 : 32, &dt, Op::kSum);
    });
    // Reduce and reduce_scatter_block: linear against a tree.
    attempt("reduce of 512 bytes / 4 KiB", [&](Comm& d) {
      coll::reduce(d, s.data(), r.data(), me == odd ? 512 : 64, &dt, Op::kSum, 0);
    });
    attempt("reduce_scatter_block of 512 bytes / 4 KiB", [&](Comm& d) {
      coll::reduceScatterBlock(d, s.data(), r.data(), me == odd ? 512 : 64, &dt, Op::kSum);
    });
    // A root whose count is wrong fails before it starts; its children wait for it.
    attempt("bcast from a root that fails its check",
            [&](Comm& d) { coll::bcast(d, s.data(), me == 0 ? -1 : 4, &dt, 0); });
    int x = 1;
    coll::allreduce(c, coll::inPlace(), &x, 1, &intType(), Op::kSum);
    EXPECT_EQ(x, p);
  });
}

std::string name(const ::testing::TestParamInfo<Param>& p) {
  auto [t, n, alg, chunk] = p.param;
  return t + "_" + std::to_string(n) + "ranks_" + alg +
         (chunk != 0 ? "_chunk" + std::to_string(chunk) : "");
}

INSTANTIATE_TEST_SUITE_P(All, Collectives,
                         ::testing::Combine(::testing::ValuesIn(transports()),
                                            ::testing::Values(1, 2, 3, 5, 8),
                                            ::testing::Values("auto", "linear", "tree"),
                                            ::testing::Values(0, 40)),
                         name);

}  // namespace
}  // namespace onesided::test
