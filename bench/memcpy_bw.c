/* SPDX-License-Identifier: BSD-3-Clause */
/* memcpy_bw: the hot-memcpy bound the put benchmarks are compared with. No MPI: the same options,
 * sizes, batches and JSON line as the RMA programs (options.h), "system":"memcpy", "ranks":1.
 * One iteration = one memcpy of N bytes between two buffers that stay in cache. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int main(int argc, char** argv) {
  struct bench_options o;
  const int parsed = bench_parse_options(argc, argv, 1000, 1, &o);
  if (parsed != 0) return parsed < 0 ? 0 : 2;
  char* src = malloc(o.max_bytes);
  char* dst = malloc(o.max_bytes);
  double* per = malloc(sizeof(double) * (size_t)o.repeats);
  if (!src || !dst || !per) {
    fprintf(stderr, "memcpy_bw: out of memory\n");
    return 3;
  }
  memset(dst, 0, o.max_bytes);
  int failed = 0;
  for (int si = 0; si < o.nsizes; ++si) {
    const size_t bytes = o.sizes[si];
    const int iters = bench_scaled_iters(o.iters, bytes, 1);
    const int warmup = bench_scaled_iters(o.warmup, bytes, 1);
    for (size_t i = 0; i < bytes; ++i) src[i] = (char)bench_pattern(i, bytes);
    for (int i = 0; i < warmup; ++i) {
      memcpy(dst, src, bytes);
      __asm__ __volatile__("" : : "r"(dst) : "memory"); /* keep every copy */
    }
    for (int b = 0; b < o.repeats; ++b) {
      double t = bench_now();
      for (int i = 0; i < iters; ++i) {
        memcpy(dst, src, bytes);
        __asm__ __volatile__("" : : "r"(dst) : "memory");
      }
      per[b] = (bench_now() - t) / iters;
    }
    double p50, min;
    bench_batch_stats(per, o.repeats, &p50, &min);
    bench_print_json("memcpy_bw", "memcpy", "-", bytes, 1, iters, o.repeats, p50, min,
                     (double)bytes / p50 / 1e6);
    if (o.verify && memcmp(dst, src, bytes) != 0) {
      fprintf(stderr, "memcpy_bw: verify failed after %zu-byte copies\n", bytes);
      failed = 1;
    }
  }
  free(src);
  free(dst);
  free(per);
  return failed;
}
