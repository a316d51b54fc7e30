/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point from several threads at once (MPI_THREAD_MULTIPLE, MPI-3.1 §12.4): 4 threads
 * per rank, 100 repetitions each.
 *  - Threads 0..2 exchange on MPI_COMM_WORLD, each on its own tag, with partner rank + 1 + t
 *    (the rank itself when that wraps around): MPI_Sendrecv, MPI_Irecv + MPI_Isend + MPI_Waitall,
 *    MPI_Irecv + MPI_Ssend + MPI_Wait in turn, small messages and 64 KiB ones.
 *  - Thread 3 works on its own dup of MPI_COMM_WORLD: each repetition it sends one message to
 *    every other rank and receives p - 1 with MPI_ANY_SOURCE / MPI_ANY_TAG; per source the
 *    repetitions must arrive in order (non-overtaking holds per sender thread).
 * Every message's contents are checked. Without MPI_THREAD_MULTIPLE the program prints a
 * message and exits 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kThreads = 4, kReps = 100, kBig = 16384 /* ints: 64 KiB */ };

static MPI_Comm any_comm;
static int thread_failures[kThreads];

#define T_EXPECT(t, cond, ...)                                                                \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      char t_msg_[256];                                                                       \
      snprintf(t_msg_, sizeof t_msg_, __VA_ARGS__);                                           \
      fprintf(stderr, "rank %d thread %d: %s:%d: expectation failed: %s: %s\n", mt_rank, (t), \
              __FILE__, __LINE__, #cond, t_msg_);                                             \
      ++thread_failures[(t)];                                                                 \
    }                                                                                         \
  } while (0)

static int val(int src, int t, int rep, int k) {
  return src * 10000019 + t * 1000003 + rep * 1009 + k;
}

static void* pair_thread(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int p = mt_size, me = mt_rank;
  const int right = (me + 1 + t) % p, left = ((me - 1 - t) % p + p) % p;
  const int tag = 100 + t;
  int* s = malloc(kBig * sizeof(int));
  int* r = malloc(kBig * sizeof(int));
  for (int rep = 0; rep < kReps; ++rep) {
    const int n = rep % 4 == 3 ? kBig : 1 + rep % 50;
    for (int k = 0; k < n; ++k) s[k] = val(me, t, rep, k);
    memset(r, 0, (size_t)n * sizeof(int));
    MPI_Status st;
    MPI_Request q[2];
    switch (rep % 3) {
      case 0:
        MT_CHECK(
            MPI_Sendrecv(s, n, MPI_INT, right, tag, r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
        break;
      case 1: {
        MPI_Status sts[2];
        MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &q[0]));
        MT_CHECK(MPI_Isend(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &q[1]));
        MT_CHECK(MPI_Waitall(2, q, sts));
        st = sts[0];
        break;
      }
      default:
        MT_CHECK(MPI_Irecv(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &q[0]));
        MT_CHECK(MPI_Ssend(s, n, MPI_INT, right, tag, MPI_COMM_WORLD));
        MT_CHECK(MPI_Wait(&q[0], &st));
        break;
    }
    int cnt = -1;
    MT_CHECK(MPI_Get_count(&st, MPI_INT, &cnt));
    T_EXPECT(t, st.MPI_SOURCE == left && st.MPI_TAG == tag && cnt == n,
             "rep %d: status source %d tag %d count %d, expected %d %d %d", rep, st.MPI_SOURCE,
             st.MPI_TAG, cnt, left, tag, n);
    int bad = 0;
    for (int k = 0; k < n; ++k) bad += r[k] != val(left, t, rep, k);
    T_EXPECT(t, bad == 0, "rep %d: %d of %d ints wrong", rep, bad, n);
  }
  free(s);
  free(r);
  return NULL;
}

static void* any_source_thread(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int p = mt_size, me = mt_rank;
  enum { n = 8 };
  int* next = calloc((size_t)p, sizeof(int)); /* next repetition expected from each source */
  int(*s)[n] = malloc((size_t)p * sizeof *s);
  MPI_Request* q = malloc((size_t)p * sizeof(MPI_Request));
  for (int rep = 0; rep < kReps; ++rep) {
    int nq = 0;
    for (int d = 0; d < p; ++d) {
      if (d == me) continue;
      for (int k = 0; k < n; ++k) s[d][k] = val(me, d, rep, k);
      MT_CHECK(MPI_Isend(s[d], n, MPI_INT, d, rep, any_comm, &q[nq++]));
    }
    for (int i = 0; i < p - 1; ++i) {
      int r[n];
      MPI_Status st;
      MT_CHECK(MPI_Recv(r, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, any_comm, &st));
      const int src = st.MPI_SOURCE;
      if (src < 0 || src >= p || src == me) {
        T_EXPECT(t, 0, "ANY_SOURCE: source %d", src);
        continue;
      }
      /* A source may be ahead (its messages of later repetitions can be taken here), but its
       * repetitions arrive in order. */
      T_EXPECT(t, st.MPI_TAG == next[src], "from %d: repetition %d, expected %d", src, st.MPI_TAG,
               next[src]);
      int bad = 0;
      for (int k = 0; k < n; ++k) bad += r[k] != val(src, me, st.MPI_TAG, k);
      T_EXPECT(t, bad == 0, "from %d rep %d: %d ints wrong", src, st.MPI_TAG, bad);
      next[src] = st.MPI_TAG + 1;
    }
    MT_CHECK(MPI_Waitall(nq, q, MPI_STATUSES_IGNORE));
  }
  /* All of every source's repetitions arrived (the counts balance: p - 1 per repetition). */
  for (int src = 0; src < p; ++src)
    if (src != me) T_EXPECT(t, next[src] == kReps, "from %d: %d repetitions", src, next[src]);
  free(next);
  free(s);
  free(q);
  return NULL;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided = -1;
  MT_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
  MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
  if (provided < MPI_THREAD_MULTIPLE) {
    if (mt_rank == 0)
      printf("p2p_threads: skipped: MPI_THREAD_MULTIPLE not provided (got %d)\n", provided);
    MT_CHECK(MPI_Finalize());
    return 0;
  }
  int query = -1;
  MT_CHECK(MPI_Query_thread(&query));
  MT_EXPECT(query == MPI_THREAD_MULTIPLE, "MPI_Query_thread %d", query);
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &any_comm));
  pthread_t th[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    void* (*fn)(void*) = t == kThreads - 1 ? any_source_thread : pair_thread;
    if (pthread_create(&th[t], NULL, fn, (void*)(intptr_t)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < kThreads; ++t) mt_failures += thread_failures[t];
  /* Nothing left over on either communicator. */
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int flag = 1;
  MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  MT_EXPECT(flag == 0, "a message left over on MPI_COMM_WORLD");
  MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, any_comm, &flag, MPI_STATUS_IGNORE));
  MT_EXPECT(flag == 0, "a message left over on the dup");
  MT_CHECK(MPI_Comm_free(&any_comm));
  if (mt_rank == 0) printf("p2p_threads: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
