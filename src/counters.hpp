// SPDX-License-Identifier: BSD-3-Clause
// The process's performance counters, read by MPI_T's performance variables (capi/mpit_pvar.cpp).
// They are bumped on paths that exist anyway (a put, a send, a message queued), by the thread
// that holds the runtime (one call at a time): a plain load, add and store, never a locked
// instruction, and no clock is read for them. (std::atomic with relaxed order only so that a tool
// reading from another thread sees whole values; ranks that are threads of one process, as in
// the unit tests, may lose counts.)
#pragma once

#include <atomic>
#include <cstdint>

namespace onesided::counters {

class Counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void sub(std::uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  void set(std::uint64_t n) noexcept { v_.store(n, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

struct Counters {
  // RMA at the origin.
  Counter puts, gets, putBytes, getBytes;
  // Accumulates and atomics by the path they took: on the load / store path with CPU atomics
  // or under the target's lock in place (direct), by atomics through the transport (NIC), by
  // message to the target (active message / local message mode), by lock-protected
  // read-modify-write through the transport (lock).
  Counter accDirect, accNic, accMessage, accLock;
  // Point-to-point: sends by protocol, their bytes; receives matched, their bytes.
  Counter sendsEager, sendsRendezvous, sendBytes, recvs, recvBytes;
  // Messages in the unexpected queue now (a level).
  Counter unexpected;
  // Nanoseconds waits slept (the adaptive wait's sleeps, whose length it computes anyway).
  Counter waitSleepNs;
};

/// The one set of the process.
Counters& get() noexcept;

}  // namespace onesided::counters
