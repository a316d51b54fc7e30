/* SPDX-License-Identifier: BSD-3-Clause */
/* memcpy_bw: the hot-memcpy bound the put benchmarks are compared with (same JSON format,
 * "system":"memcpy"). No MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
  enum { kBatches = 11 };
  char* src = malloc(max);
  char* dst = malloc(max);
  memset(src, 1, max);
  memset(dst, 0, max);
  for (size_t bytes = 8; bytes <= max; bytes *= bytes < 4096 ? 8 : 16) {
    int iters = bytes >= 65536 ? 500 : 20000;
    double per[kBatches];
    for (int b = 0; b < kBatches; ++b) {
      double t = now();
      for (int i = 0; i < iters; ++i) {
        memcpy(dst, src, bytes);
        __asm__ __volatile__("" : : "r"(dst) : "memory"); /* keep every copy */
      }
      per[b] = (now() - t) / iters;
    }
    qsort(per, kBatches, sizeof(double), cmp);
    printf("{\"bench\":\"memcpy\",\"system\":\"memcpy\",\"flavor\":\"-\",\"bytes\":%zu,\"ranks\":1,"
           "\"iters\":%d,\"p50_us\":%.4f,\"min_us\":%.4f,\"mbps\":%.1f}\n",
           bytes, iters, per[kBatches / 2] * 1e6, per[0] * 1e6, (double)bytes / per[kBatches / 2] / 1e6);
  }
  free(src);
  free(dst);
  return 0;
}
