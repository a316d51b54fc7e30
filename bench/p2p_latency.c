/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_latency: ping-pong (OSU osu_latency). Per iteration rank 0 sends N bytes to rank 1 with
 * MPI_Send and waits for N bytes back with MPI_Recv; rank 1 does the mirror image. Other ranks
 * only take part in the barriers. "p50_us" is half a round trip (one-way latency) of the median
 * batch; "mbps" is N over it. Sizes 0 B to 4 MiB by default. Both ranks check what they received
 * after the timed loop of each size. Options and output: p2p_common.h. */
#include <stdlib.h>

#include "p2p_common.h"

int main(int argc, char** argv) {
  struct p2p_options o;
  int rank, size, provided;
  const int rc = p2p_setup(argc, argv, "p2p_latency", 1000, 0, (size_t)4 << 20, MPI_THREAD_SINGLE,
                           2, &o, &rank, &size, &provided);
  if (rc >= 0) return rc;
  char* sbuf = p2p_alloc(&o, o.b.max_bytes);
  char* rbuf = p2p_alloc(&o, o.b.max_bytes);
  double* per = malloc(sizeof(double) * (size_t)o.b.repeats);
  const int peer = rank == 0 ? 1 : 0;
  const int active = rank < 2;
  int failed = 0;
  for (int si = 0; si < o.b.nsizes; ++si) {
    const size_t bytes = o.b.sizes[si];
    const int n = (int)bytes;
    /* Two messages of `bytes` per iteration. */
    const int iters = bench_scaled_iters(o.b.iters, bytes, 2);
    const int warmup = bench_scaled_iters(o.b.warmup, bytes, 2);
    MPI_Status st = {0};
    if (active) {
      p2p_fill(sbuf, bytes, rank);
      for (size_t i = 0; i < bytes; ++i) rbuf[i] = 0;
    }
    P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int b = -1; b < o.b.repeats; ++b) {
      const int count = b < 0 ? warmup : iters; /* batch -1: the warm-up */
      const double t = MPI_Wtime();
      if (rank == 0) {
        for (int i = 0; i < count; ++i) {
          P2P_CHECK(MPI_Send(sbuf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
          P2P_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &st));
        }
      } else if (rank == 1) {
        for (int i = 0; i < count; ++i) {
          P2P_CHECK(MPI_Recv(rbuf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
          P2P_CHECK(MPI_Send(sbuf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
        }
      }
      if (b >= 0) per[b] = (MPI_Wtime() - t) / count / 2;
    }
    if (rank == 0) p2p_report("p2p_latency", &o, bytes, size, iters, per, (double)bytes, 1);
    if (active && o.b.verify)
      failed |= p2p_check("p2p_latency", rank, rbuf, bytes, peer, &st, peer);
  }
  p2p_free(&o, sbuf);
  p2p_free(&o, rbuf);
  free(per);
  MPI_Finalize();
  return failed ? 1 : 0;
}
