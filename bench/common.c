/* SPDX-License-Identifier: BSD-3-Clause */
#include "common.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
  int warmup, iters, batches, verify;
  size_t min_bytes, max_bytes;
  int create; /* MPI_Win_create over malloc'ed memory instead of MPI_Win_allocate */
  const char* label;
};

static void usage(const char* name) {
  fprintf(stderr,
          "usage: %s [--warmup-iters N] [--iters N] [--repeats N] [--min-bytes N] "
          "[--max-bytes N] [--flavor allocate|create] [--label NAME] [--verify|--no-verify]\n",
          name);
}

static int parse(int argc, char** argv, const struct bench_spec* spec, struct options* o) {
  static struct option longopts[] = {
      {"warmup-iters", required_argument, 0, 'w'}, {"iters", required_argument, 0, 'i'},
      {"repeats", required_argument, 0, 'r'},      {"min-bytes", required_argument, 0, 'm'},
      {"max-bytes", required_argument, 0, 'M'},    {"flavor", required_argument, 0, 'f'},
      {"label", required_argument, 0, 'l'},        {"verify", no_argument, 0, 'v'},
      {"no-verify", no_argument, 0, 'n'},          {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  o->warmup = 200;
  o->iters = spec->ops_per_iter > 1 ? 100 : 2000;
  o->batches = 11;
  o->verify = 1;
  o->min_bytes = 8;
  o->max_bytes = (size_t)1 << 20;
  o->create = 0;
  o->label = "mpi";
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'w': o->warmup = atoi(optarg); break;
      case 'i': o->iters = atoi(optarg); break;
      case 'r': o->batches = atoi(optarg); break;
      case 'm': o->min_bytes = strtoull(optarg, NULL, 10); break;
      case 'M': o->max_bytes = strtoull(optarg, NULL, 10); break;
      case 'f':
        if (strcmp(optarg, "create") == 0) {
          o->create = 1;
        } else if (strcmp(optarg, "allocate") != 0) {
          usage(argv[0]);
          return 1;
        }
        break;
      case 'l': o->label = optarg; break;
      case 'v': o->verify = 1; break;
      case 'n': o->verify = 0; break;
      default: usage(argv[0]); return 1;
    }
  }
  if (o->iters < 1 || o->batches < 1 || o->warmup < 0 || o->min_bytes < 1 ||
      o->max_bytes < o->min_bytes) {
    usage(argv[0]);
    return 1;
  }
  return 0;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static unsigned char pattern(size_t i, size_t bytes) { return (unsigned char)((i * 7 + bytes) % 251); }

/* One iteration: rank 0 issues the operations, everybody fences. */
static void iteration(const struct bench_spec* s, int rank, char* buf, size_t bytes, MPI_Win win) {
  if (rank == 0) {
    for (int k = 0; k < s->ops_per_iter; ++k) {
      if (s->op == BENCH_PUT) {
        MPI_Put(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
      } else if (s->op == BENCH_GET) {
        MPI_Get(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
      }
    }
  }
  MPI_Win_fence(0, win);
}

/* Rank 1's window holds a known pattern (get) or must end up with rank 0's (put). */
static int verify(const struct bench_spec* s, int rank, char* buf, char* winbuf, size_t bytes,
                  MPI_Win win) {
  int bad = 0;
  if (s->op == BENCH_PUT) {
    if (rank == 0) {
      for (size_t i = 0; i < bytes; ++i) buf[i] = (char)pattern(i, bytes);
      MPI_Put(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    if (rank == 1) {
      for (size_t i = 0; i < bytes && !bad; ++i) bad = (unsigned char)winbuf[i] != pattern(i, bytes);
    }
  } else if (s->op == BENCH_GET) {
    if (rank == 1) {
      for (size_t i = 0; i < bytes; ++i) winbuf[i] = (char)pattern(i, bytes);
    }
    MPI_Win_fence(0, win);
    if (rank == 0) {
      memset(buf, 0, bytes);
      MPI_Get(buf, (int)bytes, MPI_BYTE, 1, 0, (int)bytes, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    if (rank == 0) {
      for (size_t i = 0; i < bytes && !bad; ++i) bad = (unsigned char)buf[i] != pattern(i, bytes);
    }
  }
  MPI_Win_fence(0, win);
  if (bad) fprintf(stderr, "%s: rank %d: wrong data after %zu-byte transfers\n", s->name, rank, bytes);
  return bad;
}

int bench_main(int argc, char** argv, const struct bench_spec* spec) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct options o;
  if (parse(argc, argv, spec, &o) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "%s: needs at least 2 ranks\n", spec->name);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* winbuf = NULL;
  char* user = NULL;
  MPI_Win win;
  if (o.create) {
    user = malloc(o.max_bytes);
    winbuf = user;
    MPI_Win_create(winbuf, (MPI_Aint)o.max_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_allocate((MPI_Aint)o.max_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
  }
  memset(winbuf, 0, o.max_bytes);
  char* buf = malloc(o.max_bytes);
  memset(buf, 1, o.max_bytes);
  double* per = malloc(sizeof(double) * (size_t)o.batches);
  int failed = 0;
  MPI_Win_fence(0, win);
  for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= bytes < 4096 ? 8 : 16) {
    /* Fewer iterations for large messages, so every size takes a similar time. */
    int iters = o.iters;
    if (bytes >= 65536) iters = iters / 4 > 10 ? iters / 4 : 10;
    if (bytes >= 1048576) iters = iters / 4 > 10 ? iters / 4 : 10;
    for (int i = 0; i < o.warmup; ++i) iteration(spec, rank, buf, bytes, win);
    for (int b = 0; b < o.batches; ++b) {
      double t = MPI_Wtime();
      for (int i = 0; i < iters; ++i) iteration(spec, rank, buf, bytes, win);
      per[b] = (MPI_Wtime() - t) / iters;
    }
    qsort(per, (size_t)o.batches, sizeof(double), cmp_double);
    double p50 = per[o.batches / 2], min = per[0];
    double mbps = (double)bytes * spec->ops_per_iter / p50 / 1e6;
    if (rank == 0) {
      printf("{\"bench\":\"%s\",\"system\":\"%s\",\"flavor\":\"%s\",\"bytes\":%zu,\"ranks\":%d,"
             "\"iters\":%d,\"p50_us\":%.4f,\"min_us\":%.4f,\"mbps\":%.1f}\n",
             spec->name, o.label, o.create ? "create" : "allocate", bytes, size, iters, p50 * 1e6,
             min * 1e6, mbps);
      fflush(stdout);
    }
    if (o.verify) failed |= verify(spec, rank, buf, winbuf, bytes, win);
  }
  MPI_Win_free(&win);
  free(user);
  free(buf);
  free(per);
  MPI_Finalize();
  return failed;
}
