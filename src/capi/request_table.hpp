// SPDX-License-Identifier: BSD-3-Clause
// The C API's live requests by handle. A message rate is bounded by what each request costs,
// so there is no hash map node or search per MPI_Isend / MPI_Wait: a handle's slot is its low bits
// in a table of 2^k slots (no hashing, no node), and handles still count up and are not reused
// until 2^31 of them have been made, so a completed or freed handle is MPI_ERR_REQUEST, never
// another request. The table doubles when half full.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace onesided::capi {

template <class Entry>
class RequestTable {
 public:
  RequestTable() : slots_(kInitial) {}

  /// A new handle whose entry (a default one) `init(entry)` fills in place: a request built
  /// aside and moved in stalls on a 16-byte load of what two 8-byte stores had just written.
  template <class Init>
  MPI_Request add(Init&& init) {
    if ((live_ + 1) * 2 > slots_.size()) grow();
    MPI_Request h = next_;
    while (slots_[index(h)].handle != 0) h = bump(h);
    next_ = bump(h);
    Slot& s = slots_[index(h)];
    s.handle = h;
    init(s.entry);
    ++live_;
    return h;
  }
  /// The entry of live handle h, or nullptr.
  Entry* find(MPI_Request h) noexcept {
    if (h <= 0) return nullptr;
    Slot& s = slots_[index(h)];
    return s.handle == h ? &s.entry : nullptr;
  }
  Entry& at(MPI_Request h) noexcept { return *find(h); }
  bool erase(MPI_Request h) {
    Slot* s = h > 0 ? &slots_[index(h)] : nullptr;
    if (s == nullptr || s->handle != h) return false;
    s->handle = 0;
    s->entry = Entry{};
    --live_;
    return true;
  }
  /// Whether h was handed out before (completed or freed since, if it is not live).
  [[nodiscard]] bool issued(MPI_Request h) const noexcept { return h > 0 && h < next_; }
  void clear() {
    for (Slot& s : slots_) {
      s.handle = 0;
      s.entry = Entry{};
    }
    live_ = 0;
  }

 private:
  static constexpr std::size_t kInitial = 64;
  struct Slot {
    MPI_Request handle = 0;  // 0: free
    Entry entry;
  };
  [[nodiscard]] std::size_t index(MPI_Request h) const noexcept {
    return static_cast<std::size_t>(h) & (slots_.size() - 1);
  }
  static MPI_Request bump(MPI_Request h) noexcept { return h == INT32_MAX ? 1 : h + 1; }
  void grow() {
    // Live handles that differ in their low k bits differ in their low k + 1 bits too: no two
    // meet in the larger table.
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (Slot& s : old) {
      if (s.handle != 0) slots_[index(s.handle)] = std::move(s);
    }
  }

  std::vector<Slot> slots_;
  std::size_t live_ = 0;
  MPI_Request next_ = 1;
};

}  // namespace onesided::capi
