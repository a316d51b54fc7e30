/* SPDX-License-Identifier: BSD-3-Clause */
/* Non-overtaking (MPI-3.1 §3.5): two messages from one sender that both match a receive are
 * received in the order they were sent. Every rank sends every other rank a stream of messages
 * (2000 per pair up to 4 ranks, fewer at more ranks; P2P_ORDER_COUNT overrides) of random size
 * (0 B to 200 KiB: eager and large protocols), random tag from {0..3}, on one of three
 * communicators: MPI_COMM_WORLD, a dup of it and a split of it (one colour, ranks reversed).
 * The receiver takes them with a random mix of specific source and tag, MPI_ANY_TAG and
 * MPI_ANY_SOURCE, by blocking and by nonblocking receives, and checks each message against the
 * schedule: it must be the earliest not yet received message of its sender on that communicator
 * that matches the receive, with its size and its bytes (derived from source, destination and
 * sequence number). Messages of different communicators never match each other.
 *
 * The schedule of a pair is a function of the seed (P2P_SEED, or from the clock; rank 0 prints
 * it), so both sides know it and a failure is replayed with P2P_SEED=<seed>.
 *
 * Sends go out in rounds of kRound messages per pair, all nonblocking; in round b a rank receives
 * until it holds every message with sequence number below (b + 1) * kRound from every peer (each
 * receive is aimed at a message already posted, so no receive waits for ever), and it completes
 * its sends of round b - 1 at the end of round b. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpitest.h"

enum { kComms = 3, kTags = 4, kRound = 100, kMaxSize = 200 * 1024 };

static uint64_t seed;
static int per_pair; /* messages per ordered pair */
static MPI_Comm comms[kComms];
static const char* const kCommName[kComms] = {"world", "dup", "split"};

/* splitmix64 */
static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

typedef struct {
  int comm, tag, size;
} msg_t;

/* Message k from world rank src to world rank dst. */
static msg_t schedule(int src, int dst, int k) {
  const uint64_t h = mix(seed ^ mix(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ (uint64_t)k));
  msg_t m;
  m.comm = (int)(h % kComms);
  m.tag = (int)((h >> 8) % kTags);
  const unsigned kind = (unsigned)((h >> 16) % 100);
  const uint32_t r = (uint32_t)(h >> 32);
  if (kind < 5) {
    m.size = 0;
  } else if (kind < 70) {
    m.size = 1 + (int)(r % 256);
  } else if (kind < 94) {
    m.size = 256 + (int)(r % (16 * 1024));
  } else {
    m.size = 16 * 1024 + (int)(r % (kMaxSize - 16 * 1024 + 1));
  }
  return m;
}

static unsigned char byte_of(int src, int dst, int k, int i) {
  const uint32_t v = (uint32_t)src * 7919u + (uint32_t)k * 104729u + (uint32_t)dst * 31u;
  return (unsigned char)(((v + (uint32_t)i) * 2654435761u) >> 24);
}

/* Rank translation: the split reverses the ranks. */
static int to_comm_rank(int c, int world_rank) {
  return c == 2 ? mt_size - 1 - world_rank : world_rank;
}
static int to_world_rank(int c, int comm_rank) {
  return c == 2 ? mt_size - 1 - comm_rank : comm_rank;
}

/* Receiver's bookkeeping per source. */
typedef struct {
  unsigned char* got; /* got[k]: message k received */
  int first;          /* first k not received */
} stream_t;

static stream_t* streams;

/* The earliest message from src not yet received on communicator c with tag (or any tag when
 * tag is MPI_ANY_TAG); -1 if none within the first `limit`. */
static int earliest(int src, int c, int tag, int limit) {
  for (int k = streams[src].first; k < limit; ++k) {
    if (streams[src].got[k]) continue;
    const msg_t m = schedule(src, mt_rank, k);
    if (m.comm == c && (tag == MPI_ANY_TAG || m.tag == tag)) return k;
  }
  return -1;
}

static void mark(int src, int k) {
  streams[src].got[k] = 1;
  while (streams[src].first < per_pair && streams[src].got[streams[src].first])
    ++streams[src].first;
}

static long received_total = 0;

/* One receive aimed at the earliest unreceived message of `src` (below `limit`), with a random
 * kind of wildcard; checks what arrived. Returns 0 if the job should stop (already failed). */
static int receive_one(int src, int limit, uint64_t* rng, unsigned char* buf) {
  const int k0 = streams[src].first;
  const msg_t want = schedule(src, mt_rank, k0);
  const int c = want.comm;
  *rng = mix(*rng);
  const int kind = (int)(*rng % 4); /* 0 specific, 1 ANY_TAG, 2 ANY_SOURCE, 3 both */
  const int blocking = (int)((*rng >> 8) % 2);
  const int spec_src = (kind & 2) ? MPI_ANY_SOURCE : to_comm_rank(c, src);
  const int spec_tag = (kind & 1) ? MPI_ANY_TAG : want.tag;
  MPI_Status st;
  if (blocking) {
    MT_CHECK(MPI_Recv(buf, kMaxSize, MPI_BYTE, spec_src, spec_tag, comms[c], &st));
  } else {
    MPI_Request rq;
    MT_CHECK(MPI_Irecv(buf, kMaxSize, MPI_BYTE, spec_src, spec_tag, comms[c], &rq));
    MT_CHECK(MPI_Wait(&rq, &st));
  }
  const int s = to_world_rank(c, st.MPI_SOURCE);
  if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= mt_size || s == mt_rank) {
    MT_EXPECT(0, "%s: status source %d", kCommName[c], st.MPI_SOURCE);
    return 0;
  }
  /* Non-overtaking: the earliest message of s that matches the receive. */
  const int k = earliest(s, c, spec_tag, per_pair);
  if (k < 0) {
    MT_EXPECT(0, "%s: a message from %d (tag %d) that the schedule does not have", kCommName[c], s,
              st.MPI_TAG);
    return 0;
  }
  const msg_t m = schedule(s, mt_rank, k);
  int n = -1;
  MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
  int ok = st.MPI_TAG == m.tag && n == m.size;
  if (ok) {
    for (int i = 0; i < n; ++i) {
      if (buf[i] != byte_of(s, mt_rank, k, i)) {
        ok = 0;
        break;
      }
    }
  }
  if (!ok) {
    /* Which message was it? Compare with the other unreceived ones from s. */
    int other = -1;
    for (int j = streams[s].first; j < per_pair && other < 0; ++j) {
      const msg_t o = schedule(s, mt_rank, j);
      if (streams[s].got[j] || o.size != n || o.tag != st.MPI_TAG) continue;
      if (n == 0 ||
          (buf[0] == byte_of(s, mt_rank, j, 0) && buf[n - 1] == byte_of(s, mt_rank, j, n - 1)))
        other = j;
    }
    MT_EXPECT(0,
              "%s: receive (source %d, tag %d) from %d: expected message %d (tag %d, %d bytes), "
              "got tag %d, %d bytes%s; it looks like message %d (comm %s)",
              kCommName[c], spec_src, spec_tag, s, k, m.tag, m.size, st.MPI_TAG, n,
              (st.MPI_TAG == m.tag && n == m.size) ? ", wrong bytes" : "", other,
              other >= 0 ? kCommName[schedule(s, mt_rank, other).comm] : "?");
    return 0;
  }
  (void)limit;
  mark(s, k);
  ++received_total;
  return 1;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int p = mt_size, me = mt_rank;
  {
    unsigned long long s = 0;
    const char* env = getenv("P2P_SEED");
    if (me == 0) {
      s = env != NULL && *env != '\0' ? strtoull(env, NULL, 0)
                                      : (unsigned long long)time(NULL) * 2654435761ull;
    }
    MT_CHECK(MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    seed = (uint64_t)s;
    const char* cnt = getenv("P2P_ORDER_COUNT");
    per_pair = cnt != NULL && atoi(cnt) > 0 ? atoi(cnt) : (p <= 4 ? 2000 : 500);
    if (me == 0)
      printf("p2p_order: %d ranks, %d messages per pair, seed %llu (replay: P2P_SEED=%llu)\n", p,
             per_pair, s, s);
  }
  comms[0] = MPI_COMM_WORLD;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
  MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - me, &comms[2]));
  {
    int r = -1;
    MT_CHECK(MPI_Comm_rank(comms[2], &r));
    MT_EXPECT(r == p - 1 - me, "split rank %d", r);
  }
  streams = calloc((size_t)p, sizeof *streams);
  for (int s = 0; s < p; ++s) streams[s].got = calloc((size_t)per_pair + 1, 1);
  unsigned char* rbuf = malloc(kMaxSize);

  /* Two rounds of send buffers and requests: round b's are completed at the end of round b+1. */
  const int rounds = (per_pair + kRound - 1) / kRound;
  const size_t slots = (size_t)kRound * (size_t)(p > 1 ? p - 1 : 1);
  unsigned char* sbuf[2] = {NULL, NULL};
  size_t sbuf_cap[2] = {0, 0};
  MPI_Request* sreq[2] = {malloc(slots * sizeof(MPI_Request)), malloc(slots * sizeof(MPI_Request))};
  int nreq[2] = {0, 0};
  uint64_t rng = mix(seed ^ (uint64_t)(me + 1) * 0x1234567ull);
  int alive = 1;
  for (int b = 0; b < rounds && p > 1; ++b) {
    const int lo = b * kRound;
    const int hi = lo + kRound < per_pair ? lo + kRound : per_pair;
    const int slot = b % 2;
    if (nreq[slot] > 0) MT_CHECK(MPI_Waitall(nreq[slot], sreq[slot], MPI_STATUSES_IGNORE));
    nreq[slot] = 0;
    /* Fill the round's messages into one buffer, then post them: sequence-major, the peers in
     * a rotating order. */
    size_t need = 0;
    for (int k = lo; k < hi; ++k)
      for (int d = 0; d < p; ++d)
        if (d != me) need += (size_t)schedule(me, d, k).size;
    if (need > sbuf_cap[slot]) {
      free(sbuf[slot]);
      sbuf[slot] = malloc(need + 1);
      sbuf_cap[slot] = need;
    }
    size_t off = 0;
    for (int k = lo; k < hi; ++k) {
      for (int j = 1; j < p; ++j) {
        const int d = (me + 1 + (j - 1 + k) % (p - 1)) % p;
        if (d == me) continue;
        const msg_t m = schedule(me, d, k);
        unsigned char* mb = sbuf[slot] + off;
        for (int i = 0; i < m.size; ++i) mb[i] = byte_of(me, d, k, i);
        MT_CHECK(MPI_Isend(mb, m.size, MPI_BYTE, to_comm_rank(m.comm, d), m.tag, comms[m.comm],
                           &sreq[slot][nreq[slot]++]));
        off += (size_t)m.size;
      }
    }
    /* Receive every message below hi from every peer. */
    int pending = 0;
    for (int s = 0; s < p; ++s)
      if (s != me) pending += hi - streams[s].first; /* an upper bound; recounted below */
    while (alive && pending > 0) {
      /* A random source whose stream is not complete up to hi. */
      rng = mix(rng);
      int src = (int)(rng % (uint64_t)p), tries = 0;
      while ((src == me || streams[src].first >= hi) && tries < p) {
        src = (src + 1) % p;
        ++tries;
      }
      if (src == me || streams[src].first >= hi) break;
      alive = receive_one(src, hi, &rng, rbuf);
      pending = 0;
      for (int s = 0; s < p; ++s)
        if (s != me && streams[s].first < hi) ++pending;
    }
    if (!alive) break;
  }
  if (!alive) {
    fprintf(stderr, "rank %d: p2p_order failed with seed %llu; aborting\n", me,
            (unsigned long long)seed);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int slot = 0; slot < 2; ++slot)
    if (nreq[slot] > 0) MT_CHECK(MPI_Waitall(nreq[slot], sreq[slot], MPI_STATUSES_IGNORE));
  /* Nothing is left over on any communicator. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int c = 0; c < kComms; ++c) {
    int flag = 1;
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &flag, MPI_STATUS_IGNORE));
    MT_EXPECT(flag == 0, "a message left over on %s", kCommName[c]);
  }
  MT_EXPECT(received_total == (long)per_pair * (p - 1), "received %ld messages, expected %ld",
            received_total, (long)per_pair * (p - 1));
  MT_CHECK(MPI_Comm_free(&comms[1]));
  MT_CHECK(MPI_Comm_free(&comms[2]));
  for (int s = 0; s < p; ++s) free(streams[s].got);
  free(streams);
  free(rbuf);
  free(sbuf[0]);
  free(sbuf[1]);
  free(sreq[0]);
  free(sreq[1]);
  if (me == 0) printf("p2p_order: %d ranks: %s\n", p, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
