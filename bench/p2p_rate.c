/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_rate: message rate of small messages (OSU osu_mbw_mr). --pairs N (default 1): ranks
 * 0..N-1 send, rank i to rank i + N; needs 2N ranks, any others only take part in the barriers.
 * Per iteration every receiver posts --window (64) MPI_Irecvs of N bytes, every sender posts 64
 * MPI_Isends, both MPI_Waitall, and the receiver answers with a 4-byte MPI_Send. Each batch of
 * iterations starts and ends with an MPI_Barrier, so rank 0's clock covers every pair.
 * JSON "bench":"p2p_rate_pairsN"; "mmsgs" = millions of messages per second over all pairs,
 * "mbps" the same in bytes, "p50_us" the time per iteration. Sizes 1 B to 512 B by default.
 * The receivers check what they received after the timed loop of each size. Options and
 * output: p2p_common.h. */
#include <stdio.h>
#include <stdlib.h>

#include "p2p_common.h"

int main(int argc, char** argv) {
  struct p2p_options o;
  int rank, size, provided;
  int rc = p2p_setup(argc, argv, "p2p_rate", 200, 1, 512, MPI_THREAD_SINGLE, 2, &o, &rank, &size,
                     &provided);
  if (rc >= 0) return rc;
  const int pairs = o.pairs;
  if (size < 2 * pairs) {
    if (rank == 0)
      fprintf(stderr, "p2p_rate: --pairs %d needs %d ranks, got %d\n", pairs, 2 * pairs, size);
    MPI_Finalize();
    return 2;
  }
  char name[64];
  snprintf(name, sizeof name, "p2p_rate_pairs%d", pairs);
  const int w = o.window;
  char* sbuf = p2p_alloc(&o, o.b.max_bytes);
  char* rbuf = p2p_alloc(&o, o.b.max_bytes);
  char ack[4] = {0};
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)w);
  MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)w);
  double* per = malloc(sizeof(double) * (size_t)o.b.repeats);
  if (!reqs || !sts || !per) {
    fprintf(stderr, "%s: out of memory\n", name);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const int sender = rank < pairs;
  const int receiver = rank >= pairs && rank < 2 * pairs;
  const int peer = sender ? rank + pairs : rank - pairs;
  int failed = 0;
  for (int si = 0; si < o.b.nsizes; ++si) {
    const size_t bytes = o.b.sizes[si];
    const int n = (int)bytes;
    const int iters = bench_scaled_iters(o.b.iters, bytes, w);
    const int warmup = bench_scaled_iters(o.b.warmup, bytes, w);
    if (sender) p2p_fill(sbuf, bytes, rank);
    if (receiver)
      for (size_t i = 0; i < bytes; ++i) rbuf[i] = 0;
    for (int b = -1; b < o.b.repeats; ++b) {
      const int count = b < 0 ? warmup : iters; /* batch -1: the warm-up */
      P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      const double t = MPI_Wtime();
      for (int i = 0; i < count && (sender || receiver); ++i) {
        if (sender) {
          for (int k = 0; k < w; ++k)
            P2P_CHECK(MPI_Isend(sbuf, n, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[k]));
          P2P_CHECK(MPI_Waitall(w, reqs, sts));
          P2P_CHECK(MPI_Recv(ack, 4, MPI_BYTE, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
          for (int k = 0; k < w; ++k)
            P2P_CHECK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[k]));
          P2P_CHECK(MPI_Waitall(w, reqs, sts));
          P2P_CHECK(MPI_Send(ack, 4, MPI_BYTE, peer, 101, MPI_COMM_WORLD));
        }
      }
      P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      if (b >= 0) per[b] = (MPI_Wtime() - t) / count;
    }
    if (rank == 0)
      p2p_report(name, &o, bytes, size, iters, per, (double)bytes * w * pairs, (double)w * pairs);
    if (receiver && o.b.verify)
      failed |= p2p_check(name, rank, rbuf, bytes, peer, &sts[w - 1], peer);
  }
  p2p_free(&o, sbuf);
  p2p_free(&o, rbuf);
  free(reqs);
  free(sts);
  free(per);
  MPI_Finalize();
  return failed ? 1 : 0;
}
