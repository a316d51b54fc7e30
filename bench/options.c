/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* clock_gettime, sched_setaffinity */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(const char* name) {
  fprintf(
      stdout,
      "usage: %s [--warmup-iters N] [--iters N] [--repeats N] [--min-bytes N] [--max-bytes N]\n"
      "          [--sizes N,N,...] [--flavor allocate|create] [--win-offset N] [--label NAME]\n"
      "          [--sync fence|flush|lock|lockall|pscw] [--compute-us N] [--verify|--no-verify]\n"
      "  --iters N         iterations per timed batch (default %s)\n"
      "  --repeats N       timed batches per size; the median batch is reported (default 11)\n"
      "  --warmup-iters N  untimed iterations per size (default 100)\n"
      "  --sizes LIST      explicit message sizes instead of the min..max sweep\n"
      "  --win-offset N    create flavor: the window starts N bytes after a page boundary\n"
      "                    (default 0: page-aligned memory, as OSU's benchmarks use)\n"
      "  --sync MODE       fence: one fence epoch per iteration (default); flush: one\n"
      "                    MPI_Win_lock_all epoch around the loop, MPI_Win_flush per iteration;\n"
      "                    lock: MPI_Win_lock / unlock (exclusive) per iteration; lockall:\n"
      "                    MPI_Win_lock_all / unlock_all per iteration; pscw: one\n"
      "                    MPI_Win_post / start / complete / wait epoch per iteration\n"
      "  --compute-us N    rank 0 computes (spins on the clock, no MPI calls) N us between\n"
      "                    issuing its operations and the synchronisation that completes them,\n"
      "                    so the row shows how much of the transfer overlaps the computation\n"
      "                    (its name ends in _overlapN; default 0)\n",
      name, "100; 10 for the bandwidth programs");
}

static int parse_size(const char* s, size_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || (*end != '\0' && *end != ',')) return 1;
  *out = (size_t)v;
  return 0;
}

static int parse_int(const char* s, int* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 1000000000L) return 1;
  *out = (int)v;
  return 0;
}

int bench_parse_options(int argc, char** argv, int default_iters, int print_help,
                        struct bench_options* o) {
  static const struct option longopts[] = {{"warmup-iters", required_argument, 0, 'w'},
                                           {"iters", required_argument, 0, 'i'},
                                           {"repeats", required_argument, 0, 'r'},
                                           {"min-bytes", required_argument, 0, 'm'},
                                           {"max-bytes", required_argument, 0, 'M'},
                                           {"sizes", required_argument, 0, 's'},
                                           {"flavor", required_argument, 0, 'f'},
                                           {"label", required_argument, 0, 'l'},
                                           {"verify", no_argument, 0, 'v'},
                                           {"no-verify", no_argument, 0, 'n'},
                                           {"win-offset", required_argument, 0, 'o'},
                                           {"sync", required_argument, 0, 'y'},
                                           {"compute-us", required_argument, 0, 'c'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->warmup = 100;
  o->iters = default_iters;
  o->repeats = 11;
  o->verify = 1;
  o->min_bytes = 8;
  o->max_bytes = (size_t)1 << 20;
  o->label = "mpi";
  const char* sizes = NULL;
  int bad = 0, help = 0, c;
  opterr = 1;
  while (!bad && !help && (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'w':
        bad = parse_int(optarg, &o->warmup);
        break;
      case 'i':
        bad = parse_int(optarg, &o->iters);
        break;
      case 'c':
        bad = parse_int(optarg, &o->compute_us);
        break;
      case 'r':
        bad = parse_int(optarg, &o->repeats);
        break;
      case 'm':
        bad = parse_size(optarg, &o->min_bytes);
        break;
      case 'M':
        bad = parse_size(optarg, &o->max_bytes);
        break;
      case 's':
        sizes = optarg;
        break;
      case 'f':
        if (strcmp(optarg, "create") == 0) {
          o->create = 1;
        } else if (strcmp(optarg, "allocate") == 0) {
          o->create = 0;
        } else {
          fprintf(stderr, "%s: --flavor must be allocate or create, not '%s'\n", argv[0], optarg);
          bad = 1;
        }
        break;
      case 'l':
        o->label = optarg;
        break;
      case 'v':
        o->verify = 1;
        break;
      case 'n':
        o->verify = 0;
        break;
      case 'o':
        bad = parse_size(optarg, &o->win_offset);
        break;
      case 'y':
        if (strcmp(optarg, "flush") == 0) {
          o->sync = BENCH_SYNC_FLUSH;
        } else if (strcmp(optarg, "fence") == 0) {
          o->sync = BENCH_SYNC_FENCE;
        } else if (strcmp(optarg, "lock") == 0) {
          o->sync = BENCH_SYNC_LOCK;
        } else if (strcmp(optarg, "pscw") == 0) {
          o->sync = BENCH_SYNC_PSCW;
        } else if (strcmp(optarg, "lockall") == 0) {
          o->sync = BENCH_SYNC_LOCKALL;
        } else {
          fprintf(stderr, "%s: --sync must be fence, flush, lock, lockall or pscw, not '%s'\n",
                  argv[0], optarg);
          bad = 1;
        }
        break;
      case 'h':
        help = 1;
        break;
      default:
        bad = 1;
        break;
    }
  }
  if (!bad && optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
    bad = 1;
  }
  if (!bad && (o->iters < 1 || o->repeats < 1 || o->min_bytes < 1 || o->max_bytes < o->min_bytes))
    bad = 1;
  if (!bad && sizes) {
    /* An explicit list: its largest entry sizes the buffers. */
    o->max_bytes = 0;
    for (const char* p = sizes; *p && !bad;) {
      size_t v;
      if (o->nsizes == BENCH_MAX_SIZES || parse_size(p, &v) || v < 1) {
        bad = 1;
        break;
      }
      o->sizes[o->nsizes++] = v;
      if (v > o->max_bytes) o->max_bytes = v;
      p = strchr(p, ',');
      p = p ? p + 1 : "";
    }
    if (o->nsizes == 0) bad = 1;
    if (!bad) o->min_bytes = o->sizes[0];
  } else if (!bad) {
    for (size_t b = o->min_bytes; b <= o->max_bytes && o->nsizes < BENCH_MAX_SIZES;
         b *= b < 4096 ? 8 : 16)
      o->sizes[o->nsizes++] = b;
  }
  if (help) {
    if (print_help) usage(argv[0]);
    return -1;
  }
  if (bad && print_help) usage(argv[0]);
  return bad;
}

int bench_scaled_iters(int want, size_t bytes, int ops_per_iter) {
  const double cap = 256.0 * 1024 * 1024;
  double most = cap / ((double)bytes * (ops_per_iter > 0 ? ops_per_iter : 1));
  if (most < 1) most = 1;
  return (double)want < most ? want : (int)most;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

void bench_batch_stats(double* per_iter, int n, double* p50, double* min) {
  qsort(per_iter, (size_t)n, sizeof(double), cmp_double);
  *p50 = n % 2 ? per_iter[n / 2] : 0.5 * (per_iter[n / 2 - 1] + per_iter[n / 2]);
  *min = per_iter[0];
}

void bench_print_json(const char* bench, const char* system, const char* flavor, size_t bytes,
                      int ranks, int iters, int batches, double p50_s, double min_s, double mbps) {
  printf(
      "{\"bench\":\"%s\",\"system\":\"%s\",\"flavor\":\"%s\",\"bytes\":%zu,\"ranks\":%d,"
      "\"iters\":%d,\"batches\":%d,\"p50_us\":%.4f,\"min_us\":%.4f,\"mbps\":%.1f}\n",
      bench, system, flavor, bytes, ranks, iters, batches, p50_s * 1e6, min_s * 1e6, mbps);
  fflush(stdout);
}

unsigned char bench_pattern(size_t i, size_t n) { return (unsigned char)((i * 7 + n + 1) % 251); }

double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int bench_pin_cpu(int k) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  const int want = k % CPU_COUNT(&allowed);
  for (int c = 0, seen = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed) || seen++ != want) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    return sched_setaffinity(0, sizeof one, &one);
  }
  return -1;
}
