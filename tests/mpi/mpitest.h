/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the MPI test programs in tests/mpi/. Plain C11 against <mpi.h> only,
 * so every program also builds with another MPI (tests/mpi/compare_openmpi.sh). */
#ifndef ONESIDED_TESTS_MPI_MPITEST_H
#define ONESIDED_TESTS_MPI_MPITEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Any failure of an MPI call that must succeed ends the job with the call and its message. The
 * default handler (MPI_ERRORS_ARE_FATAL) would abort first; this covers MPI_ERRORS_RETURN. */
#define MT_CHECK(call)                                                               \
  do {                                                                               \
    int mt_rc_ = (call);                                                             \
    if (mt_rc_ != MPI_SUCCESS) {                                                     \
      char mt_msg_[MPI_MAX_ERROR_STRING];                                            \
      int mt_len_ = 0;                                                               \
      MPI_Error_string(mt_rc_, mt_msg_, &mt_len_);                                   \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, mt_msg_); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                  \
    }                                                                                \
  } while (0)

/* Records a failed expectation on this rank; the program exits non-zero at the end. */
#define MT_EXPECT(cond, ...)                                                                   \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "rank %d: %s:%d: expectation failed: %s: ", mt_rank, __FILE__, __LINE__, \
              #cond);                                                                          \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fputc('\n', stderr);                                                                     \
      ++mt_failures;                                                                           \
    }                                                                                          \
  } while (0)

/* Set by mt_init; MT_EXPECT reads them. One translation unit per program, so static is fine. */
static int mt_rank = -1;
static int mt_size = 0;
static int mt_failures = 0;

static inline void mt_init(int* argc, char*** argv) {
  /* Whole lines: launchers forward each rank's output through a pipe, and a line split across
   * two writes would interleave with other ranks' lines. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  MT_CHECK(MPI_Init(argc, argv));
  MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
  MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
}

/* A window of `slots` int64 over MPI_COMM_WORLD, zeroed: the program's own memory (calloc and
 * MPI_Win_create, which no peer maps, so every lock word and atomic goes through the transport
 * also on one node) when the environment variable `env` is "1", else MPI_Win_allocate. Sets
 * *own; the caller frees the memory after MPI_Win_free when it is its own. */
static inline int64_t* mt_win_int64(int slots, const char* env, int* own, MPI_Win* win) {
  const char* v = getenv(env);
  *own = v != NULL && strcmp(v, "1") == 0;
  const MPI_Aint bytes = (MPI_Aint)slots * (MPI_Aint)sizeof(int64_t);
  int64_t* base = NULL;
  if (*own) {
    base = calloc((size_t)slots, sizeof(int64_t));
    if (base == NULL) {
      fprintf(stderr, "calloc of %d int64 failed\n", slots);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MT_CHECK(MPI_Win_create(base, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, win));
  } else {
    MT_CHECK(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, win));
  }
  memset(base, 0, (size_t)bytes);
  return base;
}

/* Expects the call's return code `rc` to be of error class `want` (MPI_SUCCESS included);
 * rank 0 notes each error seen on stderr, with its message. */
static inline void mt_expect_class(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  MT_EXPECT(cls == want, "%s: class %d, expected %d (%s)", what, cls, want, msg);
  if (cls == want && rc != MPI_SUCCESS && mt_rank == 0) fprintf(stderr, "ok %s (%s)\n", what, msg);
}

/* Finalizes and returns the process exit status: there are no reductions in the subset, so
 * every rank reports its own result and the launcher fails the job if any rank fails. */
static inline int mt_finish(void) {
  fflush(stdout);
  MT_CHECK(MPI_Finalize());
  return mt_failures == 0 ? 0 : 1;
}

#endif /* ONESIDED_TESTS_MPI_MPITEST_H */
