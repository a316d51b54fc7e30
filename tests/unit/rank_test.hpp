// SPDX-License-Identifier: BSD-3-Clause
// Threads as ranks (gloo's BaseTest::spawn): n Contexts over one in-process bootstrap group.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "onesided/onesided.hpp"
#include "transport/transport.hpp"

namespace onesided::test {

/// A test parameter "transport", "transport+am" or "transport+am-nothread": the second runs the
/// same test with accumulates by active message (Options::accumulate = "am"), the third also
/// without the progress thread.
inline std::string baseTransport(const std::string& param) {
  return param.substr(0, param.find('+'));
}

inline bool transportAvailable(const std::string& name) {
  for (const auto& t : transport::availableTransports()) {
    if (t == baseTransport(name)) return true;
  }
  return false;
}

/// Runs fn(ctx) on n threads, each a rank with its own Context on `transportName`. A failed
/// assertion or exception in one rank cancels the others' waits; the first exception is
/// rethrown here after every thread has been joined. ranksPerNode > 0: the ranks believe they
/// sit on nodes of that many ranks (bootstrap::makeInprocGroup).
inline void spawn(int n, const std::string& transportName, const std::function<void(Context&)>& fn,
                  int ranksPerNode = 0) {
  auto boots = bootstrap::makeInprocGroup(n, ranksPerNode);
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      bootstrap::Bootstrap* raw = boots[static_cast<std::size_t>(r)].get();
      std::unique_ptr<Context> ctx;
      try {
        Options o;
        o.transport = baseTransport(transportName);
        if (transportName.find("+am") != std::string::npos) o.accumulate = "am";
        if (transportName.ends_with("-nothread")) o.progressThread = 0;
        o.cancel = &cancel;
        ctx = Context::create(std::move(boots[static_cast<std::size_t>(r)]), o);
        raw = &ctx->bootstrap();
        fn(*ctx);
        if (::testing::Test::HasFatalFailure()) throw Error(kErrOther, "assertion failed");
        ctx->finalize();
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first) first = std::current_exception();
        }
        cancel = true;
        // Release ranks waiting in a bootstrap collective.
        if (ctx) ctx->bootstrap().abort(1, "rank " + std::to_string(r) + " failed");
        (void)raw;
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

/// Every transport of this build that can run here: verbs only where an RDMA port is active
/// (in CI: inside the soft-RoCE VM, tests/rxe).
inline std::vector<std::string> transports() {
  std::vector<std::string> t;
  for (const auto& name : transport::availableTransports()) {
    if (name != "verbs" || transport::verbsPortActive()) t.push_back(name);
  }
  return t;
}

/// Expects fn() to throw onesided::Error of class `cls`.
template <class Fn>
void expectError(int cls, Fn&& fn) {
  try {
    fn();
    ADD_FAILURE() << "no error, expected " << errorClassName(cls);
  } catch (const Error& e) {
    EXPECT_EQ(e.errorClass(), cls) << e.what();
  }
}

/// transports(), and each again with accumulates by active message ("+am").
inline std::vector<std::string> transportsWithAm() {
  auto t = transports();
  const std::size_t n = t.size();
  for (std::size_t i = 0; i < n; ++i) t.push_back(t[i] + "+am");
  return t;
}

/// A gtest parameter name for a transport parameter ('+' is not allowed there).
/// Every rank, staggered, adds 1 to word 0 of every target of `win` (an int64 window) with
/// MPI_Fetch_and_op under an exclusive lock, then its rank + 1 to word 1 with MPI_Accumulate
/// under a shared lock: once all are done each target holds n and n (n + 1) / 2.
inline void lockAndCountAtEveryTarget(Window& win, int rank, int n) {
  const Datatype& i64 = datatypeOf<std::int64_t>();
  const std::int64_t one = 1;
  const std::int64_t me = rank + 1;
  for (int k = 0; k < n; ++k) {
    const int t = (rank + k) % n;  // staggered
    std::int64_t old = -1;
    win.lock(LockType::kExclusive, t);
    win.fetchAndOp(&one, &old, i64, t, 0, Op::kSum);
    win.unlock(t);
    EXPECT_GE(old, 0);
    EXPECT_LT(old, n);
    win.lock(LockType::kShared, t);
    win.accumulate(&me, 1, i64, t, 1, 1, i64, Op::kSum);
    win.unlock(t);
  }
}

inline std::string paramName(const std::string& transport) {
  std::string s = transport;
  std::replace(s.begin(), s.end(), '+', '_');
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace onesided::test
