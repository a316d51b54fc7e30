/* SPDX-License-Identifier: BSD-3-Clause */
/* User-defined reduction operations (MPI_Op_create, MPI-3.1 §5.9.5) and the reductions that
 * take them: MPI_Reduce at every root, MPI_Allreduce, MPI_Reduce_scatter_block,
 * MPI_Reduce_scatter, MPI_Scan, MPI_Exscan (§5.11) and MPI_Reduce_local, each checked against a
 * serial computation.
 *
 * The operation that matters is one that does not commute: composing affine maps x -> a x + b
 * (mod 2^64), "first in, then inout", which is associative, so the standard's rank order is the
 * only right answer. It runs on two layouts of an element {a, b}: contiguous (16 bytes) and a
 * vector with a gap word between a and b (extent 24), whose gaps must stay untouched. The
 * function finds the layout from the datatype handle it is given. Also a commutative user
 * operation, the predefined operations in the new calls (MPI_SUM, MPI_MAX, MPI_MINLOC),
 * MPI_IN_PLACE, and bad input under MPI_ERRORS_RETURN: each error class, nothing written.
 *
 * Also builds against Open MPI (tests/mpi/compare_openmpi.sh). */
#include "mpitest.h"

static MPI_Datatype contig_t, gapped_t; /* the two layouts of {a, b} */

#define GAP 0x5a5a5a5a5a5a5a5aULL

/* Element i of a buffer of `dt` (contig_t or gapped_t): pointers to its a and b. */
static uint64_t* ea(void* buf, MPI_Datatype dt, int i) {
  return (uint64_t*)buf + (dt == gapped_t ? 3 : 2) * i;
}
static uint64_t* eb(void* buf, MPI_Datatype dt, int i) {
  return ea(buf, dt, i) + (dt == gapped_t ? 2 : 1);
}

static int calls_with_other_type = 0;

/* inout = "in, then inout": x -> a2 (a1 x + b1) + b2. */
static void compose(void* in, void* inout, int* len, MPI_Datatype* dt) {
  if (*dt != contig_t && *dt != gapped_t) {
    ++calls_with_other_type;
    return;
  }
  for (int i = 0; i < *len; ++i) {
    const uint64_t a1 = *ea(in, *dt, i), b1 = *eb(in, *dt, i);
    uint64_t* a2 = ea(inout, *dt, i);
    uint64_t* b2 = eb(inout, *dt, i);
    *b2 = *a2 * b1 + *b2;
    *a2 = a1 * *a2;
  }
}

/* A commutative one: inout = in + inout on ints, counting its calls. */
static int isum_calls = 0;
static void isum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  ++isum_calls;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

/* Rank r's element i. */
static uint64_t va(int r, int i) { return (uint64_t)(2 * r + 3 + 5 * i); }
static uint64_t vb(int r, int i) { return (uint64_t)(7 * r + i + 1); }

static void fill(void* buf, MPI_Datatype dt, int n, int r, int first) {
  for (int i = 0; i < n; ++i) {
    *ea(buf, dt, i) = va(r, first + i);
    *eb(buf, dt, i) = vb(r, first + i);
    if (dt == gapped_t) ea(buf, dt, i)[1] = GAP;
  }
}

/* Ranks lo..hi composed in order, element i. */
static void serial(int lo, int hi, int i, uint64_t* a, uint64_t* b) {
  *a = 1;
  *b = 0;
  for (int r = lo; r <= hi; ++r) {
    *b = va(r, i) * *b + vb(r, i);
    *a = *a * va(r, i);
  }
}

/* n elements of buf against ranks lo..hi composed (element first + i); gaps intact. */
static void check(const char* what, void* buf, MPI_Datatype dt, int n, int lo, int hi, int first) {
  for (int i = 0; i < n; ++i) {
    uint64_t a, b;
    serial(lo, hi, first + i, &a, &b);
    MT_EXPECT(*ea(buf, dt, i) == a && *eb(buf, dt, i) == b,
              "%s (%s) element %d: {%llu, %llu}, expected {%llu, %llu}", what,
              dt == gapped_t ? "gapped" : "contiguous", i, (unsigned long long)*ea(buf, dt, i),
              (unsigned long long)*eb(buf, dt, i), (unsigned long long)a, (unsigned long long)b);
    if (dt == gapped_t) {
      MT_EXPECT(ea(buf, dt, i)[1] == GAP, "%s: gap of element %d written", what, i);
    }
  }
}

static void expect(const char* what, int rc, int want) { mt_expect_class(what, rc, want); }

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int p = mt_size, me = mt_rank;
  MPI_Comm w = MPI_COMM_WORLD;
  MT_CHECK(MPI_Type_contiguous(2, MPI_UINT64_T, &contig_t));
  MT_CHECK(MPI_Type_vector(2, 1, 2, MPI_UINT64_T, &gapped_t));
  MT_CHECK(MPI_Type_commit(&contig_t));
  MT_CHECK(MPI_Type_commit(&gapped_t));
  MPI_Op comp, sum;
  MT_CHECK(MPI_Op_create(compose, 0, &comp));
  MT_CHECK(MPI_Op_create(isum, 1, &sum));
  int commute = -1;
  MT_CHECK(MPI_Op_commutative(comp, &commute));
  MT_EXPECT(commute == 0, "MPI_Op_commutative of compose: %d", commute);
  MT_CHECK(MPI_Op_commutative(sum, &commute));
  MT_EXPECT(commute == 1, "MPI_Op_commutative of isum: %d", commute);
  MT_CHECK(MPI_Op_commutative(MPI_SUM, &commute));
  MT_EXPECT(commute == 1, "MPI_Op_commutative of MPI_SUM: %d", commute);

  /* Counts: 1, a few, and one that spans several scratch chunks (6000 x 24 bytes). */
  const int counts[] = {1, 5, 6000};
  const int maxn = 6000 * p;
  uint64_t* in = malloc((size_t)maxn * 3 * sizeof(uint64_t));
  uint64_t* out = malloc((size_t)maxn * 3 * sizeof(uint64_t));
  int* rcounts = malloc((size_t)p * sizeof(int));
  if (in == NULL || out == NULL || rcounts == NULL) MPI_Abort(w, 2);
  const MPI_Datatype types[] = {contig_t, gapped_t};
  for (int ti = 0; ti < 2; ++ti) {
    const MPI_Datatype dt = types[ti];
    for (int ci = 0; ci < 3; ++ci) {
      const int n = counts[ci];
      for (int root = 0; root < p; ++root) {
        fill(in, dt, n, me, 0);
        fill(out, dt, n, -1, 0); /* gaps set; values to be overwritten at the root */
        MT_CHECK(MPI_Reduce(in, out, n, dt, comp, root, w));
        if (me == root) check("MPI_Reduce", out, dt, n, 0, p - 1, 0);
        /* In place at the root. */
        fill(me == root ? out : in, dt, n, me, 0);
        MT_CHECK(MPI_Reduce(me == root ? MPI_IN_PLACE : in, out, n, dt, comp, root, w));
        if (me == root) check("MPI_Reduce in place", out, dt, n, 0, p - 1, 0);
      }
      fill(in, dt, n, me, 0);
      fill(out, dt, n, -1, 0);
      MT_CHECK(MPI_Allreduce(in, out, n, dt, comp, w));
      check("MPI_Allreduce", out, dt, n, 0, p - 1, 0);
      fill(out, dt, n, me, 0);
      MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, out, n, dt, comp, w));
      check("MPI_Allreduce in place", out, dt, n, 0, p - 1, 0);

      fill(in, dt, n, me, 0);
      fill(out, dt, n, -1, 0);
      MT_CHECK(MPI_Scan(in, out, n, dt, comp, w));
      check("MPI_Scan", out, dt, n, 0, me, 0);
      fill(out, dt, n, me, 0);
      MT_CHECK(MPI_Scan(MPI_IN_PLACE, out, n, dt, comp, w));
      check("MPI_Scan in place", out, dt, n, 0, me, 0);

      fill(in, dt, n, me, 0);
      fill(out, dt, n, -1, 0);
      MT_CHECK(MPI_Exscan(in, out, n, dt, comp, w));
      if (me > 0) {
        check("MPI_Exscan", out, dt, n, 0, me - 1, 0);
      } else {
        check("MPI_Exscan leaves rank 0's buffer", out, dt, n, -1, -1, 0); /* the values it had */
      }
      fill(out, dt, n, me, 0);
      MT_CHECK(MPI_Exscan(MPI_IN_PLACE, out, n, dt, comp, w));
      if (me > 0) check("MPI_Exscan in place", out, dt, n, 0, me - 1, 0);

      /* Reduce_scatter_block: block r of the p * n elements to rank r. */
      fill(in, dt, n * p, me, 0);
      fill(out, dt, n, -1, 0);
      MT_CHECK(MPI_Reduce_scatter_block(in, out, n, dt, comp, w));
      check("MPI_Reduce_scatter_block", out, dt, n, 0, p - 1, me * n);
      /* Reduce_scatter: rank r gets (r + ci) % 3 * n / 2 elements (some get none). */
      int total = 0, first = 0;
      for (int r = 0; r < p; ++r) {
        rcounts[r] = (r + ci) % 3 * n / 2;
        if (r < me) first += rcounts[r];
        total += rcounts[r];
      }
      fill(in, dt, total, me, 0);
      fill(out, dt, n, -1, 0);
      MT_CHECK(MPI_Reduce_scatter(in, out, rcounts, dt, comp, w));
      check("MPI_Reduce_scatter", out, dt, rcounts[me], 0, p - 1, first);
      fill(out, dt, total, me, 0);
      MT_CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, out, rcounts, dt, comp, w));
      check("MPI_Reduce_scatter in place", out, dt, rcounts[me], 0, p - 1, first);
    }
  }
  MT_EXPECT(calls_with_other_type == 0, "compose was called with %d other datatypes",
            calls_with_other_type);

  /* MPI_Reduce_local: inout = in op inout. */
  fill(in, gapped_t, 3, 1, 0);
  fill(out, gapped_t, 3, 2, 0);
  MT_CHECK(MPI_Reduce_local(in, out, 3, gapped_t, comp));
  check("MPI_Reduce_local", out, gapped_t, 3, 1, 2, 0);

  /* The commutative one, and predefined operations in the new calls. */
  int iv[4], ir[4 * 8];
  for (int i = 0; i < 4; ++i) iv[i] = (me + 1) * (i + 1);
  MT_CHECK(MPI_Allreduce(iv, ir, 4, MPI_INT, sum, w));
  for (int i = 0; i < 4; ++i) {
    MT_EXPECT(ir[i] == p * (p + 1) / 2 * (i + 1), "isum allreduce [%d]: %d", i, ir[i]);
  }
  int all_calls = 0;
  MT_CHECK(MPI_Allreduce(&isum_calls, &all_calls, 1, MPI_INT, MPI_SUM, w));
  MT_EXPECT(p == 1 || all_calls > 0, "isum was never called");
  MT_CHECK(MPI_Scan(iv, ir, 4, MPI_INT, MPI_SUM, w));
  for (int i = 0; i < 4; ++i) {
    MT_EXPECT(ir[i] == (me + 1) * (me + 2) / 2 * (i + 1), "MPI_SUM scan [%d]: %d", i, ir[i]);
  }
  ir[0] = -7;
  MT_CHECK(MPI_Exscan(iv, ir, 4, MPI_INT, MPI_SUM, w));
  for (int i = 0; i < 4 && me > 0; ++i) {
    MT_EXPECT(ir[i] == me * (me + 1) / 2 * (i + 1), "MPI_SUM exscan [%d]: %d", i, ir[i]);
  }
  if (me == 0) MT_EXPECT(ir[0] == -7, "exscan wrote rank 0's buffer: %d", ir[0]);
  double dv[2] = {(double)((me * 5) % p), -(double)me}, dr[2];
  MT_CHECK(MPI_Scan(dv, dr, 2, MPI_DOUBLE, MPI_MAX, w));
  double m0 = 0;
  for (int r = 0; r <= me; ++r) m0 = (double)((r * 5) % p) > m0 ? (double)((r * 5) % p) : m0;
  MT_EXPECT(dr[0] == m0 && dr[1] == 0.0, "MPI_MAX scan: %g %g, expected %g 0", dr[0], dr[1], m0);
  struct vr {
    int v;
    int r;
  } loc = {(me * 3) % 4, me}, locr[8], locs[8];
  for (int r = 0; r < p; ++r) rcounts[r] = 1;
  for (int r = 0; r < p && r < 8; ++r) locs[r] = loc;
  if (p <= 8) {
    MT_CHECK(MPI_Reduce_scatter(locs, locr, rcounts, MPI_2INT, MPI_MINLOC, w));
    int mv = 99, mr = -1;
    for (int r = 0; r < p; ++r) {
      if ((r * 3) % 4 < mv) {
        mv = (r * 3) % 4;
        mr = r;
      }
    }
    MT_EXPECT(locr[0].v == mv && locr[0].r == mr,
              "MINLOC reduce_scatter: {%d, %d}, expected "
              "{%d, %d}",
              locr[0].v, locr[0].r, mv, mr);
  }

  /* Bad input: every rank passes the same, so every rank fails the same. */
  MT_CHECK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
  ir[0] = 12345;
  expect("MPI_Scan with MPI_REPLACE", MPI_Scan(iv, ir, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP);
  expect("MPI_Scan with a negative count", MPI_Scan(iv, ir, -1, MPI_INT, MPI_SUM, w),
         MPI_ERR_COUNT);
  expect("MPI_Exscan with MPI_OP_NULL", MPI_Exscan(iv, ir, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
  expect("MPI_Scan with MPI_SUM on MPI_2INT", MPI_Scan(iv, ir, 1, MPI_2INT, MPI_SUM, w),
         MPI_ERR_OP);
#ifdef ONESIDED_MPI
  /* Open MPI 4.1 returns MPI_SUCCESS for the first and MPI_ERR_COUNT for the second. */
  expect("MPI_Scan with aliased buffers", MPI_Scan(iv, iv, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
  expect("MPI_Reduce_scatter with NULL recvcounts",
         MPI_Reduce_scatter(iv, ir, NULL, MPI_INT, MPI_SUM, w), MPI_ERR_ARG);
#endif
  for (int r = 0; r < p; ++r) rcounts[r] = r == p - 1 ? -2 : 1;
  expect("MPI_Reduce_scatter with a negative count",
         MPI_Reduce_scatter(iv, ir, rcounts, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
  MT_EXPECT(ir[0] == 12345, "a failed call wrote the receive buffer: %d", ir[0]);
  expect("MPI_Op_free of MPI_SUM", MPI_Op_free(&(MPI_Op){MPI_SUM}), MPI_ERR_OP);
  expect("MPI_Op_create with a NULL function", MPI_Op_create(NULL, 1, &(MPI_Op){0}), MPI_ERR_ARG);
  expect("MPI_Reduce_local with a negative count", MPI_Reduce_local(iv, ir, -1, MPI_INT, sum),
         MPI_ERR_COUNT);
  /* User operations are not for RMA (MPI-3.1 §11.3.4). */
  MPI_Win win;
  int* wbase;
  MT_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, w, &wbase, &win));
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  *wbase = 0;
  MT_CHECK(MPI_Win_fence(0, win));
  expect("MPI_Accumulate with a user operation",
         MPI_Accumulate(iv, 1, MPI_INT, 0, 0, 1, MPI_INT, sum, win), MPI_ERR_OP);
  MT_CHECK(MPI_Win_fence(0, win));
  MT_EXPECT(*wbase == 0, "the refused accumulate changed the window: %d", *wbase);
  MT_CHECK(MPI_Win_free(&win));
  /* A freed operation is gone, whatever call names it. */
  MPI_Op stale = sum;
  MT_CHECK(MPI_Op_free(&sum));
  MT_EXPECT(sum == MPI_OP_NULL, "MPI_Op_free did not set the handle to MPI_OP_NULL");
#ifdef ONESIDED_MPI
  /* Open MPI 4.1 uses the freed object (a crash). */
  expect("MPI_Allreduce with a freed operation", MPI_Allreduce(iv, ir, 1, MPI_INT, stale, w),
         MPI_ERR_OP);
  expect("MPI_Op_free of a freed operation", MPI_Op_free(&stale), MPI_ERR_OP);
  expect("MPI_Op_commutative of a freed operation", MPI_Op_commutative(stale, &commute),
         MPI_ERR_OP);
#else
  (void)stale;
#endif
  MT_CHECK(MPI_Op_free(&comp));
  MT_CHECK(MPI_Type_free(&contig_t));
  MT_CHECK(MPI_Type_free(&gapped_t));
  free(in);
  free(out);
  free(rcounts);
  if (me == 0) printf("user_ops: %d ranks, %s\n", p, mt_failures == 0 ? "passed" : "FAILED");
  return mt_finish();
}
