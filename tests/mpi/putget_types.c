/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Put and MPI_Get of every predefined C datatype, to the right neighbour in a ring and to
 * self, on an MPI_Win_allocate and an MPI_Win_create window, with counts 0, 1 and kMany.
 * Values are written and compared through the C types (pair types: members only, never the
 * padding); MPI_Type_size and MPI_Type_get_extent are checked against the C sizes.
 *
 * Window of one type (disp_unit = extent, so displacements count elements):
 *   [0]            ring, count 1      written by the left neighbour
 *   [1 .. kMany]   ring, count kMany  written by the left neighbour
 *   [kMany+1]      self, count 1
 *   [kMany+2 ..]   self, count kMany
 *   count-0 puts and gets go to element 0 and must change nothing.
 * Output (identical under any MPI): "rank R: TYPE ok" per type, then a summary line. */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mpitest.h"

enum { kMany = 7, kSlots = 2 * kMany + 2 };

/* One value per (type, source rank, element): set() stores it, check() compares it. */
typedef void (*SetFn)(void* p, long v);
typedef bool (*CheckFn)(const void* p, long v);

#define SCALAR(NAME, T, EXPR)                          \
  static T make_##NAME(long v) { return (T)(EXPR); }   \
  static void set_##NAME(void* p, long v) {            \
    T x;                                               \
    memset(&x, 0, sizeof x); /* long double padding */ \
    x = make_##NAME(v);                                \
    memcpy(p, &x, sizeof x);                           \
  }                                                    \
  static bool check_##NAME(const void* p, long v) {    \
    T x;                                               \
    memcpy(&x, p, sizeof x);                           \
    return x == make_##NAME(v);                        \
  }

/* Pair types: only the members are written (the padding keeps whatever it held). */
#define PAIR(NAME, S, VT)                                                    \
  typedef struct {                                                           \
    VT val;                                                                  \
    int idx;                                                                 \
  } S;                                                                       \
  static void set_##NAME(void* p, long v) {                                  \
    VT val = (VT)(v % 1000 + 0.5 * (v % 2));                                 \
    int idx = (int)(v * 3 + 1);                                              \
    memcpy((char*)p + offsetof(S, val), &val, sizeof val);                   \
    memcpy((char*)p + offsetof(S, idx), &idx, sizeof idx);                   \
  }                                                                          \
  static bool check_##NAME(const void* p, long v) {                          \
    VT val;                                                                  \
    int idx;                                                                 \
    memcpy(&val, (const char*)p + offsetof(S, val), sizeof val);             \
    memcpy(&idx, (const char*)p + offsetof(S, idx), sizeof idx);             \
    return val == (VT)(v % 1000 + 0.5 * (v % 2)) && idx == (int)(v * 3 + 1); \
  }

SCALAR(char, char, 'A' + v % 26)
SCALAR(schar, signed char, v % 2 ? -(v % 100) : v % 100)
SCALAR(uchar, unsigned char, 128 + v % 100)
SCALAR(byte, unsigned char, (v * 37) % 256)
SCALAR(wchar, wchar_t, 0x3b1 + v % 1000)
SCALAR(short, short, -(v % 20000))
SCALAR(ushort, unsigned short, 40000 + v % 20000)
SCALAR(int, int, -v * 1001)
SCALAR(uint, unsigned, 3000000000u + (unsigned)v)
SCALAR(long, long, -v * 1000003L)
SCALAR(ulong, unsigned long, ~0UL - (unsigned long)v)
SCALAR(llong, long long, -v * 1000000007LL)
SCALAR(ullong, unsigned long long, ~0ULL - (unsigned long long)v * 3)
SCALAR(float, float, (float)v + 0.25f)
SCALAR(double, double, (double)v * 1e10 + 0.125)
SCALAR(ldouble, long double, (long double)v / 3.0L)
SCALAR(int8, int8_t, -(v % 120))
SCALAR(int16, int16_t, -(v % 30000))
SCALAR(int32, int32_t, -v * 7919)
SCALAR(int64, int64_t, -v * 1000000000039LL)
SCALAR(uint8, uint8_t, 200 + v % 50)
SCALAR(uint16, uint16_t, 60000 + v % 5000)
SCALAR(uint32, uint32_t, 4000000000u + (uint32_t)v)
SCALAR(uint64, uint64_t, 0xfedcba9876543210ULL ^ (uint64_t)v)
SCALAR(bool, bool, v % 3 == 1)
SCALAR(cfloat, float _Complex, (float)v + (float)(v + 1) * I)
SCALAR(cdouble, double _Complex, (double)v / 7.0 - (double)v * 1e-3 * I)
SCALAR(cldouble, long double _Complex, (long double)v / 3.0L + (long double)(v + 2) * I)
SCALAR(aint, MPI_Aint, -v * 4096)
SCALAR(offset, MPI_Offset, v * 1099511627776LL)
SCALAR(count, MPI_Count, -v * 65537)
SCALAR(packed, unsigned char, (v * 11) % 256)
PAIR(float_int, FloatInt, float)
PAIR(double_int, DoubleInt, double)
PAIR(long_int, LongInt, long)
PAIR(two_int, TwoInt, int)
PAIR(short_int, ShortInt, short)
PAIR(ldouble_int, LongDoubleInt, long double)

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t size;   /* expected MPI_Type_size: the members' sizes */
  size_t extent; /* expected extent: sizeof the C type */
  SetFn set;
  CheckFn check;
} TypeCase;

#define T_SCALAR(MT, NAME, T) \
  { MT, #MT, sizeof(T), sizeof(T), set_##NAME, check_##NAME }
#define T_PAIR(MT, NAME, S, VT) \
  { MT, #MT, sizeof(VT) + sizeof(int), sizeof(S), set_##NAME, check_##NAME }

/* Value of element e written by rank src for type t, unique within the test. */
static long value(int t, int src, int e) { return 1 + t + 64L * (e + 1 + 32L * src); }

static void fill(const TypeCase* tc, int t, char* buf, int src, int first, int n) {
  for (int e = 0; e < n; ++e) tc->set(buf + (size_t)e * tc->extent, value(t, src, first + e));
}

/* Counts elements of buf that do not hold rank src's values first .. first+n-1. */
static int mismatches(const TypeCase* tc, int t, const char* buf, int src, int first, int n) {
  int bad = 0;
  for (int e = 0; e < n; ++e)
    bad += !tc->check(buf + (size_t)e * tc->extent, value(t, src, first + e));
  return bad;
}

static int is_filled(const char* p, size_t n, unsigned char byte) {
  for (size_t i = 0; i < n; ++i) {
    if ((unsigned char)p[i] != byte) return 0;
  }
  return 1;
}

/* One type on one window flavor; returns the number of problems found on this rank. */
static int run_case(const TypeCase* tc, int t, int allocate) {
  const int me = mt_rank;
  const int right = (me + 1) % mt_size;
  const int left = (me + mt_size - 1) % mt_size;
  const size_t ext = tc->extent;
  const size_t bytes = kSlots * ext;
  int bad = 0;

  char* base = NULL;
  char* user = NULL;
  MPI_Win win;
  if (allocate) {
    MT_CHECK(
        MPI_Win_allocate((MPI_Aint)bytes, (int)ext, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  } else {
    user = malloc(bytes);
    if (user == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    base = user;
    MT_CHECK(MPI_Win_create(base, (MPI_Aint)bytes, (int)ext, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  }
  memset(base, 0xA5, bytes); /* local stores: before the first fence */

  char* origin = malloc((kMany + 1) * ext);
  char* got = malloc((kMany + 1) * ext);
  if (origin == NULL || got == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  memset(origin, 0, (kMany + 1) * ext);
  fill(tc, t, origin, me, 0, kMany + 1);

  /* Put epoch. The origin buffer is not modified until the closing fence. */
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  MT_CHECK(MPI_Put(origin, 0, tc->type, right, 0, 0, tc->type, win));
  MT_CHECK(MPI_Put(origin, 1, tc->type, right, 0, 1, tc->type, win));
  MT_CHECK(MPI_Put(origin + ext, kMany, tc->type, right, 1, kMany, tc->type, win));
  MT_CHECK(MPI_Put(origin, 0, tc->type, me, kMany + 1, 0, tc->type, win));
  MT_CHECK(MPI_Put(origin, 1, tc->type, me, kMany + 1, 1, tc->type, win));
  MT_CHECK(MPI_Put(origin + ext, kMany, tc->type, me, kMany + 2, kMany, tc->type, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE, win));

  /* The window is read here and written by nobody until it is freed: the gets below read. */
  bad += mismatches(tc, t, base, left, 0, kMany + 1);
  bad += mismatches(tc, t, base + (kMany + 1) * ext, me, 0, kMany + 1);

  /* Get epoch (no puts: MPI_MODE_NOPUT on both fences). From the right neighbour: its ring
   * slots hold my values, its self slots its own values. */
  memset(got, 0x5A, (kMany + 1) * ext);
  MT_CHECK(MPI_Get(got, 0, tc->type, right, 0, 0, tc->type, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win)); /* count 0 */
  if (!is_filled(got, (kMany + 1) * ext, 0x5A)) {
    fprintf(stderr, "rank %d: %s: a get of count 0 wrote to the origin\n", me, tc->name);
    ++bad;
  }
  MT_CHECK(MPI_Get(got, 1, tc->type, right, 0, 1, tc->type, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
  bad += mismatches(tc, t, got, me, 0, 1);
  if (!is_filled(got + ext, kMany * ext, 0x5A)) {
    fprintf(stderr, "rank %d: %s: a get of count 1 wrote past its element\n", me, tc->name);
    ++bad;
  }
  MT_CHECK(MPI_Get(got, kMany, tc->type, right, 1, kMany, tc->type, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
  bad += mismatches(tc, t, got, me, 1, kMany);
  MT_CHECK(MPI_Get(got, 1, tc->type, me, kMany + 1, 1, tc->type, win));
  MT_CHECK(MPI_Get(got + ext, kMany, tc->type, right, kMany + 2, kMany, tc->type, win));
  MT_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED, win));
  bad += mismatches(tc, t, got, me, 0, 1);
  bad += mismatches(tc, t, got + ext, right, 1, kMany);

  /* The origin of the puts is unchanged (compared by value: the padding of long double and of
   * the pair types carries no value). */
  if (mismatches(tc, t, origin, me, 0, kMany + 1) != 0) {
    fprintf(stderr, "rank %d: %s: the put origin buffer changed\n", me, tc->name);
    ++bad;
  }
  MT_CHECK(MPI_Win_free(&win));
  free(user);
  free(origin);
  free(got);
  if (bad != 0) {
    fprintf(stderr, "rank %d: %s on %s window: %d mismatches\n", me, tc->name,
            allocate ? "allocate" : "create", bad);
  }
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  /* Built here rather than at file scope: in other MPIs the handles are not constants. */
  const TypeCase cases[] = {
      T_SCALAR(MPI_CHAR, char, char),
      T_SCALAR(MPI_SIGNED_CHAR, schar, signed char),
      T_SCALAR(MPI_UNSIGNED_CHAR, uchar, unsigned char),
      T_SCALAR(MPI_BYTE, byte, unsigned char),
      T_SCALAR(MPI_WCHAR, wchar, wchar_t),
      T_SCALAR(MPI_SHORT, short, short),
      T_SCALAR(MPI_UNSIGNED_SHORT, ushort, unsigned short),
      T_SCALAR(MPI_INT, int, int),
      T_SCALAR(MPI_UNSIGNED, uint, unsigned),
      T_SCALAR(MPI_LONG, long, long),
      T_SCALAR(MPI_UNSIGNED_LONG, ulong, unsigned long),
      T_SCALAR(MPI_LONG_LONG_INT, llong, long long),
      T_SCALAR(MPI_LONG_LONG, llong, long long),
      T_SCALAR(MPI_UNSIGNED_LONG_LONG, ullong, unsigned long long),
      T_SCALAR(MPI_FLOAT, float, float),
      T_SCALAR(MPI_DOUBLE, double, double),
      T_SCALAR(MPI_LONG_DOUBLE, ldouble, long double),
      T_SCALAR(MPI_INT8_T, int8, int8_t),
      T_SCALAR(MPI_INT16_T, int16, int16_t),
      T_SCALAR(MPI_INT32_T, int32, int32_t),
      T_SCALAR(MPI_INT64_T, int64, int64_t),
      T_SCALAR(MPI_UINT8_T, uint8, uint8_t),
      T_SCALAR(MPI_UINT16_T, uint16, uint16_t),
      T_SCALAR(MPI_UINT32_T, uint32, uint32_t),
      T_SCALAR(MPI_UINT64_T, uint64, uint64_t),
      T_SCALAR(MPI_C_BOOL, bool, bool),
      T_SCALAR(MPI_C_FLOAT_COMPLEX, cfloat, float _Complex),
      T_SCALAR(MPI_C_COMPLEX, cfloat, float _Complex),
      T_SCALAR(MPI_C_DOUBLE_COMPLEX, cdouble, double _Complex),
      T_SCALAR(MPI_C_LONG_DOUBLE_COMPLEX, cldouble, long double _Complex),
      T_SCALAR(MPI_AINT, aint, MPI_Aint),
      T_SCALAR(MPI_OFFSET, offset, MPI_Offset),
      T_SCALAR(MPI_COUNT, count, MPI_Count),
      T_SCALAR(MPI_PACKED, packed, unsigned char),
      T_PAIR(MPI_FLOAT_INT, float_int, FloatInt, float),
      T_PAIR(MPI_DOUBLE_INT, double_int, DoubleInt, double),
      T_PAIR(MPI_LONG_INT, long_int, LongInt, long),
      T_PAIR(MPI_2INT, two_int, TwoInt, int),
      T_PAIR(MPI_SHORT_INT, short_int, ShortInt, short),
      T_PAIR(MPI_LONG_DOUBLE_INT, ldouble_int, LongDoubleInt, long double),
  };
  const int ncases = (int)(sizeof cases / sizeof cases[0]);
  int failed_types = 0;
  for (int t = 0; t < ncases; ++t) {
    const TypeCase* tc = &cases[t];
    int problems = 0;
    int size = -1;
    MPI_Aint lb = -1;
    MPI_Aint extent = -1;
    MT_CHECK(MPI_Type_size(tc->type, &size));
    MT_CHECK(MPI_Type_get_extent(tc->type, &lb, &extent));
    MT_EXPECT(size == (int)tc->size, "%s: MPI_Type_size %d, C size %zu", tc->name, size, tc->size);
    MT_EXPECT(lb == 0 && extent == (MPI_Aint)tc->extent, "%s: lb %ld extent %ld, sizeof %zu",
              tc->name, (long)lb, (long)extent, tc->extent);
    problems += size != (int)tc->size || lb != 0 || extent != (MPI_Aint)tc->extent;
    problems += run_case(tc, t, 1);
    problems += run_case(tc, t, 0);
    mt_failures += problems != 0;
    failed_types += problems != 0;
    printf("rank %d: %s size %d extent %ld %s\n", mt_rank, tc->name, size, (long)extent,
           problems == 0 ? "ok" : "FAILED");
  }
  printf("rank %d: %d types x 2 flavors x {ring, self} x counts {0, 1, %d}: %s\n", mt_rank, ncases,
         kMany, failed_types == 0 ? "ok" : "FAILED");
  return mt_finish();
}
