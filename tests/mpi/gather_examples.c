/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-2.2 §5.5 Examples 5.2-5.10 (shared/seeds/mpi22-5.5-gather-gatherv.txt), each at every
 * root, checked against the serial answer: what rank r holds is a known function of r. */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define ROWS 100
#define COLS 150

static int sendarray[ROWS][COLS];

/* The value rank r holds at sendarray[i][j] (and at sendarray[k] in the 1-D examples). */
static int val(int r, int i, int j) { return r * 100000 + i * COLS + j; }

/* One int with the extent of a whole row, as Examples 5.8 and 5.10 build it: a struct with
 * MPI_UB. MPI-3 removed MPI_UB (Open MPI 4 rejects it at compile time), so other MPIs get the
 * MPI-3 twin, MPI_Type_create_resized, for the same type map. */
static void row_type(MPI_Datatype* stype) {
#ifdef ONESIDED_MPI
  MPI_Datatype type[2] = {MPI_INT, MPI_UB};
  int blocklen[2] = {1, 1};
  MPI_Aint disp[2] = {0, COLS * (MPI_Aint)sizeof(int)};
  MT_CHECK(MPI_Type_create_struct(2, blocklen, disp, type, stype));
#else
  MT_CHECK(MPI_Type_create_resized(MPI_INT, 0, COLS * (MPI_Aint)sizeof(int), stype));
#endif
  MT_CHECK(MPI_Type_commit(stype));
}

static void fill(int me) {
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) sendarray[i][j] = val(me, i, j);
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int gsize = mt_size, myrank = mt_rank;
  fill(myrank);
  int* flat = &sendarray[0][0]; /* the 1-D examples send its first 100 ints */
  int checked = 0;
  for (int root = 0; root < gsize; ++root) {
    /* 5.2: 100 ints from every process; every rank allocates rbuf. */
    {
      int* rbuf = malloc((size_t)gsize * 100 * sizeof(int));
      memset(rbuf, 0xff, (size_t)gsize * 100 * sizeof(int));
      MT_CHECK(MPI_Gather(flat, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100; ++k)
            MT_EXPECT(rbuf[r * 100 + k] == val(r, 0, k), "5.2 root %d r %d k %d: %d", root, r, k,
                      rbuf[r * 100 + k]);
      free(rbuf);
      ++checked;
    }
    /* 5.3: only the root allocates (others pass NULL). */
    {
      int* rbuf = NULL;
      if (myrank == root) rbuf = malloc((size_t)gsize * 100 * sizeof(int));
      MT_CHECK(MPI_Gather(flat, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
      if (myrank == root) {
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100; ++k)
            MT_EXPECT(rbuf[r * 100 + k] == val(r, 0, k), "5.3 root %d r %d k %d", root, r, k);
        free(rbuf);
      }
      ++checked;
    }
    /* 5.4: a contiguous type of 100 ints at the root, 100 MPI_INT at the senders. */
    {
      MPI_Datatype rtype;
      MT_CHECK(MPI_Type_contiguous(100, MPI_INT, &rtype));
      MT_CHECK(MPI_Type_commit(&rtype));
      int* rbuf = malloc((size_t)gsize * 100 * sizeof(int));
      MT_CHECK(MPI_Gather(flat, 100, MPI_INT, rbuf, 1, rtype, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100; ++k)
            MT_EXPECT(rbuf[r * 100 + k] == val(r, 0, k), "5.4 root %d r %d k %d", root, r, k);
      free(rbuf);
      MT_CHECK(MPI_Type_free(&rtype));
      ++checked;
    }
    /* 5.5: gatherv, each set of 100 placed stride ints apart (stride 110 > 100). */
    {
      const int stride = 110;
      int* rbuf = malloc((size_t)gsize * stride * sizeof(int));
      int* displs = malloc((size_t)gsize * sizeof(int));
      int* rcounts = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100;
      }
      for (int i = 0; i < gsize * stride; ++i) rbuf[i] = -7;
      MT_CHECK(MPI_Gatherv(flat, 100, MPI_INT, rbuf, rcounts, displs, MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < stride; ++k) {
            int want = k < 100 ? val(r, 0, k) : -7; /* the gaps stay untouched */
            MT_EXPECT(rbuf[r * stride + k] == want, "5.5 root %d r %d k %d: %d", root, r, k,
                      rbuf[r * stride + k]);
          }
      free(rbuf);
      free(displs);
      free(rcounts);
      ++checked;
    }
    /* 5.6: the 100 ints come from column 0 of a 100x150 array (a vector type at the sender). */
    {
      const int stride = 105;
      MPI_Datatype stype;
      MT_CHECK(MPI_Type_vector(100, 1, COLS, MPI_INT, &stype));
      MT_CHECK(MPI_Type_commit(&stype));
      int* rbuf = malloc((size_t)gsize * stride * sizeof(int));
      int *displs = malloc((size_t)gsize * sizeof(int)),
          *rcounts = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100;
      }
      MT_CHECK(MPI_Gatherv(sendarray, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100; ++k)
            MT_EXPECT(rbuf[r * stride + k] == val(r, k, 0), "5.6 root %d r %d k %d", root, r, k);
      free(rbuf);
      free(displs);
      free(rcounts);
      MT_CHECK(MPI_Type_free(&stype));
      ++checked;
    }
    /* 5.7: rank i sends 100-i ints from column i (vector type), stride apart at the root. */
    {
      const int stride = 100;
      MPI_Datatype stype;
      MT_CHECK(MPI_Type_vector(100 - myrank, 1, COLS, MPI_INT, &stype));
      MT_CHECK(MPI_Type_commit(&stype));
      int* rbuf = malloc((size_t)gsize * stride * sizeof(int));
      int *displs = malloc((size_t)gsize * sizeof(int)),
          *rcounts = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100 - i;
      }
      for (int i = 0; i < gsize * stride; ++i) rbuf[i] = -7;
      MT_CHECK(
          MPI_Gatherv(&sendarray[0][myrank], 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < stride; ++k) {
            int want = k < 100 - r ? val(r, k, r) : -7;
            MT_EXPECT(rbuf[r * stride + k] == want, "5.7 root %d r %d k %d: %d", root, r, k,
                      rbuf[r * stride + k]);
          }
      free(rbuf);
      free(displs);
      free(rcounts);
      MT_CHECK(MPI_Type_free(&stype));
      ++checked;
    }
    /* 5.8: the same, sending 100-i elements of one int with the extent of a row (MPI_UB). */
    {
      const int stride = 100;
      MPI_Datatype stype;
      row_type(&stype);
      int* rbuf = malloc((size_t)gsize * stride * sizeof(int));
      int *displs = malloc((size_t)gsize * sizeof(int)),
          *rcounts = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100 - i;
      }
      MT_CHECK(MPI_Gatherv(&sendarray[0][myrank], 100 - myrank, stype, rbuf, rcounts, displs,
                           MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100 - r; ++k)
            MT_EXPECT(rbuf[r * stride + k] == val(r, k, r), "5.8 root %d r %d k %d", root, r, k);
      free(rbuf);
      free(displs);
      free(rcounts);
      MT_CHECK(MPI_Type_free(&stype));
      ++checked;
    }
    /* 5.9: as 5.7 at the sender; at the root a stride that varies from block to block. */
    {
      MPI_Datatype stype;
      int* stride = malloc((size_t)gsize * sizeof(int));
      for (int i = 0; i < gsize; ++i) stride[i] = 100 + 3 * i; /* "set somehow" */
      int *displs = malloc((size_t)gsize * sizeof(int)),
          *rcounts = malloc((size_t)gsize * sizeof(int));
      int offset = 0;
      for (int i = 0; i < gsize; ++i) {
        displs[i] = offset;
        offset += stride[i];
        rcounts[i] = 100 - i;
      }
      int bufsize = displs[gsize - 1] + rcounts[gsize - 1];
      int* rbuf = malloc((size_t)bufsize * sizeof(int));
      MT_CHECK(MPI_Type_vector(100 - myrank, 1, COLS, MPI_INT, &stype));
      MT_CHECK(MPI_Type_commit(&stype));
      MT_CHECK(
          MPI_Gatherv(&sendarray[0][myrank], 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
      if (myrank == root)
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100 - r; ++k)
            MT_EXPECT(rbuf[displs[r] + k] == val(r, k, r), "5.9 root %d r %d k %d", root, r, k);
      free(rbuf);
      free(displs);
      free(rcounts);
      free(stride);
      MT_CHECK(MPI_Type_free(&stype));
      ++checked;
    }
    /* 5.10: rank i sends num ints of column i; the root first gathers the nums, then places
     * the data contiguously. */
    {
      int num = 1 + (myrank * 37) % 100;
      int *rcounts = NULL, *displs = NULL, *rbuf = NULL;
      if (myrank == root) rcounts = malloc((size_t)gsize * sizeof(int));
      MT_CHECK(MPI_Gather(&num, 1, MPI_INT, rcounts, 1, MPI_INT, root, comm));
      if (myrank == root) {
        displs = malloc((size_t)gsize * sizeof(int));
        displs[0] = 0;
        for (int i = 1; i < gsize; ++i) displs[i] = displs[i - 1] + rcounts[i - 1];
        rbuf =
            malloc((size_t)gsize * (size_t)(displs[gsize - 1] + rcounts[gsize - 1]) * sizeof(int));
      }
      MPI_Datatype stype;
      row_type(&stype);
      MT_CHECK(MPI_Gatherv(&sendarray[0][myrank], num, stype, rbuf, rcounts, displs, MPI_INT, root,
                           comm));
      if (myrank == root) {
        for (int r = 0; r < gsize; ++r) {
          MT_EXPECT(rcounts[r] == 1 + (r * 37) % 100, "5.10 root %d num of %d: %d", root, r,
                    rcounts[r]);
          for (int k = 0; k < rcounts[r]; ++k)
            MT_EXPECT(rbuf[displs[r] + k] == val(r, k, r), "5.10 root %d r %d k %d", root, r, k);
        }
        free(rbuf);
        free(displs);
        free(rcounts);
      }
      MT_CHECK(MPI_Type_free(&stype));
      ++checked;
    }
    /* MS-MPI's MPI_Gather page: MPI_IN_PLACE at the root, its block already in place. */
    {
      int* rbuf = NULL;
      if (myrank == root) {
        rbuf = malloc((size_t)gsize * 100 * sizeof(int));
        for (int k = 0; k < 100; ++k) rbuf[root * 100 + k] = val(root, 0, k);
        MT_CHECK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 100, MPI_INT, root, comm));
        for (int r = 0; r < gsize; ++r)
          for (int k = 0; k < 100; ++k)
            MT_EXPECT(rbuf[r * 100 + k] == val(r, 0, k), "in place root %d r %d k %d", root, r, k);
        free(rbuf);
      } else {
        MT_CHECK(MPI_Gather(flat, 100, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm));
      }
      ++checked;
    }
  }
  if (myrank == 0)
    printf("gather examples: %d cases at %d roots, %s\n", checked, gsize,
           mt_failures == 0 ? "ok" : "FAILED");
  return mt_finish();
}
