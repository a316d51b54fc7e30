/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Info (create, set, get, get_valuelen, delete, dup, free, get_nkeys, get_nthkey), window
 * hints through MPI_Win_allocate / MPI_Win_create / MPI_Win_set_info / MPI_Win_get_info
 * (no_locks refuses locks; a false same_size promise fails the creation on every rank), window
 * names, and bad input under MPI_ERRORS_RETURN: each gets its class. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

static int has_value(MPI_Info info, const char* key, const char* want) {
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MT_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
  return flag && strcmp(value, want) == 0;
}

static void info_basics(void) {
  MPI_Info info;
  MT_CHECK(MPI_Info_create(&info));
  int nkeys = -1;
  MT_CHECK(MPI_Info_get_nkeys(info, &nkeys));
  MT_EXPECT(nkeys == 0, "new info has %d keys", nkeys);
  MT_CHECK(MPI_Info_set(info, "beta", "2"));
  MT_CHECK(MPI_Info_set(info, "alpha", "one"));
  MT_CHECK(MPI_Info_set(info, "gamma", "three-three"));
  MT_CHECK(MPI_Info_set(info, "beta", "twenty"));  // replaces, keeps its place
  MT_CHECK(MPI_Info_get_nkeys(info, &nkeys));
  MT_EXPECT(nkeys == 3, "%d keys", nkeys);
  const char* order[] = {"beta", "alpha", "gamma"};
  for (int i = 0; i < 3; ++i) {
    char key[MPI_MAX_INFO_KEY];
    MT_CHECK(MPI_Info_get_nthkey(info, i, key));
    MT_EXPECT(strcmp(key, order[i]) == 0, "key %d is %s, expected %s", i, key, order[i]);
  }
  MT_EXPECT(has_value(info, "beta", "twenty"), "beta");
  int flag = 1;
  int len = -1;
  MT_CHECK(MPI_Info_get_valuelen(info, "gamma", &len, &flag));
  MT_EXPECT(flag == 1 && len == 11, "valuelen of gamma %d flag %d", len, flag);
  MT_CHECK(MPI_Info_get_valuelen(info, "delta", &len, &flag));
  MT_EXPECT(flag == 0, "valuelen of a missing key: flag %d", flag);
  char small[6];
  memset(small, 'x', sizeof small);
  MT_CHECK(MPI_Info_get(info, "gamma", 5, small, &flag));
  MT_EXPECT(flag == 1 && strcmp(small, "three") == 0, "truncated value '%s'", small);
  MT_CHECK(MPI_Info_get(info, "delta", 5, small, &flag));
  MT_EXPECT(flag == 0, "get of a missing key: flag %d", flag);

  MPI_Info copy;
  MT_CHECK(MPI_Info_dup(info, &copy));
  MT_CHECK(MPI_Info_delete(info, "alpha"));
  MT_CHECK(MPI_Info_get_nkeys(info, &nkeys));
  MT_EXPECT(nkeys == 2, "%d keys after delete", nkeys);
  MT_CHECK(MPI_Info_get_nkeys(copy, &nkeys));
  MT_EXPECT(nkeys == 3, "the dup has %d keys", nkeys);
  MT_EXPECT(has_value(copy, "alpha", "one"), "the dup keeps alpha");
  MT_CHECK(MPI_Info_free(&copy));
  MT_EXPECT(copy == MPI_INFO_NULL, "free sets MPI_INFO_NULL");
  MT_CHECK(MPI_Info_free(&info));
  if (mt_rank == 0) printf("info basics ok\n");
}

static void info_errors(void) {
  MPI_Info info;
  MT_CHECK(MPI_Info_create(&info));
  char long_key[MPI_MAX_INFO_KEY + 8];
  memset(long_key, 'k', sizeof long_key - 1);
  long_key[sizeof long_key - 1] = '\0';
  static char long_value[MPI_MAX_INFO_VAL + 8];
  memset(long_value, 'v', sizeof long_value - 1);
  long_value[sizeof long_value - 1] = '\0';
  char value[16];
  int flag = 0;
  mt_expect_class("set with an empty key", MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
#ifdef ONESIDED_MPI
  mt_expect_class("set with a NULL key", MPI_Info_set(info, NULL, "v"), MPI_ERR_INFO_KEY);
  mt_expect_class("set with a NULL value", MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE);
#endif
  mt_expect_class("set with a key too long", MPI_Info_set(info, long_key, "x"), MPI_ERR_INFO_KEY);
  mt_expect_class("set with a value too long", MPI_Info_set(info, "k", long_value),
                  MPI_ERR_INFO_VALUE);
  mt_expect_class("delete of a missing key", MPI_Info_delete(info, "nope"), MPI_ERR_INFO_NOKEY);
  mt_expect_class("nthkey past the end", MPI_Info_get_nthkey(info, 0, value), MPI_ERR_ARG);
  mt_expect_class("get with a negative valuelen", MPI_Info_get(info, "k", -1, value, &flag),
                  MPI_ERR_ARG);
  mt_expect_class("set on MPI_INFO_NULL", MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
  MPI_Info stale = info;
  MT_CHECK(MPI_Info_free(&info));
#ifdef ONESIDED_MPI
  mt_expect_class("set on a freed info", MPI_Info_set(stale, "k", "v"), MPI_ERR_INFO);
  mt_expect_class("get_nkeys of a garbage handle", MPI_Info_get_nkeys(12345, &flag), MPI_ERR_INFO);
  MPI_Win w = MPI_WIN_NULL;
  void* base = NULL;
  mt_expect_class("MPI_Win_allocate with a freed info",
                  MPI_Win_allocate(8, 1, stale, MPI_COMM_WORLD, &base, &w), MPI_ERR_INFO);
#else
  (void)stale;
#endif
}

static void window_hints(void) {
  MPI_Info info;
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "no_locks", "true"));
  MT_CHECK(MPI_Info_set(info, "same_size", "true"));
  MT_CHECK(MPI_Info_set(info, "same_disp_unit", "true"));
  MT_CHECK(MPI_Info_set(info, "accumulate_ops", "same_op"));
  MT_CHECK(MPI_Info_set(info, "accumulate_ordering", "none"));
  MT_CHECK(MPI_Info_set(info, "someone_elses_hint", "whatever"));
  MPI_Win win;
  int* base = NULL;
  MT_CHECK(MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win));
  MT_CHECK(MPI_Info_free(&info));
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
#ifdef ONESIDED_MPI
  MPI_Info used;
  MT_CHECK(MPI_Win_get_info(win, &used));
  MT_EXPECT(has_value(used, "no_locks", "true"), "no_locks in effect");
  MT_EXPECT(has_value(used, "same_size", "true"), "same_size in effect");
  MT_EXPECT(has_value(used, "accumulate_ops", "same_op"), "accumulate_ops in effect");
  MT_EXPECT(has_value(used, "accumulate_ordering", "none"), "accumulate_ordering in effect");
  MT_CHECK(MPI_Info_free(&used));
  mt_expect_class("MPI_Win_lock on a no_locks window", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win),
                  MPI_ERR_RMA_SYNC);
  mt_expect_class("MPI_Win_lock_all on a no_locks window", MPI_Win_lock_all(0, win),
                  MPI_ERR_RMA_SYNC);
#endif
  // Fence epochs are untouched by no_locks.
  MT_CHECK(MPI_Win_fence(0, win));
  const int v = 100 + mt_rank;
  MT_CHECK(MPI_Put(&v, 1, MPI_INT, (mt_rank + 1) % mt_size, 0, 1, MPI_INT, win));
  MT_CHECK(MPI_Win_fence(0, win));
  const int from = (mt_rank + mt_size - 1) % mt_size;
  MT_EXPECT(base[0] == 100 + from, "fence put %d", base[0]);

  // Taking the promise back: locks work again.
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "no_locks", "false"));
  MT_CHECK(MPI_Win_set_info(win, info));
  MT_CHECK(MPI_Info_free(&info));
  MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, from, 0, win));
  int got = -1;
  MT_CHECK(MPI_Get(&got, 1, MPI_INT, from, 0, 1, MPI_INT, win));
  MT_CHECK(MPI_Win_unlock(from, win));
  MT_EXPECT(got == 100 + (from + mt_size - 1) % mt_size, "get under lock %d", got);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  // Names.
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MT_CHECK(MPI_Win_get_name(win, name, &len));
  MT_EXPECT(len == 0 && name[0] == '\0', "default name '%s'", name);
  MT_CHECK(MPI_Win_set_name(win, "halo window"));
  MT_CHECK(MPI_Win_get_name(win, name, &len));
  MT_EXPECT(len == 11 && strcmp(name, "halo window") == 0, "name '%s' (%d)", name, len);
  MT_CHECK(MPI_Win_free(&win));
  if (mt_rank == 0) printf("window hints and names ok\n");

#ifdef ONESIDED_MPI
  // Bad values of known keys fail the creation on every rank; a false same_size promise too.
  int buf[4];
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "no_locks", "maybe"));
  mt_expect_class("no_locks=maybe", MPI_Win_create(buf, sizeof buf, 1, info, MPI_COMM_WORLD, &win),
                  MPI_ERR_INFO_VALUE);
  MT_CHECK(MPI_Info_set(info, "no_locks", "false"));
  MT_CHECK(MPI_Info_set(info, "accumulate_ordering", "rar,raw,rar"));
  mt_expect_class("accumulate_ordering=rar,raw,rar",
                  MPI_Win_create(buf, sizeof buf, 1, info, MPI_COMM_WORLD, &win),
                  MPI_ERR_INFO_VALUE);
  MT_CHECK(MPI_Info_delete(info, "accumulate_ordering"));
  MT_CHECK(MPI_Info_set(info, "same_size", "true"));
  if (mt_size > 1) {
    mt_expect_class("same_size=true with different sizes",
                    MPI_Win_allocate(8 * (mt_rank + 1), 1, info, MPI_COMM_WORLD, &base, &win),
                    MPI_ERR_INFO_VALUE);
  }
  MT_CHECK(MPI_Win_create(buf, sizeof buf, 1, info, MPI_COMM_WORLD, &win));
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Info_free(&info));
  // MPI_Alloc_mem takes any info.
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
  void* mem = NULL;
  MT_CHECK(MPI_Alloc_mem(64, info, &mem));
  MT_CHECK(MPI_Free_mem(mem));
  MT_CHECK(MPI_Info_free(&info));
  mt_expect_class("MPI_Win_set_name with NULL", MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN);
#endif
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  info_basics();
  info_errors();
  window_hints();
  return mt_finish();
}
