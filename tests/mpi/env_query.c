/* SPDX-License-Identifier: BSD-3-Clause */
/* The environment calls around the RMA ones: MPI_Initialized / MPI_Finalized before, during and
 * after the job, MPI_Init_thread and MPI_Query_thread, MPI_Get_version (against MPI_VERSION /
 * MPI_SUBVERSION), MPI_Get_library_version and MPI_Get_processor_name (lengths and NUL
 * termination), MPI_Wtime / MPI_Wtick, MPI_Barrier, the default and set error handlers of
 * MPI_COMM_WORLD and of a window, a create window over MPI_Alloc_mem memory (ring put), and the
 * C <-> Fortran handle conversions (MPI_Comm_c2f / f2c and the others: round trips that still
 * work). Output (identical under any MPI): one "rank R: PART ok" line per part. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mpitest.h"

static void versions(void) {
  int version = -1;
  int subversion = -1;
  MT_CHECK(MPI_Get_version(&version, &subversion));
  MT_EXPECT(version == MPI_VERSION && subversion == MPI_SUBVERSION,
            "MPI_Get_version %d.%d, mpi.h says %d.%d", version, subversion, MPI_VERSION,
            MPI_SUBVERSION);
  MT_EXPECT(version >= 3, "MPI_Get_version %d: MPI_Win_allocate needs MPI 3", version);

  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  memset(lib, 'x', sizeof lib);
  int len = -1;
  MT_CHECK(MPI_Get_library_version(lib, &len));
  /* MPI-3.1 §8.1.1: resultlen excludes the NUL; Open MPI 4.1 counts it, so allow both. */
  const size_t lib_len = strnlen(lib, sizeof lib);
  MT_EXPECT(lib_len > 0 && lib_len < sizeof lib && (len == (int)lib_len || len == (int)lib_len + 1),
            "MPI_Get_library_version: resultlen %d, string length %zu", len, lib_len);

  char host[MPI_MAX_PROCESSOR_NAME];
  memset(host, 'x', sizeof host);
  len = -1;
  MT_CHECK(MPI_Get_processor_name(host, &len));
  MT_EXPECT(
      len > 0 && len < MPI_MAX_PROCESSOR_NAME && host[len] == '\0' && (int)strlen(host) == len,
      "MPI_Get_processor_name: resultlen %d", len);
  printf("rank %d: versions and names ok\n", mt_rank);
}

static void clocks(void) {
  const double tick = MPI_Wtick();
  MT_EXPECT(tick > 0.0 && tick <= 0.01, "MPI_Wtick %g", tick);
  double prev = MPI_Wtime();
  for (int i = 0; i < 1000; ++i) {
    const double now = MPI_Wtime();
    MT_EXPECT(now >= prev, "MPI_Wtime went back from %.9f to %.9f", prev, now);
    prev = now;
  }
  const double t0 = MPI_Wtime();
  const struct timespec delay = {0, 20 * 1000 * 1000};
  nanosleep(&delay, NULL);
  const double dt = MPI_Wtime() - t0;
  MT_EXPECT(dt >= 0.015 && dt < 10.0, "20 ms sleep measured as %g s", dt);
  printf("rank %d: MPI_Wtime and MPI_Wtick ok\n", mt_rank);
}

static void barriers(void) {
  for (int i = 0; i < 200; ++i) MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Barrier(MPI_COMM_SELF));
  printf("rank %d: 200 barriers ok\n", mt_rank);
}

static void errhandlers(void) {
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MT_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  MT_EXPECT(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD is not fatal");
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  MT_EXPECT(eh == MPI_ERRORS_RETURN, "MPI_COMM_WORLD: set MPI_ERRORS_RETURN, got another");

  /* A window's handler is its own (MPI_ERRORS_ARE_FATAL by default), not the communicator's. */
  int* base = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &base, &win));
  MT_CHECK(MPI_Win_get_errhandler(win, &eh));
  MT_EXPECT(eh == MPI_ERRORS_ARE_FATAL, "default handler of a window is not fatal");
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Win_get_errhandler(win, &eh));
  MT_EXPECT(eh == MPI_ERRORS_RETURN, "window: set MPI_ERRORS_RETURN, got another");
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
  MT_CHECK(MPI_Win_get_errhandler(win, &eh));
  MT_EXPECT(eh == MPI_ERRORS_ARE_FATAL, "window: set MPI_ERRORS_ARE_FATAL, got another");
  MT_CHECK(MPI_Win_free(&win));

  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  MT_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  MT_EXPECT(eh == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD: set MPI_ERRORS_ARE_FATAL, got another");
  printf("rank %d: error handlers ok\n", mt_rank);
}

/* MPI_Alloc_mem memory as a create window: each rank puts 4 longs to its right neighbour. */
static void alloc_mem_window(void) {
  enum { kN = 4 };
  long* mem = NULL;
  MT_CHECK(MPI_Alloc_mem(kN * (MPI_Aint)sizeof(long), MPI_INFO_NULL, &mem));
  MT_EXPECT(mem != NULL, "MPI_Alloc_mem returned NULL");
  void* empty = NULL;
  MT_CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty)); /* size 0 is valid; base may be anything */
  for (int i = 0; i < kN; ++i) mem[i] = -1;
  MPI_Win win;
  MT_CHECK(MPI_Win_create(mem, kN * (MPI_Aint)sizeof(long), (int)sizeof(long), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
  const int right = (mt_rank + 1) % mt_size;
  const int left = (mt_rank + mt_size - 1) % mt_size;
  long mine[kN];
  for (int i = 0; i < kN; ++i) mine[i] = 1000L * mt_rank + i;
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  MT_CHECK(MPI_Put(mine, kN, MPI_LONG, right, 0, kN, MPI_LONG, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win));
  for (int i = 0; i < kN; ++i) {
    MT_EXPECT(mem[i] == 1000L * left + i, "element %d holds %ld, expected %ld", i, mem[i],
              1000L * left + i);
  }
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Free_mem(empty));
  MT_CHECK(MPI_Free_mem(mem));
  printf("rank %d: window over MPI_Alloc_mem ok\n", mt_rank);
}

/* Every kind of handle through MPI_*_c2f and back is the same handle, and still works. */
static void fortran_handles(void) {
  MPI_Comm dup = MPI_COMM_NULL;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  const MPI_Fint fcomm = MPI_Comm_c2f(dup);
  MPI_Comm back = MPI_Comm_f2c(fcomm);
  MT_EXPECT(back == dup && MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD,
            "communicator handles changed on the way through MPI_Fint");
  int size = -1;
  MT_CHECK(MPI_Comm_size(back, &size));
  MT_EXPECT(size == mt_size, "size %d through the converted handle, expected %d", size, mt_size);
  MPI_Group g;
  MT_CHECK(MPI_Comm_group(back, &g));
  MT_EXPECT(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group handle changed");
  MT_CHECK(MPI_Group_free(&g));
  MPI_Datatype pair;
  MT_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
  MT_CHECK(MPI_Type_commit(&pair));
  MPI_Datatype t = MPI_Type_f2c(MPI_Type_c2f(pair));
  MT_CHECK(MPI_Type_size(t, &size));
  MT_EXPECT(t == pair && size == 2 * (int)sizeof(int), "datatype through MPI_Fint: size %d", size);
  MT_EXPECT(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE changed");
  MT_CHECK(MPI_Type_free(&pair));
  MPI_Info info;
  MT_CHECK(MPI_Info_create(&info));
  MT_EXPECT(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "info handle changed");
  MT_CHECK(MPI_Info_free(&info));
  MT_EXPECT(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "MPI_SUM changed");
  MT_EXPECT(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
            "MPI_ERRORS_RETURN changed");
  int* mem = NULL;
  MPI_Win win;
  MT_CHECK(
      MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, back, &mem, &win));
  MT_EXPECT(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "window handle changed");
  MPI_Request req = MPI_REQUEST_NULL;
  MT_CHECK(MPI_Win_lock_all(0, win));
  int one = 1;
  MT_CHECK(MPI_Rput(&one, 1, MPI_INT, mt_rank, 0, 1, MPI_INT, MPI_Win_f2c(MPI_Win_c2f(win)), &req));
  MPI_Request r2 = MPI_Request_f2c(MPI_Request_c2f(req));
  MT_EXPECT(r2 == req, "request handle changed");
  MT_CHECK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Comm_free(&dup));
  printf("rank %d: C and Fortran handles ok\n", mt_rank);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int flag = -1;
  MT_CHECK(MPI_Initialized(&flag)); /* one of the few calls allowed before MPI_Init */
  const int init_before = flag;
  flag = -1;
  MT_CHECK(MPI_Finalized(&flag));
  const int fin_before = flag;

  int provided = -1;
  MT_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
  MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
  MT_EXPECT(init_before == 0 && fin_before == 0, "before MPI_Init: initialized %d finalized %d",
            init_before, fin_before);
  MT_EXPECT(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
            "MPI_Init_thread provided %d", provided);
  int queried = -1;
  MT_CHECK(MPI_Query_thread(&queried));
  MT_EXPECT(queried == provided, "MPI_Query_thread %d, MPI_Init_thread provided %d", queried,
            provided);
  MT_CHECK(MPI_Initialized(&flag));
  MT_EXPECT(flag == 1, "MPI_Initialized %d after MPI_Init_thread", flag);
  MT_CHECK(MPI_Finalized(&flag));
  MT_EXPECT(flag == 0, "MPI_Finalized %d before MPI_Finalize", flag);
  printf("rank %d: initialization and thread level ok\n", mt_rank);

  versions();
  clocks();
  barriers();
  errhandlers();
  alloc_mem_window();
  fortran_handles();

  fflush(stdout);
  const int failures = mt_failures;
  const int rank = mt_rank;
  MT_CHECK(MPI_Finalize());
  /* Both stay callable after MPI_Finalize; MPI_Initialized stays true. */
  int init_after = -1;
  int fin_after = -1;
  if (MPI_Initialized(&init_after) != MPI_SUCCESS || MPI_Finalized(&fin_after) != MPI_SUCCESS ||
      init_after != 1 || fin_after != 1) {
    fprintf(stderr, "rank %d: after MPI_Finalize: initialized %d finalized %d\n", rank, init_after,
            fin_after);
    return 1;
  }
  printf("rank %d: %s\n", rank, failures == 0 ? "environment ok" : "environment FAILED");
  return failures == 0 ? 0 : 1;
}
