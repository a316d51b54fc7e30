// SPDX-License-Identifier: BSD-3-Clause
// Uses the installed C++ API: a singleton Context, a window, a typed put to self, a fence.
#include <onesided/onesided.hpp>

#include <cstdio>
#include <vector>

int main() {
  try {
    auto ctx = onesided::Context::fromEnvironment();
    auto win = onesided::Window::allocate(ctx->world(), 4 * sizeof(int), sizeof(int));
    std::vector<int> v{1, 2, 3, 4};
    win->fence();
    win->put(std::span<const int>(v), ctx->rank(), 0);
    win->fence();
    const int* got = static_cast<const int*>(win->base());
    for (int i = 0; i < 4; ++i) {
      if (got[i] != v[static_cast<std::size_t>(i)]) return 1;
    }
    try {
      win->put(std::span<const int>(v), ctx->rank(), 1);  // one element past the end
      return 1;
    } catch (const onesided::Error& e) {
      if (e.errorClass() != onesided::kErrRmaRange) return 1;
      std::printf("consumer: caught %s\n", onesided::errorClassName(e.errorClass()));
    }
    win->free();
    ctx->finalize();
    std::printf("consumer: ok\n");
    return 0;
  } catch (const onesided::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
