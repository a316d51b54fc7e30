/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI tool information interface (MPI-3.1 §14.3): every control variable, performance
 * variable and category enumerated and read; control variables against the environment (the test
 * sets a few ONESIDED_* variables); counters moving with puts and sends; sessions, handles and
 * their error codes; string truncation; MPI_T before MPI_Init and after MPI_Finalize. Also builds
 * with Open MPI: what inspects onesided's own variables is under #ifndef OPEN_MPI. */
#include "mpitest.h"

#define NAME_MAX_ 256
#define DESC_MAX_ 4096

static int expect_rc(int rc, int want, const char* what) {
#ifdef OPEN_MPI
  /* Open MPI 4.1 answers several misuses with the general MPI_T_ERR_INVALID. */
  if (rc == MPI_T_ERR_INVALID && want != MPI_SUCCESS) return 1;
#endif
  MT_EXPECT(rc == want, "%s returned %d, expected %d", what, rc, want);
  return rc == want;
}

/* Before MPI_Init: not initialised, then nested init / finalize pairs. */
static void before_init(void) {
  int n = 0, provided = -1;
  expect_rc(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num before init");
  expect_rc(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED, "finalize before init");
  MT_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MT_EXPECT(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d",
            provided);
  MT_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MT_CHECK(MPI_T_cvar_get_num(&n));
  MT_CHECK(MPI_T_finalize()); /* one of two: still initialised */
  MT_CHECK(MPI_T_cvar_get_num(&n));
}

static void check_strings(void) {
  int n = 0;
  MT_CHECK(MPI_T_cvar_get_num(&n));
  if (n == 0) return;
  char full[NAME_MAX_];
  int full_len = sizeof full;
  MT_CHECK(MPI_T_cvar_get_info(0, full, &full_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  MT_EXPECT(full_len == (int)strlen(full) + 1, "name_len %d for \"%s\"", full_len, full);
  /* NULL buffer: the length needed, null included. */
  int need = 0;
  MT_CHECK(MPI_T_cvar_get_info(0, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  MT_EXPECT(need == full_len, "needed %d, got %d", need, full_len);
  /* Zero length: the same, nothing written. */
  char buf[8] = "xxxxxxx";
  int len = 0;
  MT_CHECK(MPI_T_cvar_get_info(0, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  MT_EXPECT(len == full_len && buf[0] == 'x', "len %d buf[0] %c", len, buf[0]);
  /* Truncated: len - 1 characters and a null. */
  if (full_len > 4) {
    len = 4;
    MT_CHECK(MPI_T_cvar_get_info(0, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    MT_EXPECT(len == 4 && strlen(buf) == 3 && strncmp(buf, full, 3) == 0,
              "truncated to \"%s\" len %d", buf, len);
  }
  /* NULL length: nothing returned, no crash. */
  MT_CHECK(MPI_T_cvar_get_info(0, buf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
}

/* Every control variable: unique names, info, index round trip, a read; onesided's own against
 * the environment. */
static void check_cvars(void) {
  int n = 0;
  MT_CHECK(MPI_T_cvar_get_num(&n));
  MT_EXPECT(n > 0, "%d control variables", n);
  char(*names)[NAME_MAX_] = calloc((size_t)n + 1, NAME_MAX_);
  int compared = 0;
  for (int i = 0; i < n; ++i) {
    int name_len = NAME_MAX_, desc_len = DESC_MAX_, verbosity = -1, bind = -1, scope = -1;
    char desc[DESC_MAX_];
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum et = MPI_T_ENUM_NULL;
    /* Open MPI 4.1 has indices whose variables were removed: MPI_T_ERR_INVALID_INDEX. */
    const int info_rc = MPI_T_cvar_get_info(i, names[i], &name_len, &verbosity, &type, &et, desc,
                                            &desc_len, &bind, &scope);
    if (info_rc == MPI_T_ERR_INVALID_INDEX) continue;
    MT_CHECK(info_rc);
    MT_EXPECT(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "%s: verbosity %d", names[i], verbosity);
    for (int j = 0; j < i; ++j) {
      MT_EXPECT(names[j][0] == '\0' || strcmp(names[i], names[j]) != 0,
                "cvar %d and %d are both %s", i, j, names[i]);
    }
    int idx = -1;
    MT_CHECK(MPI_T_cvar_get_index(names[i], &idx));
    MT_EXPECT(idx == i, "%s: index %d, expected %d", names[i], idx, i);
    if (bind != MPI_T_BIND_NO_OBJECT) continue;
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    int count = -1;
    if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS) continue;
    MT_EXPECT(count >= 1, "%s: count %d", names[i], count);
    char* buf = calloc((size_t)count + 1, 16);
#ifndef OPEN_MPI /* Open MPI 4.1's MPI_T_cvar_read crashes on some of its variables */
    MT_CHECK(MPI_T_cvar_read(h, buf));
#endif
    if (et != MPI_T_ENUM_NULL) {
      int items = 0;
      char ename[NAME_MAX_];
      int elen = NAME_MAX_;
      MT_CHECK(MPI_T_enum_get_info(et, &items, ename, &elen));
      MT_EXPECT(items > 0, "%s: enum %s has %d items", names[i], ename, items);
#ifdef OPEN_MPI
      /* Open MPI 4.1 says MPI_T_ERR_INVALID_INDEX. */
      const int rc = MPI_T_enum_get_item(et, items, NULL, NULL, NULL);
      MT_EXPECT(rc == MPI_T_ERR_INVALID_ITEM || rc == MPI_T_ERR_INVALID_INDEX,
                "enum_get_item past the end returned %d", rc);
#else
      expect_rc(MPI_T_enum_get_item(et, items, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM,
                "enum_get_item past the end");
#endif
    }
#ifndef OPEN_MPI
    MT_EXPECT(strncmp(names[i], "ONESIDED_", 9) == 0, "cvar %s", names[i]);
    MT_EXPECT(strcmp(names[i], "ONESIDED_SECRET") != 0, "the job's secret is a cvar");
    MT_EXPECT(scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_ALL_EQ, "%s: scope %d",
              names[i], scope);
    expect_rc(MPI_T_cvar_write(h, buf), MPI_T_ERR_CVAR_SET_NEVER, "cvar_write");
    const char* env = getenv(names[i]);
    if (env != NULL && *env != '\0') {
      ++compared;
      if (type == MPI_UNSIGNED_LONG_LONG) {
        unsigned long long v = 0;
        memcpy(&v, buf, sizeof v);
        MT_EXPECT(v == strtoull(env, NULL, 10), "%s=%s reads %llu", names[i], env, v);
      } else if (type == MPI_INT) {
        int v = -1;
        char item[NAME_MAX_];
        int ilen = NAME_MAX_;
        memcpy(&v, buf, sizeof v);
        MT_CHECK(MPI_T_enum_get_item(et, v, NULL, item, &ilen));
        MT_EXPECT(strcmp(item, env) == 0, "%s=%s reads %d (%s)", names[i], env, v, item);
      } else {
        MT_EXPECT(type == MPI_CHAR && strcmp(buf, env) == 0, "%s=%s reads %s", names[i], env, buf);
      }
    }
#endif
    free(buf);
    MT_CHECK(MPI_T_cvar_handle_free(&h));
    MT_EXPECT(h == MPI_T_CVAR_HANDLE_NULL, "freed handle not set to null");
  }
#ifndef OPEN_MPI
  /* The test's ENVIRONMENT sets four (CMakeLists.txt). */
  MT_EXPECT(compared >= 4, "%d control variables compared with the environment", compared);
#else
  (void)compared;
#endif
  int idx = 0;
  expect_rc(MPI_T_cvar_get_index("no_such_variable", &idx), MPI_T_ERR_INVALID_NAME,
            "cvar_get_index of an unknown name");
  expect_rc(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
            MPI_T_ERR_INVALID_INDEX, "cvar_get_info past the end");
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  expect_rc(MPI_T_cvar_handle_alloc(-1, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX,
            "cvar_handle_alloc(-1)");
  free(names);
}

/* Every category: unique names, its variables' indices in range. */
static void check_categories(void) {
  int n = 0, ncvar = 0, npvar = 0;
  MT_CHECK(MPI_T_category_get_num(&n));
  MT_CHECK(MPI_T_cvar_get_num(&ncvar));
  MT_CHECK(MPI_T_pvar_get_num(&npvar));
  int cvars_seen = 0;
  char(*names)[NAME_MAX_] = calloc((size_t)n + 1, NAME_MAX_);
  for (int c = 0; c < n; ++c) {
    int len = NAME_MAX_, nc = -1, np = -1, nk = -1;
    const int info_rc = MPI_T_category_get_info(c, names[c], &len, NULL, NULL, &nc, &np, &nk);
    if (info_rc == MPI_T_ERR_INVALID_INDEX) continue; /* Open MPI 4.1: removed categories */
    MT_CHECK(info_rc);
    for (int j = 0; j < c; ++j)
      MT_EXPECT(strcmp(names[c], names[j]) != 0, "category %s twice", names[c]);
    int idx = -1;
    MT_CHECK(MPI_T_category_get_index(names[c], &idx));
    MT_EXPECT(idx == c, "category %s: index %d", names[c], idx);
    int* ind = calloc((size_t)(nc + np + nk) + 1, sizeof(int));
    MT_CHECK(MPI_T_category_get_cvars(c, nc, ind));
    for (int k = 0; k < nc; ++k) MT_EXPECT(ind[k] >= 0 && ind[k] < ncvar, "cvar index %d", ind[k]);
    MT_CHECK(MPI_T_category_get_pvars(c, np, ind));
    for (int k = 0; k < np; ++k) MT_EXPECT(ind[k] >= 0 && ind[k] < npvar, "pvar index %d", ind[k]);
    MT_CHECK(MPI_T_category_get_categories(c, nk, ind));
    for (int k = 0; k < nk; ++k) MT_EXPECT(ind[k] >= 0 && ind[k] < n, "category index %d", ind[k]);
    free(ind);
    cvars_seen += nc;
  }
  int stamp = -1;
  MT_CHECK(MPI_T_category_changed(&stamp));
  int idx = 0;
  expect_rc(MPI_T_category_get_index("no_such_category", &idx), MPI_T_ERR_INVALID_NAME,
            "category_get_index of an unknown name");
  expect_rc(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
            MPI_T_ERR_INVALID_INDEX, "category_get_info past the end");
#ifndef OPEN_MPI
  MT_EXPECT(cvars_seen == ncvar, "categories hold %d of %d cvars", cvars_seen, ncvar);
  MT_CHECK(MPI_T_category_get_index("rma", &idx));
#else
  (void)cvars_seen;
#endif
  free(names);
}

/* Every performance variable: unique names (per class), info, a handle and a read. */
static void check_pvars(void) {
  int n = 0;
  MT_CHECK(MPI_T_pvar_get_num(&n));
  MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
  MT_CHECK(MPI_T_pvar_session_create(&s));
  char(*names)[NAME_MAX_] = calloc((size_t)n + 1, NAME_MAX_);
  int* classes = calloc((size_t)n + 1, sizeof(int));
  for (int i = 0; i < n; ++i) {
    int len = NAME_MAX_, verbosity, bind = -1, ro = -1, cont = -1, atomic = -1;
    MPI_Datatype type;
    MPI_T_enum et;
    const int info_rc = MPI_T_pvar_get_info(i, names[i], &len, &verbosity, &classes[i], &type, &et,
                                            NULL, NULL, &bind, &ro, &cont, &atomic);
    if (info_rc == MPI_T_ERR_INVALID_INDEX || info_rc == MPI_T_ERR_INVALID) continue; /* Open MPI */
    MT_CHECK(info_rc);
    for (int j = 0; j < i; ++j) {
      MT_EXPECT(names[j][0] == '\0' || classes[i] != classes[j] || strcmp(names[i], names[j]) != 0,
                "pvar %s twice", names[i]);
    }
    int idx = -1;
    MT_CHECK(MPI_T_pvar_get_index(names[i], classes[i], &idx));
    MT_EXPECT(idx == i, "%s: index %d", names[i], idx);
    if (bind != MPI_T_BIND_NO_OBJECT) continue;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = 0;
    if (MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count) != MPI_SUCCESS) continue;
    void* buf = calloc((size_t)count + 1, 16);
#ifdef OPEN_MPI
    (void)MPI_T_pvar_read(s, h, buf); /* some of Open MPI 4.1's fail (MPI_T_ERR_INVALID_INDEX) */
#else
    MT_CHECK(MPI_T_pvar_read(s, h, buf));
#endif
    if (!cont) {
      expect_rc(MPI_T_pvar_start(s, h), MPI_SUCCESS, "pvar_start");
      expect_rc(MPI_T_pvar_stop(s, h), MPI_SUCCESS, "pvar_stop");
    } else {
      expect_rc(MPI_T_pvar_start(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP, "pvar_start (continuous)");
    }
    if (ro) expect_rc(MPI_T_pvar_write(s, h, buf), MPI_T_ERR_PVAR_NO_WRITE, "pvar_write (ro)");
    free(buf);
    MT_CHECK(MPI_T_pvar_handle_free(s, &h));
    MT_EXPECT(h == MPI_T_PVAR_HANDLE_NULL, "freed handle not set to null");
  }
  int idx = 0;
  expect_rc(MPI_T_pvar_get_index("no_such_variable", MPI_T_PVAR_CLASS_COUNTER, &idx),
            MPI_T_ERR_INVALID_NAME, "pvar_get_index of an unknown name");
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  expect_rc(MPI_T_pvar_handle_alloc(s, n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX,
            "pvar_handle_alloc past the end");
  MT_CHECK(MPI_T_pvar_session_free(&s));
  MT_EXPECT(s == MPI_T_PVAR_SESSION_NULL, "freed session not set to null");
  free(names);
  free(classes);
}

#ifndef OPEN_MPI
static MPI_T_pvar_handle pvar(MPI_T_pvar_session s, const char* name, int cls) {
  int idx = -1, count = 0;
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  MT_CHECK(MPI_T_pvar_get_index(name, cls, &idx));
  MT_CHECK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
  return h;
}

static unsigned long long value(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = 0;
  MT_CHECK(MPI_T_pvar_read(s, h, &v));
  return v;
}

/* onesided's counters move with the program's puts and sends, only while started. */
static void check_counters(void) {
  MPI_T_pvar_session s, other;
  MT_CHECK(MPI_T_pvar_session_create(&s));
  MT_CHECK(MPI_T_pvar_session_create(&other));
  MPI_T_pvar_handle puts = pvar(s, "rma_puts", MPI_T_PVAR_CLASS_COUNTER);
  MPI_T_pvar_handle bytes = pvar(s, "rma_put_bytes", MPI_T_PVAR_CLASS_COUNTER);
  MPI_T_pvar_handle sends = pvar(s, "p2p_sends_eager", MPI_T_PVAR_CLASS_COUNTER);
  MPI_T_pvar_handle recvs = pvar(s, "p2p_recvs", MPI_T_PVAR_CLASS_COUNTER);
  MPI_T_pvar_handle unexp = pvar(s, "p2p_unexpected", MPI_T_PVAR_CLASS_LEVEL);
  MPI_T_pvar_handle sleep = pvar(s, "wait_sleep_time", MPI_T_PVAR_CLASS_TIMER);

  int* base = NULL;
  MPI_Win win;
  MT_CHECK(
      MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  int src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
  MT_CHECK(MPI_Win_fence(0, win));
  MT_CHECK(MPI_Put(src, 8, MPI_INT, right, 0, 8, MPI_INT, win)); /* not started: not counted */
  MT_CHECK(MPI_Win_fence(0, win));
  MT_EXPECT(value(s, puts) == 0, "a stopped handle counted %llu puts", value(s, puts));
  MT_CHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES)); /* the level is skipped */
  for (int k = 0; k < 3; ++k) MT_CHECK(MPI_Put(src, 8, MPI_INT, right, 8 * k, 8, MPI_INT, win));
  MT_CHECK(MPI_Win_fence(0, win));
  int got = -1;
  MT_CHECK(MPI_Sendrecv(&mt_rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  MT_CHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
  MT_EXPECT(value(s, puts) == 3, "rma_puts %llu, expected 3", value(s, puts));
  MT_EXPECT(value(s, bytes) == 3 * 8 * sizeof(int), "rma_put_bytes %llu", value(s, bytes));
  MT_EXPECT(value(s, sends) >= 1, "p2p_sends_eager %llu", value(s, sends));
  MT_EXPECT(value(s, recvs) >= 1, "p2p_recvs %llu", value(s, recvs));
  double slept = -1;
  MT_CHECK(MPI_T_pvar_read(s, sleep, &slept));
  MT_EXPECT(slept >= 0, "wait_sleep_time %g", slept);
  /* Stopped: a put is not counted. */
  MT_CHECK(MPI_Put(src, 8, MPI_INT, right, 0, 8, MPI_INT, win));
  MT_CHECK(MPI_Win_fence(0, win));
  MT_EXPECT(value(s, puts) == 3, "rma_puts %llu after stop", value(s, puts));
  /* readreset, reset, write. */
  unsigned long long v = 0;
  MT_CHECK(MPI_T_pvar_readreset(s, puts, &v));
  MT_EXPECT(v == 3 && value(s, puts) == 0, "readreset read %llu, left %llu", v, value(s, puts));
  v = 42;
  MT_CHECK(MPI_T_pvar_write(s, bytes, &v));
  MT_EXPECT(value(s, bytes) == 42, "written 42, read %llu", value(s, bytes));
  MT_CHECK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES)); /* the read-only level is skipped */
  MT_EXPECT(value(s, bytes) == 0, "reset left %llu", value(s, bytes));
  /* The level: continuous, read-only; nothing is left unexpected here. */
  MT_EXPECT(value(s, unexp) == 0, "p2p_unexpected %llu", value(s, unexp));
  expect_rc(MPI_T_pvar_start(s, unexp), MPI_T_ERR_PVAR_NO_STARTSTOP, "start a level");
  expect_rc(MPI_T_pvar_reset(s, unexp), MPI_T_ERR_PVAR_NO_WRITE, "reset a level");
  expect_rc(MPI_T_pvar_readreset(s, unexp, &v), MPI_T_ERR_PVAR_NO_WRITE, "readreset a level");
  /* Handles belong to their session. */
  expect_rc(MPI_T_pvar_read(other, puts, &v), MPI_T_ERR_INVALID_HANDLE, "another session's");
  expect_rc(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE,
            "read all handles");
  expect_rc(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, puts, &v), MPI_T_ERR_INVALID_SESSION,
            "the null session");
  MT_CHECK(MPI_T_pvar_handle_free(s, &puts));
  expect_rc(MPI_T_pvar_handle_free(s, &puts), MPI_T_ERR_INVALID_HANDLE, "free a null handle");
  MT_CHECK(MPI_T_pvar_session_free(&s)); /* frees its handles */
  MPI_T_pvar_session gone = s;
  expect_rc(MPI_T_pvar_session_free(&gone), MPI_T_ERR_INVALID_SESSION, "free a freed session");
  MT_CHECK(MPI_T_pvar_session_free(&other));
  MT_CHECK(MPI_Win_free(&win));
}
#endif

int main(int argc, char** argv) {
  before_init();
  mt_init(&argc, &argv);
  check_strings();
  check_cvars();
  check_pvars();
  check_categories();
#ifndef OPEN_MPI
  check_counters();
#endif
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int rank = mt_rank;
  MT_CHECK(MPI_Finalize());
  /* After MPI_Finalize: MPI_T still answers until its last MPI_T_finalize. */
  int n = 0;
  expect_rc(MPI_T_cvar_get_num(&n), MPI_SUCCESS, "cvar_get_num after MPI_Finalize");
  expect_rc(MPI_T_pvar_get_num(&n), MPI_SUCCESS, "pvar_get_num after MPI_Finalize");
#ifndef OPEN_MPI /* Open MPI 4.1 crashes in the last MPI_T_finalize after MPI_Finalize */
  expect_rc(MPI_T_finalize(), MPI_SUCCESS, "the last finalize");
  expect_rc(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num after it");
#endif
  if (mt_failures != 0) return 1;
  if (rank == 0) printf("mpit: ok\n");
  return 0;
}
