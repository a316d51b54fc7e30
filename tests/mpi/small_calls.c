/* SPDX-License-Identifier: BSD-3-Clause */
/* The smaller MPI-3.1 calls third-party programs use: MPI_Type_match_size, the Fortran 90
 * parameterized types, the _x queries, MPI_Status_set_cancelled / _elements, communicator hints,
 * MPI_Pcontrol, MPI_Comm_get_parent, external32 packing, MPI-1's datatype names, the dynamic
 * process calls (unsupported: their error classes), and MPI_CHAR under the arithmetic operations
 * in reductions and accumulates (as Open MPI and MPICH take it: a signed 8-bit integer). */
/* Open MPI declares MPI-1's removed names only when asked to (its 4.1 still ships them). */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include "mpitest.h"

static int type_size(MPI_Datatype t) {
  int s = -1;
  MT_CHECK(MPI_Type_size(t, &s));
  return s;
}

static void match_size(void) {
  MPI_Datatype t;
  static const int int_sizes[] = {1, 2, 4, 8};
  for (int i = 0; i < 4; ++i) {
    MT_CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, int_sizes[i], &t));
    MT_EXPECT(type_size(t) == int_sizes[i], "integer of size %d: %d", int_sizes[i], type_size(t));
  }
  MT_CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
  MT_EXPECT(type_size(t) == 4, "real of size 4");
  MT_CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
  MT_EXPECT(type_size(t) == 8, "real of size 8");
  MT_CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
  MT_EXPECT(type_size(t) == 16, "complex of size 16");
  mt_expect_class("match_size bad class", MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG);
  mt_expect_class("match_size no such size", MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t),
                  MPI_ERR_ARG);

  MT_CHECK(MPI_Type_create_f90_integer(2, &t));
  MT_EXPECT(type_size(t) == 1, "f90 integer r=2: size %d", type_size(t));
  MT_CHECK(MPI_Type_create_f90_integer(9, &t));
  MT_EXPECT(type_size(t) == 4, "f90 integer r=9: size %d", type_size(t));
  MT_CHECK(MPI_Type_create_f90_integer(10, &t));
  MT_EXPECT(type_size(t) == 8, "f90 integer r=10: size %d", type_size(t));
  MT_CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  MT_EXPECT(type_size(t) == 4, "f90 real p=6: size %d", type_size(t));
  MT_CHECK(MPI_Type_create_f90_real(15, 300, &t));
  MT_EXPECT(type_size(t) == 8, "f90 real p=15 r=300: size %d", type_size(t));
  MT_CHECK(MPI_Type_create_f90_complex(MPI_UNDEFINED, 100, &t));
  MT_EXPECT(type_size(t) == 16, "f90 complex r=100: size %d", type_size(t));
  mt_expect_class("f90 integer r=40", MPI_Type_create_f90_integer(40, &t), MPI_ERR_ARG);
  mt_expect_class("f90 real p=60", MPI_Type_create_f90_real(60, MPI_UNDEFINED, &t), MPI_ERR_ARG);
}

static void x_queries(void) {
  MPI_Datatype v;
  MT_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
  MT_CHECK(MPI_Type_commit(&v));
  MPI_Count size = 0, lb = -1, extent = 0;
  MT_CHECK(MPI_Type_size_x(v, &size));
  MT_EXPECT(size == 6 * (MPI_Count)sizeof(int), "size_x %lld", size);
  MT_CHECK(MPI_Type_get_extent_x(v, &lb, &extent));
  MT_EXPECT(lb == 0 && extent == 10 * (MPI_Count)sizeof(int), "extent_x %lld %lld", lb, extent);
  MT_CHECK(MPI_Type_get_true_extent_x(v, &lb, &extent));
  MT_EXPECT(lb == 0 && extent == 10 * (MPI_Count)sizeof(int), "true_extent_x %lld %lld", lb,
            extent);
  MPI_Status st;
  MT_CHECK(MPI_Status_set_elements_x(&st, MPI_INT, 5));
  MPI_Count n = 0;
  MT_CHECK(MPI_Get_elements_x(&st, MPI_INT, &n));
  MT_EXPECT(n == 5, "elements_x %lld", n);
  MT_CHECK(MPI_Status_set_elements(&st, v, 12)); /* basic elements: two vectors' ints */
  int count = 0;
  MT_CHECK(MPI_Get_count(&st, v, &count));
  MT_EXPECT(count == 2, "count %d after set_elements of 12 ints of vectors", count);
  MT_CHECK(MPI_Status_set_elements(&st, v, 2));
  MT_CHECK(MPI_Get_count(&st, v, &count));
  MT_EXPECT(count == MPI_UNDEFINED, "count %d of part of a vector", count);
  int flag = -1;
  MT_CHECK(MPI_Status_set_cancelled(&st, 1));
  MT_CHECK(MPI_Test_cancelled(&st, &flag));
  MT_EXPECT(flag == 1, "set_cancelled 1");
  MT_CHECK(MPI_Status_set_cancelled(&st, 0));
  MT_CHECK(MPI_Test_cancelled(&st, &flag));
  MT_EXPECT(flag == 0, "set_cancelled 0");

  /* MPI-1's names. */
  MPI_Aint e = 0, l = -1, u = 0, a1 = 0, a2 = 0;
  MT_CHECK(MPI_Type_extent(v, &e));
  MT_CHECK(MPI_Type_lb(v, &l));
  MT_CHECK(MPI_Type_ub(v, &u));
  MT_EXPECT(e == 10 * (MPI_Aint)sizeof(int) && l == 0 && u == e, "MPI-1 extent %ld lb %ld ub %ld",
            (long)e, (long)l, (long)u);
  int arr[2];
  MT_CHECK(MPI_Address(&arr[0], &a1));
  MT_CHECK(MPI_Address(&arr[1], &a2));
  MT_EXPECT(a2 - a1 == (MPI_Aint)sizeof(int), "MPI_Address");
  MPI_Datatype h, s;
  MT_CHECK(MPI_Type_hvector(2, 1, 16, MPI_INT, &h));
  MT_CHECK(MPI_Type_extent(h, &e));
  MT_EXPECT(e == 16 + (MPI_Aint)sizeof(int), "MPI_Type_hvector extent %ld", (long)e);
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MT_CHECK(MPI_Type_struct(2, bl, disp, types, &s));
  MT_EXPECT(type_size(s) == (int)(sizeof(int) + sizeof(double)), "MPI_Type_struct size");
  MPI_Datatype hi;
  MT_CHECK(MPI_Type_hindexed(2, bl, disp, MPI_INT, &hi));
  MT_EXPECT(type_size(hi) == 2 * (int)sizeof(int), "MPI_Type_hindexed size");
  MT_CHECK(MPI_Type_free(&hi));
  MT_CHECK(MPI_Type_free(&s));
  MT_CHECK(MPI_Type_free(&h));
  MT_CHECK(MPI_Type_free(&v));
}

static void comm_info(void) {
  MPI_Info info, used;
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
  MPI_Comm c;
  MT_CHECK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
  MT_CHECK(MPI_Info_free(&info));
  MT_CHECK(MPI_Comm_get_info(c, &used));
  int nkeys = -1;
  MT_CHECK(MPI_Info_get_nkeys(used, &nkeys));
  MT_EXPECT(nkeys >= 0, "MPI_Comm_get_info gives an info object");
  MT_CHECK(MPI_Info_free(&used));
  MT_CHECK(MPI_Info_create(&info));
  MT_CHECK(MPI_Info_set(info, "onesided_test_hint", "1"));
  MT_CHECK(MPI_Comm_set_info(c, info));
  MT_CHECK(MPI_Info_free(&info));
  MT_CHECK(MPI_Comm_get_info(c, &used));
  MT_CHECK(MPI_Info_free(&used));
  int size = 0;
  MT_CHECK(MPI_Comm_size(c, &size));
  MT_EXPECT(size == mt_size, "the dup_with_info communicator has every rank");
  MT_CHECK(MPI_Barrier(c));
  MT_CHECK(MPI_Comm_free(&c));
  mt_expect_class("MPI_Comm_get_info MPI_COMM_NULL", MPI_Comm_get_info(MPI_COMM_NULL, &used),
                  MPI_ERR_COMM);
#if defined(ONESIDED_MPI)
  /* Open MPI 4.1 says MPI_ERR_INFO. */
  mt_expect_class("MPI_Comm_get_info NULL", MPI_Comm_get_info(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
#endif

  MT_EXPECT(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0, "x", 2) == MPI_SUCCESS,
            "MPI_Pcontrol");
  MPI_Comm parent = MPI_COMM_WORLD;
  MT_CHECK(MPI_Comm_get_parent(&parent));
  MT_EXPECT(parent == MPI_COMM_NULL, "no parent");
  int main_thread = 0;
  MT_CHECK(MPI_Is_thread_main(&main_thread));
  MT_EXPECT(main_thread, "MPI_Is_thread_main");
}

static void pack_external(void) {
  const char* rep = "external32";
  int ints[2] = {0x01020304, -2};
  double d = 1.5; /* 0x3FF8000000000000 */
  MPI_Aint size = 0;
  MT_CHECK(MPI_Pack_external_size(rep, 2, MPI_INT, &size));
  MT_EXPECT(size == 8, "external32 size of 2 ints: %ld", (long)size);
  unsigned char buf[64];
  MPI_Aint pos = 0;
  MT_CHECK(MPI_Pack_external(rep, ints, 2, MPI_INT, buf, sizeof buf, &pos));
  MT_CHECK(MPI_Pack_external(rep, &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
  MT_EXPECT(pos == 16, "packed 16 bytes: %ld", (long)pos);
  static const unsigned char want[16] = {1,    2,    3, 4, 0xff, 0xff, 0xff, 0xfe,
                                         0x3f, 0xf8, 0, 0, 0,    0,    0,    0};
  MT_EXPECT(memcmp(buf, want, sizeof want) == 0, "external32 is big-endian");
  int ints2[2] = {0, 0};
  double d2 = 0;
  pos = 0;
  MT_CHECK(MPI_Unpack_external(rep, buf, 16, &pos, ints2, 2, MPI_INT));
  MT_CHECK(MPI_Unpack_external(rep, buf, 16, &pos, &d2, 1, MPI_DOUBLE));
  MT_EXPECT(ints2[0] == ints[0] && ints2[1] == ints[1] && d2 == d && pos == 16,
            "external32 round trip");
#if defined(ONESIDED_MPI)
  /* MPI-3.1 §13.5.2's table: a long is 4 bytes in external32 (Open MPI 4.1 packs 8). */
  long l = -3, l2 = 0;
  MT_CHECK(MPI_Pack_external_size(rep, 1, MPI_LONG, &size));
  MT_EXPECT(size == 4, "external32 size of a long: %ld", (long)size);
  pos = 0;
  MT_CHECK(MPI_Pack_external(rep, &l, 1, MPI_LONG, buf, sizeof buf, &pos));
  MT_EXPECT(pos == 4 && buf[0] == 0xff && buf[3] == 0xfd, "a long in 4 big-endian bytes");
  pos = 0;
  MT_CHECK(MPI_Unpack_external(rep, buf, 4, &pos, &l2, 1, MPI_LONG));
  MT_EXPECT(l2 == -3, "a long sign-extended back: %ld", l2);
#endif

  /* A derived type of mixed members. */
  struct {
    short s;
    double x;
  } in = {-7, 2.25}, out = {0, 0};
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_SHORT, MPI_DOUBLE}, st;
  MT_CHECK(MPI_Type_create_struct(2, bl, disp, types, &st));
  MT_CHECK(MPI_Type_commit(&st));
  MT_CHECK(MPI_Pack_external_size(rep, 1, st, &size));
  MT_EXPECT(size == 10, "struct {short; double}: %ld bytes", (long)size);
  pos = 0;
  MT_CHECK(MPI_Pack_external(rep, &in, 1, st, buf, sizeof buf, &pos));
  MT_EXPECT(buf[0] == 0xff && buf[1] == 0xf9 && buf[2] == 0x40 && buf[3] == 0x02,
            "struct packed big-endian");
  pos = 0;
  MT_CHECK(MPI_Unpack_external(rep, buf, 10, &pos, &out, 1, st));
  MT_EXPECT(out.s == -7 && out.x == 2.25, "struct round trip");
  MT_CHECK(MPI_Type_free(&st));

#if defined(ONESIDED_MPI)
  /* Only "external32" is defined for these calls (Open MPI 4.1 accepts any). */
  pos = 0;
  mt_expect_class("datarep native", MPI_Pack_external("native", ints, 2, MPI_INT, buf, 64, &pos),
                  MPI_ERR_ARG);
#endif
  pos = 0;
  int rc = MPI_Pack_external(rep, ints, 2, MPI_INT, buf, 4, &pos);
  MT_EXPECT(rc != MPI_SUCCESS, "packing 8 bytes into 4 fails");
}

static void dynamic(void) {
#if defined(ONESIDED_MPI)
  MPI_Comm inter = MPI_COMM_WORLD;
  char port[MPI_MAX_PORT_NAME];
  /* Open MPI supports these (through its runtime); onesided reports its classes. */
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  mt_expect_class("MPI_Comm_spawn",
                  MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                                 MPI_ERRCODES_IGNORE),
                  MPI_ERR_SPAWN);
  mt_expect_class("MPI_Open_port", MPI_Open_port(MPI_INFO_NULL, port), MPI_ERR_PORT);
  mt_expect_class("MPI_Comm_connect",
                  MPI_Comm_connect("port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
  mt_expect_class("MPI_Publish_name", MPI_Publish_name("svc", MPI_INFO_NULL, "port"),
                  MPI_ERR_SERVICE);
  mt_expect_class("MPI_Lookup_name", MPI_Lookup_name("svc", MPI_INFO_NULL, port), MPI_ERR_NAME);
#endif
  MPI_Comm c;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  MT_CHECK(MPI_Comm_disconnect(&c));
  MT_EXPECT(c == MPI_COMM_NULL, "MPI_Comm_disconnect sets MPI_COMM_NULL");
}

/* MPI_CHAR under MPI_SUM / MPI_MAX: a signed 8-bit integer. */
static void char_ops(void) {
  char mine[3] = {(char)(mt_rank + 1), (char)-1, (char)(mt_rank % 2 == 0 ? -5 : 3)};
  char sum[3] = {0, 0, 0};
  MT_CHECK(MPI_Allreduce(mine, sum, 3, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
  MT_EXPECT(sum[0] == (char)(mt_size * (mt_size + 1) / 2) && sum[1] == (char)-mt_size,
            "MPI_SUM on MPI_CHAR: %d %d", sum[0], sum[1]);
  char mx[3];
  MT_CHECK(MPI_Allreduce(mine, mx, 3, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD));
  MT_EXPECT(mx[2] == (mt_size > 1 ? 3 : -5), "MPI_MAX on MPI_CHAR is signed: %d", mx[2]);
  signed char sc = 1, scs = 0;
  MT_CHECK(MPI_Allreduce(&sc, &scs, 1, MPI_SIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD));
  MT_EXPECT(scs == mt_size, "MPI_SUM on MPI_SIGNED_CHAR");

  char* base = NULL;
  MPI_Win win;
  MT_CHECK(MPI_Win_allocate(4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  memset(base, 0, 4);
  MT_CHECK(MPI_Win_fence(0, win));
  char one[2] = {1, -1};
  MT_CHECK(MPI_Accumulate(one, 2, MPI_CHAR, 0, 0, 2, MPI_CHAR, MPI_SUM, win));
  MT_CHECK(MPI_Win_fence(0, win));
  if (mt_rank == 0) {
    MT_EXPECT(base[0] == (char)mt_size && base[1] == (char)-mt_size,
              "MPI_Accumulate MPI_SUM on MPI_CHAR: %d %d", base[0], base[1]);
  }
  MT_CHECK(MPI_Win_fence(0, win));
  MT_CHECK(MPI_Win_lock_all(0, win));
  char got[2] = {0, 0}, res = 0, two = 2;
  MT_CHECK(MPI_Get_accumulate(one, 2, MPI_CHAR, got, 2, MPI_CHAR, 0, 0, 2, MPI_CHAR, MPI_SUM, win));
  MT_CHECK(MPI_Fetch_and_op(&two, &res, MPI_CHAR, 0, 2, MPI_SUM, win));
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  char final[3] = {0, 0, 0};
  MT_CHECK(MPI_Get(final, 3, MPI_CHAR, 0, 0, 3, MPI_CHAR, win));
  MT_CHECK(MPI_Win_unlock(0, win));
  MT_EXPECT(final[0] == (char)(2 * mt_size) && final[1] == (char)(-2 * mt_size) &&
                final[2] == (char)(2 * mt_size),
            "MPI_Get_accumulate / MPI_Fetch_and_op MPI_SUM on MPI_CHAR: %d %d %d", final[0],
            final[1], final[2]);
  MT_EXPECT(got[0] >= mt_size && got[0] < 2 * mt_size, "fetched %d", got[0]);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MT_CHECK(MPI_Win_free(&win));
}

/* MPI_INFO_ENV (MPI-3.1 §8.7.2) and the C++ datatypes (§3.2.2). */
static void info_env_and_cxx_types(void) {
  int nkeys = -1;
  MT_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys));
  MT_EXPECT(nkeys >= 0, "MPI_INFO_ENV nkeys %d", nkeys);
#if !defined(OPEN_MPI) /* (its keys are its own) */
  char value[64] = "";
  int flag = 0;
  MT_CHECK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", sizeof value - 1, value, &flag));
  MT_EXPECT(flag && atoi(value) == mt_size, "MPI_INFO_ENV maxprocs %s", value);
  MT_CHECK(MPI_Info_get(MPI_INFO_ENV, "thread_level", sizeof value - 1, value, &flag));
  MT_EXPECT(flag && strcmp(value, "MPI_THREAD_SINGLE") == 0, "thread_level %s", value);
  MPI_Info env = MPI_INFO_ENV;
  mt_expect_class("MPI_Info_free(MPI_INFO_ENV)", MPI_Info_free(&env), MPI_ERR_INFO);
#endif
  int size = 0;
  MT_CHECK(MPI_Type_size(MPI_CXX_BOOL, &size));
  MT_EXPECT(size == 1, "MPI_CXX_BOOL size %d", size);
  MT_CHECK(MPI_Type_size(MPI_CXX_DOUBLE_COMPLEX, &size));
  MT_EXPECT(size == 16, "MPI_CXX_DOUBLE_COMPLEX size %d", size);
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  MT_CHECK(MPI_Type_get_name(MPI_CXX_FLOAT_COMPLEX, name, &len));
  MT_EXPECT(strcmp(name, "MPI_CXX_FLOAT_COMPLEX") == 0, "name %s", name);
  unsigned char mine = mt_rank == 0;
  unsigned char any = 0;
  MT_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD));
  MT_EXPECT(any == 1, "MPI_LOR on MPI_CXX_BOOL: %d", any);
  double z[2] = {1.0, (double)mt_rank};
  double sum[2] = {0, 0};
  MT_CHECK(MPI_Allreduce(z, sum, 1, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
  MT_EXPECT(sum[0] == mt_size && sum[1] == mt_size * (mt_size - 1) / 2.0,
            "MPI_SUM on MPI_CXX_DOUBLE_COMPLEX: %g %g", sum[0], sum[1]);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  match_size();
  x_queries();
  comm_info();
  pack_external();
  dynamic();
  char_ops();
  if (mt_rank == 0) printf("small_calls: %s\n", mt_failures == 0 ? "ok" : "FAILED");
  info_env_and_cxx_types();
  return mt_finish();
}
