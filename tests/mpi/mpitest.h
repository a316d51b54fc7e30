/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by the MPI test programs in tests/mpi/. Plain C11 against <mpi.h> only,
 * so every program also builds with another MPI (tests/mpi/compare_openmpi.sh). */
#ifndef ONESIDED_TESTS_MPI_MPITEST_H
#define ONESIDED_TESTS_MPI_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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
