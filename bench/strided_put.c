/* SPDX-License-Identifier: BSD-3-Clause */
/* strided_put: MPI_Put of strided data with derived datatypes against the same bytes moved
 * contiguously and against packing by hand plus one contiguous put.
 *
 * Patterns (the payload is always `bytes` of 8-byte doubles, n = bytes / 8 of them):
 *   vec_sS    a vector of n 8-byte blocks every S doubles (S = 2, 8, 32), origin and target
 *   face_y    the y-face of an N x N x N array of doubles (C order): N runs of N doubles
 *   face_z    the z-face: N*N single doubles every N doubles (the hardest face)
 *             (faces: N = sqrt(n), so the face holds the payload)
 * Methods, for each pattern:
 *   derived   MPI_Put(buf, 1, type, 1, 0, 1, type): the datatype on both sides
 *   origin    MPI_Put(buf, 1, type, 1, 0, n, MPI_DOUBLE): the datatype on the origin side only,
 *             the target contiguous (the same result as pack)
 *   pack      pack the origin by hand into a contiguous buffer, then one contiguous put (the
 *             target then holds the packed bytes: the usual hand-made alternative)
 *   contig    the same bytes contiguous on both sides (the bound)
 * One timed iteration: rank 0 issues 64 such puts to rank 1, then every rank fences (as put_bw).
 * Prints one JSON line per (pattern, method, size): bench "strided_put/PATTERN/METHOD"; mbps is
 * payload bytes per second. --verify (default) checks the target after each method.
 * Options: common.h / options.h (--sizes sets the payload sizes, default 32768,262144). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#include <mpi.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != MPI_SUCCESS) {                                                    \
      char msg_[MPI_MAX_ERROR_STRING];                                           \
      int len_ = 0;                                                              \
      MPI_Error_string(rc_, msg_, &len_);                                        \
      fprintf(stderr, "strided_put:%d: %s failed: %s\n", __LINE__, #call, msg_); \
      MPI_Abort(MPI_COMM_WORLD, 3);                                              \
    }                                                                            \
  } while (0)

enum { kOps = 64 };
enum method { kDerived, kOrigin, kPack, kContig, kNumMethods };
static const char* const kMethodNames[kNumMethods] = {"derived", "origin", "pack", "contig"};

struct pattern {
  char name[32];
  MPI_Datatype type; /* committed; describes the payload inside a buffer of `span` doubles */
  size_t span;       /* doubles the buffer (and window) needs */
  size_t n;          /* doubles of payload */
  size_t* offs;      /* the payload's double offsets, in order (packing and verification) */
};

static void make_vector(struct pattern* p, size_t n, int stride) {
  snprintf(p->name, sizeof p->name, "vec_s%d", stride);
  CHECK(MPI_Type_vector((int)n, 1, stride, MPI_DOUBLE, &p->type));
  CHECK(MPI_Type_commit(&p->type));
  p->n = n;
  p->span = (n - 1) * (size_t)stride + 1;
  p->offs = malloc(n * sizeof *p->offs);
  for (size_t i = 0; i < n; ++i) p->offs[i] = i * (size_t)stride;
}

static void make_face(struct pattern* p, size_t n, int axis) {
  const int N = (int)lround(sqrt((double)n));
  snprintf(p->name, sizeof p->name, "face_%c", axis == 1 ? 'y' : 'z');
  const int sizes[3] = {N, N, N};
  int sub[3] = {N, N, N};
  const int starts[3] = {0, 0, 0};
  sub[axis] = 1;
  CHECK(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &p->type));
  CHECK(MPI_Type_commit(&p->type));
  p->n = (size_t)N * (size_t)N;
  p->span = (size_t)N * (size_t)N * (size_t)N;
  p->offs = malloc(p->n * sizeof *p->offs);
  size_t k = 0;
  for (int x = 0; x < N; ++x) {
    for (int y = 0; y < N; ++y) {
      for (int z = 0; z < N; ++z) {
        if ((axis == 1 && y == 0) || (axis == 2 && z == 0)) {
          p->offs[k++] = ((size_t)x * (size_t)N + (size_t)y) * (size_t)N + (size_t)z;
        }
      }
    }
  }
}

static double pattern_value(size_t i, int round) { return (double)i * 3.0 + round + 0.5; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rank, size;
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int have_sizes = 0;
  for (int i = 1; i < argc; ++i) have_sizes |= strncmp(argv[i], "--sizes", 7) == 0;
  struct bench_options o;
  const int parsed = bench_parse_options(argc, argv, 50, rank == 0, &o);
  if (parsed != 0) {
    MPI_Finalize();
    return parsed < 0 ? 0 : 2;
  }
  if (!have_sizes) {
    o.nsizes = 2;
    o.sizes[0] = 32768;
    o.sizes[1] = 262144;
  }
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "strided_put: needs at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    fprintf(stderr, "# strided_put (%s, %s): %s\n", o.label, o.create ? "create" : "allocate", lib);
  }
  int failed = 0;
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  for (int si = 0; si < o.nsizes; ++si) {
    const size_t n = o.sizes[si] / sizeof(double);
    struct pattern pats[5];
    int np = 0;
    make_vector(&pats[np++], n, 2);
    make_vector(&pats[np++], n, 8);
    make_vector(&pats[np++], n, 32);
    make_face(&pats[np++], n, 1);
    make_face(&pats[np++], n, 2);
    for (int pi = 0; pi < np; ++pi) {
      struct pattern* p = &pats[pi];
      const size_t bytes = p->n * sizeof(double);
      const MPI_Aint winbytes = (MPI_Aint)(p->span * sizeof(double));
      double* win_mem = NULL;
      double* winbuf = NULL;
      double* buf = malloc(p->span * sizeof *buf);
      double* packed = malloc(p->n * sizeof *packed);
      MPI_Win win;
      if (o.create) {
        win_mem = malloc((size_t)winbytes);
        winbuf = win_mem;
        CHECK(MPI_Win_create(winbuf, winbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
      } else {
        CHECK(MPI_Win_allocate(winbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win));
      }
      for (int m = 0; m < kNumMethods; ++m) {
        for (size_t i = 0; i < p->span; ++i) {
          buf[i] = pattern_value(i, m);
          winbuf[i] = -1.0;
        }
        const int iters = bench_scaled_iters(o.iters, bytes, kOps);
        const int warmup = bench_scaled_iters(o.warmup, bytes, kOps) / 4 + 1;
        CHECK(MPI_Win_fence(0, win));
        for (int b = -1; b < o.repeats; ++b) { /* b = -1: warm-up */
          const int it = b < 0 ? warmup : iters;
          const double t = MPI_Wtime();
          for (int i = 0; i < it; ++i) {
            if (rank == 0) {
              for (int k = 0; k < kOps; ++k) {
                if (m == kDerived) {
                  CHECK(MPI_Put(buf, 1, p->type, 1, 0, 1, p->type, win));
                } else if (m == kOrigin) {
                  CHECK(MPI_Put(buf, 1, p->type, 1, 0, (int)p->n, MPI_DOUBLE, win));
                } else if (m == kPack) {
                  for (size_t j = 0; j < p->n; ++j) packed[j] = buf[p->offs[j]];
                  CHECK(MPI_Put(packed, (int)p->n, MPI_DOUBLE, 1, 0, (int)p->n, MPI_DOUBLE, win));
                } else {
                  CHECK(MPI_Put(buf, (int)p->n, MPI_DOUBLE, 1, 0, (int)p->n, MPI_DOUBLE, win));
                }
              }
            }
            CHECK(MPI_Win_fence(0, win));
          }
          if (b >= 0) per[b] = (MPI_Wtime() - t) / it;
        }
        if (rank == 0) {
          double p50, min;
          bench_batch_stats(per, o.repeats, &p50, &min);
          char name[128];
          snprintf(name, sizeof name, "strided_put/%.31s/%.15s", p->name, kMethodNames[m]);
          bench_print_json(name, o.label, o.create ? "create" : "allocate", bytes, size, iters,
                           o.repeats, p50, min, (double)bytes * kOps / p50 / 1e6);
        }
        if (o.verify && rank == 1) {
          for (size_t j = 0; j < p->n; ++j) {
            const size_t at = m == kDerived ? p->offs[j] : j;
            const size_t from = m == kContig ? j : p->offs[j];
            if (winbuf[at] != pattern_value(from, m)) {
              fprintf(stderr, "strided_put: verify failed: %s %s element %zu\n", p->name,
                      kMethodNames[m], j);
              failed = 1;
              break;
            }
          }
        }
      }
      CHECK(MPI_Win_free(&win));
      free(win_mem);
      free(buf);
      free(packed);
      free(p->offs);
      CHECK(MPI_Type_free(&p->type));
    }
  }
  free(per);
  MPI_Finalize();
  return failed;
}
