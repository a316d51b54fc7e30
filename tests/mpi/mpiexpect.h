/* SPDX-License-Identifier: BSD-3-Clause */
/* The bad-input programs' checks (bad_input.c, p2p_bad.c): each prints one line, "ok" or
 * "FAIL", naming the check, the class expected and got, and the call's error text. Include after
 * mpitest.h. */
#ifndef ONESIDED_TESTS_MPI_MPIEXPECT_H
#define ONESIDED_TESTS_MPI_MPIEXPECT_H

#include <stdio.h>

#include "mpitest.h"

static inline const char* class_name(int c) {
  static const struct {
    int cls;
    const char* name;
  } kNames[] = {
      {MPI_SUCCESS, "MPI_SUCCESS"},
      {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
      {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
      {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
      {MPI_ERR_COMM, "MPI_ERR_COMM"},
      {MPI_ERR_RANK, "MPI_ERR_RANK"},
      {MPI_ERR_ARG, "MPI_ERR_ARG"},
      {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN"},
      {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
      {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
      {MPI_ERR_INFO, "MPI_ERR_INFO"},
      {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
      {MPI_ERR_WIN, "MPI_ERR_WIN"},
      {MPI_ERR_BASE, "MPI_ERR_BASE"},
      {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL"},
      {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT"},
      {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC"},
      {MPI_ERR_SIZE, "MPI_ERR_SIZE"},
      {MPI_ERR_DISP, "MPI_ERR_DISP"},
      {MPI_ERR_ASSERT, "MPI_ERR_ASSERT"},
      {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE"},
      {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR"},
      {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
      {MPI_ERR_TAG, "MPI_ERR_TAG"},
      {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
      {MPI_ERR_ROOT, "MPI_ERR_ROOT"},
      {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
      {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"},
      {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY"},
      {MPI_ERR_DIMS, "MPI_ERR_DIMS"},
  };
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    if (kNames[i].cls == c) return kNames[i].name;
  }
  return "(unnamed class)";
}

/* One check: rc must be of class want. */
static inline void expect(const char* what, int rc, int want) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS && MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) {
    snprintf(msg, sizeof msg, "(MPI_Error_string failed)");
  }
  if (cls == want) {
    printf("rank %d: ok %s: %s (%s)\n", mt_rank, what, class_name(want), msg);
  } else {
    printf("rank %d: FAIL %s: expected %s, got %s (code %d, class %d: %s)\n", mt_rank, what,
           class_name(want), class_name(cls), rc, cls, msg);
    ++mt_failures;
  }
}

/* A condition that is not an error class (memory left untouched, a handle unchanged...). */
static inline void expect_true(const char* what, int cond) {
  if (cond) {
    printf("rank %d: ok %s\n", mt_rank, what);
  } else {
    printf("rank %d: FAIL %s\n", mt_rank, what);
    ++mt_failures;
  }
}

/* A check this MPI cannot make, and why. */
static inline void skip(const char* what, const char* why) {
  printf("rank %d: skip %s: %s\n", mt_rank, what, why);
}

#endif
