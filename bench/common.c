/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MPI_COMM_WORLD returns errors (windows keep the standard's MPI_ERRORS_ARE_FATAL); every call is
 * checked, and a failure names the call and the error before aborting. */
#define CHECK(call)                                                 \
  do {                                                              \
    int check_rc_ = (call);                                         \
    if (check_rc_ != MPI_SUCCESS) fail(#call, check_rc_, __LINE__); \
  } while (0)

static void fail(const char* what, int rc, int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
  fprintf(stderr, "bench (common.c:%d): %s failed: %s\n", line, what, msg);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

/* The groups of a PSCW epoch: rank 1 exposes to rank 0, rank 0 accesses rank 1. */
static MPI_Group origin_group = MPI_GROUP_NULL;
static MPI_Group target_group = MPI_GROUP_NULL;

/* One iteration: rank 0 issues the operations inside the epoch of the chosen synchronisation:
 * fence (everybody), flush (rank 0, inside lock_all), lock / unlock of rank 1 (rank 0), lock_all /
 * unlock_all (rank 0), or a PSCW epoch (rank 1 posts and waits, rank 0 starts and completes). */
static void iteration(const struct bench_spec* s, int rank, char* buf, size_t bytes, MPI_Win win,
                      int sync, int compute_us) {
  if (sync == BENCH_SYNC_PSCW) {
    if (rank == 1) {
      CHECK(MPI_Win_post(origin_group, 0, win));
      CHECK(MPI_Win_wait(win));
      return;
    }
    if (rank == 0) CHECK(MPI_Win_start(target_group, 0, win));
  }
  if (sync == BENCH_SYNC_LOCK && rank == 0) CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
  if (sync == BENCH_SYNC_LOCKALL && rank == 0) CHECK(MPI_Win_lock_all(0, win));
  if (rank == 0 && s->op != BENCH_NONE) {
    for (int k = 0; k < s->ops_per_iter; ++k) {
      if (s->op == BENCH_PUT) {
        CHECK(MPI_Put(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win));
      } else if (s->op == BENCH_GET) {
        CHECK(MPI_Get(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win));
      } else if (s->op == BENCH_FOP) {
        const int64_t one = 1;
        int64_t old = 0;
        CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win));
      } else if (s->op == BENCH_CAS) {
        const int64_t swap = k, compare = k - 1;
        int64_t old = 0;
        CHECK(MPI_Compare_and_swap(&swap, &compare, &old, MPI_INT64_T, 1, 0, win));
      } else if (s->op == BENCH_GACC) {
        /* The result lands in the second half of the origin buffer (allocated at twice the size).
         */
        CHECK(MPI_Get_accumulate(buf, (int)(bytes / 8), MPI_DOUBLE, buf + bytes, (int)(bytes / 8),
                                 MPI_DOUBLE, 1, 0, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, win));
      } else {
        CHECK(MPI_Accumulate(buf, (int)(bytes / 8), MPI_DOUBLE, 1, 0, (int)(bytes / 8), MPI_DOUBLE,
                             MPI_SUM, win));
      }
    }
  }
  /* --compute-us: work between issuing and completing, with no MPI call that could progress. */
  if (rank == 0 && compute_us > 0) {
    const double until = bench_now() + compute_us * 1e-6;
    while (bench_now() < until) {
    }
  }
  if (sync == BENCH_SYNC_FENCE) {
    CHECK(MPI_Win_fence(0, win));
  } else if (rank == 0) {
    if (sync == BENCH_SYNC_FLUSH) CHECK(MPI_Win_flush(1, win));
    if (sync == BENCH_SYNC_LOCK) CHECK(MPI_Win_unlock(1, win));
    if (sync == BENCH_SYNC_LOCKALL) CHECK(MPI_Win_unlock_all(win));
    if (sync == BENCH_SYNC_PSCW) CHECK(MPI_Win_complete(win));
  }
}

static const char* sync_suffix(int sync) {
  switch (sync) {
    case BENCH_SYNC_FLUSH:
      return "_flush";
    case BENCH_SYNC_LOCK:
      return "_lock";
    case BENCH_SYNC_PSCW:
      return "_pscw";
    case BENCH_SYNC_LOCKALL:
      return "_lockall";
    default:
      return "";
  }
}

/* Before the timed loop of one size: the data the loop must move. Closed by the first fence. */
static void prepare(const struct bench_spec* s, int rank, char* buf, char* winbuf, size_t bytes) {
  if (s->op == BENCH_PUT && rank == 0) {
    for (size_t i = 0; i < bytes; ++i) buf[i] = (char)bench_pattern(i, bytes);
  } else if (s->op == BENCH_GET) {
    if (rank == 1)
      for (size_t i = 0; i < bytes; ++i) winbuf[i] = (char)bench_pattern(i, bytes);
    if (rank == 0) memset(buf, 0, bytes);
  }
}

/* After the timed loop (its last fence completed every operation): target side for put, origin
 * side for get. Returns 1 on wrong data, with a message. */
static int check(const struct bench_spec* s, int rank, const char* buf, const char* winbuf,
                 size_t bytes) {
  const char* data = NULL;
  if (s->op == BENCH_FOP || s->op == BENCH_ACC || s->op == BENCH_CAS || s->op == BENCH_GACC)
    return 0;
  if (s->op == BENCH_PUT && rank == 1) data = winbuf;
  if (s->op == BENCH_GET && rank == 0) data = buf;
  if (!data) return 0;
  for (size_t i = 0; i < bytes; ++i) {
    if ((unsigned char)data[i] != bench_pattern(i, bytes)) {
      fprintf(stderr,
              "%s: verify failed on rank %d (%s side) after %zu-byte transfers: byte %zu is %u, "
              "expected %u\n",
              s->name, rank, s->op == BENCH_PUT ? "target" : "origin", bytes, i,
              (unsigned)(unsigned char)data[i], (unsigned)bench_pattern(i, bytes));
      return 1;
    }
  }
  return 0;
}

static void check_flavor(MPI_Win win, int want_create, int rank) {
  int* flavor = NULL;
  int flag = 0;
  CHECK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  int want = want_create ? MPI_WIN_FLAVOR_CREATE : MPI_WIN_FLAVOR_ALLOCATE;
  if (flag && flavor && *flavor != want && rank == 0)
    fprintf(stderr, "bench: warning: window reports create flavor %d, expected %d\n", *flavor,
            want);
}

int bench_main(int argc, char** argv, const struct bench_spec* spec) {
  MPI_Init(&argc, &argv);
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rank, size;
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  struct bench_options o;
  /* Every rank sees the same arguments and size, so all of them leave here together. */
  const int parsed = bench_parse_options(argc, argv, spec->default_iters, rank == 0, &o);
  if (parsed != 0) {
    MPI_Finalize();
    return parsed < 0 ? 0 : 2;
  }
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "%s: needs at least 2 ranks, got %d\n", spec->name, size);
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    fprintf(stderr, "# %s (%s, %s): %s\n", spec->name, o.label, o.create ? "create" : "allocate",
            lib);
  }
  /* The fence benchmark moves nothing: one row, 0 bytes. Fetch-and-op: one 8-byte row. */
  if (spec->op == BENCH_NONE) {
    o.nsizes = 1;
    o.sizes[0] = 0;
    o.max_bytes = 1;
  }
  if (spec->op == BENCH_FOP || spec->op == BENCH_CAS) {
    o.nsizes = 1;
    o.sizes[0] = 8;
    o.max_bytes = 8;
  }
  char name[80];
  snprintf(name, sizeof name, "%s%s", spec->name, sync_suffix(o.sync));
  if (o.compute_us > 0) {
    const size_t used = strlen(name);
    snprintf(name + used, sizeof name - used, "_overlap%d", o.compute_us);
  }
  if (o.sync == BENCH_SYNC_PSCW) {
    MPI_Group world;
    const int zero = 0, one = 1;
    CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK(MPI_Group_incl(world, 1, &zero, &origin_group));
    CHECK(MPI_Group_incl(world, 1, &one, &target_group));
    CHECK(MPI_Group_free(&world));
  }

  char* winbuf = NULL;
  char* winmem = NULL;
  char* buf = NULL;
  MPI_Win win;
  if (o.create) {
    /* Page-aligned, as OSU's benchmarks allocate window memory; --win-offset shifts the window
     * off the page boundary. */
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void* p = NULL;
    if (posix_memalign(&p, page, o.max_bytes + o.win_offset) == 0) winmem = p;
    winbuf = winmem ? winmem + o.win_offset : NULL;
    buf = malloc(2 * o.max_bytes); /* get_accumulate: its results in the second half */
    if (!winbuf || !buf) {
      fprintf(stderr, "%s: out of memory (%zu bytes)\n", spec->name, o.max_bytes);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    CHECK(MPI_Win_create(winbuf, (MPI_Aint)o.max_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  } else {
    CHECK(MPI_Win_allocate((MPI_Aint)o.max_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win));
    CHECK(MPI_Alloc_mem((MPI_Aint)(2 * o.max_bytes), MPI_INFO_NULL, &buf));
  }
  check_flavor(win, o.create, rank);
  memset(winbuf, 0, o.max_bytes);
  memset(buf, 0, 2 * o.max_bytes);
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  int failed = 0;

  for (int si = 0; si < o.nsizes; ++si) {
    const size_t bytes = o.sizes[si];
    const int iters = bench_scaled_iters(o.iters, bytes, spec->ops_per_iter);
    const int warmup = bench_scaled_iters(o.warmup, bytes, spec->ops_per_iter);
    prepare(spec, rank, buf, winbuf, bytes);
    CHECK(MPI_Win_fence(0, win)); /* publishes prepare(); nobody starts before everybody is here */
    const int sync = o.sync;
    if (sync != BENCH_SYNC_FENCE) {
      /* End the fence epoch, so that the others may begin (MPI-3.1 §11.5). */
      CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
      if (sync == BENCH_SYNC_FLUSH && rank == 0) CHECK(MPI_Win_lock_all(0, win));
    }
    for (int i = 0; i < warmup; ++i) iteration(spec, rank, buf, bytes, win, sync, o.compute_us);
    for (int b = 0; b < o.repeats; ++b) {
      double t = MPI_Wtime();
      for (int i = 0; i < iters; ++i) iteration(spec, rank, buf, bytes, win, sync, o.compute_us);
      per[b] = (MPI_Wtime() - t) / iters;
    }
    if (sync != BENCH_SYNC_FENCE) {
      if (sync == BENCH_SYNC_FLUSH && rank == 0) CHECK(MPI_Win_unlock_all(win));
      CHECK(MPI_Win_fence(0, win)); /* the target's check below reads what rank 0 put */
    }
    if (rank == 0) {
      double p50, min;
      bench_batch_stats(per, o.repeats, &p50, &min);
      double mbps = (double)bytes * spec->ops_per_iter / p50 / 1e6;
      bench_print_json(name, o.label, o.create ? "create" : "allocate", bytes, size, iters,
                       o.repeats, p50, min, mbps);
    }
    if (o.verify) failed |= check(spec, rank, buf, winbuf, bytes);
  }

  CHECK(MPI_Win_free(&win));
  if (o.create) {
    free(winmem);
    free(buf);
  } else {
    CHECK(MPI_Free_mem(buf));
  }
  free(per);
  if (origin_group != MPI_GROUP_NULL) CHECK(MPI_Group_free(&origin_group));
  if (target_group != MPI_GROUP_NULL) CHECK(MPI_Group_free(&target_group));
  MPI_Finalize();
  return failed ? 1 : 0;
}
