/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf */
#include "p2p_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void p2p_fail(const char* what, int rc, const char* file, int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
  fprintf(stderr, "bench (%s:%d): %s failed: %s\n", file, line, what, msg);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static const char* const p2p_usage =
    "point-to-point options (p2p_common.h):\n"
    "  sizes may be 0; default sweep 0, 1, then x8 up to 4 KiB and x4 above\n"
    "  --window N        messages in flight per iteration (bw, rate; default 64)\n"
    "  --bidir           p2p_bw: both ranks send and receive at once (osu_bibw)\n"
    "  --pairs N         p2p_rate: ranks 0..N-1 each send to rank i + N (default 1)\n"
    "  --threads T       p2p_mt_rate: threads per rank (default 4)\n"
    "  --per-thread comm|tag  p2p_mt_rate: a dup'ed communicator (default) or a tag per thread\n"
    "  --alloc-mem       buffers from MPI_Alloc_mem (default page-aligned posix_memalign)\n";

static int parse_count(const char* s, long lo, long hi, long* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return 1;
  *out = v;
  return 0;
}

static int parse_bytes(const char* s, size_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || (*end != '\0' && *end != ',') || s[0] == '-') return 1;
  *out = (size_t)v;
  return 0;
}

/* The p2p sweep: 0 (when lo is 0), 1 or lo, then x8 below 4 KiB and x4 above, up to hi. */
static void sweep(struct bench_options* b, size_t lo, size_t hi) {
  b->nsizes = 0;
  if (lo == 0) b->sizes[b->nsizes++] = 0;
  for (size_t s = lo ? lo : 1; s <= hi && b->nsizes < BENCH_MAX_SIZES; s *= s < 4096 ? 8 : 4)
    b->sizes[b->nsizes++] = s;
  b->min_bytes = lo;
  b->max_bytes = hi;
}

/* Takes the p2p options and the size options out of argv (the latter because the RMA parser
 * refuses 0 bytes), hands the rest to bench_parse_options. Returns like it. */
static int parse(int argc, char** argv, int default_iters, size_t def_min, size_t def_max,
                 int print, struct p2p_options* o) {
  char** rest = calloc((size_t)argc + 1, sizeof(char*));
  if (!rest) return 1;
  int nrest = 0, bad = 0, help = 0;
  size_t lo = def_min, hi = def_max;
  const char* sizes = NULL;
  long v = 0;
  o->window = 64;
  o->pairs = 1;
  o->threads = 4;
  o->per_thread_tag = 0;
  o->alloc_mem = 0;
  o->bidir = 0;
  rest[nrest++] = argv[0];
  for (int i = 1; i < argc && !bad; ++i) {
    const char* a = argv[i];
    const char* eq = strchr(a, '=');
    char key[32] = "";
    const char* val = NULL;
    if (strncmp(a, "--", 2) == 0) {
      size_t klen = eq ? (size_t)(eq - a) : strlen(a);
      if (klen < sizeof key) {
        memcpy(key, a, klen);
        key[klen] = '\0';
      }
    }
    static const char* const with_value[] = {"--window",    "--pairs",     "--threads",   "--sizes",
                                             "--min-bytes", "--max-bytes", "--per-thread"};
    int takes = 0;
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; ++k)
      if (strcmp(key, with_value[k]) == 0) takes = 1;
    if (takes) {
      if (eq) {
        val = eq + 1;
      } else if (i + 1 < argc) {
        val = argv[++i];
      } else {
        if (print) fprintf(stderr, "%s: %s needs a value\n", argv[0], key);
        bad = 1;
        break;
      }
    }
    if (strcmp(key, "--window") == 0) {
      bad = parse_count(val, 1, 1 << 20, &v);
      o->window = (int)v;
    } else if (strcmp(key, "--pairs") == 0) {
      bad = parse_count(val, 1, 1 << 16, &v);
      o->pairs = (int)v;
    } else if (strcmp(key, "--threads") == 0) {
      bad = parse_count(val, 1, 1024, &v);
      o->threads = (int)v;
    } else if (strcmp(key, "--per-thread") == 0) {
      if (strcmp(val, "tag") == 0) {
        o->per_thread_tag = 1;
      } else if (strcmp(val, "comm") == 0) {
        o->per_thread_tag = 0;
      } else {
        bad = 1;
      }
    } else if (strcmp(key, "--sizes") == 0) {
      sizes = val;
    } else if (strcmp(key, "--min-bytes") == 0) {
      bad = parse_bytes(val, &lo);
    } else if (strcmp(key, "--max-bytes") == 0) {
      bad = parse_bytes(val, &hi);
    } else if (strcmp(a, "--bidir") == 0) {
      o->bidir = 1;
    } else if (strcmp(a, "--alloc-mem") == 0) {
      o->alloc_mem = 1;
    } else if (strcmp(key, "--flavor") == 0 || strcmp(key, "--sync") == 0 ||
               strcmp(key, "--win-offset") == 0 || strcmp(key, "--compute-us") == 0) {
      if (print) fprintf(stderr, "%s: %s is an RMA option\n", argv[0], key);
      bad = 1;
    } else {
      if (strcmp(a, "--help") == 0) help = 1;
      rest[nrest++] = argv[i];
    }
    if (bad && print && takes) fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], val, key);
  }
  if (help && print) fputs(p2p_usage, stdout);
  int rc = bad ? 1 : bench_parse_options(nrest, rest, default_iters, print, &o->b);
  free(rest);
  if (rc != 0) return rc;
  if (sizes) {
    o->b.nsizes = 0;
    o->b.max_bytes = 0;
    for (const char* p = sizes; *p;) {
      size_t s;
      if (o->b.nsizes == BENCH_MAX_SIZES || parse_bytes(p, &s)) {
        if (print) fprintf(stderr, "%s: bad --sizes '%s'\n", argv[0], sizes);
        return 1;
      }
      o->b.sizes[o->b.nsizes++] = s;
      if (s > o->b.max_bytes) o->b.max_bytes = s;
      p = strchr(p, ',');
      p = p ? p + 1 : "";
    }
    if (o->b.nsizes == 0) return 1;
    o->b.min_bytes = o->b.sizes[0];
  } else {
    if (hi < lo) {
      if (print) fprintf(stderr, "%s: --max-bytes is below --min-bytes\n", argv[0]);
      return 1;
    }
    sweep(&o->b, lo, hi);
  }
  return 0;
}

static const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown level";
  }
}

int p2p_setup(int argc, char** argv, const char* name, int default_iters, size_t def_min,
              size_t def_max, int thread_level, int min_ranks, struct p2p_options* o, int* rank,
              int* size, int* provided) {
  *provided = MPI_THREAD_SINGLE;
  if (thread_level == MPI_THREAD_SINGLE) {
    MPI_Init(&argc, &argv);
  } else {
    MPI_Init_thread(&argc, &argv, thread_level, provided);
  }
  P2P_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  P2P_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
  P2P_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
  /* Every rank sees the same arguments and size, so all of them leave here together. */
  const int parsed = parse(argc, argv, default_iters, def_min, def_max, *rank == 0, o);
  if (parsed != 0) {
    MPI_Finalize();
    return parsed < 0 ? 0 : 2;
  }
  if (*size < min_ranks) {
    if (*rank == 0)
      fprintf(stderr, "%s: needs at least %d ranks, got %d\n", name, min_ranks, *size);
    MPI_Finalize();
    return 2;
  }
  if (*rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    P2P_CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    fprintf(stderr, "# %s (%s, %s%s%s): %s\n", name, o->b.label,
            o->alloc_mem ? "alloc_mem" : "malloc", thread_level != MPI_THREAD_SINGLE ? ", " : "",
            thread_level != MPI_THREAD_SINGLE ? level_name(*provided) : "", lib);
  }
  return -1;
}

char* p2p_alloc(const struct p2p_options* o, size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = NULL;
  if (o->alloc_mem) {
    P2P_CHECK(MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p));
  } else if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), bytes) != 0) {
    p = NULL;
  }
  if (!p) {
    fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  memset(p, 0, bytes);
  return p;
}

void p2p_free(const struct p2p_options* o, char* p) {
  if (o->alloc_mem) {
    P2P_CHECK(MPI_Free_mem(p));
  } else {
    free(p);
  }
}

static unsigned char expected(size_t i, size_t bytes, int salt) {
  return (unsigned char)(bench_pattern(i, bytes) + 17 * (unsigned)salt);
}

void p2p_fill(char* buf, size_t bytes, int salt) {
  for (size_t i = 0; i < bytes; ++i) buf[i] = (char)expected(i, bytes, salt);
}

int p2p_check(const char* name, int rank, const char* buf, size_t bytes, int salt,
              const MPI_Status* last, int want_source) {
  int count = -1;
  P2P_CHECK(MPI_Get_count(last, MPI_BYTE, &count));
  if (count < 0 || (size_t)count != bytes || last->MPI_SOURCE != want_source) {
    fprintf(stderr,
            "%s: verify failed on rank %d after %zu-byte messages: the last receive got %d "
            "bytes from rank %d, expected %zu from rank %d\n",
            name, rank, bytes, count, last->MPI_SOURCE, bytes, want_source);
    return 1;
  }
  for (size_t i = 0; i < bytes; ++i) {
    if ((unsigned char)buf[i] != expected(i, bytes, salt)) {
      fprintf(stderr,
              "%s: verify failed on rank %d after %zu-byte messages: byte %zu is %u, expected "
              "%u\n",
              name, rank, bytes, i, (unsigned)(unsigned char)buf[i],
              (unsigned)expected(i, bytes, salt));
      return 1;
    }
  }
  return 0;
}

void p2p_report(const char* bench, const struct p2p_options* o, size_t bytes, int ranks, int iters,
                double* per, double bytes_per_iter, double msgs_per_iter) {
  double p50, min;
  bench_batch_stats(per, o->b.repeats, &p50, &min);
  printf(
      "{\"bench\":\"%s\",\"system\":\"%s\",\"flavor\":\"%s\",\"bytes\":%zu,\"ranks\":%d,"
      "\"iters\":%d,\"batches\":%d,\"p50_us\":%.4f,\"min_us\":%.4f,\"mbps\":%.1f,"
      "\"window\":%d,\"msgs_per_iter\":%.0f,\"mmsgs\":%.4f}\n",
      bench, o->b.label, o->alloc_mem ? "alloc_mem" : "malloc", bytes, ranks, iters, o->b.repeats,
      p50 * 1e6, min * 1e6, bytes_per_iter / p50 / 1e6, o->window, msgs_per_iter,
      msgs_per_iter / p50 / 1e6);
  fflush(stdout);
}
