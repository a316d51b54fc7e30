/* SPDX-License-Identifier: BSD-3-Clause */
/* Accumulates on the pair types of MPI_MINLOC / MPI_MAXLOC (MPI_FLOAT_INT, MPI_DOUBLE_INT,
 * MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) through derived target, origin and
 * result types built from them (contiguous, vector, hvector, indexed, hindexed, struct, nested
 * vector of contiguous, resized), with MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE and (get_accumulate)
 * MPI_NO_OP, in every accumulate form (MPI_Accumulate, MPI_Get_accumulate, MPI_Raccumulate,
 * MPI_Rget_accumulate). Each rank is the only origin of its right neighbour, so every window and
 * result is checked exactly against a reference computed here (a tie takes the lower index,
 * MPI-3.1 §5.9.4). Then every rank MAXLOCs and MINLOCs into rank 0 at once, with many ties.
 * Run under ONESIDED_ACCUMULATE=am and =lock too, and on the program's own memory
 * (ACC_PAIRS_CREATE=1, MPI_Win_create: the local message mode by default). */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { kN = 12, kMaxEntries = 12 };

/* ---- the pair types: value and index through long double / int ------------------------- */
typedef struct {
  float v;
  int i;
} FloatInt;
typedef struct {
  double v;
  int i;
} DoubleInt;
typedef struct {
  long v;
  int i;
} LongInt;
typedef struct {
  int v;
  int i;
} TwoInt;
typedef struct {
  short v;
  int i;
} ShortInt;
typedef struct {
  long double v;
  int i;
} LongDoubleInt;

typedef struct {
  const char* name;
  MPI_Datatype type;
  size_t extent; /* sizeof the C struct */
  int kind;
} Pair;

static Pair pairs[6];

static void pair_set(const Pair* p, void* buf, int at, int v, int i) {
  char* e = (char*)buf + (size_t)at * p->extent;
  memset(e, 0, p->extent);
  switch (p->kind) {
    case 0:
      ((FloatInt*)e)->v = (float)v, ((FloatInt*)e)->i = i;
      break;
    case 1:
      ((DoubleInt*)e)->v = v, ((DoubleInt*)e)->i = i;
      break;
    case 2:
      ((LongInt*)e)->v = v, ((LongInt*)e)->i = i;
      break;
    case 3:
      ((TwoInt*)e)->v = v, ((TwoInt*)e)->i = i;
      break;
    case 4:
      ((ShortInt*)e)->v = (short)v, ((ShortInt*)e)->i = i;
      break;
    default:
      ((LongDoubleInt*)e)->v = v, ((LongDoubleInt*)e)->i = i;
      break;
  }
}

static void pair_get(const Pair* p, const void* buf, int at, int* v, int* i) {
  const char* e = (const char*)buf + (size_t)at * p->extent;
  switch (p->kind) {
    case 0:
      *v = (int)((const FloatInt*)e)->v, *i = ((const FloatInt*)e)->i;
      break;
    case 1:
      *v = (int)((const DoubleInt*)e)->v, *i = ((const DoubleInt*)e)->i;
      break;
    case 2:
      *v = (int)((const LongInt*)e)->v, *i = ((const LongInt*)e)->i;
      break;
    case 3:
      *v = ((const TwoInt*)e)->v, *i = ((const TwoInt*)e)->i;
      break;
    case 4:
      *v = ((const ShortInt*)e)->v, *i = ((const ShortInt*)e)->i;
      break;
    default:
      *v = (int)((const LongDoubleInt*)e)->v, *i = ((const LongDoubleInt*)e)->i;
      break;
  }
}

/* ---- shapes: a type built from the pair type, its count, and the element indices (in units
 * of the pair's extent) its entries take, in type-map order ------------------------------- */
typedef struct {
  const char* name;
  int count;
  int m; /* entries */
  int idx[kMaxEntries];
} Shape;

static const Shape shapes[] = {
    {"predefined", 6, 6, {0, 1, 2, 3, 4, 5}},
    {"contiguous", 1, 6, {0, 1, 2, 3, 4, 5}},
    {"vector", 1, 6, {0, 1, 3, 4, 6, 7}},
    {"hvector", 2, 6, {0, 2, 4, 5, 7, 9}},
    {"indexed", 1, 4, {5, 0, 1, 3}},
    {"hindexed", 2, 4, {3, 0, 7, 4}},
    {"struct", 1, 3, {1, 2, 4}},
    {"nested", 1, 4, {0, 1, 4, 5}},
    {"resized", 3, 3, {0, 3, 6}},
};
enum { kShapes = sizeof shapes / sizeof shapes[0] };

static MPI_Datatype build(const Pair* p, int s) {
  const MPI_Datatype P = p->type;
  const MPI_Aint E = (MPI_Aint)p->extent;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  switch (s) {
    case 0:
      return P;
    case 1:
      MT_CHECK(MPI_Type_contiguous(6, P, &t));
      break;
    case 2:
      MT_CHECK(MPI_Type_vector(3, 2, 3, P, &t));
      break;
    case 3: /* extent 5E: the second element starts at index 5 */
      MT_CHECK(MPI_Type_create_hvector(3, 1, 2 * E, P, &t));
      break;
    case 4: {
      const int bl[3] = {1, 2, 1};
      const int d[3] = {5, 0, 3};
      MT_CHECK(MPI_Type_indexed(3, bl, d, P, &t));
      break;
    }
    case 5: { /* lb 0, ub 4E: the second element starts at index 4 */
      const int bl[2] = {1, 1};
      const MPI_Aint d[2] = {3 * E, 0};
      MT_CHECK(MPI_Type_create_hindexed(2, bl, d, P, &t));
      break;
    }
    case 6: {
      const int bl[2] = {2, 1};
      const MPI_Aint d[2] = {E, 4 * E};
      const MPI_Datatype ty[2] = {P, P};
      MT_CHECK(MPI_Type_create_struct(2, bl, d, ty, &t));
      break;
    }
    case 7: {
      MPI_Datatype c;
      MT_CHECK(MPI_Type_contiguous(2, P, &c));
      MT_CHECK(MPI_Type_vector(2, 1, 2, c, &t));
      MT_CHECK(MPI_Type_free(&c));
      break;
    }
    default: /* one element every third slot */
      MT_CHECK(MPI_Type_create_resized(P, 0, 3 * E, &t));
      break;
  }
  MT_CHECK(MPI_Type_commit(&t));
  return t;
}

static void release(MPI_Datatype* t) {
  if (*t != MPI_DATATYPE_NULL && *t != MPI_FLOAT_INT && *t != MPI_DOUBLE_INT &&
      *t != MPI_LONG_INT && *t != MPI_2INT && *t != MPI_SHORT_INT && *t != MPI_LONG_DOUBLE_INT) {
    MT_CHECK(MPI_Type_free(t));
  }
}

/* ---- the reference ------------------------------------------------------------------------- */
static void reduce(MPI_Op op, int* tv, int* ti, int ov, int oi) {
  if (op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) {
    *tv = ov, *ti = oi;
    return;
  }
  const int better = op == MPI_MAXLOC ? ov > *tv : ov < *tv;
  if (better || (ov == *tv && oi < *ti)) *tv = ov, *ti = oi;
}

/* Initial window values and origin values: few distinct values, so ties are common. */
static int init_v(int rank, int k) { return (rank * 7 + k * 5) % 4; }
static int init_i(int rank, int k) { return 100 + (rank * 13 + k * 11) % 17; }
static int orig_v(int rank, int k, int round) { return (rank * 3 + k * 3 + round) % 4; }
static int orig_i(int rank, int k, int round) { return 100 + (rank * 5 + k * 7 + round * 3) % 17; }

enum Call { kAccumulate, kGetAccumulate, kRaccumulate, kRgetAccumulate, kCalls };
static const char* call_names[kCalls] = {"MPI_Accumulate", "MPI_Get_accumulate", "MPI_Raccumulate",
                                         "MPI_Rget_accumulate"};

static const char* op_name(MPI_Op op) {
  return op == MPI_MAXLOC    ? "MPI_MAXLOC"
         : op == MPI_MINLOC  ? "MPI_MINLOC"
         : op == MPI_REPLACE ? "MPI_REPLACE"
                             : "MPI_NO_OP";
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int p = mt_size;
  const int me = mt_rank;
  const Pair init[6] = {
      {"MPI_FLOAT_INT", MPI_FLOAT_INT, sizeof(FloatInt), 0},
      {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(DoubleInt), 1},
      {"MPI_LONG_INT", MPI_LONG_INT, sizeof(LongInt), 2},
      {"MPI_2INT", MPI_2INT, sizeof(TwoInt), 3},
      {"MPI_SHORT_INT", MPI_SHORT_INT, sizeof(ShortInt), 4},
      {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, sizeof(LongDoubleInt), 5},
  };
  memcpy(pairs, init, sizeof pairs);

  /* One window of kN of the largest pair; each pair type uses the start of it. */
  const size_t maxExtent = sizeof(LongDoubleInt);
  const MPI_Aint bytes = (MPI_Aint)(kN * maxExtent);
  const char* create = getenv("ACC_PAIRS_CREATE");
  const int own = create != NULL && strcmp(create, "1") == 0;
  char* base = NULL;
  MPI_Win win;
  if (own) {
    base = calloc(1, (size_t)bytes);
    MT_CHECK(MPI_Win_create(base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  } else {
    MT_CHECK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  }
  MT_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  const int target = (me + 1) % p;
  const int source = (me + p - 1) % p;

  /* long double: aligned for every pair struct. */
  long double originStore[kN * sizeof(LongDoubleInt) / sizeof(long double)];
  long double resultStore[kN * sizeof(LongDoubleInt) / sizeof(long double)];
  char* origin = (char*)originStore;
  char* result = (char*)resultStore;
  int cases = 0;
  int round = 0;
  MT_CHECK(MPI_Win_lock_all(0, win));
  for (int pi = 0; pi < 6; ++pi) {
    const Pair* pr = &pairs[pi];
    for (int s = 0; s < kShapes; ++s) {
      const Shape* sh = &shapes[s];
      MPI_Datatype tt = build(pr, s);
      /* Origin / result: contiguous pairs (the predefined type x m), or laid out like the
       * target (the same derived type). */
      for (int layout = 0; layout < 2; ++layout) {
        const int derived = layout == 1 && s != 0;
        if (layout == 1 && s == 0) continue;
        const MPI_Datatype ot = derived ? tt : pr->type;
        const int ocount = derived ? sh->count : sh->m;
        for (int call = 0; call < kCalls; ++call) {
          const int fetch = call == kGetAccumulate || call == kRgetAccumulate;
          const MPI_Op ops[4] = {MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
          for (int oi = 0; oi < (fetch ? 4 : 3); ++oi) {
            const MPI_Op op = ops[oi];
            ++round;
            /* This rank's window as its source will find it; the reference of it after. */
            int wantv[kN], wanti[kN];
            for (int k = 0; k < kN; ++k) {
              pair_set(pr, base, k, init_v(me, k + round), init_i(me, k + round));
              wantv[k] = init_v(me, k + round);
              wanti[k] = init_i(me, k + round);
            }
            for (int e = 0; e < sh->m; ++e) {
              const int k = sh->idx[e];
              reduce(op, &wantv[k], &wanti[k], orig_v(source, e, round), orig_i(source, e, round));
            }
            /* The origin values (entry e at its place in the origin layout). */
            memset(origin, 0x5a, sizeof originStore);
            memset(result, 0x5a, sizeof resultStore);
            for (int e = 0; e < sh->m; ++e) {
              pair_set(pr, origin, derived ? sh->idx[e] : e, orig_v(me, e, round),
                       orig_i(me, e, round));
              if (derived) pair_set(pr, result, sh->idx[e], -9, -9);
            }
            MT_CHECK(MPI_Win_sync(win));
            MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_Request req = MPI_REQUEST_NULL;
            int rc = MPI_SUCCESS;
            switch (call) {
              case kAccumulate:
                rc = MPI_Accumulate(origin, ocount, ot, target, 0, sh->count, tt, op, win);
                break;
              case kGetAccumulate:
                rc = MPI_Get_accumulate(origin, ocount, ot, result, ocount, ot, target, 0,
                                        sh->count, tt, op, win);
                break;
              case kRaccumulate:
                rc = MPI_Raccumulate(origin, ocount, ot, target, 0, sh->count, tt, op, win, &req);
                break;
              default:
                rc = MPI_Rget_accumulate(origin, ocount, ot, result, ocount, ot, target, 0,
                                         sh->count, tt, op, win, &req);
                break;
            }
            if (rc != MPI_SUCCESS) {
              char msg[MPI_MAX_ERROR_STRING];
              int len = 0;
              MPI_Error_string(rc, msg, &len);
              MT_EXPECT(0, "%s %s %s %s (origin %s): %s", call_names[call], op_name(op), pr->name,
                        sh->name, derived ? "derived" : "predefined", msg);
            }
            if (req != MPI_REQUEST_NULL) MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            MT_CHECK(MPI_Win_flush(target, win));
            /* The old values of the target's entries, as the target's reference had them. */
            if (fetch && rc == MPI_SUCCESS) {
              for (int e = 0; e < sh->m; ++e) {
                const int k = sh->idx[e];
                int v = 0, i = 0;
                pair_get(pr, result, derived ? k : e, &v, &i);
                MT_EXPECT(v == init_v(target, k + round) && i == init_i(target, k + round),
                          "%s %s %s %s (origin %s): result entry %d is (%d, %d), expected (%d, "
                          "%d)",
                          call_names[call], op_name(op), pr->name, sh->name,
                          derived ? "derived" : "predefined", e, v, i, init_v(target, k + round),
                          init_i(target, k + round));
              }
            }
            MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            MT_CHECK(MPI_Win_sync(win));
            for (int k = 0; k < kN; ++k) {
              int v = 0, i = 0;
              pair_get(pr, base, k, &v, &i);
              MT_EXPECT(v == wantv[k] && i == wanti[k],
                        "%s %s %s %s (origin %s): window element %d is (%d, %d), expected (%d, "
                        "%d)",
                        call_names[call], op_name(op), pr->name, sh->name,
                        derived ? "derived" : "predefined", k, v, i, wantv[k], wanti[k]);
            }
            MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            ++cases;
          }
        }
      }
      release(&tt);
    }
  }

  /* Everybody into rank 0 at once: MAXLOC on the even rounds, MINLOC on the odd ones, on the
   * vector shape, half of the ranks by get_accumulate. The result does not depend on the order. */
  for (int pi = 0; pi < 6; ++pi) {
    const Pair* pr = &pairs[pi];
    const Shape* sh = &shapes[2];
    MPI_Datatype tt = build(pr, 2);
    for (int r = 0; r < 4; ++r) {
      const MPI_Op op = r % 2 == 0 ? MPI_MAXLOC : MPI_MINLOC;
      int wantv[kN], wanti[kN];
      for (int k = 0; k < kN; ++k) {
        wantv[k] = init_v(0, k + r);
        wanti[k] = init_i(0, k + r);
        if (me == 0) pair_set(pr, base, k, wantv[k], wanti[k]);
      }
      for (int q = 0; q < p; ++q) {
        for (int e = 0; e < sh->m; ++e) {
          reduce(op, &wantv[sh->idx[e]], &wanti[sh->idx[e]], orig_v(q, e, r) % 2, orig_i(q, e, r));
        }
      }
      for (int e = 0; e < sh->m; ++e)
        pair_set(pr, origin, e, orig_v(me, e, r) % 2, orig_i(me, e, r));
      MT_CHECK(MPI_Win_sync(win));
      MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      if (me % 2 == 0) {
        MT_CHECK(MPI_Accumulate(origin, sh->m, pr->type, 0, 0, 1, tt, op, win));
      } else {
        MT_CHECK(MPI_Get_accumulate(origin, sh->m, pr->type, result, sh->m, pr->type, 0, 0, 1, tt,
                                    op, win));
      }
      MT_CHECK(MPI_Win_flush(0, win));
      MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      MT_CHECK(MPI_Win_sync(win));
      if (me == 0) {
        for (int k = 0; k < kN; ++k) {
          int v = 0, i = 0;
          pair_get(pr, base, k, &v, &i);
          MT_EXPECT(v == wantv[k] && i == wanti[k],
                    "all into rank 0, %s %s: element %d is (%d, %d), expected (%d, %d)",
                    op_name(op), pr->name, k, v, i, wantv[k], wanti[k]);
        }
      }
      MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    release(&tt);
  }
  MT_CHECK(MPI_Win_unlock_all(win));
  MT_CHECK(MPI_Win_free(&win));
  if (own) free(base);
  if (me == 0) printf("acc_pairs: %d cases\n", cases);
  return mt_finish();
}
