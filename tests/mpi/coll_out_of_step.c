/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives whose members do not agree (an erroneous program: the standard wants the same
 * calls, in the same order, with matching counts and roots) end with an error instead of
 * waiting for ever: counts that select different algorithms on different ranks, a root that
 * differs on one rank, a rank that fails a check of its own arguments and never starts. Each
 * case runs on a dup of MPI_COMM_WORLD (collectives on a communicator whose members went out of
 * step fail from then on); afterwards every rank reports whether its call failed, and at least
 * one must have, with MPI_ERR_OTHER (out of step) or the class of its own mistake. The job's
 * timeout is the test that nothing hangs.
 *
 * Each case prints   rank R: ok WHAT   or   rank R: FAIL WHAT: ... */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static double* sbuf;
static double* rbuf;

/* Runs one case on a fresh dup; `bad` is this rank's call, returning its error code. */
static void attempt(const char* what, int (*bad)(MPI_Comm c), int ownClass) {
  MPI_Comm c;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MT_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  const int rc = bad(c);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  const int allowed = cls == MPI_SUCCESS || cls == MPI_ERR_OTHER || cls == MPI_ERR_COUNT ||
                      cls == MPI_ERR_TRUNCATE || cls == ownClass;
  int failed = rc != MPI_SUCCESS;
  MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (allowed && failed) {
    printf("rank %d: ok %s%s%s\n", mt_rank, what, rc != MPI_SUCCESS ? ": " : "", msg);
  } else {
    printf("rank %d: FAIL %s: class %d (%s)%s\n", mt_rank, what, cls, msg,
           failed ? "" : ", and no rank noticed");
    ++mt_failures;
  }
  MPI_Comm_free(&c);
}

/* Recursive doubling against halving (64 KiB, a power of two beyond 2 ranks; on 2 ranks both
 * double, and the sizes differ). */
static int allreduceHalving(MPI_Comm c) {
  return MPI_Allreduce(sbuf, rbuf, mt_rank == mt_size - 1 ? 8192 : 4096, MPI_DOUBLE, MPI_SUM, c);
}
/* One direct exchange against the rest (256 bytes, 3-8 ranks). */
static int allreduceDirect(MPI_Comm c) {
  return MPI_Allreduce(sbuf, rbuf, mt_rank == mt_size - 1 ? 64 : 32, MPI_DOUBLE, MPI_SUM, c);
}
/* Linear against a tree. */
static int reduceTree(MPI_Comm c) {
  return MPI_Reduce(sbuf, rbuf, mt_rank == mt_size - 1 ? 512 : 64, MPI_DOUBLE, MPI_SUM, 0, c);
}
static int reduceScatter(MPI_Comm c) {
  return MPI_Reduce_scatter_block(sbuf, rbuf, mt_rank == mt_size - 1 ? 512 : 64, MPI_DOUBLE,
                                  MPI_SUM, c);
}
/* Rank 0 takes rank 1 for the root, the others rank 0: each waits for the other. */
static int bcastRoot(MPI_Comm c) { return MPI_Bcast(sbuf, 4, MPI_DOUBLE, mt_rank == 0 ? 1 : 0, c); }
static int scatterRoot(MPI_Comm c) {
  return MPI_Scatter(sbuf, 4, MPI_DOUBLE, rbuf, 4, MPI_DOUBLE, mt_rank == 0 ? 1 : 0, c);
}
/* The root fails its own check (a negative count); its children wait for it. */
static int bcastBadCount(MPI_Comm c) {
  return MPI_Bcast(sbuf, mt_rank == 0 ? -1 : 4, MPI_DOUBLE, 0, c);
}
/* The last rank names a root that does not exist. */
static int gatherBadRoot(MPI_Comm c) {
  return MPI_Gather(sbuf, 4, MPI_DOUBLE, rbuf, 4, MPI_DOUBLE,
                    mt_rank == mt_size - 1 ? mt_size + 3 : 0, c);
}
/* The last rank gives a negative colour, or no place for the new communicator. */
static int splitBadColor(MPI_Comm c) {
  MPI_Comm n = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(c, mt_rank == mt_size - 1 ? -7 : 0, 0, &n);
  if (rc == MPI_SUCCESS && n != MPI_COMM_NULL) MPI_Comm_free(&n);
  return rc;
}
static int dupNull(MPI_Comm c) {
  MPI_Comm n = MPI_COMM_NULL;
  const int rc = MPI_Comm_dup(c, mt_rank == mt_size - 1 ? NULL : &n);
  if (rc == MPI_SUCCESS && n != MPI_COMM_NULL) MPI_Comm_free(&n);
  return rc;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const size_t n = (size_t)8192 * 8;
  sbuf = calloc(n, sizeof *sbuf);
  rbuf = calloc(n, sizeof *rbuf);
  if (mt_size > 1) {
    attempt("allreduce of 32 / 64 KiB", allreduceHalving, MPI_SUCCESS);
    attempt("allreduce of 256 / 512 bytes", allreduceDirect, MPI_SUCCESS);
    attempt("reduce of 512 bytes / 4 KiB", reduceTree, MPI_SUCCESS);
    attempt("reduce_scatter_block of 512 bytes / 4 KiB", reduceScatter, MPI_SUCCESS);
    attempt("bcast, roots differ", bcastRoot, MPI_SUCCESS);
    attempt("scatter, roots differ", scatterRoot, MPI_SUCCESS);
    attempt("bcast, the root's count is negative", bcastBadCount, MPI_ERR_COUNT);
    attempt("gather, one rank's root out of range", gatherBadRoot, MPI_ERR_ROOT);
    attempt("comm_split, one rank's colour negative", splitBadColor, MPI_ERR_ARG);
    attempt("comm_dup, one rank's newcomm NULL", dupNull, MPI_ERR_ARG);
  }
  /* The world communicator is untouched. */
  int x = 1;
  MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  MT_EXPECT(x == mt_size, "allreduce after the cases gave %d", x);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return mt_failures != 0;
}
