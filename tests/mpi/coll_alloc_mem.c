/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on buffers from MPI_Alloc_mem: on one node their receivers read large send buffers
 * straight from the sender's mapped memory (one copy), and keep the sender's key unpacked from
 * one call to the next. Checked against serial computations, at sizes on both sides of the
 * 16 KiB threshold:
 *   - alltoall into a contiguous and into a strided receive type (the mapped copy follows the
 *     receiver's type map; the gaps stay untouched);
 *   - alltoallv with uneven counts, gather, scatter, bcast, allgather;
 *   - reduce and allreduce (the receiver folds straight from the sender's memory);
 *   - one phase where some senders' buffers are MPI_Alloc_mem memory (at an offset into the
 *     region) and the others' malloc'ed (through the ring);
 *   - rounds that free every buffer and allocate new ones (old keys must never be used for the
 *     new memory), in alternating sizes so addresses are reused. */
#include "mpitest.h"

/* Built twice: as coll_alloc_mem, and with COLL_MALLOC as coll_malloc, where the buffers come
 * from malloc: on one node their receivers read large send buffers through the pages the
 * sender shares for them (ONESIDED_COLL_SHARE), and freed buffers whose addresses come back
 * must never be read through the old memory; and a fork()ed child still gets its own copy of
 * such a buffer (check_fork). */
#ifdef COLL_MALLOC
#define PROGRAM "coll_malloc"
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>
#else
#define PROGRAM "coll_alloc_mem"
#endif

enum { kHole = -7 };
static int val(int from, int to, long k) { return (int)(from * 1000003L + to * 1009L + k); }

/* An alltoall's send buffer from rank `me`: block j holds val(me, j, k + off). */
static void fill_sends(int* s, int P, int me, long n, long off) {
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) s[j * n + k] = val(me, j, k + off);
}

/* How many ints of an alltoall's receive buffer at `me` differ from every rank's fill_sends
 * (block j from rank j). */
static long wrong_recvs(const int* r, int P, int me, long n, long off) {
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, me, k + off);
  return bad;
}

static int* alloc_ints(long n) {
  int* p = NULL;
#ifdef COLL_MALLOC
  p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  MT_EXPECT(p != NULL, "malloc of %ld ints failed", n);
#else
  MT_CHECK(MPI_Alloc_mem((MPI_Aint)(n > 0 ? n : 1) * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &p));
#endif
  for (long i = 0; i < n; ++i) p[i] = kHole;
  return p;
}

static void free_ints(int* p) {
#ifdef COLL_MALLOC
  free(p);
#else
  MT_CHECK(MPI_Free_mem(p));
#endif
}

static void check_alltoall(int P, int me, long n, int round) {
  int* s = alloc_ints((long)P * n);
  int* r = alloc_ints((long)P * n);
  fill_sends(s, P, me, n, round);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  long bad = wrong_recvs(r, P, me, n, round);
  MT_EXPECT(bad == 0, "alltoall of %ld ints, round %d: %ld wrong", n, round, bad);
  /* Received as every other int: the mapped copy follows the receive type map. */
  MPI_Datatype every2;
  MT_CHECK(MPI_Type_vector((int)n, 1, 2, MPI_INT, &every2));
  MPI_Datatype blk;
  MT_CHECK(MPI_Type_create_resized(every2, 0, (MPI_Aint)(2 * n * (long)sizeof(int)), &blk));
  MT_CHECK(MPI_Type_commit(&blk));
  int* r2 = alloc_ints(2 * (long)P * n);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r2, 1, blk, MPI_COMM_WORLD));
  bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) {
      bad += r2[2 * (j * n + k)] != val(j, me, k + round);
      bad += r2[2 * (j * n + k) + 1] != kHole;
    }
  MT_EXPECT(bad == 0, "alltoall into a strided type, %ld ints, round %d: %ld wrong", n, round, bad);
  MT_CHECK(MPI_Type_free(&blk));
  MT_CHECK(MPI_Type_free(&every2));
  free_ints(r2);
  free_ints(r);
  free_ints(s);
}

static void check_alltoallv(int P, int me, long n, int round) {
  /* Rank i sends (i + j) % 3 * n / 2 + 1 ints to rank j. */
  int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
  int *rc = malloc(sizeof(int) * (size_t)P), *rd = malloc(sizeof(int) * (size_t)P);
  long st = 0, rt = 0;
  for (int j = 0; j < P; ++j) {
    sc[j] = (int)((me + j) % 3 * n / 2 + 1);
    rc[j] = (int)((j + me) % 3 * n / 2 + 1);
    sd[j] = (int)st;
    rd[j] = (int)rt;
    st += sc[j];
    rt += rc[j];
  }
  int* s = alloc_ints(st);
  int* r = alloc_ints(rt);
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < sc[j]; ++k) s[sd[j] + k] = val(me, j, k + round);
  MT_CHECK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < rc[j]; ++k) bad += r[rd[j] + k] != val(j, me, k + round);
  MT_EXPECT(bad == 0, "alltoallv around %ld ints, round %d: %ld wrong", n, round, bad);
  free_ints(r);
  free_ints(s);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void check_rooted(int P, int me, long n, int round) {
  const int root = round % P;
  int* s = alloc_ints((long)P * n);
  int* r = alloc_ints((long)P * n);
  /* gather */
  for (long k = 0; k < n; ++k) s[k] = val(me, root, k + round);
  MT_CHECK(MPI_Gather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  long bad = 0;
  if (me == root)
    for (int j = 0; j < P; ++j)
      for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, root, k + round);
  MT_EXPECT(bad == 0, "gather of %ld ints to %d, round %d: %ld wrong", n, root, round, bad);
  /* scatter */
  fill_sends(s, P, me, n, round);
  MT_CHECK(MPI_Scatter(s, (int)n, MPI_INT, r, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += r[k] != val(root, me, k + round);
  MT_EXPECT(bad == 0, "scatter of %ld ints from %d, round %d: %ld wrong", n, root, round, bad);
  /* bcast */
  for (long k = 0; k < n; ++k) s[k] = me == root ? val(root, 0, k + round) : kHole;
  MT_CHECK(MPI_Bcast(s, (int)n, MPI_INT, root, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += s[k] != val(root, 0, k + round);
  MT_EXPECT(bad == 0, "bcast of %ld ints from %d, round %d: %ld wrong", n, root, round, bad);
  /* allgather */
  for (long k = 0; k < n; ++k) s[k] = val(me, 1, k + round);
  MT_CHECK(MPI_Allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += r[j * n + k] != val(j, 1, k + round);
  MT_EXPECT(bad == 0, "allgather of %ld ints, round %d: %ld wrong", n, round, bad);
  /* reduce and allreduce: sums folded from the senders' memory */
  for (long k = 0; k < n; ++k) s[k] = (int)(me + 1) * (int)((k + round) % 1000);
  const int tri = P * (P + 1) / 2;
  MT_CHECK(MPI_Reduce(s, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
  bad = 0;
  if (me == root)
    for (long k = 0; k < n; ++k) bad += r[k] != tri * (int)((k + round) % 1000);
  MT_EXPECT(bad == 0, "reduce of %ld ints to %d, round %d: %ld wrong", n, root, round, bad);
  MT_CHECK(MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  bad = 0;
  for (long k = 0; k < n; ++k) bad += r[k] != tri * (int)((k + round) % 1000);
  MT_EXPECT(bad == 0, "allreduce of %ld ints, round %d: %ld wrong", n, round, bad);
  free_ints(r);
  free_ints(s);
}

/* Even ranks send from an MPI_Alloc_mem region at an offset into it, odd ranks from malloc:
 * one phase mixes streams read from mapped memory with streams through the ring. */
static void check_mixed(int P, int me, long n) {
  int* region = NULL;
  int* s = NULL;
  if (me % 2 == 0) {
    region = alloc_ints((long)P * n + 3);
    s = region + 3;
  } else {
    s = malloc(sizeof(int) * (size_t)n * (size_t)P);
  }
  int* r = alloc_ints((long)P * n);
  fill_sends(s, P, me, n, 11);
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  const long bad = wrong_recvs(r, P, me, n, 11);
  MT_EXPECT(bad == 0, "alltoall from mixed buffers, %ld ints: %ld wrong", n, bad);
  free_ints(r);
  if (region != NULL) {
    free_ints(region);
  } else {
    free(s);
  }
}

#ifdef COLL_MALLOC
/* Whether /proc/self/maps shows one of the runtime's shared-page memfds at `p`. */
static int shared_at(const void* p) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) return 0;
  char line[512];
  int found = 0;
  const unsigned long long a = (unsigned long long)(uintptr_t)p;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long long lo = 0, hi = 0;
    if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo <= a && a < hi) {
      found = strstr(line, "onesided-window") != NULL;
      break;
    }
  }
  fclose(f);
  return found;
}

/* How many ints of that send buffer differ from what fill_sends wrote. */
static long wrong_sends(const int* s, int P, int me, long n, long off) {
  long bad = 0;
  for (int j = 0; j < P; ++j)
    for (long k = 0; k < n; ++k) bad += s[j * n + k] != val(me, j, k + off);
  return bad;
}

/* fork() after a send buffer's pages were shared for a collective: the child sees the buffer as
 * it was at the fork, its stores (and free's bookkeeping) stay its own, and what the parent
 * stores after fork() returns never shows in the child. The parent then sends from the buffer
 * again, and receivers get the parent's values. */
static void check_fork(int P, int me, long n) {
  int* s = alloc_ints((long)P * n);
  int* r = alloc_ints((long)P * n);
  for (int round = 20; round < 22; ++round) { /* the second use shares (the first with always) */
    fill_sends(s, P, me, n, 20);
    MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  }
  /* A shared page inside a block sent to another rank, if any (whether a stream goes through
   * the sender's shared pages depends on timing too: a receiver already waiting may take it
   * another way). */
  const int* probe = NULL;
  for (int j = 0; j < P && probe == NULL; ++j)
    if (j != me && shared_at(s + (long)j * n + n / 2)) probe = s + (long)j * n + n / 2;
  const char* share = getenv("ONESIDED_COLL_SHARE");
  if (P > 1 && share != NULL && strcmp(share, "always") == 0) {
    MT_EXPECT(probe != NULL, "no page of the send buffer was shared: %s",
              "the fork check proves nothing");
  }
  fflush(NULL);
  const pid_t child = fork();
  MT_EXPECT(child >= 0, "fork failed");
  if (child == 0) {
    int ok = wrong_sends(s, P, me, n, 20) == 0 && (probe == NULL || !shared_at(probe));
    for (long i = 0; i < (long)P * n; ++i) s[i] = -1;
    free(s); /* malloc's bookkeeping, in the child only */
    int* t = malloc(sizeof(int) * 1000);
    if (t != NULL) t[0] = 1;
    free(t);
    _exit(ok ? 0 : 3);
  }
  if (child > 0) {
    fill_sends(s, P, me, n, 21); /* after fork() returned: never the child's to see */
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR) {
    }
    MT_EXPECT(waited == child, "waitpid: %s", strerror(errno));
    MT_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the forked child saw shared memory (status %#x)", status);
  }
  MT_CHECK(MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD));
  const long bad = wrong_recvs(r, P, me, n, 21);
  MT_EXPECT(bad == 0, "alltoall after a fork, %ld ints: %ld wrong", n, bad);
  free_ints(r);
  free_ints(s);
}
#endif

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int P = mt_size, me = mt_rank;
  /* ints per block: below, at and above the 16 KiB threshold (kept small: the suite also
   * runs in the soft-RoCE VM under emulation). */
  const long sizes[] = {100, 4096, 20000};
  const int nsizes = (int)(sizeof sizes / sizeof *sizes);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < nsizes; ++i) {
      /* Alternating directions, so freed regions' addresses come back for other sizes. */
      const long n = sizes[round % 2 == 0 ? i : nsizes - 1 - i];
      check_alltoall(P, me, n, round);
      check_alltoallv(P, me, n, round);
      check_rooted(P, me, n, round);
    }
  }
  check_mixed(P, me, 20000);
#ifdef COLL_MALLOC
  check_fork(P, me, 20000);
#endif
  if (me == 0) printf(PROGRAM ": %d ranks done\n", P);
  return mt_finish();
}
