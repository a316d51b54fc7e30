/* SPDX-License-Identifier: BSD-3-Clause */
/* Generalized requests (MPI-3.1 §12.2): the callbacks' order and arguments under MPI_Wait,
 * MPI_Test, MPI_Waitall beside a message, MPI_Request_get_status, MPI_Request_free before and
 * after MPI_Grequest_complete, MPI_Cancel, a failing query_fn, and a request another thread
 * completes while this one waits. Also the MPI-IO error classes programs test by name. */
#include <pthread.h>
#include <sched.h>

#include "mpitest.h"

struct greq {
  int queried, freed, cancelled, cancel_complete;
  int query_rc;
  char log[16]; /* q: query, f: free, c: cancel, in order */
  int nlog;
};

static void note(struct greq* g, char c) {
  if (g->nlog < (int)sizeof g->log - 1) g->log[g->nlog++] = c;
}

static int query_fn(void* extra, MPI_Status* status) {
  struct greq* g = extra;
  ++g->queried;
  note(g, 'q');
  MPI_Status_set_elements(status, MPI_INT, 5);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = 7;
  status->MPI_TAG = 11;
  return g->query_rc;
}

static int free_fn(void* extra) {
  struct greq* g = extra;
  ++g->freed;
  note(g, 'f');
  return MPI_SUCCESS;
}

static int cancel_fn(void* extra, int complete) {
  struct greq* g = extra;
  ++g->cancelled;
  g->cancel_complete = complete;
  note(g, 'c');
  return MPI_SUCCESS;
}

static MPI_Request start(struct greq* g) {
  memset(g, 0, sizeof *g);
  MPI_Request r = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &r));
  MT_EXPECT(r != MPI_REQUEST_NULL, "MPI_Grequest_start gave MPI_REQUEST_NULL");
  return r;
}

static void wait_and_test(void) {
  struct greq g;
  MPI_Request r = start(&g);
  int flag = 1;
  MPI_Status st;
  MT_CHECK(MPI_Test(&r, &flag, &st));
  MT_EXPECT(flag == 0 && g.queried == 0, "Test before completion: flag %d, queried %d", flag,
            g.queried);
  MT_CHECK(MPI_Request_get_status(r, &flag, &st));
  MT_EXPECT(flag == 0, "get_status before completion: flag %d", flag);
  MT_CHECK(MPI_Grequest_complete(r));
  MT_CHECK(MPI_Request_get_status(r, &flag, &st));
  MT_EXPECT(flag == 1 && g.queried == 1 && g.freed == 0, "get_status: flag %d, q %d, f %d", flag,
            g.queried, g.freed);
  MT_CHECK(MPI_Wait(&r, &st));
  int count = -1, cancelled = -1;
  MT_CHECK(MPI_Get_count(&st, MPI_INT, &count));
  MT_CHECK(MPI_Test_cancelled(&st, &cancelled));
  MT_EXPECT(r == MPI_REQUEST_NULL, "Wait left the handle %d", r);
  MT_EXPECT(count == 5 && cancelled == 0 && st.MPI_SOURCE == 7 && st.MPI_TAG == 11,
            "status: count %d, cancelled %d, source %d, tag %d", count, cancelled, st.MPI_SOURCE,
            st.MPI_TAG);
  MT_EXPECT(strcmp(g.log, "qqf") == 0, "callbacks %s, expected qqf", g.log);

  /* Test completes it too, with MPI_STATUS_IGNORE (query_fn still runs). */
  r = start(&g);
  MT_CHECK(MPI_Grequest_complete(r));
  MT_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
  MT_EXPECT(flag == 1 && r == MPI_REQUEST_NULL && strcmp(g.log, "qf") == 0,
            "Test: flag %d, handle %d, callbacks %s", flag, r, g.log);
}

/* A generalized request and a message in one Waitall, and in Waitany. */
static void arrays(void) {
  struct greq g;
  int peer = (mt_rank + 1) % mt_size, from = (mt_rank + mt_size - 1) % mt_size;
  int out = mt_rank, in = -1;
  MPI_Request reqs[3];
  reqs[0] = start(&g);
  MT_CHECK(MPI_Irecv(&in, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &reqs[1]));
  MT_CHECK(MPI_Isend(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &reqs[2]));
  MT_CHECK(MPI_Grequest_complete(reqs[0]));
  MPI_Status st[3];
  MT_CHECK(MPI_Waitall(3, reqs, st));
  int count = -1;
  MT_CHECK(MPI_Get_count(&st[0], MPI_INT, &count));
  MT_EXPECT(in == from && count == 5 && strcmp(g.log, "qf") == 0,
            "Waitall: received %d from %d, count %d, callbacks %s", in, from, count, g.log);

  reqs[0] = start(&g);
  reqs[1] = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Grequest_complete(reqs[0]));
  int index = -1;
  MT_CHECK(MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE));
  MT_EXPECT(index == 0 && reqs[0] == MPI_REQUEST_NULL && g.freed == 1, "Waitany: index %d", index);
}

static void free_and_cancel(void) {
  struct greq g;
  /* Freed first: free_fn waits for MPI_Grequest_complete, query_fn never runs. */
  MPI_Request r = start(&g);
  MPI_Request keep = r;
  MT_CHECK(MPI_Request_free(&r));
  MT_EXPECT(r == MPI_REQUEST_NULL && g.freed == 0, "Request_free: handle %d, freed %d", r, g.freed);
  MT_CHECK(MPI_Grequest_complete(keep));
  MT_EXPECT(strcmp(g.log, "f") == 0, "free then complete: callbacks %s", g.log);
  /* Completed first: free_fn at once. */
  r = start(&g);
  MT_CHECK(MPI_Grequest_complete(r));
  MT_CHECK(MPI_Request_free(&r));
  MT_EXPECT(strcmp(g.log, "f") == 0, "complete then free: callbacks %s", g.log);
  /* Cancel before and after completion. */
  r = start(&g);
  MT_CHECK(MPI_Cancel(&r));
  MT_EXPECT(g.cancelled == 1 && g.cancel_complete == 0, "cancel: %d, complete %d", g.cancelled,
            g.cancel_complete);
  MT_CHECK(MPI_Grequest_complete(r));
  MT_CHECK(MPI_Cancel(&r));
  MT_EXPECT(g.cancelled == 2 && g.cancel_complete != 0, "cancel after complete: complete %d",
            g.cancel_complete);
  MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  MT_EXPECT(strcmp(g.log, "ccqf") == 0, "cancel: callbacks %s", g.log);
}

static void errors(void) {
  struct greq g;
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Request r = start(&g);
  g.query_rc = MPI_ERR_TYPE;
  MT_CHECK(MPI_Grequest_complete(r));
  mt_expect_class("query_fn failing", MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
  MT_EXPECT(r == MPI_REQUEST_NULL && g.freed == 1, "after a failed query: handle %d, freed %d", r,
            g.freed);
  r = start(&g);
  MT_CHECK(MPI_Grequest_complete(r));
  mt_expect_class("completed twice", MPI_Grequest_complete(r), MPI_ERR_REQUEST);
  const MPI_Request done = r;
  MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  mt_expect_class("complete a finished request", MPI_Grequest_complete(done), MPI_ERR_REQUEST);
  mt_expect_class("start without request",
                  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, NULL), MPI_ERR_ARG);
  /* The MPI-IO classes are classes here too, with their names. */
  static const int io[] = {MPI_ERR_FILE,  MPI_ERR_IO,           MPI_ERR_ACCESS,
                           MPI_ERR_AMODE, MPI_ERR_NO_SUCH_FILE, MPI_ERR_UNSUPPORTED_DATAREP};
  static const char* const names[] = {"MPI_ERR_FILE",         "MPI_ERR_IO",
                                      "MPI_ERR_ACCESS",       "MPI_ERR_AMODE",
                                      "MPI_ERR_NO_SUCH_FILE", "MPI_ERR_UNSUPPORTED_DATAREP"};
  for (int i = 0; i < 6; ++i) {
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    MT_CHECK(MPI_Error_class(io[i], &cls));
    MT_CHECK(MPI_Error_string(io[i], text, &len));
    MT_EXPECT(cls == io[i] && strstr(text, names[i]) != NULL, "%s: class %d, text %s", names[i],
              cls, text);
  }
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

struct completer {
  MPI_Request r;
  int rc;
};

static void* complete_later(void* arg) {
  struct completer* c = arg;
  for (int i = 0; i < 1000; ++i) sched_yield(); /* likely after the main thread's MPI_Wait */
  c->rc = MPI_Grequest_complete(c->r);
  return NULL;
}

/* The standard's use: another thread runs the operation and completes the request. */
static void threaded(int provided) {
  if (provided < MPI_THREAD_MULTIPLE) return;
  struct greq g;
  struct completer c = {start(&g), -1};
  pthread_t t;
  if (pthread_create(&t, NULL, complete_later, &c) != 0) {
    MT_EXPECT(0, "pthread_create failed");
    return;
  }
  MPI_Request r = c.r;
  MT_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  pthread_join(t, NULL);
  MT_EXPECT(c.rc == MPI_SUCCESS && strcmp(g.log, "qf") == 0, "threaded: rc %d, callbacks %s", c.rc,
            g.log);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided = MPI_THREAD_SINGLE;
  MT_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
  MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
  wait_and_test();
  arrays();
  free_and_cancel();
  errors();
  threaded(provided);
  return mt_finish();
}
