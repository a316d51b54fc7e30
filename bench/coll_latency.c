/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_latency: OSU-style latency of one collective (osu_gather, osu_alltoall, ...): per size,
 * warm-up iterations, then batches of timed iterations with a barrier before each batch; each
 * rank's time per iteration is averaged over the ranks (MPI_Reduce) and the median batch is
 * reported, as one JSON line from rank 0. Written against the standard <mpi.h> only, so the
 * same source builds with onesided and with Open MPI (mpicc.openmpi).
 *
 *   coll_latency --coll gather|gatherv|scatter|scatterv|alltoall|alltoallv|alltoallw|bcast|
 *                       allreduce|allgather|reduce|barrier|scan|exscan|reduce_scatter_block|
 *                       allreduce_user
 *                [--min-bytes 8] [--max-bytes 1048576] [--iters 200] [--repeats 5]
 *                [--label onesided] [--no-verify] [--alloc-mem | --page-aligned]
 *
 * Sizes are the bytes one rank sends to one other (OSU's convention); x4 steps. --verify
 * (default) checks the result of the last iteration of each size. --alloc-mem takes the send and
 * receive buffers from MPI_Alloc_mem instead of malloc (rows get "alloc_mem":1); --page-aligned
 * from posix_memalign on a page boundary, as the OSU benchmarks allocate them, where malloc puts
 * a large buffer 16 bytes into a page (rows get "page_aligned":1). The reductions
 * (allreduce, reduce, scan, exscan, reduce_scatter_block: n bytes of MPI_INT per rank, or per
 * block) sum with MPI_SUM; allreduce_user sums with an operation made by MPI_Op_create. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign, sysconf */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* coll = "gather";
/* The collective, found by name once (kColls[which] == coll): comparing names at every call
 * cost the later ones in the list tens of nanoseconds (a sixth of an 8-byte MPI_Scan's time
 * at 2 ranks), on every system. */
enum coll_kind {
  C_GATHER,
  C_GATHERV,
  C_SCATTER,
  C_SCATTERV,
  C_ALLTOALL,
  C_ALLTOALLV,
  C_ALLTOALLW,
  C_ALLGATHER,
  C_BCAST,
  C_ALLREDUCE,
  C_REDUCE,
  C_BARRIER,
  C_SCAN,
  C_EXSCAN,
  C_REDUCE_SCATTER_BLOCK,
  C_ALLREDUCE_USER,
  C_COUNT
};
static const char* const kColls[C_COUNT] = {
    [C_GATHER] = "gather",
    [C_GATHERV] = "gatherv",
    [C_SCATTER] = "scatter",
    [C_SCATTERV] = "scatterv",
    [C_ALLTOALL] = "alltoall",
    [C_ALLTOALLV] = "alltoallv",
    [C_ALLTOALLW] = "alltoallw",
    [C_ALLGATHER] = "allgather",
    [C_BCAST] = "bcast",
    [C_ALLREDUCE] = "allreduce",
    [C_REDUCE] = "reduce",
    [C_BARRIER] = "barrier",
    [C_SCAN] = "scan",
    [C_EXSCAN] = "exscan",
    [C_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [C_ALLREDUCE_USER] = "allreduce_user",
};
static int which = -1;
static size_t min_bytes = 8, max_bytes = 1 << 20;
static int iters = 200, repeats = 5, verify = 1, alloc_mem = 0, page_aligned = 0;
static const char* label = "mpi";

static MPI_Op user_sum = MPI_OP_NULL;
static MPI_Datatype* chars = NULL; /* alltoallw's types: MPI_CHAR for every block */

static void isum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

static int is_reduction(void) {
  return !strcmp(coll, "allreduce") || !strcmp(coll, "reduce") || !strcmp(coll, "scan") ||
         !strcmp(coll, "exscan") || !strcmp(coll, "reduce_scatter_block") ||
         !strcmp(coll, "allreduce_user");
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* One call of the collective with n bytes per peer (n a multiple of 4 for the reductions). */
static void once(char* s, char* r, int n, int p, int* counts, int* displs) {
  MPI_Comm w = MPI_COMM_WORLD;
  switch (which) {
    case C_GATHER:
      MPI_Gather(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, w);
      break;
    case C_GATHERV:
      MPI_Gatherv(s, n, MPI_CHAR, r, counts, displs, MPI_CHAR, 0, w);
      break;
    case C_SCATTER:
      MPI_Scatter(s, n, MPI_CHAR, r, n, MPI_CHAR, 0, w);
      break;
    case C_SCATTERV:
      MPI_Scatterv(s, counts, displs, MPI_CHAR, r, n, MPI_CHAR, 0, w);
      break;
    case C_ALLTOALL:
      MPI_Alltoall(s, n, MPI_CHAR, r, n, MPI_CHAR, w);
      break;
    case C_ALLTOALLV:
      MPI_Alltoallv(s, counts, displs, MPI_CHAR, r, counts, displs, MPI_CHAR, w);
      break;
    case C_ALLTOALLW: /* displacements in bytes: those of MPI_CHAR */
      MPI_Alltoallw(s, counts, displs, chars, r, counts, displs, chars, w);
      break;
    case C_ALLGATHER:
      MPI_Allgather(s, n, MPI_CHAR, r, n, MPI_CHAR, w);
      break;
    case C_BCAST:
      MPI_Bcast(s, n, MPI_CHAR, 0, w);
      break;
    case C_ALLREDUCE:
      MPI_Allreduce(s, r, n / 4, MPI_INT, MPI_SUM, w);
      break;
    case C_REDUCE:
      MPI_Reduce(s, r, n / 4, MPI_INT, MPI_SUM, 0, w);
      break;
    case C_BARRIER:
      MPI_Barrier(w);
      break;
    case C_SCAN:
      MPI_Scan(s, r, n / 4, MPI_INT, MPI_SUM, w);
      break;
    case C_EXSCAN:
      MPI_Exscan(s, r, n / 4, MPI_INT, MPI_SUM, w);
      break;
    case C_REDUCE_SCATTER_BLOCK:
      MPI_Reduce_scatter_block(s, r, n / 4, MPI_INT, MPI_SUM, w);
      break;
    case C_ALLREDUCE_USER:
      MPI_Allreduce(s, r, n / 4, MPI_INT, user_sum, w);
      break;
  }
  (void)p;
}

/* Fills the send buffer so that byte k of the block for rank j from rank i is known. */
static unsigned char pat(int from, int to, size_t k) {
  return (unsigned char)(from * 31 + to * 7 + k);
}

static int check(const char* s, const char* r, int n, int p, int me) {
  int bad = 0;
  const unsigned char* u = (const unsigned char*)r;
  if (!strcmp(coll, "gather") || !strcmp(coll, "gatherv")) {
    if (me == 0)
      for (int i = 0; i < p; ++i)
        for (int k = 0; k < n; ++k) bad += u[(size_t)i * n + k] != pat(i, 0, (size_t)k);
  } else if (!strcmp(coll, "scatter") || !strcmp(coll, "scatterv")) {
    for (int k = 0; k < n; ++k) bad += u[k] != pat(0, me, (size_t)k);
  } else if (!strcmp(coll, "alltoall") || !strcmp(coll, "alltoallv") ||
             !strcmp(coll, "alltoallw")) {
    for (int i = 0; i < p; ++i)
      for (int k = 0; k < n; ++k) bad += u[(size_t)i * n + k] != pat(i, me, (size_t)k);
  } else if (!strcmp(coll, "allgather")) {
    for (int i = 0; i < p; ++i)
      for (int k = 0; k < n; ++k) bad += u[(size_t)i * n + k] != pat(i, i, (size_t)k);
  } else if (!strcmp(coll, "bcast")) {
    for (int k = 0; k < n; ++k) bad += (unsigned char)s[k] != pat(0, 0, (size_t)k);
  } else if (!strcmp(coll, "allreduce") || !strcmp(coll, "allreduce_user") ||
             (!strcmp(coll, "reduce") && me == 0)) {
    const int* x = (const int*)r;
    for (int k = 0; k < n / 4; ++k) bad += x[k] != p * (p - 1) / 2 + p * k;
  } else if (!strcmp(coll, "scan")) {
    const int* x = (const int*)r;
    for (int k = 0; k < n / 4; ++k) bad += x[k] != me * (me + 1) / 2 + (me + 1) * k;
  } else if (!strcmp(coll, "exscan") && me > 0) {
    const int* x = (const int*)r;
    for (int k = 0; k < n / 4; ++k) bad += x[k] != (me - 1) * me / 2 + me * k;
  } else if (!strcmp(coll, "reduce_scatter_block")) {
    const int* x = (const int*)r;
    const int b = n / 4;
    for (int k = 0; k < b; ++k) bad += x[k] != p * (p - 1) / 2 + p * (me * b + k);
  }
  return bad;
}

static void fill(char* s, int n, int p, int me) {
  if (is_reduction()) {
    int* x = (int*)s;
    const int all = (!strcmp(coll, "reduce_scatter_block") ? p : 1) * (n / 4);
    for (int k = 0; k < all; ++k) x[k] = me + k;
    return;
  }
  const int blocks = (!strcmp(coll, "gather") || !strcmp(coll, "gatherv") ||
                      !strcmp(coll, "allgather") || !strcmp(coll, "bcast"))
                         ? 1
                         : p;
  for (int j = 0; j < blocks; ++j)
    for (int k = 0; k < n; ++k) {
      int to = blocks == 1 ? (!strcmp(coll, "allgather") ? me : 0) : j;
      s[(size_t)j * n + k] = (char)pat(me, to, (size_t)k);
    }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--coll") && i + 1 < argc)
      coll = argv[++i];
    else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc)
      min_bytes = strtoull(argv[++i], 0, 10);
    else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
      max_bytes = strtoull(argv[++i], 0, 10);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--label") && i + 1 < argc)
      label = argv[++i];
    else if (!strcmp(argv[i], "--no-verify"))
      verify = 0;
    else if (!strcmp(argv[i], "--alloc-mem"))
      alloc_mem = 1;
    else if (!strcmp(argv[i], "--page-aligned"))
      page_aligned = 1;
    else {
      fprintf(stderr, "coll_latency: unknown option %s\n", argv[i]);
      return 1;
    }
  }
  for (int k = 0; k < C_COUNT; ++k) {
    if (!strcmp(coll, kColls[k])) which = k;
  }
  if (which < 0) {
    fprintf(stderr, "coll_latency: unknown collective %s\n", coll);
    return 1;
  }
  MPI_Init(&argc, &argv);
  int p, me;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Op_create(isum, 1, &user_sum);
  const int is_barrier = !strcmp(coll, "barrier");
  if (is_barrier) min_bytes = max_bytes = 0;
  char* s = NULL;
  char* r = NULL;
  if (alloc_mem) {
    MPI_Alloc_mem((MPI_Aint)((size_t)p * max_bytes + 64), MPI_INFO_NULL, &s);
    MPI_Alloc_mem((MPI_Aint)((size_t)p * max_bytes + 64), MPI_INFO_NULL, &r);
  } else if (page_aligned) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign((void**)&s, page, (size_t)p * max_bytes + 64) != 0 ||
        posix_memalign((void**)&r, page, (size_t)p * max_bytes + 64) != 0) {
      fprintf(stderr, "coll_latency: posix_memalign failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    s = malloc((size_t)p * max_bytes + 64);
    r = malloc((size_t)p * max_bytes + 64);
  }
  int* counts = malloc((size_t)p * sizeof(int));
  chars = malloc((size_t)p * sizeof(MPI_Datatype));
  for (int i = 0; i < p; ++i) chars[i] = MPI_CHAR;
  int* displs = malloc((size_t)p * sizeof(int));
  double* batch = malloc((size_t)repeats * sizeof(double));
  int failed = 0;
  for (size_t n = min_bytes; n <= max_bytes; n = n == 0 ? 1 : n * 4) {
    const int nn = (int)n;
    for (int i = 0; i < p; ++i) {
      counts[i] = nn;
      displs[i] = i * nn;
    }
    int it = iters;
    if (n >= 65536) it = iters / 4 > 10 ? iters / 4 : 10;
    if (n >= 262144) it = iters / 10 > 5 ? iters / 10 : 5;
    fill(s, nn, p, me);
    for (int w = 0; w < (it < 20 ? it : 20); ++w) once(s, r, nn, p, counts, displs);
    for (int b = 0; b < repeats; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < it; ++i) once(s, r, nn, p, counts, displs);
      double mine = (MPI_Wtime() - t0) / it, sum = 0;
      MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      batch[b] = sum / p;
    }
    if (verify) {
      if (!strcmp(coll, "bcast") && me != 0) memset(s, 0, n);
      if (!strcmp(coll, "bcast") && me == 0) fill(s, nn, p, me);
      once(s, r, nn, p, counts, displs);
      int bad = check(s, r, nn, p, me), all = 0;
      MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      if (all != 0) {
        if (me == 0) fprintf(stderr, "coll_latency: %s %zu bytes: %d wrong bytes\n", coll, n, all);
        failed = 1;
      }
    }
    if (me == 0) {
      qsort(batch, (size_t)repeats, sizeof(double), cmp_double);
      printf(
          "{\"bench\":\"%s\",\"system\":\"%s\",\"bytes\":%zu,\"ranks\":%d,\"iters\":%d,"
          "\"p50_us\":%.3f,\"min_us\":%.3f,\"alloc_mem\":%d,\"page_aligned\":%d}\n",
          coll, label, n, p, it, batch[repeats / 2] * 1e6, batch[0] * 1e6, alloc_mem, page_aligned);
      fflush(stdout);
    }
    if (n == 0) break;
  }
  if (alloc_mem) {
    MPI_Free_mem(s);
    MPI_Free_mem(r);
  } else {
    free(s);
    free(r);
  }
  free(counts);
  free(chars);
  free(displs);
  free(batch);
  MPI_Op_free(&user_sum);
  MPI_Finalize();
  return failed;
}
