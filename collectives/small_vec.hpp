// SPDX-License-Identifier: BSD-3-Clause
// A vector whose first N elements live inside it: the collectives' per-call lists (operations
// of a phase, tree children) have a few entries, and a heap allocation for each list was a
// measurable part of a small collective's time. Past N it moves everything to the heap.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace onesided::detail {

template <class T, std::size_t N>
class SmallVec {
 public:
  void push_back(const T& v) {
    if (heap_.empty() && n_ < N) {
      inline_[n_++] = v;
      return;
    }
    if (heap_.empty()) heap_.assign(inline_.begin(), inline_.begin() + n_);
    heap_.push_back(v);
    ++n_;
  }
  template <class... A>
  void emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
  }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  T* data() noexcept { return heap_.empty() ? inline_.data() : heap_.data(); }
  const T* data() const noexcept { return heap_.empty() ? inline_.data() : heap_.data(); }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + n_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + n_; }
  // NOLINTNEXTLINE(google-explicit-constructor): used as the span it is
  operator std::span<const T>() const noexcept { return {data(), n_}; }

 private:
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  std::size_t n_ = 0;
};

}  // namespace onesided::detail
