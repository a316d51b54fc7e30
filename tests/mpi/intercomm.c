/* SPDX-License-Identifier: BSD-3-Clause */
/* Intercommunicators (MPI-3.1 §6.6, §5.2.2): world split into evens (group A) and odds (group
 * B), joined by MPI_Intercomm_create; the queries; point-to-point across (sources are remote
 * ranks); every collective defined on them, blocking and nonblocking, with MPI_ROOT /
 * MPI_PROC_NULL; dup, split, merge (order by `high`), free; the errors (windows, scan,
 * intracommunicator-only calls, bad leaders). */
#include "mpiexpect.h"

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  if (mt_size < 2) {
    printf("intercomm: needs 2 ranks or more; nothing to do\n");
    return mt_finish();
  }
  const int inA = mt_rank % 2 == 0;
  const int sizeA = (mt_size + 1) / 2;
  const int sizeB = mt_size / 2;
  MPI_Comm local;
  MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, inA ? 0 : 1, mt_rank, &local));
  int lrank = 0;
  int lsize = 0;
  MPI_Comm_rank(local, &lrank);
  MPI_Comm_size(local, &lsize);
  MPI_Comm ic;
  /* The leaders are local rank 0: world rank 0 (A) and 1 (B). */
  MT_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, inA ? 1 : 0, 77, &ic));
  const int rsize = inA ? sizeB : sizeA;

  int flag = 0;
  int n = 0;
  MT_CHECK(MPI_Comm_test_inter(ic, &flag));
  MT_EXPECT(flag == 1, "test_inter");
  MT_CHECK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
  MT_EXPECT(flag == 0, "test_inter on world");
  MT_CHECK(MPI_Comm_remote_size(ic, &n));
  MT_EXPECT(n == rsize, "remote size %d", n);
  MT_CHECK(MPI_Comm_size(ic, &n));
  MT_EXPECT(n == lsize, "size %d", n);
  MT_CHECK(MPI_Comm_rank(ic, &n));
  MT_EXPECT(n == lrank, "rank %d", n);
  MPI_Group rg;
  MPI_Group wg;
  MT_CHECK(MPI_Comm_remote_group(ic, &rg));
  MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  for (int r = 0; r < rsize; ++r) {
    int w = -1;
    MT_CHECK(MPI_Group_translate_ranks(rg, 1, &r, wg, &w));
    MT_EXPECT(w == 2 * r + (inA ? 1 : 0), "remote rank %d is world %d", r, w);
  }
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);

  /* Point-to-point: every rank sends its world rank to every remote rank; receives name the
   * sender by its rank in the remote group. */
  {
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)rsize);
    int* got = malloc(sizeof(int) * (size_t)rsize);
    for (int r = 0; r < rsize; ++r) MT_CHECK(MPI_Isend(&mt_rank, 1, MPI_INT, r, 5, ic, &reqs[r]));
    for (int k = 0; k < rsize; ++k) {
      MPI_Status st;
      int v = -1;
      MT_CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
      MT_EXPECT(v == 2 * st.MPI_SOURCE + (inA ? 1 : 0), "message %d from remote rank %d", v,
                st.MPI_SOURCE);
    }
    MT_CHECK(MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE));
    free(reqs);
    free(got);
  }

  /* Barrier and bcast (root: A's rank 0). */
  MT_CHECK(MPI_Barrier(ic));
  int v = inA && lrank == 0 ? 4242 : -1;
  const int root = inA ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MT_CHECK(MPI_Bcast(&v, 1, MPI_INT, root, ic));
  if (!inA) MT_EXPECT(v == 4242, "bcast: %d", v);
  if (inA && lrank != 0) MT_EXPECT(v == -1, "bcast touched a PROC_NULL rank: %d", v);

  /* Allreduce: each group gets the sum of the other's world ranks. */
  int sumA = 0;
  int sumB = 0;
  for (int w = 0; w < mt_size; ++w) {
    if (w % 2 == 0) {
      sumA += w;
    } else {
      sumB += w;
    }
  }
  int s = -1;
  MT_CHECK(MPI_Allreduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, ic));
  MT_EXPECT(s == (inA ? sumB : sumA), "allreduce: %d", s);

  /* Allgather: the remote group's world ranks in remote rank order. */
  int* all = malloc(sizeof(int) * (size_t)mt_size);
  MT_CHECK(MPI_Allgather(&mt_rank, 1, MPI_INT, all, 1, MPI_INT, ic));
  for (int r = 0; r < rsize; ++r) MT_EXPECT(all[r] == 2 * r + (inA ? 1 : 0), "allgather %d", r);
  /* Allgatherv, reversed displacements. */
  int* counts = malloc(sizeof(int) * (size_t)mt_size);
  int* displs = malloc(sizeof(int) * (size_t)mt_size);
  for (int r = 0; r < rsize; ++r) {
    counts[r] = 1;
    displs[r] = rsize - 1 - r;
  }
  MT_CHECK(MPI_Allgatherv(&mt_rank, 1, MPI_INT, all, counts, displs, MPI_INT, ic));
  for (int r = 0; r < rsize; ++r) {
    MT_EXPECT(all[rsize - 1 - r] == 2 * r + (inA ? 1 : 0), "allgatherv %d", r);
  }

  /* Gather to B's rank 0, then scatter from it back to A. */
  const int rootB = !inA ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  for (int r = 0; r < mt_size; ++r) all[r] = -1;
  MT_CHECK(MPI_Gather(&mt_rank, 1, MPI_INT, all, 1, MPI_INT, rootB, ic));
  if (!inA && lrank == 0) {
    for (int r = 0; r < sizeA; ++r) MT_EXPECT(all[r] == 2 * r, "gather %d: %d", r, all[r]);
    for (int r = 0; r < sizeA; ++r) all[r] = 100 + r;
  }
  int mine = -1;
  MT_CHECK(MPI_Scatter(all, 1, MPI_INT, &mine, 1, MPI_INT, rootB, ic));
  if (inA) MT_EXPECT(mine == 100 + lrank, "scatter: %d", mine);
  /* Gatherv / scatterv with reversed displacements. */
  for (int r = 0; r < sizeA; ++r) {
    counts[r] = 1;
    displs[r] = sizeA - 1 - r;
  }
  MT_CHECK(MPI_Gatherv(&mt_rank, 1, MPI_INT, all, counts, displs, MPI_INT, rootB, ic));
  if (!inA && lrank == 0) {
    for (int r = 0; r < sizeA; ++r) MT_EXPECT(all[sizeA - 1 - r] == 2 * r, "gatherv %d", r);
  }
  MT_CHECK(MPI_Scatterv(all, counts, displs, MPI_INT, &mine, 1, MPI_INT, rootB, ic));
  if (inA) MT_EXPECT(mine == 2 * (sizeA - 1 - lrank) * 0 + mt_rank, "scatterv: %d", mine);

  /* Alltoall: to remote rank j goes 1000 * my world rank + j. */
  int* out = malloc(sizeof(int) * (size_t)mt_size);
  for (int j = 0; j < rsize; ++j) out[j] = 1000 * mt_rank + j;
  MT_CHECK(MPI_Alltoall(out, 1, MPI_INT, all, 1, MPI_INT, ic));
  for (int j = 0; j < rsize; ++j) {
    MT_EXPECT(all[j] == 1000 * (2 * j + (inA ? 1 : 0)) + lrank, "alltoall %d: %d", j, all[j]);
  }
  for (int j = 0; j < rsize; ++j) {
    counts[j] = 1;
    displs[j] = j;
  }
  MT_CHECK(MPI_Alltoallv(out, counts, displs, MPI_INT, all, counts, displs, MPI_INT, ic));
  for (int j = 0; j < rsize; ++j) {
    MT_EXPECT(all[j] == 1000 * (2 * j + (inA ? 1 : 0)) + lrank, "alltoallv %d: %d", j, all[j]);
  }

  /* Reduce to A's rank 0 of B's world ranks. */
  s = -1;
  MT_CHECK(MPI_Reduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, root, ic));
  if (inA && lrank == 0) MT_EXPECT(s == sumB, "reduce: %d", s);

  /* Nonblocking forms, two outstanding. */
  MPI_Request r2[2];
  int s2 = -1;
  int b2 = inA && lrank == 0 ? 777 : -1;
  MT_CHECK(MPI_Iallreduce(&mt_rank, &s2, 1, MPI_INT, MPI_MAX, ic, &r2[0]));
  MT_CHECK(MPI_Ibcast(&b2, 1, MPI_INT, root, ic, &r2[1]));
  MT_CHECK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
  MT_EXPECT(s2 == (inA ? 2 * (sizeB - 1) + 1 : 2 * (sizeA - 1)), "Iallreduce max: %d", s2);
  if (!inA) MT_EXPECT(b2 == 777, "Ibcast: %d", b2);
  MPI_Request rb;
  MT_CHECK(MPI_Ibarrier(ic, &rb));
  MT_CHECK(MPI_Wait(&rb, MPI_STATUS_IGNORE));

  /* Dup: congruent, and independent messages. */
  MPI_Comm dup;
  MT_CHECK(MPI_Comm_dup(ic, &dup));
  int cmp = -1;
  MT_CHECK(MPI_Comm_compare(ic, dup, &cmp));
  MT_EXPECT(cmp == MPI_CONGRUENT, "dup compare %d", cmp);
  MT_CHECK(MPI_Comm_compare(ic, MPI_COMM_WORLD, &cmp));
  MT_EXPECT(cmp == MPI_UNEQUAL, "inter vs intra compare %d", cmp);
  MT_CHECK(MPI_Allreduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, dup));
  MT_EXPECT(s == (inA ? sumB : sumA), "allreduce on the dup: %d", s);

  /* Split by local rank parity: each half faces the other group's same half. */
  MPI_Comm half;
  MT_CHECK(MPI_Comm_split(ic, lrank % 2, lrank, &half));
  const int myHalf = (lsize + (lrank % 2 == 0 ? 1 : 0)) / 2;
  const int theirHalf = (rsize + (lrank % 2 == 0 ? 1 : 0)) / 2;
  if (theirHalf == 0) {
    MT_EXPECT(half == MPI_COMM_NULL, "split with an empty remote side");
  } else {
    MT_CHECK(MPI_Comm_remote_size(half, &n));
    MT_EXPECT(n == theirHalf, "split remote size %d, want %d", n, theirHalf);
    MT_CHECK(MPI_Comm_size(half, &n));
    MT_EXPECT(n == myHalf, "split size %d", n);
    MT_CHECK(MPI_Barrier(half));
    MT_CHECK(MPI_Comm_free(&half));
  }

  /* Merge: B passes high = 1, so A comes first. */
  MPI_Comm merged;
  MT_CHECK(MPI_Intercomm_merge(ic, inA ? 0 : 1, &merged));
  MT_CHECK(MPI_Comm_rank(merged, &n));
  MT_EXPECT(n == (inA ? lrank : sizeA + lrank), "merged rank %d", n);
  MT_CHECK(MPI_Comm_size(merged, &n));
  MT_EXPECT(n == mt_size, "merged size %d", n);
  MT_CHECK(MPI_Allreduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, merged));
  MT_EXPECT(s == sumA + sumB, "allreduce on the merged: %d", s);
  int peer = -1;
  const int to = (n + 1) % mt_size;
  const int from = (n + mt_size - 1) % mt_size;
  MT_CHECK(MPI_Comm_rank(merged, &n));
  MT_CHECK(MPI_Sendrecv(&n, 1, MPI_INT, (n + 1) % mt_size, 3, &peer, 1, MPI_INT,
                        (n + mt_size - 1) % mt_size, 3, merged, MPI_STATUS_IGNORE));
  (void)to;
  (void)from;
  MT_EXPECT(peer == (n + mt_size - 1) % mt_size, "ring on the merged: %d", peer);
  MT_CHECK(MPI_Comm_free(&merged));
  /* Both pass the same high: some order, the same on every rank. */
  MT_CHECK(MPI_Intercomm_merge(ic, 1, &merged));
  MT_CHECK(MPI_Allgather(&mt_rank, 1, MPI_INT, all, 1, MPI_INT, merged));
  int seen = 0;
  for (int r = 0; r < mt_size; ++r) seen += all[r];
  MT_EXPECT(seen == sumA + sumB, "merged allgather sums to %d", seen);
  MT_CHECK(MPI_Comm_free(&merged));

  /* Errors. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
  MPI_Win win;
  int slot = 0;
  expect("MPI_Win_create on an intercommunicator",
         MPI_Win_create(&slot, sizeof slot, 1, MPI_INFO_NULL, ic, &win), MPI_ERR_COMM);
  expect("MPI_Scan on an intercommunicator", MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, ic),
         MPI_ERR_COMM);
#if !defined(OPEN_MPI) /* (Open MPI returns 0 remote ranks, and MPI_ERR_ARG for the leader) */
  expect("MPI_Comm_remote_size of an intracommunicator", MPI_Comm_remote_size(MPI_COMM_WORLD, &n),
         MPI_ERR_COMM);
#endif
  MPI_Comm bad;
  expect("MPI_Intercomm_merge of an intracommunicator",
         MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad), MPI_ERR_COMM);
#if !defined(OPEN_MPI)
  expect("MPI_Intercomm_create with local_leader = size",
         MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &bad), MPI_ERR_RANK);
#endif
  expect("MPI_Bcast with root = remote size", MPI_Bcast(&v, 1, MPI_INT, rsize, ic), MPI_ERR_ROOT);
  /* Still usable. */
  MT_CHECK(MPI_Allreduce(&mt_rank, &s, 1, MPI_INT, MPI_SUM, ic));
  MT_EXPECT(s == (inA ? sumB : sumA), "allreduce after the errors: %d", s);

  MT_CHECK(MPI_Comm_free(&dup));
  MT_CHECK(MPI_Comm_free(&ic));
  MT_CHECK(MPI_Comm_free(&local));
  free(all);
  free(out);
  free(counts);
  free(displs);
  return mt_finish();
}
