/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_THREAD_MULTIPLE with messages and RMA at once: per rank, two threads exchange messages with
 * both neighbours (distinct tags, MPI_ANY_SOURCE on a communicator of their own), and two threads
 * in one MPI_Win_lock_all epoch add to every rank's counters with MPI_Accumulate and
 * MPI_Fetch_and_op and flush, while the main thread waits. Every round's results are checked
 * exactly: each message's content, and the counters (after a barrier) against what all ranks
 * added. MT_MIX_ROUNDS sets the number of rounds (default 20). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpitest.h"

enum { kMsgs = 200, kAdds = 100 };

static MPI_Win win;
static int64_t* counters; /* [0]: accumulates, [1]: fetch_and_ops, from every rank */
static MPI_Comm any_comm;
static int left, right;

static void* messages(void* arg) {
  const int id = (int)(intptr_t)arg; /* 0: tags on the world, 1: MPI_ANY_SOURCE on any_comm */
  MPI_Comm comm = id == 0 ? MPI_COMM_WORLD : any_comm;
  for (int k = 0; k < kMsgs; ++k) {
    int out[4] = {mt_rank, k, id, mt_rank * 1000 + k};
    int in[4] = {-1, -1, -1, -1};
    MPI_Status st;
    const int src = id == 0 ? left : MPI_ANY_SOURCE;
    MT_CHECK(
        MPI_Sendrecv(out, 4, MPI_INT, right, 100 + id, in, 4, MPI_INT, src, 100 + id, comm, &st));
    MT_EXPECT(st.MPI_SOURCE == left && in[0] == left && in[1] == k && in[2] == id &&
                  in[3] == left * 1000 + k,
              "thread %d message %d: got %d %d %d %d from %d", id, k, in[0], in[1], in[2], in[3],
              st.MPI_SOURCE);
  }
  return NULL;
}

static void* rma(void* arg) {
  const int id = (int)(intptr_t)arg;
  const int64_t one = 1;
  for (int k = 0; k < kAdds; ++k) {
    const int t = (mt_rank + k + id) % mt_size;
    if (id == 0) {
      MT_CHECK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, MPI_SUM, win));
    } else {
      int64_t old = -1;
      MT_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, 1, MPI_SUM, win));
      MT_EXPECT(old >= 0, "fetch_and_op returned %lld", (long long)old);
    }
    if (k % 10 == 9) MT_CHECK(MPI_Win_flush(t, win));
  }
  MT_CHECK(MPI_Win_flush_all(win));
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MT_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MT_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
  MT_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
  if (provided < MPI_THREAD_MULTIPLE) {
    if (mt_rank == 0)
      printf("mt_mix: MPI_THREAD_MULTIPLE not provided (%d): nothing to test\n", provided);
    MPI_Finalize();
    return 0;
  }
  left = (mt_rank + mt_size - 1) % mt_size;
  right = (mt_rank + 1) % mt_size;
  MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &any_comm));
  MT_CHECK(MPI_Win_allocate(2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &counters, &win));
  const char* env = getenv("MT_MIX_ROUNDS");
  const int rounds = env != NULL ? atoi(env) : 20;
  for (int round = 0; round < rounds; ++round) {
    counters[0] = counters[1] = 0;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Win_lock_all(0, win));
    pthread_t th[4];
    for (int i = 0; i < 2; ++i) {
      pthread_create(&th[i], NULL, messages, (void*)(intptr_t)i);
      pthread_create(&th[2 + i], NULL, rma, (void*)(intptr_t)i);
    }
    for (int i = 0; i < 4; ++i) pthread_join(th[i], NULL);
    MT_CHECK(MPI_Win_unlock_all(win));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MT_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
    /* What every rank's two RMA threads added here: thread `id` of rank r adds to rank
     * (r + k + id) % size for k below kAdds (rma()). */
    int64_t want[2] = {0, 0};
    for (int r = 0; r < mt_size; ++r) {
      for (int id = 0; id < 2; ++id) {
        for (int k = 0; k < kAdds; ++k) want[id] += (r + k + id) % mt_size == mt_rank;
      }
    }
    MT_EXPECT(counters[0] == want[0] && counters[1] == want[1],
              "round %d: counters %lld %lld, expected %lld %lld", round, (long long)counters[0],
              (long long)counters[1], (long long)want[0], (long long)want[1]);
    MT_CHECK(MPI_Win_unlock(mt_rank, win));
  }
  MT_CHECK(MPI_Win_free(&win));
  MT_CHECK(MPI_Comm_free(&any_comm));
  if (mt_rank == 0)
    printf("mt_mix: %d ranks, %d rounds: %s\n", mt_size, rounds, mt_failures ? "FAILED" : "ok");
  return mt_finish();
}
