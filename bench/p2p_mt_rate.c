/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_mt_rate: message rate with MPI_THREAD_MULTIPLE. --threads T (default 4) threads on each of
 * ranks 0 and 1 (other ranks only take part in the barriers): thread t of rank 0 sends to thread t
 * of rank 1, each pair on its own MPI_Comm_dup of MPI_COMM_WORLD (default) or, with --per-thread
 * tag, on MPI_COMM_WORLD with its own tags. Per iteration the receiving thread posts --window (64)
 * MPI_Irecvs of N bytes, the sending thread 64 MPI_Isends, both MPI_Waitall, and the receiver
 * answers with a 4-byte MPI_Send. Each batch starts and ends with an MPI_Barrier (from thread 0)
 * and a barrier of the threads, so rank 0's clock covers every thread. JSON
 * "bench":"p2p_mt_rate_threadsT" (suffix "_tag" with --per-thread tag); "mmsgs" = millions of
 * messages per second over all threads, "p50_us" the time per iteration. Sizes 1 B to 512 B by
 * default. Every receiving thread checks what it received after the timed loop of each size.
 *
 * When MPI_Init_thread does not provide MPI_THREAD_MULTIPLE, rank 0 prints one line that says
 * so on stdout (starting with '#', no JSON) and every rank exits 0. Options and output:
 * p2p_common.h. */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "p2p_common.h"

static struct p2p_options o;
static int rank, size;
static MPI_Comm* comms; /* one per thread (--per-thread comm) */
static pthread_barrier_t bar;
static double* per; /* thread 0's batch times */
static int* failed; /* per thread */
static char name[64];

static void run(int t) {
  const int w = o.window;
  const int active = rank < 2;
  const MPI_Comm comm = o.per_thread_tag ? MPI_COMM_WORLD : comms[t];
  const int tag = o.per_thread_tag ? 100 + 2 * t : 100;
  const int peer = rank == 0 ? 1 : 0;
  char* sbuf = p2p_alloc(&o, o.b.max_bytes);
  char* rbuf = p2p_alloc(&o, o.b.max_bytes);
  char ack[4] = {0};
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)w);
  MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)w);
  if (!reqs || !sts) {
    fprintf(stderr, "%s: out of memory\n", name);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int si = 0; si < o.b.nsizes; ++si) {
    const size_t bytes = o.b.sizes[si];
    const int n = (int)bytes;
    const int iters = bench_scaled_iters(o.b.iters, bytes, w * o.threads);
    const int warmup = bench_scaled_iters(o.b.warmup, bytes, w * o.threads);
    if (rank == 0) p2p_fill(sbuf, bytes, t);
    if (rank == 1)
      for (size_t i = 0; i < bytes; ++i) rbuf[i] = 0;
    for (int b = -1; b < o.b.repeats; ++b) {
      const int count = b < 0 ? warmup : iters; /* batch -1: the warm-up */
      double t0 = 0;
      if (t == 0) {
        P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        t0 = MPI_Wtime();
      }
      pthread_barrier_wait(&bar);
      for (int i = 0; i < count && active; ++i) {
        if (rank == 0) {
          for (int k = 0; k < w; ++k)
            P2P_CHECK(MPI_Isend(sbuf, n, MPI_BYTE, peer, tag, comm, &reqs[k]));
          P2P_CHECK(MPI_Waitall(w, reqs, sts));
          P2P_CHECK(MPI_Recv(ack, 4, MPI_BYTE, peer, tag + 1, comm, MPI_STATUS_IGNORE));
        } else {
          for (int k = 0; k < w; ++k)
            P2P_CHECK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, tag, comm, &reqs[k]));
          P2P_CHECK(MPI_Waitall(w, reqs, sts));
          P2P_CHECK(MPI_Send(ack, 4, MPI_BYTE, peer, tag + 1, comm));
        }
      }
      pthread_barrier_wait(&bar);
      if (t == 0) {
        P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (b >= 0) per[b] = (MPI_Wtime() - t0) / count;
      }
    }
    if (t == 0 && rank == 0)
      p2p_report(name, &o, bytes, size, iters, per, (double)bytes * w * o.threads,
                 (double)w * o.threads);
    if (rank == 1 && o.b.verify) {
      if (p2p_check(name, rank, rbuf, bytes, t, &sts[w - 1], peer)) failed[t] = 1;
      if (sts[w - 1].MPI_TAG != tag) {
        fprintf(stderr, "%s: verify failed on rank 1, thread %d: tag %d, expected %d\n", name, t,
                sts[w - 1].MPI_TAG, tag);
        failed[t] = 1;
      }
    }
  }
  p2p_free(&o, sbuf);
  p2p_free(&o, rbuf);
  free(reqs);
  free(sts);
}

static void* worker(void* arg) {
  run((int)(size_t)arg);
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  const int rc = p2p_setup(argc, argv, "p2p_mt_rate", 200, 1, 512, MPI_THREAD_MULTIPLE, 2, &o,
                           &rank, &size, &provided);
  if (rc >= 0) return rc;
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) {
      printf(
          "# p2p_mt_rate: MPI_THREAD_MULTIPLE not provided (MPI_Init_thread gave level %d): no "
          "figures\n",
          provided);
      fflush(stdout);
    }
    MPI_Finalize();
    return 0;
  }
  const int nt = o.threads;
  snprintf(name, sizeof name, "p2p_mt_rate_threads%d%s", nt, o.per_thread_tag ? "_tag" : "");
  comms = malloc(sizeof(MPI_Comm) * (size_t)nt);
  per = malloc(sizeof(double) * (size_t)o.b.repeats);
  failed = calloc((size_t)nt, sizeof(int));
  pthread_t* threads = malloc(sizeof(pthread_t) * (size_t)nt);
  if (!comms || !per || !failed || !threads) {
    fprintf(stderr, "%s: out of memory\n", name);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int t = 0; t < nt && !o.per_thread_tag; ++t)
    P2P_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
  if (pthread_barrier_init(&bar, NULL, (unsigned)nt) != 0) {
    fprintf(stderr, "%s: pthread_barrier_init failed\n", name);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (int t = 1; t < nt; ++t) {
    if (pthread_create(&threads[t], NULL, worker, (void*)(size_t)t) != 0) {
      fprintf(stderr, "%s: pthread_create failed\n", name);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  run(0);
  int any = failed[0];
  for (int t = 1; t < nt; ++t) {
    pthread_join(threads[t], NULL);
    any |= failed[t];
  }
  pthread_barrier_destroy(&bar);
  for (int t = 0; t < nt && !o.per_thread_tag; ++t) P2P_CHECK(MPI_Comm_free(&comms[t]));
  free(comms);
  free(per);
  free(failed);
  free(threads);
  MPI_Finalize();
  return any ? 1 : 0;
}
