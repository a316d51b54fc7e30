/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Win_create windows over memory of every kind a program has, reached by on-node peers:
 * page-aligned heap memory, unaligned heap memory (partial pages at both ends), static memory,
 * and a second window over part of the first (overlapping windows are one memory). onesided
 * maps the pages of such windows into the peers (the partial pages at the ends too in a
 * single-threaded program) and reaches what it does not map by cross-memory attach; this
 * checks every byte of both paths, with puts and gets that straddle
 * the page boundaries, and that after MPI_Win_free the memory is the program's private memory
 * again with its content; and accumulate / get_accumulate over a whole window (both paths in one
 * call) with exact sums; and atomics into a 16-byte window between other data of the program.
 * Run with ONESIDED_SHARE_PAGES=0 and =whole too (ctest does all three).
 * Output (identical under any MPI): "rank R: create_shared ok". */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

enum { kChunk = 1000, kGetChunk = 777, kStaticBytes = 6 * 4096 + 123 };

static unsigned char static_window[kStaticBytes];

/* The byte that origin rank `from` writes at offset i of a window in round `round`. */
static unsigned char pattern(int from, int round, size_t i) {
  return (unsigned char)((i * 7 + (size_t)from * 31 + (size_t)round * 101 + 1) & 0xff);
}

/* Whether this process still maps any memory of onesided's shared pages. */
static int shared_pages_left(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return 0;
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, f) != NULL) found |= strstr(line, "onesided-window") != NULL;
  fclose(f);
  return found;
}

/* Round `round` over a window of `len` bytes at `mem` (window `win`): every rank puts its
 * pattern into its right neighbour in kChunk pieces, then reads its left neighbour's window back
 * in kGetChunk pieces. Checks both, and returns the number of bad bytes. */
static int exercise(MPI_Win win, unsigned char* mem, size_t len, int round) {
  const int right = (mt_rank + 1) % mt_size;
  const int left = (mt_rank + mt_size - 1) % mt_size;
  unsigned char* src = malloc(len + 1);
  unsigned char* back = malloc(len + 1);
  if (src == NULL || back == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (size_t i = 0; i < len; ++i) src[i] = pattern(mt_rank, round, i);
  memset(back, 0, len + 1);

  MT_CHECK(MPI_Win_fence(0, win));
  for (size_t at = 0; at < len; at += kChunk) {
    const int n = (int)(len - at < kChunk ? len - at : kChunk);
    MT_CHECK(MPI_Put(src + at, n, MPI_BYTE, right, (MPI_Aint)at, n, MPI_BYTE, win));
  }
  MT_CHECK(MPI_Win_fence(0, win));
  int bad = 0;
  for (size_t i = 0; i < len; ++i) {
    if (mem[i] != pattern(left, round, i)) {
      if (bad == 0) {
        fprintf(stderr, "rank %d: round %d: byte %zu of %zu holds %u, rank %d put %u\n", mt_rank,
                round, i, len, mem[i], left, pattern(left, round, i));
      }
      ++bad;
    }
  }
  /* The left neighbour's window holds what its own left neighbour put. */
  const int leftleft = (left + mt_size - 1) % mt_size;
  for (size_t at = 0; at < len; at += kGetChunk) {
    const int n = (int)(len - at < kGetChunk ? len - at : kGetChunk);
    MT_CHECK(MPI_Get(back + at, n, MPI_BYTE, left, (MPI_Aint)at, n, MPI_BYTE, win));
  }
  MT_CHECK(MPI_Win_fence(0, win));
  for (size_t i = 0; i < len; ++i) {
    if (back[i] != pattern(leftleft, round, i)) {
      if (bad == 0) {
        fprintf(stderr, "rank %d: round %d: got byte %zu = %u from rank %d, expected %u\n", mt_rank,
                round, i, back[i], left, pattern(leftleft, round, i));
      }
      ++bad;
    }
  }
  free(src);
  free(back);
  return bad;
}

/* Every rank adds (rank + 1) x (i % 7 + 1) into double i of every rank's window with one
 * MPI_Accumulate over the whole window (so over its partial pages and its whole ones), then
 * reads its right neighbour's sums back with MPI_Get_accumulate (MPI_NO_OP). Whole-number
 * values: the sums are exact in any order. The bytes after the last double stay untouched.
 * Returns the number of bad values. */
static int accumulate_round(MPI_Win win, unsigned char* mem, size_t len) {
  const int n = (int)(len / sizeof(double));
  const int right = (mt_rank + 1) % mt_size;
  double* add = malloc(sizeof(double) * (size_t)n + 1);
  double* back = malloc(sizeof(double) * (size_t)n + 1);
  if (add == NULL || back == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < n; ++i) add[i] = (double)(mt_rank + 1) * (double)(i % 7 + 1);
  MT_CHECK(MPI_Win_fence(0, win));
  memset(mem, 0, len);
  MT_CHECK(MPI_Win_fence(0, win));
  for (int t = 0; t < mt_size; ++t) {
    MT_CHECK(MPI_Accumulate(add, n, MPI_DOUBLE, t, 0, n, MPI_DOUBLE, MPI_SUM, win));
  }
  MT_CHECK(MPI_Win_fence(0, win));
  const double ranks = (double)mt_size * (double)(mt_size + 1) / 2;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    double v = 0;
    memcpy(&v, mem + (size_t)i * sizeof v, sizeof v); /* the window need not be aligned */
    if (v != ranks * (double)(i % 7 + 1)) {
      if (bad == 0)
        fprintf(stderr, "rank %d: accumulate: double %d of %d is %g\n", mt_rank, i, n, v);
      ++bad;
    }
  }
  for (size_t i = (size_t)n * sizeof(double); i < len; ++i) bad += mem[i] != 0;
  MT_CHECK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, back, n, MPI_DOUBLE, right, 0, n, MPI_DOUBLE,
                              MPI_NO_OP, win));
  MT_CHECK(MPI_Win_fence(0, win));
  for (int i = 0; i < n; ++i) {
    if (back[i] != ranks * (double)(i % 7 + 1)) {
      if (bad == 0) {
        fprintf(stderr, "rank %d: get_accumulate: double %d of %d from rank %d is %g\n", mt_rank, i,
                n, right, back[i]);
      }
      ++bad;
    }
  }
  free(add);
  free(back);
  return bad;
}

static void one_window(const char* what, unsigned char* mem, size_t len, int round) {
  MPI_Win win;
  MT_CHECK(MPI_Win_create(mem, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  const int wrong = accumulate_round(win, mem, len);
  MT_EXPECT(wrong == 0, "%s: %d wrong sums", what, wrong);
  const int bad = exercise(win, mem, len, round);
  MT_EXPECT(bad == 0, "%s: %d bad bytes", what, bad);
  MT_CHECK(MPI_Win_free(&win));
  /* The last put is still there, in private memory that the program can use as before. */
  const int left = (mt_rank + mt_size - 1) % mt_size;
  int lost = 0;
  for (size_t i = 0; i < len; ++i) lost += mem[i] != pattern(left, round, i);
  MT_EXPECT(lost == 0, "%s: %d bytes changed by MPI_Win_free", what, lost);
  memset(mem, 0x5a, len);
  MT_EXPECT(mem[0] == 0x5a && mem[len - 1] == 0x5a, "%s: memory not writable after free", what);
}

/* Two int64 slots of a window in the middle of a heap block that also holds other data of the
 * program, which it keeps rewriting while the window exists (the partial pages that a
 * single-threaded program's window shares): every rank adds into slot 0 of every rank with
 * MPI_Fetch_and_op and increments slot 1 with an MPI_Compare_and_swap loop, under lock_all.
 * Exact totals, every old value in range, and the data around the window intact
 * after MPI_Win_free. Returns the number of wrong values. */
static int tiny_window(void) {
  enum { kSlots = 64, kAt = 21, kRounds = 60 };
  int64_t* block = calloc(kSlots, sizeof(int64_t));
  if (block == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < kSlots; ++i) block[i] = i == kAt || i == kAt + 1 ? 0 : 1000 + i;
  MPI_Win win;
  MT_CHECK(MPI_Win_create(block + kAt, 2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
  MT_CHECK(MPI_Win_lock_all(0, win));
  int bad = 0;
  const int64_t one = 1;
  for (int r = 0; r < kRounds; ++r) {
    for (int d = 0; d < mt_size; ++d) {
      const int t = (mt_rank + d) % mt_size;
      int64_t old = -1;
      MT_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, 0, MPI_SUM, win));
      MT_CHECK(MPI_Win_flush(t, win));
      bad += old < 0 || old >= (int64_t)mt_size * kRounds;
      int64_t cur = 0;
      for (;;) {
        const int64_t next = cur + 1;
        int64_t was = -1;
        MT_CHECK(MPI_Compare_and_swap(&next, &cur, &was, MPI_INT64_T, t, 1, win));
        MT_CHECK(MPI_Win_flush(t, win));
        if (was == cur) break;
        cur = was;
      }
    }
    for (int i = 0; i < kSlots; ++i) {
      if (i != kAt && i != kAt + 1) block[i] += 1; /* the program's own data, beside the window */
    }
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_free(&win));
  const int64_t total = (int64_t)mt_size * kRounds;
  bad += block[kAt] != total;
  bad += block[kAt + 1] != total;
  for (int i = 0; i < kSlots; ++i) {
    if (i != kAt && i != kAt + 1) bad += block[i] != 1000 + i + kRounds;
  }
  MT_EXPECT(bad == 0, "tiny window: slot 0 %lld, slot 1 %lld of %lld; %d wrong values",
            (long long)block[kAt], (long long)block[kAt + 1], (long long)total, bad);
  free(block);
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  int round = 0;

  /* Page-aligned heap memory with a partial page at the end. */
  void* aligned = NULL;
  const size_t alen = 5 * page + 100;
  if (posix_memalign(&aligned, page, alen) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(aligned, 0, alen);
  one_window("aligned", aligned, alen, round++);

  /* Unaligned: partial pages at both ends around whole ones. */
  unsigned char* raw = malloc(4 * page + 1000);
  if (raw == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(raw, 0, 4 * page + 1000);
  one_window("unaligned", raw + 100, 3 * page + 300, round++);
  free(raw);

  /* Static memory. */
  one_window("static", static_window, sizeof static_window, round++);

  /* Two windows over one memory: puts through the inner window land in the outer one. */
  MPI_Win outer;
  MPI_Win inner;
  unsigned char* mem = aligned;
  MT_CHECK(MPI_Win_create(mem, (MPI_Aint)alen, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &outer));
  MT_CHECK(
      MPI_Win_create(mem + page, (MPI_Aint)(2 * page), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &inner));
  int bad = exercise(inner, mem + page, 2 * page, round);
  bad += exercise(outer, mem, alen, round + 1);
  MT_EXPECT(bad == 0, "overlapping windows: %d bad bytes", bad);
  MT_CHECK(MPI_Win_free(&inner));
  bad = exercise(outer, mem, alen, round + 2);
  MT_EXPECT(bad == 0, "outer window after the inner one's free: %d bad bytes", bad);
  MT_CHECK(MPI_Win_free(&outer));
  round += 3;

  /* Many windows in a row over the same memory. */
  for (int i = 0; i < 20; ++i) one_window("repeated", aligned, alen, round++);
  free(aligned);

  tiny_window();
  MT_EXPECT(!shared_pages_left(), "shared pages still mapped after every MPI_Win_free");
  printf("rank %d: create_shared ok\n", mt_rank);
  return mt_finish();
}
