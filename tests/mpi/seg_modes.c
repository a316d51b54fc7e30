/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared-memory segments the job makes are private to the user: with windows of each flavour
 * alive (allocate, create, shared, dynamic with a region attached, MPI_Alloc_mem), every System
 * V segment this process created or mapped (/proc/sysvipc/shm, the SYSV mappings of
 * /proc/self/maps) and every /dev/shm file it maps has no group or other permission bits.
 * (UCX makes its System V segments mode 0660; the runtime keeps UCX off them unless UCX_TLS is
 * set.) Prints what it checked from rank 0; run over UCX too (ONESIDED_TRANSPORT=ucx). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpitest.h"

/* The mode of System V segment `shmid` (or whose creator is `cpid` when shmid < 0), -1 if none. */
static int check_sysv(int shmid, int cpid, int* seen) {
  FILE* f = fopen("/proc/sysvipc/shm", "r");
  if (f == NULL) return 0;
  char line[512];
  int bad = 0;
  if (fgets(line, sizeof line, f) == NULL) { /* header */
    fclose(f);
    return 0;
  }
  while (fgets(line, sizeof line, f) != NULL) {
    long key = 0, id = 0, perms = 0, size = 0, c = 0, l = 0;
    if (sscanf(line, "%ld %ld %lo %ld %ld %ld", &key, &id, &perms, &size, &c, &l) != 6) continue;
    if ((shmid >= 0 && id == shmid) || (shmid < 0 && c == cpid)) {
      ++*seen;
      if ((perms & 077) != 0) {
        ++bad;
        MT_EXPECT(0, "System V segment %ld (%ld bytes, creator %ld) has mode %03lo", id, size, c,
                  perms & 0777);
      }
    }
  }
  fclose(f);
  return bad;
}

int main(int argc, char** argv) {
  mt_init(&argc, &argv);
  const int me = mt_rank;
  MPI_Win wins[4];
  void* base = NULL;
  MT_CHECK(MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &wins[0]));
  char* own = malloc(1 << 16);
  MT_CHECK(MPI_Win_create(own, 1 << 16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wins[1]));
  MT_CHECK(MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &wins[2]));
  MT_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wins[3]));
  void* mem = NULL;
  MT_CHECK(MPI_Alloc_mem(1 << 16, MPI_INFO_NULL, &mem));
  MT_CHECK(MPI_Win_attach(wins[3], mem, 1 << 16));
  /* Some traffic, so that transports set up whatever they set up on first use. */
  int v = me;
  MT_CHECK(MPI_Win_lock_all(0, wins[0]));
  MT_CHECK(MPI_Put(&v, 1, MPI_INT, (me + 1) % mt_size, 0, 1, MPI_INT, wins[0]));
  MT_CHECK(MPI_Win_unlock_all(wins[0]));
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  int seen = 0;
  int bad = check_sysv(-1, (int)getpid(), &seen);
  int files = 0;
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[1024];
  while (maps != NULL && fgets(line, sizeof line, maps) != NULL) {
    char path[512] = "";
    unsigned long inode = 0;
    if (sscanf(line, "%*s %*s %*s %*s %lu %511[^\n]", &inode, path) < 2) continue;
    if (strncmp(path, "/SYSV", 5) == 0) {
      bad += check_sysv((int)inode, -1, &seen);
    } else if (strncmp(path, "/dev/shm/", 9) == 0 && strstr(path, "(deleted)") == NULL) {
      struct stat st;
      if (stat(path, &st) == 0) {
        ++files;
        if ((st.st_mode & 077) != 0) {
          ++bad;
          MT_EXPECT(0, "%s has mode %03o", path, (unsigned)(st.st_mode & 0777));
        }
      }
    }
  }
  if (maps != NULL) fclose(maps);
  MT_EXPECT(bad == 0, "%d segments open to other users (of %d System V, %d /dev/shm)", bad, seen,
            files);
  MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) printf("segment modes ok\n");
  MT_CHECK(MPI_Win_detach(wins[3], mem));
  MT_CHECK(MPI_Free_mem(mem));
  for (int i = 0; i < 4; ++i) MT_CHECK(MPI_Win_free(&wins[i]));
  free(own);
  return mt_finish();
}
