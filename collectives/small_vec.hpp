// SPDX-License-Identifier: BSD-3-Clause
// A vector whose first N elements live inside it: the collectives' per-call lists (operations
// of a phase, tree children) have a few entries, and a heap allocation for each list was a
// measurable part of a small collective's time. Past N it moves everything to the heap.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace onesided::detail {

// For trivially copyable and destructible T (the lists hold pointers and numbers): the inline
// storage is left uninitialised (zeroing it cost more than the rest of a small alltoall's
// bookkeeping) and elements are constructed in place.
template <class T, std::size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) : heap_(o.heap_), n_(o.n_) {
    if (heap_.empty() && n_ > 0) std::memcpy(inline_, o.inline_, n_ * sizeof(T));
  }
  SmallVec& operator=(const SmallVec&) = delete;
  void push_back(const T& v) { emplace_back(v); }
  /// Builds the element in place from T's members: push_back of a braced temporary had the
  /// compiler store it in 8-byte pieces and reload it in 16-byte ones, a stalled store-to-load
  /// forward for each (perf put a fifth of the receiver's own time in a 2-rank 8-byte MPI_Scan
  /// on them; A/B, 2 ranks, 8 B: gather 0.047 -> 0.042 us, bcast 0.049 -> 0.041, others within
  /// noise).
  template <class... A>
  void emplace_back(A&&... a) {
    if (heap_.empty() && n_ < N) {
      ::new (static_cast<void*>(inline_ + n_ * sizeof(T))) T{std::forward<A>(a)...};
      ++n_;
      return;
    }
    if (heap_.empty()) heap_.assign(first(), first() + n_);
    heap_.push_back(T{std::forward<A>(a)...});
    ++n_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  T* data() noexcept { return heap_.empty() ? first() : heap_.data(); }
  const T* data() const noexcept { return heap_.empty() ? first() : heap_.data(); }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + n_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + n_; }
  // NOLINTNEXTLINE(google-explicit-constructor): used as the span it is
  operator std::span<const T>() const noexcept { return {data(), n_}; }

 private:
  T* first() noexcept { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* first() const noexcept { return std::launder(reinterpret_cast<const T*>(inline_)); }

  alignas(T) std::byte inline_[N * sizeof(T)];  // NOLINT: raw storage, constructed in place
  std::vector<T> heap_;
  std::size_t n_ = 0;
};

}  // namespace onesided::detail
