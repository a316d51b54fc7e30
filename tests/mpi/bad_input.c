/* SPDX-License-Identifier: BSD-3-Clause */
/* Argument validation under MPI_ERRORS_RETURN: every bad argument gets its error class
 * (through MPI_Error_class, since codes are class + 64*k in onesided), and the memory the failed
 * call must not touch is unchanged: the target windows (checked by their owners after the fence
 * that completes the epoch) with guard zones before and after the create window, and the origin
 * buffers.
 *
 * Each check prints   rank R: ok WHAT: CLASS (error string)
 * or                  rank R: FAIL WHAT: expected CLASS, got ... (error string)
 * and the program exits non-zero if any check failed.
 *
 * Checks that need integer handles or an MPI that validates NULL pointers (garbage handles,
 * NULL origin with count > 0, MPI_Free_mem of foreign memory, NULL baseptr) would crash an MPI
 * whose handles are pointers, so without ONESIDED_MPI they print "skip WHAT: REASON" instead.
 * The create-window checks are safe everywhere: a put that an MPI fails to reject lands in a
 * guard zone of the same allocation, where it is reported, instead of corrupting the heap.
 *
 * Debian's Open MPI 4.1.4 (default osc/rdma at 2+ ranks) fails, as expected, the checks for
 * mismatched origin/target type signatures (MPI_SUCCESS, and the data lands: window and origin
 * "untouched" checks fail too), a bad keyval (MPI_ERR_OTHER) and MPI_Alloc_mem(-1) (MPI_ERR_ARG);
 * with osc/ucx or osc/pt2pt (or at 1 rank) it also misses every MPI_ERR_RMA_RANGE check. It
 * crashes (SIGSEGV/abort) on a NULL baseptr, a NULL origin, a garbage datatype and MPI_Free_mem
 * of foreign memory, hence the skips. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiexpect.h"
#include "mpitest.h"

enum { kWin = 16, kGuard = 16, kBuf = kGuard + kWin + kGuard };

#ifdef ONESIDED_MPI
#define ONLY_WITH_INTEGER_HANDLES 1
#else
#define ONLY_WITH_INTEGER_HANDLES 0
#endif

#if !ONLY_WITH_INTEGER_HANDLES
static const char kNeedsIntHandles[] = "needs integer handles / NULL checks (onesided only)";
#endif

static int window_value(int rank, int i) { return 1000 * rank + i; }

/* Put and get argument checks on one window; base[0 .. kWin) is the window, and when guarded,
 * base[-kGuard .. 0) and base[kWin .. kWin + kGuard) are guard zones of the same allocation. */
static void rma_checks(const char* flavor, MPI_Win win, int* base, int guarded) {
  char what[160];
  const int p = mt_size;
  const int right = (mt_rank + 1) % p;
  int putbuf[8];
  int getbuf[8];
  double one_double = 0.5;
  for (int i = 0; i < 8; ++i) {
    putbuf[i] = -1 - i;
    getbuf[i] = -100 - i;
  }
  const int lo = guarded ? -kGuard : 0;
  const int hi = guarded ? kWin + kGuard : kWin;
  for (int i = lo; i < hi; ++i) base[i] = (i >= 0 && i < kWin) ? window_value(mt_rank, i) : -7777;

#define CHECK_RMA(desc, call, cls)                               \
  do {                                                           \
    snprintf(what, sizeof what, "%s (%s window)", desc, flavor); \
    expect(what, (call), (cls));                                 \
  } while (0)

  /* Before the first fence there is no access epoch. */
  CHECK_RMA("put before the first fence", MPI_Put(putbuf, 1, MPI_INT, right, 0, 1, MPI_INT, win),
            MPI_ERR_RMA_SYNC);
  CHECK_RMA("get before the first fence", MPI_Get(getbuf, 1, MPI_INT, right, 0, 1, MPI_INT, win),
            MPI_ERR_RMA_SYNC);
  /* MPI_MODE_NOCHECK is for passive target and PSCW, never for a fence (MPI-3.1 §11.5.5). */
  CHECK_RMA("fence with MPI_MODE_NOCHECK", MPI_Win_fence(MPI_MODE_NOCHECK, win), MPI_ERR_ASSERT);
  /* A bit that is no MPI_MODE_* constant of this MPI (1 is MPI_MODE_NOCHECK in Open MPI). */
  {
    const int modes = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                      MPI_MODE_NOSUCCEED;
    int unknown = 1;
    while ((unknown & modes) != 0) unknown <<= 1;
    char desc[96];
    snprintf(desc, sizeof desc, "fence with an unknown assertion bit (0x%x)", (unsigned)unknown);
    CHECK_RMA(desc, MPI_Win_fence(unknown, win), MPI_ERR_ASSERT);
    CHECK_RMA("fence with assertion bit 1 << 30", MPI_Win_fence(1 << 30, win), MPI_ERR_ASSERT);
    CHECK_RMA("fence with MPI_MODE_NOPRECEDE and an unknown bit",
              MPI_Win_fence(MPI_MODE_NOPRECEDE | unknown, win), MPI_ERR_ASSERT);
  }

  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  /* Range: the window is kWin ints, disp_unit sizeof(int). */
  CHECK_RMA("put at the window end", MPI_Put(putbuf, 1, MPI_INT, right, kWin, 1, MPI_INT, win),
            MPI_ERR_RMA_RANGE);
  CHECK_RMA("put past the window end",
            MPI_Put(putbuf, 1, MPI_INT, right, kWin + 3, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("put crossing the window end",
            MPI_Put(putbuf, 4, MPI_INT, right, kWin - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("put crossing the window end by one byte (5 x MPI_BYTE at the last int)",
            MPI_Put(putbuf, 5, MPI_BYTE, right, kWin - 1, 5, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("get at the window end", MPI_Get(getbuf, 1, MPI_INT, right, kWin, 1, MPI_INT, win),
            MPI_ERR_RMA_RANGE);
  CHECK_RMA("get crossing the window end",
            MPI_Get(getbuf, 4, MPI_INT, right, kWin - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
  CHECK_RMA("put to self past the window end",
            MPI_Put(putbuf, 1, MPI_INT, mt_rank, kWin, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
  /* Displacement. */
  CHECK_RMA("put with target_disp -1", MPI_Put(putbuf, 1, MPI_INT, right, -1, 1, MPI_INT, win),
            MPI_ERR_DISP);
  CHECK_RMA("get with target_disp -1", MPI_Get(getbuf, 1, MPI_INT, right, -1, 1, MPI_INT, win),
            MPI_ERR_DISP);
  /* Rank. */
  CHECK_RMA("put to rank size", MPI_Put(putbuf, 1, MPI_INT, p, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  CHECK_RMA("put to rank -5", MPI_Put(putbuf, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  CHECK_RMA("get from rank size", MPI_Get(getbuf, 1, MPI_INT, p, 0, 1, MPI_INT, win), MPI_ERR_RANK);
  /* Counts. */
  CHECK_RMA("put with origin_count -1", MPI_Put(putbuf, -1, MPI_INT, right, 0, 1, MPI_INT, win),
            MPI_ERR_COUNT);
  CHECK_RMA("put with target_count -1", MPI_Put(putbuf, 1, MPI_INT, right, 0, -1, MPI_INT, win),
            MPI_ERR_COUNT);
  CHECK_RMA("get with origin_count -1", MPI_Get(getbuf, -1, MPI_INT, right, 0, 1, MPI_INT, win),
            MPI_ERR_COUNT);
  /* Datatypes. */
  CHECK_RMA("put with origin MPI_DATATYPE_NULL",
            MPI_Put(putbuf, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
  CHECK_RMA("put with target MPI_DATATYPE_NULL",
            MPI_Put(putbuf, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
  CHECK_RMA("get with origin MPI_DATATYPE_NULL",
            MPI_Get(getbuf, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
#if ONLY_WITH_INTEGER_HANDLES
  CHECK_RMA("put with garbage datatype 12345",
            MPI_Put(putbuf, 1, (MPI_Datatype)12345, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
  CHECK_RMA("get with garbage target datatype 12345",
            MPI_Get(getbuf, 1, MPI_INT, right, 0, 1, (MPI_Datatype)12345, win), MPI_ERR_TYPE);
#else
  skip("put/get with garbage datatype 12345", kNeedsIntHandles);
#endif
  CHECK_RMA("put of 2 MPI_INT into 1 MPI_DOUBLE (signatures differ)",
            MPI_Put(putbuf, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE);
  CHECK_RMA("get of 1 MPI_DOUBLE into 2 MPI_INT (signatures differ)",
            MPI_Get(getbuf, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE);
  CHECK_RMA("put of 1 MPI_DOUBLE into 2 MPI_INT (signatures differ)",
            MPI_Put(&one_double, 1, MPI_DOUBLE, right, 0, 2, MPI_INT, win), MPI_ERR_TYPE);
  /* Buffer. */
#if ONLY_WITH_INTEGER_HANDLES
  CHECK_RMA("put from a NULL origin with count 1",
            MPI_Put(NULL, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_BUFFER);
  CHECK_RMA("get into a NULL origin with count 1",
            MPI_Get(NULL, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_BUFFER);
#else
  skip("put/get with a NULL origin and count 1", "MPI_BOTTOM is NULL: reads address 0 elsewhere");
#endif
#if ONLY_WITH_INTEGER_HANDLES
  /* MPI_IN_PLACE marks a collective's buffer; as an RMA buffer it is no memory. */
  {
    void* ip = MPI_IN_PLACE;
    int one = 1, res = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_RMA("put from MPI_IN_PLACE", MPI_Put(ip, 1, MPI_INT, right, 0, 1, MPI_INT, win),
              MPI_ERR_BUFFER);
    CHECK_RMA("get into MPI_IN_PLACE", MPI_Get(ip, 1, MPI_INT, right, 0, 1, MPI_INT, win),
              MPI_ERR_BUFFER);
    CHECK_RMA("accumulate from MPI_IN_PLACE",
              MPI_Accumulate(ip, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_BUFFER);
    CHECK_RMA(
        "get_accumulate into MPI_IN_PLACE",
        MPI_Get_accumulate(&one, 1, MPI_INT, ip, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win),
        MPI_ERR_BUFFER);
    CHECK_RMA("fetch_and_op from MPI_IN_PLACE",
              MPI_Fetch_and_op(ip, &res, MPI_INT, right, 0, MPI_SUM, win), MPI_ERR_BUFFER);
    CHECK_RMA("fetch_and_op into MPI_IN_PLACE",
              MPI_Fetch_and_op(&one, ip, MPI_INT, right, 0, MPI_SUM, win), MPI_ERR_BUFFER);
    CHECK_RMA("compare_and_swap with compare MPI_IN_PLACE",
              MPI_Compare_and_swap(&one, ip, &res, MPI_INT, right, 0, win), MPI_ERR_BUFFER);
    CHECK_RMA("rput from MPI_IN_PLACE", MPI_Rput(ip, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req),
              MPI_ERR_BUFFER);
    expect_true("no request from a failed rput", req == MPI_REQUEST_NULL);
    /* With MPI_NO_OP the origin is not looked at (MPI-3.1 §11.3.4), whatever it is. */
    CHECK_RMA("fetch_and_op MPI_NO_OP ignores an MPI_IN_PLACE origin",
              MPI_Fetch_and_op(ip, &res, MPI_INT, right, 0, MPI_NO_OP, win), MPI_SUCCESS);
  }
#else
  skip("RMA buffers of MPI_IN_PLACE", "other MPIs use the marker as an address");
#endif
  /* Window handles. */
  CHECK_RMA("put on MPI_WIN_NULL", MPI_Put(putbuf, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_WIN_NULL),
            MPI_ERR_WIN);
  CHECK_RMA("get on MPI_WIN_NULL", MPI_Get(getbuf, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_WIN_NULL),
            MPI_ERR_WIN);
#if ONLY_WITH_INTEGER_HANDLES
  CHECK_RMA("put on garbage window 777",
            MPI_Put(putbuf, 1, MPI_INT, right, 0, 1, MPI_INT, (MPI_Win)777), MPI_ERR_WIN);
  CHECK_RMA("fence on garbage window 777", MPI_Win_fence(0, (MPI_Win)777), MPI_ERR_WIN);
#else
  skip("put/fence on garbage window 777", kNeedsIntHandles);
#endif
  CHECK_RMA("fence on MPI_WIN_NULL", MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
  {
    void* val = NULL;
    int flag = 0;
    CHECK_RMA("MPI_Win_get_attr with keyval 12345", MPI_Win_get_attr(win, 12345, &val, &flag),
              MPI_ERR_KEYVAL);
    CHECK_RMA("MPI_Win_get_attr on MPI_WIN_NULL",
              MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &val, &flag), MPI_ERR_WIN);
  }

  /* Overflow: displacement * disp_unit and count * size must not wrap around into the window. */
#if ONLY_WITH_INTEGER_HANDLES
  {
    const MPI_Aint huge_disp = (MPI_Aint)(((size_t)-1 >> 1) / 4 + 1); /* * 4 wraps negative */
    CHECK_RMA("put at a displacement whose byte offset overflows",
              MPI_Put(putbuf, 1, MPI_INT, right, huge_disp, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_RMA("get at a displacement whose byte offset overflows",
              MPI_Get(getbuf, 1, MPI_INT, right, huge_disp, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    /* 2^31 - 1 elements of 16+ bytes: more than 2^32 bytes, far past the window. */
    CHECK_RMA("put of INT_MAX x MPI_LONG_DOUBLE_INT",
              MPI_Put(putbuf, 2147483647, MPI_LONG_DOUBLE_INT, right, 0, 2147483647,
                      MPI_LONG_DOUBLE_INT, win),
              MPI_ERR_RMA_RANGE);
    void* val = NULL;
    CHECK_RMA("MPI_Win_get_attr with a NULL flag", MPI_Win_get_attr(win, MPI_WIN_BASE, &val, NULL),
              MPI_ERR_ARG);
  }
#else
  skip("displacement and count overflow", "a missed check would write anywhere");
#endif
  /* Valid edge cases in the same epoch: these must succeed and change nothing. */
  CHECK_RMA("put of count 0 at the window end (valid)",
            MPI_Put(putbuf, 0, MPI_INT, right, kWin, 0, MPI_INT, win), MPI_SUCCESS);
  CHECK_RMA("get of count 0 from a NULL origin (valid)",
            MPI_Get(NULL, 0, MPI_INT, right, 0, 0, MPI_INT, win), MPI_SUCCESS);
  CHECK_RMA("put to MPI_PROC_NULL (valid)",
            MPI_Put(putbuf, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win), MPI_SUCCESS);
  CHECK_RMA("MPI_Win_set_errhandler with MPI_ERRHANDLER_NULL",
            MPI_Win_set_errhandler(win, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
  {
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MT_CHECK(MPI_Win_get_errhandler(win, &eh));
    snprintf(what, sizeof what, "%s window keeps MPI_ERRORS_RETURN after the failed set", flavor);
    expect_true(what, eh == MPI_ERRORS_RETURN);
  }

  /* Completes the epoch: a put that was wrongly accepted has landed by now. */
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  int changed = 0;
  for (int i = lo; i < hi; ++i) {
    const int want = (i >= 0 && i < kWin) ? window_value(mt_rank, i) : -7777;
    if (base[i] != want) {
      if (changed < 4) {
        fprintf(stderr, "rank %d: %s window: element %d is %d, expected %d\n", mt_rank, flavor, i,
                base[i], want);
      }
      ++changed;
    }
  }
  snprintf(what, sizeof what, "%s window%s untouched by the failed calls", flavor,
           guarded ? " and its guard zones" : "");
  expect_true(what, changed == 0);
  int origin_ok = 1;
  for (int i = 0; i < 8; ++i) origin_ok &= putbuf[i] == -1 - i && getbuf[i] == -100 - i;
  snprintf(what, sizeof what, "origin buffers untouched by the failed calls (%s window)", flavor);
  expect_true(what, origin_ok);

  /* After MPI_MODE_NOSUCCEED no epoch is open. */
  CHECK_RMA("put after a fence with MPI_MODE_NOSUCCEED",
            MPI_Put(putbuf, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
#undef CHECK_RMA
}

static void creation_checks(void) {
  int buf[kWin];
  for (int i = 0; i < kWin; ++i) buf[i] = i;
  MPI_Win win = MPI_WIN_NULL;
  void* base = NULL;
  /* Identical bad arguments on every rank: every rank gets the class itself. */
  expect("MPI_Win_create with size -1",
         MPI_Win_create(buf, -1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE);
  expect("MPI_Win_create with disp_unit 0",
         MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
  expect("MPI_Win_create with disp_unit -4",
         MPI_Win_create(buf, sizeof buf, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
  expect("MPI_Win_create on MPI_COMM_NULL",
         MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_NULL, &win), MPI_ERR_COMM);
  expect("MPI_Win_allocate with size -1",
         MPI_Win_allocate(-1, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_SIZE);
  expect("MPI_Win_allocate with disp_unit 0",
         MPI_Win_allocate(64, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_ERR_DISP);
#if ONLY_WITH_INTEGER_HANDLES
  expect("MPI_Win_allocate with a NULL baseptr",
         MPI_Win_allocate(64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &win), MPI_ERR_ARG);
  /* A bad argument on rank 0 only: the creation fails on every rank instead of leaving the
   * others waiting; they get MPI_ERR_OTHER naming rank 0 (onesided's documented behaviour). */
  expect(mt_rank == 0 ? "MPI_Win_create with size -1 on rank 0 only (this rank's own error)"
                      : "MPI_Win_create with size -1 on rank 0 only (another rank's error)",
         MPI_Win_create(buf, mt_rank == 0 ? -1 : (MPI_Aint)sizeof buf, 4, MPI_INFO_NULL,
                        MPI_COMM_WORLD, &win),
         mt_rank == 0 ? MPI_ERR_SIZE : MPI_ERR_OTHER);
#else
  skip("MPI_Win_allocate with a NULL baseptr", kNeedsIntHandles);
  skip("MPI_Win_create with a bad size on rank 0 only", "would leave the other ranks waiting");
#endif
  int same = 1;
  for (int i = 0; i < kWin; ++i) same &= buf[i] == i;
  expect_true("buffer of the failed MPI_Win_create untouched", same);
  expect_true("no window returned by the failed creations", win == MPI_WIN_NULL);
}

static void misc_checks(void) {
  int r = -42;
  expect("MPI_Comm_rank with a NULL rank", MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  expect("MPI_Comm_rank on MPI_COMM_NULL", MPI_Comm_rank(MPI_COMM_NULL, &r), MPI_ERR_COMM);
  expect_true("rank output untouched by the failed MPI_Comm_rank", r == -42);
  expect("MPI_Comm_size on MPI_COMM_NULL", MPI_Comm_size(MPI_COMM_NULL, &r), MPI_ERR_COMM);
  char str[MPI_MAX_ERROR_STRING];
  int len = 0;
  expect("MPI_Error_string of code -5", MPI_Error_string(-5, str, &len), MPI_ERR_ARG);
  expect("MPI_Error_string of code 1000000 (never returned)", MPI_Error_string(1000000, str, &len),
         MPI_ERR_ARG);
  int cls = 0;
  expect("MPI_Error_class of code -5", MPI_Error_class(-5, &cls), MPI_ERR_ARG);
  expect("MPI_Error_class of code 1000000 (never returned)", MPI_Error_class(1000000, &cls),
         MPI_ERR_ARG);
  void* mem = (void*)&r;
  expect("MPI_Alloc_mem with size -1", MPI_Alloc_mem(-1, MPI_INFO_NULL, &mem), MPI_ERR_SIZE);
  expect_true("baseptr untouched by the failed MPI_Alloc_mem", mem == (void*)&r);
#if ONLY_WITH_INTEGER_HANDLES
  static char not_from_alloc_mem[64];
  expect("MPI_Free_mem of memory not from MPI_Alloc_mem", MPI_Free_mem(not_from_alloc_mem),
         MPI_ERR_BASE);
  expect("MPI_Comm_set_errhandler with garbage handler 999",
         MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)999), MPI_ERR_ARG);
  expect("MPI_Type_size of garbage datatype 12345", MPI_Type_size((MPI_Datatype)12345, &r),
         MPI_ERR_TYPE);
#else
  skip("MPI_Free_mem of memory not from MPI_Alloc_mem", kNeedsIntHandles);
  skip("MPI_Comm_set_errhandler with garbage handler 999", kNeedsIntHandles);
#endif
  expect("MPI_Comm_set_errhandler with MPI_ERRHANDLER_NULL",
         MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  MT_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
  expect_true("MPI_COMM_WORLD keeps MPI_ERRORS_RETURN after the failed sets",
              eh == MPI_ERRORS_RETURN);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  expect("MPI_Win_set_errhandler on MPI_WIN_NULL",
         MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN), MPI_ERR_WIN);
  MPI_Win nowin = MPI_WIN_NULL;
  expect("MPI_Win_free of MPI_WIN_NULL", MPI_Win_free(&nowin), MPI_ERR_WIN);
  expect("MPI_Comm_set_errhandler on MPI_COMM_NULL",
         MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM);
#if ONLY_WITH_INTEGER_HANDLES
  {
    /* A freed window's handle is stale: every call on it fails, none reaches freed memory. */
    int* sbase = NULL;
    MPI_Win stale = MPI_WIN_NULL;
    MT_CHECK(MPI_Win_allocate(4 * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &sbase, &stale));
    const MPI_Win copy = stale;
    MT_CHECK(MPI_Win_free(&stale));
    void* val = NULL;
    int flag = 0;
    int one = 1;
    expect("MPI_Win_get_attr on a freed window", MPI_Win_get_attr(copy, MPI_WIN_BASE, &val, &flag),
           MPI_ERR_WIN);
    expect("MPI_Win_fence on a freed window", MPI_Win_fence(0, copy), MPI_ERR_WIN);
    expect("MPI_Put on a freed window", MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, copy),
           MPI_ERR_WIN);
    MPI_Win again = copy;
    expect("MPI_Win_free of a freed window", MPI_Win_free(&again), MPI_ERR_WIN);
  }
  expect("MPI_Alloc_mem with a NULL baseptr", MPI_Alloc_mem(16, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  expect("MPI_Type_size with a NULL size", MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
  expect("MPI_Error_string with a NULL string", MPI_Error_string(MPI_ERR_ARG, NULL, &len),
         MPI_ERR_ARG);
#else
  skip("calls on a freed window handle", kNeedsIntHandles);
  skip("NULL output pointers", kNeedsIntHandles);
#endif
  expect("MPI_Type_size of MPI_DATATYPE_NULL", MPI_Type_size(MPI_DATATYPE_NULL, &r), MPI_ERR_TYPE);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

  creation_checks();

  /* A create window inside a larger allocation: guard zones on both sides. */
  int* buf = malloc(kBuf * sizeof *buf);
  if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Win wc;
  MT_CHECK(MPI_Win_create(buf + kGuard, kWin * (MPI_Aint)sizeof(int), (int)sizeof(int),
                          MPI_INFO_NULL, MPI_COMM_WORLD, &wc));
  MT_CHECK(MPI_Win_set_errhandler(wc, MPI_ERRORS_RETURN));
  rma_checks("create", wc, buf + kGuard, 1);
  MT_CHECK(MPI_Win_free(&wc));
  free(buf);

#if ONLY_WITH_INTEGER_HANDLES
  /* The same on an allocate window (no guard zones: elsewhere a missed range check would write
   * outside the allocation). */
  int* abase = NULL;
  MPI_Win wa;
  MT_CHECK(MPI_Win_allocate(kWin * (MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &abase, &wa));
  MT_CHECK(MPI_Win_set_errhandler(wa, MPI_ERRORS_RETURN));
  rma_checks("allocate", wa, abase, 0);
  MT_CHECK(MPI_Win_free(&wa));
#else
  skip("the RMA checks on an allocate window", "a missed range check would corrupt the heap");
#endif

  misc_checks();
  printf("rank %d: %s\n", mt_rank, mt_failures == 0 ? "all checks passed" : "some checks FAILED");
  return mt_finish();
}
