/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_bw: bandwidth with a window of messages in flight (OSU osu_bw). Per iteration rank 1 posts
 * --window (64) MPI_Irecvs of N bytes from rank 0, rank 0 posts 64 MPI_Isends of N bytes to rank
 * 1, both MPI_Waitall, then rank 1 answers with a 4-byte MPI_Send that rank 0 receives: "mbps" =
 * 64 N / time per iteration. As in osu_bw, the 64 sends share one buffer and so do the 64
 * receives.
 *
 * --bidir (OSU osu_bibw; JSON "bench":"p2p_bibw"): both ranks post 64 MPI_Irecvs, then 64
 * MPI_Isends to each other, then one MPI_Waitall over all 128 requests, no acknowledgement;
 * "mbps" = 2 x 64 N / time per iteration (both directions together).
 *
 * Other ranks only take part in the barriers. Sizes 0 B to 4 MiB by default. The receivers check
 * what they received after the timed loop of each size. Options and output: p2p_common.h. */
#include <stdio.h>
#include <stdlib.h>

#include "p2p_common.h"

int main(int argc, char** argv) {
  struct p2p_options o;
  int rank, size, provided;
  const int rc = p2p_setup(argc, argv, "p2p_bw", 20, 0, (size_t)4 << 20, MPI_THREAD_SINGLE, 2, &o,
                           &rank, &size, &provided);
  if (rc >= 0) return rc;
  const char* name = o.bidir ? "p2p_bibw" : "p2p_bw";
  const int w = o.window;
  char* sbuf = p2p_alloc(&o, o.b.max_bytes);
  char* rbuf = p2p_alloc(&o, o.b.max_bytes);
  char ack[4] = {0};
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)w);
  MPI_Status* sts = malloc(sizeof(MPI_Status) * 2 * (size_t)w);
  double* per = malloc(sizeof(double) * (size_t)o.b.repeats);
  if (!reqs || !sts || !per) {
    fprintf(stderr, "%s: out of memory\n", name);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  const int peer = rank == 0 ? 1 : 0;
  const int sends = rank == 0 || (o.bidir && rank == 1);
  const int recvs = rank == 1 || (o.bidir && rank == 0);
  int failed = 0;
  for (int si = 0; si < o.b.nsizes; ++si) {
    const size_t bytes = o.b.sizes[si];
    const int n = (int)bytes;
    const int dirs = o.bidir ? 2 : 1;
    const int iters = bench_scaled_iters(o.b.iters, bytes, w * dirs);
    const int warmup = bench_scaled_iters(o.b.warmup, bytes, w * dirs);
    if (sends) p2p_fill(sbuf, bytes, rank);
    if (recvs)
      for (size_t i = 0; i < bytes; ++i) rbuf[i] = 0;
    P2P_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int b = -1; b < o.b.repeats; ++b) {
      const int count = b < 0 ? warmup : iters; /* batch -1: the warm-up */
      const double t = MPI_Wtime();
      if (rank < 2) {
        for (int i = 0; i < count; ++i) {
          int nreq = 0;
          if (recvs)
            for (int k = 0; k < w; ++k)
              P2P_CHECK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[nreq++]));
          if (sends)
            for (int k = 0; k < w; ++k)
              P2P_CHECK(MPI_Isend(sbuf, n, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[nreq++]));
          P2P_CHECK(MPI_Waitall(nreq, reqs, sts));
          if (!o.bidir && rank == 0)
            P2P_CHECK(MPI_Recv(ack, 4, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          if (!o.bidir && rank == 1) P2P_CHECK(MPI_Send(ack, 4, MPI_BYTE, 0, 101, MPI_COMM_WORLD));
        }
      }
      if (b >= 0) per[b] = (MPI_Wtime() - t) / count;
    }
    if (rank == 0)
      p2p_report(name, &o, bytes, size, iters, per, (double)bytes * w * dirs, (double)w * dirs);
    /* The receives come first in the request array: sts[w - 1] is the last receive's. */
    if (recvs && o.b.verify) failed |= p2p_check(name, rank, rbuf, bytes, peer, &sts[w - 1], peer);
  }
  p2p_free(&o, sbuf);
  p2p_free(&o, rbuf);
  free(reqs);
  free(sts);
  free(per);
  MPI_Finalize();
  return failed ? 1 : 0;
}
