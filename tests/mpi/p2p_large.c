/* SPDX-License-Identifier: BSD-3-Clause */
/* Very large messages (2 ranks; rank 0 sends, rank 1 receives; ranks above 1 idle):
 *  - one message of 1 GiB - 1 bytes as MPI_BYTE;
 *  - 2^31 - 8 bytes (a count near INT_MAX): sent as INT_MAX / 8 elements of a contiguous type of
 *    8 bytes, received as MPI_BYTE with count INT_MAX (the largest int count); MPI_Get_count in
 *    bytes is 2^31 - 8, in the 8-byte type INT_MAX / 8;
 *  - the same 2^31 - 8 bytes back from rank 1 to rank 0 by MPI_Isend / MPI_Irecv, with
 *    the contiguous type on the receiving side.
 * Each buffer is filled with one byte value, and a sample of positions (the first and last 4 KiB,
 * and every 1048573rd byte, a prime stride) is set to values that depend on the position; the
 * receiver checks every sampled position and the positions next to them. About 2 GiB of memory
 * per rank. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kEdge = 4096, kStride = 1048573, kFill = 0xA5 };

static unsigned char sample_val(long i, int salt) {
  unsigned char v = (unsigned char)((i * 2654435761u + (unsigned long)salt * 97u) >> 13);
  return v == kFill ? (unsigned char)(v + 1) : v;
}

static int sampled(long i, long n) { return i < kEdge || i >= n - kEdge || i % kStride == 0; }

static void fill(unsigned char* b, long n, int salt) {
  memset(b, kFill, (size_t)n);
  for (long i = 0; i < kEdge && i < n; ++i) b[i] = sample_val(i, salt);
  for (long i = n - kEdge; i < n; ++i)
    if (i >= 0) b[i] = sample_val(i, salt);
  for (long i = 0; i < n; i += kStride) b[i] = sample_val(i, salt);
}

static void check_at(const unsigned char* b, long n, long i, int salt, long* bad, long* first) {
  const unsigned char want = sampled(i, n) ? sample_val(i, salt) : kFill;
  if (b[i] != want) {
    if (*first < 0) *first = i;
    ++*bad;
  }
}

/* Checks the edges, every strided sample and its two neighbours; returns the number wrong. */
static long check(const unsigned char* b, long n, int salt, const char* what) {
  long bad = 0, first = -1;
  for (long i = 0; i < kEdge && i < n; ++i) check_at(b, n, i, salt, &bad, &first);
  for (long i = n - kEdge > kEdge ? n - kEdge : kEdge; i < n; ++i)
    check_at(b, n, i, salt, &bad, &first);
  for (long j = kStride; j < n - kEdge; j += kStride)
    for (long k = j - 1; k <= j + 1; ++k)
      if (k >= kEdge && k < n - kEdge) check_at(b, n, k, salt, &bad, &first);
  MT_EXPECT(bad == 0, "%s: %ld sampled bytes wrong, the first at %ld", what, bad, first);
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_size < 2) {
    if (mt_rank == 0) printf("p2p_large: needs 2 ranks, skipped\n");
    return mt_finish();
  }
  const int me = mt_rank;
  MPI_Status st;
  int n = -1;
  /* 1 GiB - 1 bytes. */
  {
    const long size = (1L << 30) - 1;
    unsigned char* b = NULL;
    if (me <= 1) {
      b = malloc((size_t)size);
      if (b == NULL) {
        fprintf(stderr, "rank %d: no memory for 1 GiB\n", me);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    if (me == 0) {
      fill(b, size, 1);
      const double t0 = MPI_Wtime();
      MT_CHECK(MPI_Send(b, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
      printf("p2p_large: 1 GiB - 1 bytes sent in %.2f s\n", MPI_Wtime() - t0);
    } else if (me == 1) {
      memset(b, 0, (size_t)size);
      MT_CHECK(MPI_Recv(b, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
      MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
      MT_EXPECT(n == (int)size && st.MPI_SOURCE == 0 && st.MPI_TAG == 1,
                "1 GiB - 1: count %d source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
      check(b, size, 1, "1 GiB - 1 bytes");
    }
    free(b);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  /* 2^31 - 8 bytes: 8-byte contiguous elements on one side, MPI_BYTE count INT_MAX on the
   * other. */
  {
    MPI_Datatype eight;
    MT_CHECK(MPI_Type_contiguous(8, MPI_BYTE, &eight));
    MT_CHECK(MPI_Type_commit(&eight));
    const int elems = INT_MAX / 8; /* 268435455 */
    const long size = (long)elems * 8;
    unsigned char* b = NULL;
    if (me <= 1) {
      b = malloc((size_t)INT_MAX);
      if (b == NULL) {
        fprintf(stderr, "rank %d: no memory for 2 GiB\n", me);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    if (me == 0) {
      fill(b, size, 2);
      MT_CHECK(MPI_Send(b, elems, eight, 1, 2, MPI_COMM_WORLD));
      /* And back, into the contiguous type. */
      memset(b, 0, (size_t)size);
      MPI_Request rq;
      MT_CHECK(MPI_Irecv(b, elems, eight, 1, 3, MPI_COMM_WORLD, &rq));
      MT_CHECK(MPI_Wait(&rq, &st));
      MT_CHECK(MPI_Get_count(&st, eight, &n));
      MT_EXPECT(n == elems, "2^31 - 8 bytes back: count %d of the 8-byte type", n);
      MPI_Count nx = -1;
      MT_CHECK(MPI_Get_elements_x(&st, eight, &nx));
      MT_EXPECT(nx == (MPI_Count)size, "2^31 - 8 bytes back: Get_elements_x %lld", (long long)nx);
      check(b, size, 3, "2^31 - 8 bytes back");
    } else if (me == 1) {
      memset(b, 0, (size_t)INT_MAX);
      MT_CHECK(MPI_Recv(b, INT_MAX, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st));
      MT_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
      MT_EXPECT(n == (int)size, "2^31 - 8 bytes: count %d", n);
      MT_CHECK(MPI_Get_count(&st, eight, &n));
      MT_EXPECT(n == elems, "2^31 - 8 bytes: count %d of the 8-byte type", n);
      check(b, size, 2, "2^31 - 8 bytes");
      MT_EXPECT(b[size] == 0 && b[INT_MAX - 1] == 0, "bytes past the message written");
      fill(b, size, 3);
      MPI_Request sq;
      MT_CHECK(MPI_Isend(b, (int)size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &sq));
      MT_CHECK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    }
    free(b);
    MT_CHECK(MPI_Type_free(&eight));
  }
  if (mt_rank == 0) printf("p2p_large: %d ranks: %s\n", mt_size, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
