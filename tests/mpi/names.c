/* SPDX-License-Identifier: BSD-3-Clause */
/* Object names (MPI-3.1 §6.8) of communicators, datatypes and windows: the defaults
 * (MPI_COMM_WORLD, MPI_COMM_SELF, predefined types by their names, empty otherwise), set and
 * got, truncated to MPI_MAX_OBJECT_NAME - 1 characters, not copied by a dup, and bad input. */
#include "mpitest.h"

static void expect_name(const char* what, const char* got, int len, const char* want) {
  MT_EXPECT(strcmp(got, want) == 0 && len == (int)strlen(want), "%s: \"%s\" (%d), expected \"%s\"",
            what, got, len, want);
}

static void comm_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MT_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  expect_name("MPI_COMM_WORLD's default", name, len, "MPI_COMM_WORLD");
  MT_CHECK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  expect_name("MPI_COMM_SELF's default", name, len, "MPI_COMM_SELF");

  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MT_CHECK(MPI_Comm_get_name(dup, name, &len));
  expect_name("a dup of MPI_COMM_WORLD", name, len, "");
  MT_CHECK(MPI_Comm_set_name(dup, "solver"));
  MT_CHECK(MPI_Comm_get_name(dup, name, &len));
  expect_name("a named communicator", name, len, "solver");
  MPI_Comm dup2;
  MT_CHECK(MPI_Comm_dup(dup, &dup2));
  MT_CHECK(MPI_Comm_get_name(dup2, name, &len));
  expect_name("a dup of a named communicator", name, len, "");
  MT_CHECK(MPI_Comm_free(&dup2));
  MT_CHECK(MPI_Comm_set_name(dup, ""));
  MT_CHECK(MPI_Comm_get_name(dup, name, &len));
  expect_name("renamed to empty", name, len, "");

  /* A name longer than MPI_MAX_OBJECT_NAME - 1 is truncated. */
  char long_name[MPI_MAX_OBJECT_NAME + 40];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  MT_CHECK(MPI_Comm_set_name(dup, long_name));
  MT_CHECK(MPI_Comm_get_name(dup, name, &len));
  MT_EXPECT(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len,
            "a long name truncated to %d characters: %d", MPI_MAX_OBJECT_NAME - 1, len);

  /* MPI_COMM_WORLD renamed, then back. */
  MT_CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "world"));
  MT_CHECK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  expect_name("MPI_COMM_WORLD renamed", name, len, "world");
  MT_CHECK(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"));

  mt_expect_class("MPI_Comm_set_name NULL", MPI_Comm_set_name(dup, NULL), MPI_ERR_ARG);
  mt_expect_class("MPI_Comm_get_name NULL name", MPI_Comm_get_name(dup, NULL, &len), MPI_ERR_ARG);
  mt_expect_class("MPI_Comm_get_name NULL resultlen", MPI_Comm_get_name(dup, name, NULL),
                  MPI_ERR_ARG);
  mt_expect_class("MPI_Comm_set_name MPI_COMM_NULL", MPI_Comm_set_name(MPI_COMM_NULL, "x"),
                  MPI_ERR_COMM);
  mt_expect_class("MPI_Comm_get_name MPI_COMM_NULL", MPI_Comm_get_name(MPI_COMM_NULL, name, &len),
                  MPI_ERR_COMM);
  MT_CHECK(MPI_Comm_free(&dup));
}

static void type_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MT_CHECK(MPI_Type_get_name(MPI_INT, name, &len));
  expect_name("MPI_INT's default", name, len, "MPI_INT");
  MPI_Datatype t, d;
  MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
  MT_CHECK(MPI_Type_get_name(t, name, &len));
  expect_name("a derived type's default", name, len, "");
  MT_CHECK(MPI_Type_set_name(t, "pair"));
  MT_CHECK(MPI_Type_get_name(t, name, &len));
  expect_name("a named type", name, len, "pair");
  MT_CHECK(MPI_Type_dup(t, &d));
#if defined(ONESIDED_MPI)
  /* MPI-3.1 §4.1.10: a dup's name is not copied (Open MPI 4.1 names it "Dup pair"). */
  MT_CHECK(MPI_Type_get_name(d, name, &len));
  expect_name("a dup of a named type", name, len, "");
#endif
  char long_name[MPI_MAX_OBJECT_NAME + 40];
  memset(long_name, 'y', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  MT_CHECK(MPI_Type_set_name(d, long_name));
  MT_CHECK(MPI_Type_get_name(d, name, &len));
  MT_EXPECT(len == MPI_MAX_OBJECT_NAME - 1, "a long type name truncated: %d", len);
  mt_expect_class("MPI_Type_set_name NULL", MPI_Type_set_name(t, NULL), MPI_ERR_ARG);
  mt_expect_class("MPI_Type_get_name NULL", MPI_Type_get_name(t, NULL, &len), MPI_ERR_ARG);
  mt_expect_class("MPI_Type_set_name MPI_DATATYPE_NULL", MPI_Type_set_name(MPI_DATATYPE_NULL, "x"),
                  MPI_ERR_TYPE);
  MT_CHECK(MPI_Type_free(&d));
  MT_CHECK(MPI_Type_free(&t));
}

static void win_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  int* base = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
#if defined(ONESIDED_MPI)
  /* MPI-3.1 §6.8: empty until named (Open MPI 4.1 names windows "rdma window N"). */
  MT_CHECK(MPI_Win_get_name(win, name, &len));
  expect_name("a window's default", name, len, "");
#endif
  MT_CHECK(MPI_Win_set_name(win, "halo"));
  MT_CHECK(MPI_Win_get_name(win, name, &len));
  expect_name("a named window", name, len, "halo");
  char long_name[MPI_MAX_OBJECT_NAME + 40];
  memset(long_name, 'z', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  MT_CHECK(MPI_Win_set_name(win, long_name));
  MT_CHECK(MPI_Win_get_name(win, name, &len));
  MT_EXPECT(len == MPI_MAX_OBJECT_NAME - 1, "a long window name truncated: %d", len);
  mt_expect_class("MPI_Win_set_name NULL", MPI_Win_set_name(win, NULL), MPI_ERR_ARG);
  mt_expect_class("MPI_Win_get_name NULL", MPI_Win_get_name(win, NULL, &len), MPI_ERR_ARG);
  mt_expect_class("MPI_Win_set_name MPI_WIN_NULL", MPI_Win_set_name(MPI_WIN_NULL, "x"),
                  MPI_ERR_WIN);
  MT_CHECK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  comm_names();
  type_names();
  win_names();
  if (mt_rank == 0) printf("names: %s\n", mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
