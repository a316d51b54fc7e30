/* SPDX-License-Identifier: BSD-3-Clause */
/* Attribute caching (MPI-3.1 §6.7) on communicators, windows and datatypes:
 *  - the predefined keys (MPI_TAG_UB through MPI_Comm_get_attr and MPI_Attr_get, MPI_WIN_BASE);
 *  - keyvals with user callbacks and the predefined ones (*_NULL_COPY_FN, *_DUP_FN,
 *    *_NULL_DELETE_FN): set, get, overwrite (the old value's delete callback), delete;
 *  - MPI_Comm_dup and MPI_Type_dup run the copy callbacks (one declines: flag 0, not copied),
 *    MPI_Comm_free, MPI_Win_free and MPI_Type_free the delete callbacks, with extra_state;
 *  - a keyval freed while attributes use it: its handle becomes MPI_KEYVAL_INVALID, its
 *    callbacks still run when those attributes go;
 *  - a callback's error fails the call (MPI_Comm_dup, MPI_Comm_delete_attr);
 *  - MPI-1's names (MPI_Keyval_create, MPI_Attr_put / get / delete, MPI_Keyval_free);
 *  - errors under MPI_ERRORS_RETURN: invalid and wrong-kind keyvals, predefined keys set or
 *    deleted (MPI_ERR_KEYVAL), NULL outputs (MPI_ERR_ARG), MPI_COMM_NULL (MPI_ERR_COMM);
 *  - attributes on MPI_COMM_SELF are deleted at the start of MPI_Finalize, last set first, with
 *    MPI still usable; main checks after MPI_Finalize that all of them were. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* What the callbacks saw. */
enum { kMaxEvents = 64 };
struct event {
  char what; /* 'c' copy, 'd' delete */
  int keyval;
  void* value;
};
static struct event events[kMaxEvents];
static int nevents = 0;
static int extra_a = 11, extra_b = 22; /* extra_state values */
static int bad_extra = 0;              /* callbacks that got the wrong extra_state */
static int fail_delete = 0;            /* the delete callback fails while set */

static void record(char what, int keyval, void* value) {
  if (nevents < kMaxEvents) {
    events[nevents].what = what;
    events[nevents].keyval = keyval;
    events[nevents].value = value;
  }
  ++nevents;
}

static int find_event(char what, int keyval, void* value) {
  for (int i = 0; i < nevents && i < kMaxEvents; ++i) {
    if (events[i].what == what && events[i].keyval == keyval && events[i].value == value) return i;
  }
  return -1;
}

static int find_value(char what, void* value) {
  for (int i = 0; i < nevents && i < kMaxEvents; ++i) {
    if (events[i].what == what && events[i].value == value) return i;
  }
  return -1;
}

/* A keyval error: MPI_ERR_KEYVAL (Open MPI returns MPI_ERR_OTHER for most of them). */
static void expect_keyval_error(const char* what, int rc) {
#ifdef ONESIDED_MPI
  mt_expect_class(what, rc, MPI_ERR_KEYVAL);
#else
  MT_EXPECT(rc != MPI_SUCCESS, "%s succeeded", what);
#endif
}

/* The values cached: addresses of these. */
static int v1, v1b, v1copy, v2, v3, v4;

/* Copies by giving &v1copy. */
static int copy_to_v1copy(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out,
                          int* flag) {
  (void)oldcomm;
  if (extra != &extra_a) ++bad_extra;
  record('c', keyval, in);
  *(void**)out = &v1copy;
  *flag = 1;
  return MPI_SUCCESS;
}

/* Declines: the new communicator gets no attribute. */
static int copy_decline(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm;
  (void)extra;
  (void)out;
  record('c', keyval, in);
  *flag = 0;
  return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm oldcomm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)oldcomm;
  (void)keyval;
  (void)extra;
  (void)in;
  (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}

static int delete_record(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm;
  if (extra != &extra_a && extra != &extra_b) ++bad_extra;
  if (fail_delete) return MPI_ERR_OTHER;
  record('d', keyval, value);
  return MPI_SUCCESS;
}

static int win_delete_record(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win;
  if (extra != &extra_b) ++bad_extra;
  record('d', keyval, value);
  return MPI_SUCCESS;
}

static int type_copy_to_v1copy(MPI_Datatype t, int keyval, void* extra, void* in, void* out,
                               int* flag) {
  (void)t;
  if (extra != &extra_a) ++bad_extra;
  record('c', keyval, in);
  *(void**)out = &v1copy;
  *flag = 1;
  return MPI_SUCCESS;
}

static int type_delete_record(MPI_Datatype t, int keyval, void* value, void* extra) {
  (void)t;
  if (extra != &extra_a) ++bad_extra;
  record('d', keyval, value);
  return MPI_SUCCESS;
}

/* Reads keyval on comm: its value, or NULL when flag is 0. */
static void* get_comm(MPI_Comm comm, int keyval) {
  void* v = NULL;
  int flag = -1;
  MT_CHECK(MPI_Comm_get_attr(comm, keyval, &v, &flag));
  MT_EXPECT(flag == 0 || flag == 1, "flag %d", flag);
  return flag ? v : NULL;
}

static void predefined(void) {
  int* tag_ub = NULL;
  int flag = 0;
  MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  MT_EXPECT(flag == 1 && tag_ub != NULL && *tag_ub >= 32767, "MPI_TAG_UB");
  tag_ub = NULL;
  flag = 0;
  MT_CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  MT_EXPECT(flag == 1 && tag_ub != NULL && *tag_ub >= 32767, "MPI_TAG_UB by MPI_Attr_get");
  int* wtime_global = NULL;
  MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag));
  MT_EXPECT(flag == 0 || (wtime_global != NULL && (*wtime_global == 0 || *wtime_global == 1)),
            "MPI_WTIME_IS_GLOBAL");
  printf("rank %d: predefined keys ok\n", mt_rank);
}

static void comm_keyvals(void) {
  int k1, k2, k3, k4;
  MT_CHECK(MPI_Comm_create_keyval(copy_to_v1copy, delete_record, &k1, &extra_a));
  MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
  MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_record, &k3, &extra_b));
  MT_CHECK(MPI_Comm_create_keyval(copy_decline, delete_record, &k4, &extra_b));
  MT_EXPECT(k1 != k2 && k2 != k3 && k3 != k4 && k1 != MPI_KEYVAL_INVALID, "distinct keyvals");

  MPI_Comm src, dst;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &src));
  MT_EXPECT(get_comm(src, k1) == NULL, "nothing cached yet");
  /* Set in an order other than the keyvals': k4, k3, k2, k1. */
  MT_CHECK(MPI_Comm_set_attr(src, k4, &v4));
  MT_CHECK(MPI_Comm_set_attr(src, k3, &v3));
  MT_CHECK(MPI_Comm_set_attr(src, k2, &v2));
  MT_CHECK(MPI_Comm_set_attr(src, k1, &v1));
  MT_EXPECT(get_comm(src, k1) == &v1 && get_comm(src, k2) == &v2 && get_comm(src, k3) == &v3 &&
                get_comm(src, k4) == &v4,
            "values read back");
  MT_EXPECT(get_comm(MPI_COMM_WORLD, k1) == NULL, "attributes are per communicator");
  MT_EXPECT(nevents == 0, "no callback yet (%d)", nevents);

  /* Dup: k1 copies to &v1copy, k2 copies nothing, k3 copies the value, k4 declines. */
  MT_CHECK(MPI_Comm_dup(src, &dst));
  MT_EXPECT(nevents == 2 && find_event('c', k1, &v1) >= 0 && find_event('c', k4, &v4) >= 0,
            "copy callbacks of k1 and k4 ran (%d events)", nevents);
#ifdef ONESIDED_MPI
  /* onesided runs them in the order the keyvals were created. */
  MT_EXPECT(find_event('c', k1, &v1) < find_event('c', k4, &v4), "copy order");
#endif
  MT_EXPECT(get_comm(dst, k1) == &v1copy, "k1 copied by its callback");
  MT_EXPECT(get_comm(dst, k2) == NULL, "k2 (MPI_COMM_NULL_COPY_FN) not copied");
  MT_EXPECT(get_comm(dst, k3) == &v3, "k3 (MPI_COMM_DUP_FN) copied");
  MT_EXPECT(get_comm(dst, k4) == NULL, "k4 declined");
  MT_EXPECT(get_comm(src, k1) == &v1, "the original is unchanged");

  /* Overwrite: the old value's delete callback. */
  nevents = 0;
  MT_CHECK(MPI_Comm_set_attr(src, k1, &v1b));
  MT_EXPECT(nevents == 1 && find_event('d', k1, &v1) == 0, "overwrite deletes the old value");
  MT_EXPECT(get_comm(src, k1) == &v1b, "new value");

  /* Delete. */
  nevents = 0;
  MT_CHECK(MPI_Comm_delete_attr(src, k3));
  MT_EXPECT(nevents == 1 && find_event('d', k3, &v3) == 0, "delete_attr runs the callback");
  MT_EXPECT(get_comm(src, k3) == NULL, "deleted");
  MT_EXPECT(get_comm(dst, k3) == &v3, "the copy stays");

  /* Free: k1 (&v1b) and k4 (&v4) deleted by the callback, k2 by MPI_COMM_NULL_DELETE_FN. */
  nevents = 0;
  MT_CHECK(MPI_Comm_free(&src));
  MT_EXPECT(src == MPI_COMM_NULL, "freed");
  MT_EXPECT(nevents == 2 && find_event('d', k1, &v1b) >= 0 && find_event('d', k4, &v4) >= 0,
            "free deletes the attributes (%d events)", nevents);

  /* A keyval freed while dst uses it: the handle goes, the callback still runs. */
  MT_CHECK(MPI_Comm_free_keyval(&k1));
  MT_EXPECT(k1 == MPI_KEYVAL_INVALID, "freed keyval is MPI_KEYVAL_INVALID");
  MT_CHECK(MPI_Comm_free_keyval(&k3));
  nevents = 0;
  MT_CHECK(MPI_Comm_free(&dst));
  MT_EXPECT(nevents == 2 && find_value('d', &v1copy) >= 0 && find_value('d', &v3) >= 0,
            "delete callbacks of freed keyvals ran (%d events)", nevents);
  MT_CHECK(MPI_Comm_free_keyval(&k2));
  MT_CHECK(MPI_Comm_free_keyval(&k4));
  MT_EXPECT(k2 == MPI_KEYVAL_INVALID && k4 == MPI_KEYVAL_INVALID, "freed");
  MT_EXPECT(bad_extra == 0, "extra_state passed (%d wrong)", bad_extra);
  printf("rank %d: communicator keyvals ok\n", mt_rank);
}

static void mpi1_names(void) {
  int kdup, knull;
  MT_CHECK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kdup, NULL));
  MT_CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, delete_record, &knull, &extra_a));
  MPI_Comm c, d;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MT_CHECK(MPI_Attr_put(c, kdup, &v2));
  MT_CHECK(MPI_Attr_put(c, knull, &v3));
  void* v = NULL;
  int flag = 0;
  MT_CHECK(MPI_Attr_get(c, kdup, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v2, "MPI_Attr_get");
  MT_CHECK(MPI_Comm_dup(c, &d));
  MT_EXPECT(get_comm(d, kdup) == &v2 && get_comm(d, knull) == NULL, "MPI_DUP_FN / NULL_COPY_FN");
  nevents = 0;
  MT_CHECK(MPI_Attr_delete(c, knull));
  MT_EXPECT(nevents == 1 && find_event('d', knull, &v3) == 0, "MPI_Attr_delete");
  MT_CHECK(MPI_Attr_get(c, knull, &v, &flag));
  MT_EXPECT(flag == 0, "deleted");
  MT_CHECK(MPI_Comm_free(&d));
  MT_CHECK(MPI_Comm_free(&c));
  MT_CHECK(MPI_Keyval_free(&kdup));
  MT_CHECK(MPI_Keyval_free(&knull));
  MT_EXPECT(kdup == MPI_KEYVAL_INVALID && knull == MPI_KEYVAL_INVALID, "MPI_Keyval_free");
  printf("rank %d: MPI-1 names ok\n", mt_rank);
}

static void callback_errors(void) {
  int kfail, kdel;
  MT_CHECK(MPI_Comm_create_keyval(copy_fail, MPI_COMM_NULL_DELETE_FN, &kfail, NULL));
  MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_record, &kdel, &extra_a));
  MPI_Comm c, d = MPI_COMM_WORLD;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MT_CHECK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Comm_set_attr(c, kfail, &v1));
  mt_expect_class("MPI_Comm_dup with a failing copy callback", MPI_Comm_dup(c, &d), MPI_ERR_OTHER);
  MT_CHECK(MPI_Comm_delete_attr(c, kfail));

  MT_CHECK(MPI_Comm_set_attr(c, kdel, &v2));
  fail_delete = 1;
  mt_expect_class("MPI_Comm_delete_attr with a failing delete callback",
                  MPI_Comm_delete_attr(c, kdel), MPI_ERR_OTHER);
  fail_delete = 0;
  MT_CHECK(MPI_Comm_set_attr(c, kdel, &v3)); /* whether it stayed or not, set it again */
  nevents = 0;
  MT_CHECK(MPI_Comm_free(&c));
  MT_EXPECT(find_event('d', kdel, &v3) >= 0, "deleted at free");
  MT_CHECK(MPI_Comm_free_keyval(&kfail));
  MT_CHECK(MPI_Comm_free_keyval(&kdel));
  printf("rank %d: callback errors ok\n", mt_rank);
}

static void bad_input(void) {
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int k, kw, kfreed;
  MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
  MT_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kw, NULL));
  MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kfreed, NULL));
  const int stale = kfreed;
  MT_CHECK(MPI_Comm_free_keyval(&kfreed));
  void* v = NULL;
  int flag = 0;

  mt_expect_class(
      "create_keyval with keyval NULL",
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL),
      MPI_ERR_ARG);
  mt_expect_class("get_attr with flag NULL", MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, NULL),
                  MPI_ERR_ARG);
  mt_expect_class("get_attr with attribute_val NULL",
                  MPI_Comm_get_attr(MPI_COMM_WORLD, k, NULL, &flag), MPI_ERR_ARG);
  mt_expect_class("set_attr on MPI_COMM_NULL", MPI_Comm_set_attr(MPI_COMM_NULL, k, &v1),
                  MPI_ERR_COMM);
  expect_keyval_error("set_attr with MPI_KEYVAL_INVALID",
                      MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v1));
  expect_keyval_error("get_attr with MPI_KEYVAL_INVALID",
                      MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag));
  expect_keyval_error("set_attr with a window keyval", MPI_Comm_set_attr(MPI_COMM_WORLD, kw, &v1));
  expect_keyval_error("set_attr of MPI_TAG_UB", MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v1));
  expect_keyval_error("delete_attr of MPI_TAG_UB",
                      MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
  expect_keyval_error("free_keyval of MPI_KEYVAL_INVALID", MPI_Comm_free_keyval(&kfreed));
  expect_keyval_error("Type_free_keyval of a communicator keyval", MPI_Type_free_keyval(&k));
  mt_expect_class("free_keyval with keyval NULL", MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);
#ifdef ONESIDED_MPI
  /* A freed handle (Open MPI reuses keyval numbers, so only here). */
  expect_keyval_error("set_attr with a freed keyval",
                      MPI_Comm_set_attr(MPI_COMM_WORLD, stale, &v1));
#else
  (void)stale;
#endif

  MPI_Win win;
  int* base = NULL;
  MT_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  expect_keyval_error("Win_set_attr with a communicator keyval", MPI_Win_set_attr(win, k, &v1));
#ifdef ONESIDED_MPI /* Open MPI answers flag 0 */
  expect_keyval_error("Win_get_attr with a communicator keyval",
                      MPI_Win_get_attr(win, k, &v, &flag));
#endif
  expect_keyval_error("Win_set_attr of MPI_WIN_BASE", MPI_Win_set_attr(win, MPI_WIN_BASE, &v1));
  expect_keyval_error("Win_delete_attr of MPI_WIN_SIZE", MPI_Win_delete_attr(win, MPI_WIN_SIZE));
  mt_expect_class("Win_get_attr with flag NULL", MPI_Win_get_attr(win, kw, &v, NULL), MPI_ERR_ARG);
  MT_CHECK(MPI_Win_free(&win));

  expect_keyval_error("Type_set_attr with a window keyval", MPI_Type_set_attr(MPI_INT, kw, &v1));
  mt_expect_class("Type_get_attr with flag NULL", MPI_Type_get_attr(MPI_INT, kw, &v, NULL),
                  MPI_ERR_ARG);

  MT_CHECK(MPI_Comm_free_keyval(&k));
  MT_CHECK(MPI_Win_free_keyval(&kw));
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  printf("rank %d: bad input ok\n", mt_rank);
}

static void win_keyvals(void) {
  int kw, kdup;
  MT_CHECK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete_record, &kw, &extra_b));
  MT_CHECK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &kdup, NULL));
  MPI_Win win;
  int* base = NULL;
  MT_CHECK(
      MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  void* v = NULL;
  int flag = -1;
  MT_CHECK(MPI_Win_get_attr(win, kw, &v, &flag));
  MT_EXPECT(flag == 0, "nothing cached on the window");
  MT_CHECK(MPI_Win_set_attr(win, kw, &v1));
  MT_CHECK(MPI_Win_set_attr(win, kdup, &v2));
  MT_CHECK(MPI_Win_get_attr(win, kw, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v1, "window attribute");
  void* got_base = NULL;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
  MT_EXPECT(flag == 1 && got_base == base, "MPI_WIN_BASE beside user keys");
  MPI_Aint* size = NULL;
  MT_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
  MT_EXPECT(flag == 1 && size != NULL && *size == 4 * (MPI_Aint)sizeof(int), "MPI_WIN_SIZE");
  nevents = 0;
  MT_CHECK(MPI_Win_set_attr(win, kw, &v1b));
  MT_EXPECT(nevents == 1 && find_event('d', kw, &v1) == 0, "window overwrite");
  MT_CHECK(MPI_Win_delete_attr(win, kw));
  MT_EXPECT(nevents == 2 && find_event('d', kw, &v1b) == 1, "window delete_attr");
  MT_CHECK(MPI_Win_get_attr(win, kw, &v, &flag));
  MT_EXPECT(flag == 0, "deleted");
  MT_CHECK(MPI_Win_set_attr(win, kw, &v3));
  MT_CHECK(MPI_Win_free_keyval(&kw)); /* still used by win */
  MT_EXPECT(kw == MPI_KEYVAL_INVALID, "freed");
  nevents = 0;
  MT_CHECK(MPI_Win_free(&win));
  MT_EXPECT(nevents == 1 && events[0].what == 'd' && events[0].value == &v3,
            "MPI_Win_free deletes (%d events)", nevents);
  MT_CHECK(MPI_Win_free_keyval(&kdup));
  MT_EXPECT(bad_extra == 0, "extra_state passed (%d wrong)", bad_extra);
  printf("rank %d: window keyvals ok\n", mt_rank);
}

static void type_keyvals(void) {
  int kt, knull, kdecl;
  MT_CHECK(MPI_Type_create_keyval(type_copy_to_v1copy, type_delete_record, &kt, &extra_a));
  MT_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &knull, NULL));
  MT_CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete_record, &kdecl, &extra_a));
  MPI_Datatype t, u;
  MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
  MT_CHECK(MPI_Type_commit(&t));
  MT_CHECK(MPI_Type_set_attr(t, kt, &v1));
  MT_CHECK(MPI_Type_set_attr(t, knull, &v2));
  MT_CHECK(MPI_Type_set_attr(t, kdecl, &v4));
  void* v = NULL;
  int flag = 0;
  MT_CHECK(MPI_Type_get_attr(t, kt, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v1, "type attribute");
  nevents = 0;
  MT_CHECK(MPI_Type_dup(t, &u));
  MT_EXPECT(nevents == 1 && find_event('c', kt, &v1) == 0, "MPI_Type_dup copies");
  MT_CHECK(MPI_Type_get_attr(u, kt, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v1copy, "copied by the callback");
  MT_CHECK(MPI_Type_get_attr(u, knull, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v2, "MPI_TYPE_DUP_FN");
  MT_CHECK(MPI_Type_get_attr(u, kdecl, &v, &flag));
  MT_EXPECT(flag == 0, "MPI_TYPE_NULL_COPY_FN");
  nevents = 0;
  MT_CHECK(MPI_Type_delete_attr(t, kt));
  MT_EXPECT(nevents == 1 && find_event('d', kt, &v1) == 0, "Type_delete_attr");
  nevents = 0;
  MT_CHECK(MPI_Type_free(&t));
#ifdef ONESIDED_MPI /* Open MPI deletes them when the dup, which holds the type, goes */
  MT_EXPECT(nevents == 1 && find_event('d', kdecl, &v4) == 0, "MPI_Type_free deletes");
#endif
  MT_CHECK(MPI_Type_free(&u));
  MT_EXPECT(nevents == 2 && find_event('d', kdecl, &v4) >= 0 && find_event('d', kt, &v1copy) >= 0,
            "MPI_Type_free deletes (%d events)", nevents);
  /* On a predefined datatype. */
  MT_CHECK(MPI_Type_set_attr(MPI_INT, kdecl, &v2));
  MT_CHECK(MPI_Type_get_attr(MPI_INT, kdecl, &v, &flag));
  MT_EXPECT(flag == 1 && v == &v2, "attribute on MPI_INT");
  nevents = 0;
  MT_CHECK(MPI_Type_delete_attr(MPI_INT, kdecl));
  MT_EXPECT(nevents == 1 && find_event('d', kdecl, &v2) == 0, "deleted from MPI_INT");
  MT_CHECK(MPI_Type_free_keyval(&kt));
  MT_CHECK(MPI_Type_free_keyval(&knull));
  MT_CHECK(MPI_Type_free_keyval(&kdecl));
  MT_EXPECT(kt == MPI_KEYVAL_INVALID, "freed");
  MT_EXPECT(bad_extra == 0, "extra_state passed (%d wrong)", bad_extra);
  printf("rank %d: datatype keyvals ok\n", mt_rank);
}

/* MPI_COMM_SELF's attributes at MPI_Finalize: values 1, 2, 3 set in that order, so deleted 3,
 * 2, 1, while MPI is still up. */
static int self_values[3] = {1, 2, 3};
static int self_deleted = 0;
static int self_order_bad = 0;

static int self_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval;
  (void)extra;
  int finalized = 1, rank = -1;
  MPI_Finalized(&finalized);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int want = 3 - self_deleted;
  if (comm != MPI_COMM_SELF || finalized || rank != mt_rank || *(int*)value != want) {
    fprintf(stderr,
            "rank %d: MPI_COMM_SELF delete callback: value %d, expected %d (finalized %d)\n",
            mt_rank, *(int*)value, want, finalized);
    ++self_order_bad;
  }
  ++self_deleted;
  return MPI_SUCCESS;
}

static void self_at_finalize(void) {
  int k[3];
  for (int i = 0; i < 3; ++i) {
    MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k[i], NULL));
  }
  /* Set 1, 2, 3 on keyvals created in another order; keyvals freed now, still used. */
  MT_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k[2], &self_values[0]));
  MT_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k[0], &self_values[1]));
  MT_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k[1], &self_values[2]));
  for (int i = 0; i < 3; ++i) MT_CHECK(MPI_Comm_free_keyval(&k[i]));
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  predefined();
  comm_keyvals();
  mpi1_names();
  callback_errors();
  bad_input();
  win_keyvals();
  type_keyvals();
  self_at_finalize();
  const int rc = mt_finish();
  if (self_deleted != 3 || self_order_bad != 0) {
    fprintf(stderr,
            "rank %d: %d MPI_COMM_SELF attributes deleted at MPI_Finalize (expected 3), %d "
            "out of order\n",
            mt_rank, self_deleted, self_order_bad);
    return 1;
  }
  printf("rank %d: MPI_COMM_SELF attributes deleted at MPI_Finalize, last set first\n", mt_rank);
  return rc;
}
