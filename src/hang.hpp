// SPDX-License-Identifier: BSD-3-Clause
// The hang report (onesided-run --hang-timeout, SIGQUIT to the launcher): what this rank is
// doing, kept in a few process-wide atomics, and written as one line when the launcher asks.
//
// Kept cheaply: every MPI call that goes through capi::call() marks its name and object (plain
// stores of a pointer and a word, no clock); a wait that reaches Context::backoff() notes when
// it began and in which call (the slow path only); the waits that know what they wait for (a
// message, a collective's member, a window's epoch) say so with a Waiting scope around the wait.
// The launcher asks with a signal (ONESIDED_REPORT_SIGNAL); its handler formats the line from
// the atomics alone, with async-signal-safe code, and write()s it to ONESIDED_REPORT_FD: it takes
// no lock the stuck thread may hold, and allocates nothing.
#pragma once

#include <atomic>
#include <cstdint>

namespace onesided::hang {

/// What a wait waits for: the line's "waiting for ..." part, with its numbers in Snapshot::arg.
enum class For : int {
  kNothing,
  kRank,       ///< arg[0]: a world rank (a barrier's or a collective's member)
  kMessage,    ///< a receive: arg[0] its source (kAny: any), arg[1] its tag (kAny: any)
  kReceiver,   ///< a send: arg[0] its destination's world rank, arg[1] its tag
  kPosts,      ///< MPI_Win_start: arg[0] the group's size, arg[1..3] its first world ranks
  kCompletes,  ///< MPI_Win_wait: the same for the origins' MPI_Win_complete
  kLock,       ///< a passive-target lock: arg[0] the target's world rank
};
inline constexpr int kAny = -1;
inline constexpr int kArgs = 4;

/// The object of the call (capi::On), packed: kind << 32 | handle; kInside while in the call.
inline constexpr std::uint64_t kInside = std::uint64_t{1} << 63;
inline constexpr std::uint64_t pack(int kind, int handle) noexcept {
  return (static_cast<std::uint64_t>(static_cast<unsigned>(kind)) << 32) |
         static_cast<std::uint32_t>(handle);
}
enum OnKind : int { kOnNone, kOnComm, kOnWin };  // capi::On::Kind's values

struct Snapshot {
  std::atomic<const char*> call{nullptr};      ///< the MPI call entered last (its name)
  std::atomic<std::uint64_t> on{0};            ///< its object (pack()), | kInside while in it
  std::atomic<const char*> waitCall{nullptr};  ///< the call of the wait that began last
  std::atomic<std::uint64_t> waitOn{0};        ///< its object
  std::atomic<std::int64_t> waitSince{0};      ///< when that wait began (CLOCK_MONOTONIC, ns)
  std::atomic<int> what{0};                    ///< For
  std::atomic<int> arg[kArgs] = {};
};
[[gnu::visibility("hidden")]] extern Snapshot gSnapshot;

/// capi::call()'s mark: the call's name and object while it runs (restored for a nested call;
/// left, without kInside, as the last call after a top-level one).
class InCall {
 public:
  InCall(const char* name, std::uint64_t on) noexcept
      : prevCall_(gSnapshot.call.load(std::memory_order_relaxed)),
        prevOn_(gSnapshot.on.load(std::memory_order_relaxed)),
        on_(on) {
    gSnapshot.call.store(name, std::memory_order_relaxed);
    gSnapshot.on.store(on | kInside, std::memory_order_relaxed);
  }
  ~InCall() {
    if ((prevOn_ & kInside) != 0) [[unlikely]] {
      gSnapshot.call.store(prevCall_, std::memory_order_relaxed);
      gSnapshot.on.store(prevOn_, std::memory_order_relaxed);
    } else {
      gSnapshot.on.store(on_, std::memory_order_relaxed);
    }
  }
  InCall(const InCall&) = delete;
  InCall& operator=(const InCall&) = delete;

 private:
  const char* prevCall_;
  std::uint64_t prevOn_;
  std::uint64_t on_;
};

/// Sets what the enclosing wait waits for (the previous one comes back at the end of the scope).
class Waiting {
 public:
  Waiting(For what, int a = 0, int b = 0, int c = 0, int d = 0) noexcept
      : prev_(gSnapshot.what.load(std::memory_order_relaxed)) {
    for (int i = 0; i < kArgs; ++i) prevArg_[i] = gSnapshot.arg[i].load(std::memory_order_relaxed);
    set(what, a, b, c, d);
  }
  ~Waiting() {
    for (int i = 0; i < kArgs; ++i) gSnapshot.arg[i].store(prevArg_[i], std::memory_order_relaxed);
    gSnapshot.what.store(prev_, std::memory_order_relaxed);
  }
  Waiting(const Waiting&) = delete;
  Waiting& operator=(const Waiting&) = delete;
  /// The same, without a scope (a wait whose end is marked by another set()).
  static void set(For what, int a = 0, int b = 0, int c = 0, int d = 0) noexcept {
    gSnapshot.what.store(0, std::memory_order_relaxed);
    gSnapshot.arg[0].store(a, std::memory_order_relaxed);
    gSnapshot.arg[1].store(b, std::memory_order_relaxed);
    gSnapshot.arg[2].store(c, std::memory_order_relaxed);
    gSnapshot.arg[3].store(d, std::memory_order_relaxed);
    gSnapshot.what.store(static_cast<int>(what), std::memory_order_release);
  }

 private:
  int prev_;
  int prevArg_[kArgs] = {};
};

/// A wait has reached its back-off (Context::backoff, the first time for this wait).
void waitBegan() noexcept;

/// Installs the report's signal handler when the launcher asked for it (ONESIDED_REPORT_FD and
/// ONESIDED_REPORT_SIGNAL in the environment); once, before the rank connects to the launcher.
void install() noexcept;

}  // namespace onesided::hang
