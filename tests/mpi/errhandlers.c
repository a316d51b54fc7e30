/* SPDX-License-Identifier: BSD-3-Clause */
/* Error handlers (MPI-3.1 §8.3) and the program's own error classes, codes and strings (§8.5):
 * a user handler on a communicator and on a window is called with the object's handle and the
 * failing call's code, and the call returns that code; MPI_*_call_errhandler calls it and returns
 * MPI_SUCCESS; a freed handler still set on an object stays alive; a dup inherits the handler;
 * comm and window handlers do not mix; the MPI-1 names; added classes / codes / strings and the
 * MPI_LASTUSEDCODE attribute; bad input. */
/* Open MPI declares MPI-1's removed names only when asked to (its 4.1 still ships them). */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include "mpitest.h"

static int comm_calls = 0;
static MPI_Comm comm_seen = MPI_COMM_NULL;
static int comm_code = MPI_SUCCESS;
static int win_calls = 0;
static MPI_Win win_seen = MPI_WIN_NULL;
static int win_code = MPI_SUCCESS;

static void comm_handler(MPI_Comm* comm, int* code, ...) {
  ++comm_calls;
  comm_seen = *comm;
  comm_code = *code;
}

static void win_handler(MPI_Win* win, int* code, ...) {
  ++win_calls;
  win_seen = *win;
  win_code = *code;
}

static int class_of(int code) {
  int c = -1;
  if (MPI_Error_class(code, &c) != MPI_SUCCESS) return -1;
  return c;
}

static void comm_handlers(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MT_CHECK(MPI_Comm_create_errhandler(comm_handler, &eh));
  MT_EXPECT(eh != MPI_ERRHANDLER_NULL, "a new handler is not MPI_ERRHANDLER_NULL");
  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MT_CHECK(MPI_Comm_set_errhandler(dup, eh));

  /* An error on the communicator: the handler sees the communicator and the code returned. */
  int rank = 0;
  int rc = MPI_Send(&rank, 1, MPI_INT, mt_size + 5, 0, dup);
  MT_EXPECT(rc != MPI_SUCCESS, "a send to rank %d fails", mt_size + 5);
  MT_EXPECT(class_of(rc) == MPI_ERR_RANK, "class %d, expected MPI_ERR_RANK", class_of(rc));
  MT_EXPECT(comm_calls == 1, "handler called %d times, expected 1", comm_calls);
  MT_EXPECT(comm_seen == dup, "handler got the communicator");
  MT_EXPECT(comm_code == rc, "handler got code %d, the call returned %d", comm_code, rc);

  /* MPI_Comm_call_errhandler: any code, as is; MPI_SUCCESS once the handler returns. */
  rc = MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  MT_EXPECT(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler returned %d", rc);
  MT_EXPECT(comm_calls == 2 && comm_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d",
            comm_calls, comm_code);

  /* Get returns the handler (a new reference, freed here). */
  MPI_Errhandler got = MPI_ERRHANDLER_NULL;
  MT_CHECK(MPI_Comm_get_errhandler(dup, &got));
  MT_EXPECT(got == eh, "MPI_Comm_get_errhandler gave the handler set");
  MT_CHECK(MPI_Errhandler_free(&got));
  MT_EXPECT(got == MPI_ERRHANDLER_NULL, "a freed handle is MPI_ERRHANDLER_NULL");

  /* Freed while set: it stays alive, and a dup inherits it. */
  MT_CHECK(MPI_Errhandler_free(&eh));
  MPI_Comm dup2;
  MT_CHECK(MPI_Comm_dup(dup, &dup2));
  rc = MPI_Comm_call_errhandler(dup2, MPI_ERR_ARG);
  MT_EXPECT(rc == MPI_SUCCESS && comm_calls == 3 && comm_seen == dup2 && comm_code == MPI_ERR_ARG,
            "the freed handler, inherited by a dup: rc %d, %d calls, code %d", rc, comm_calls,
            comm_code);
  MT_CHECK(MPI_Comm_free(&dup2));
  rc = MPI_Barrier(MPI_COMM_NULL); /* raised on MPI_COMM_WORLD, not on dup */
  MT_EXPECT(comm_calls == 3, "an error on MPI_COMM_NULL does not reach dup's handler");
  MT_CHECK(MPI_Comm_free(&dup));

  /* The MPI-1 names. */
  MPI_Errhandler old = MPI_ERRHANDLER_NULL;
  MT_CHECK(MPI_Errhandler_create(comm_handler, &eh));
  MT_CHECK(MPI_Errhandler_get(MPI_COMM_WORLD, &old));
  MT_EXPECT(old == MPI_ERRORS_RETURN, "MPI_COMM_WORLD's handler is MPI_ERRORS_RETURN");
  MT_CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
  rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_COUNT);
  MT_EXPECT(rc == MPI_SUCCESS && comm_calls == 4 && comm_seen == MPI_COMM_WORLD,
            "MPI-1 handler on MPI_COMM_WORLD: rc %d, %d calls", rc, comm_calls);
  MT_CHECK(MPI_Errhandler_set(MPI_COMM_WORLD, old));
  MT_CHECK(MPI_Errhandler_free(&old)); /* the reference MPI_Errhandler_get handed out */
  MT_CHECK(MPI_Errhandler_free(&eh));
}

static void win_handlers(void) {
  int* base = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  MPI_Errhandler eh, ceh;
  MT_CHECK(MPI_Win_create_errhandler(win_handler, &eh));
  MT_CHECK(MPI_Comm_create_errhandler(comm_handler, &ceh));
  /* A communicator's handler on a window, and a window's on a communicator: MPI_ERR_ARG. */
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  mt_expect_class("comm handler on a window", MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG);
  mt_expect_class("window handler on a communicator", MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh),
                  MPI_ERR_ARG);
  MT_CHECK(MPI_Win_set_errhandler(win, eh));
  MT_CHECK(MPI_Errhandler_free(&eh)); /* in use: stays alive */

  int v = 1;
  MT_CHECK(MPI_Win_fence(0, win));
  int rc = MPI_Put(&v, 1, MPI_INT, mt_size + 5, 0, 1, MPI_INT, win);
  MT_CHECK(MPI_Win_fence(0, win));
  MT_EXPECT(rc != MPI_SUCCESS, "a put to rank %d fails", mt_size + 5);
  MT_EXPECT(class_of(rc) == MPI_ERR_RANK, "class %d, expected MPI_ERR_RANK", class_of(rc));
  MT_EXPECT(win_calls == 1 && win_seen == win && win_code == rc,
            "window handler: %d calls, code %d (returned %d)", win_calls, win_code, rc);
  rc = MPI_Win_call_errhandler(win, MPI_ERR_WIN);
  MT_EXPECT(rc == MPI_SUCCESS && win_calls == 2 && win_code == MPI_ERR_WIN,
            "MPI_Win_call_errhandler: rc %d, %d calls, code %d", rc, win_calls, win_code);
  MT_EXPECT(comm_calls == 4, "no communicator handler called for window errors");
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Errhandler_free(&ceh));
}

static void error_codes(void) {
  int* last = NULL;
  int flag = 0;
  MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  MT_EXPECT(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d >= MPI_ERR_LASTCODE",
            flag ? *last : -1);

  int cls = 0, code = 0, code2 = 0;
  MT_CHECK(MPI_Add_error_class(&cls));
  MT_EXPECT(cls > MPI_ERR_LASTCODE, "a new class %d is above MPI_ERR_LASTCODE", cls);
  MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  MT_EXPECT(flag && *last >= cls, "MPI_LASTUSEDCODE %d >= the new class %d", *last, cls);
  MT_CHECK(MPI_Add_error_code(cls, &code));
  MT_CHECK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
  MT_EXPECT(code != cls && code2 != code && code2 != cls, "distinct codes");
  MT_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  MT_EXPECT(*last >= code && *last >= code2, "MPI_LASTUSEDCODE %d covers the new codes", *last);
#if defined(ONESIDED_MPI)
  /* Open MPI 4.1's MPI_Error_class fails on the classes the program added. */
  MT_EXPECT(class_of(cls) == cls, "a new class is its own class");
#endif
  MT_EXPECT(class_of(code) == cls, "the new code's class is %d, expected %d", class_of(code), cls);
  MT_EXPECT(class_of(code2) == MPI_ERR_ARG, "a code of MPI_ERR_ARG");

  char s[MPI_MAX_ERROR_STRING];
  int len = -1;
  MT_CHECK(MPI_Error_string(code, s, &len));
  MT_EXPECT(len == 0 && s[0] == '\0', "a code without a string has the empty one (len %d)", len);
  MT_CHECK(MPI_Add_error_string(cls, "my class"));
  MT_CHECK(MPI_Add_error_string(code, "my code"));
  MT_CHECK(MPI_Error_string(cls, s, &len));
  MT_EXPECT(strcmp(s, "my class") == 0 && len == 8, "class string \"%s\"", s);
  MT_CHECK(MPI_Error_string(code, s, &len));
  MT_EXPECT(strcmp(s, "my code") == 0 && len == 7, "code string \"%s\"", s);
  MT_CHECK(MPI_Add_error_string(code, "changed"));
  MT_CHECK(MPI_Error_string(code, s, &len));
  MT_EXPECT(strcmp(s, "changed") == 0, "a string set again replaces the old one: \"%s\"", s);

  /* The program's code through a handler: its class and string. */
  MT_CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code)); /* MPI_ERRORS_RETURN: returns */

  /* Bad input. */
  mt_expect_class("MPI_Add_error_string on a predefined class",
                  MPI_Add_error_string(MPI_ERR_ARG, "x"), MPI_ERR_ARG);
  mt_expect_class("MPI_Add_error_code of a non-class", MPI_Add_error_code(code, &code2),
                  MPI_ERR_ARG);
#if defined(ONESIDED_MPI)
  /* Open MPI 4.1 crashes on a NULL string. */
  mt_expect_class("MPI_Add_error_string NULL", MPI_Add_error_string(code, NULL), MPI_ERR_ARG);
#endif
}

static void bad_input(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  mt_expect_class("set MPI_ERRHANDLER_NULL",
                  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
  mt_expect_class("free MPI_ERRHANDLER_NULL", MPI_Errhandler_free(&eh), MPI_ERR_ARG);
  mt_expect_class("set on MPI_COMM_NULL", MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN),
                  MPI_ERR_COMM);
  mt_expect_class("get into NULL", MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  mt_expect_class("call on MPI_COMM_NULL", MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER),
                  MPI_ERR_COMM);
  mt_expect_class("call on MPI_WIN_NULL", MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER),
                  MPI_ERR_WIN);
  MPI_Errhandler freed;
  MT_CHECK(MPI_Comm_create_errhandler(comm_handler, &freed));
  MPI_Errhandler copy = freed;
  MT_CHECK(MPI_Errhandler_free(&freed));
#if defined(ONESIDED_MPI)
  /* A stale handle (Open MPI's handles are pointers: it cannot tell). */
  mt_expect_class("set a freed handler", MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy),
                  MPI_ERR_ARG);
#else
  (void)copy;
#endif
  /* A predefined handler the program was not handed by a get (MPI_ERRORS_ABORT is set on
   * nothing here). Open MPI checks it only when MPI_ERRORS_ABORT exists (its 5.0). */
#if defined(ONESIDED_MPI)
  eh = MPI_ERRORS_ABORT;
  mt_expect_class("free a predefined handler", MPI_Errhandler_free(&eh), MPI_ERR_ARG);
#endif
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  comm_handlers();
  win_handlers();
  error_codes();
  bad_input();
  if (mt_rank == 0) printf("errhandlers: %s\n", mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
