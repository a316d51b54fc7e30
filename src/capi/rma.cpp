// SPDX-License-Identifier: BSD-3-Clause
// Passive-target synchronisation, accumulate and atomics: the C entry points.
#include <string>

#include "capi/state.hpp"
#include "onesided/op.hpp"

using onesided::Window;
using onesided::capi::call;
using onesided::capi::fastOrCall;
using onesided::capi::On;
namespace capi = onesided::capi;

extern "C" {

// Lock, unlock, lock_all, unlock_all and flush try their fast case (no error possible, nothing to
// wait for) before call() sets up the error handling, out of line (fastOrCall, callSlow), with
// lambdas capturing by value: then the fast case needs no stack frame.
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  const auto type = static_cast<onesided::LockType>(lock_type);
  return fastOrCall(
      "MPI_Win_lock", win, [=](Window& w) { return w.fastLock(type, rank, assert); },
      [=] { capi::winEntry(win).win->lock(type, rank, assert); });
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  return fastOrCall(
      "MPI_Win_unlock", win, [=](Window& w) { return w.fastUnlock(rank); },
      [=] { capi::winEntry(win).win->unlock(rank); });
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  return fastOrCall(
      "MPI_Win_lock_all", win, [=](Window& w) { return w.fastLockAll(assert); },
      [=] { capi::winEntry(win).win->lockAll(assert); });
}

int MPI_Win_unlock_all(MPI_Win win) {
  return fastOrCall(
      "MPI_Win_unlock_all", win, [](Window& w) { return w.fastUnlockAll(); },
      [=] { capi::winEntry(win).win->unlockAll(); });
}

int MPI_Win_flush(int rank, MPI_Win win) {
  return fastOrCall(
      "MPI_Win_flush", win, [=](Window& w) { return w.fastFlush(rank); },
      [=] { capi::winEntry(win).win->flush(rank); });
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  return fastOrCall(
      "MPI_Win_flush_local", win, [=](Window& w) { return w.fastFlush(rank); },
      [=] { capi::winEntry(win).win->flush(rank); });
}

int MPI_Win_flush_all(MPI_Win win) {
  return call("MPI_Win_flush_all", On::win(win), [&] { capi::winEntry(win).win->flushAll(); });
}

int MPI_Win_flush_local_all(MPI_Win win) {
  return call("MPI_Win_flush_local_all", On::win(win),
              [&] { capi::winEntry(win).win->flushAll(); });
}

int MPI_Win_sync(MPI_Win win) {
  return call("MPI_Win_sync", On::win(win), [&] { capi::winEntry(win).win->sync(); });
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  // As fetch-and-op below: the window's fast case first, error handling only past it.
  return fastOrCall(
      "MPI_Accumulate", win,
      [=](Window& w) {
        return origin_datatype == target_datatype && origin_count == target_count &&
               !capi::isInPlace(origin_addr) &&
               w.fastAccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                target_disp, op);
      },
      [=] {
        capi::requireNotInPlace(origin_addr, "origin_addr");
        auto& w = *capi::winEntry(win).win;
        w.accumulate(origin_addr, origin_count, capi::datatype(origin_datatype), target_rank,
                     target_disp, target_count, capi::datatype(target_datatype), capi::op(op));
      });
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return call("MPI_Get_accumulate", On::win(win), [&] {
    capi::requireFetchBuffers(origin_addr, result_addr, op);
    auto& w = *capi::winEntry(win).win;
    const onesided::Op o = capi::op(op);
    const auto& ot = capi::accOriginType(o, origin_datatype, target_datatype);
    w.getAccumulate(origin_addr, origin_count, ot, result_addr, result_count,
                    capi::datatype(result_datatype), target_rank, target_disp, target_count,
                    capi::datatype(target_datatype), o);
  });
}

// Fetch-and-op and compare-and-swap likewise: one CPU atomic when the window, datatype and op
// allow it, or in the local message mode one request through the fetch box; error handling only
// when neither applies, or for the wait when the reply is slow to come.
int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return capi::fetchOrCall(
      "MPI_Fetch_and_op", win,
      [=](Window& w) {
        const onesided::Datatype* d = onesided::Datatype::predefined(datatype);
        if (op <= 0 || op >= onesided::kNumOps || d == nullptr || capi::isInPlace(origin_addr) ||
            capi::isInPlace(result_addr)) {
          return Window::BoxFetch::kDeclined;
        }
        const auto o = static_cast<onesided::Op>(op);
        if (w.fastFetchAndOp(origin_addr, result_addr, *d, target_rank, target_disp, o)) {
          return Window::BoxFetch::kDone;
        }
        return w.fastBox(origin_addr, nullptr, result_addr, *d, target_rank, target_disp, o);
      },
      [=] {
        capi::requireFetchBuffers(origin_addr, result_addr, op);
        capi::winEntry(win).win->fetchAndOp(origin_addr, result_addr, capi::datatype(datatype),
                                            target_rank, target_disp, capi::op(op));
      });
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  return capi::fetchOrCall(
      "MPI_Compare_and_swap", win,
      [=](Window& w) {
        const onesided::Datatype* d = onesided::Datatype::predefined(datatype);
        if (d == nullptr || capi::isInPlace(origin_addr) || capi::isInPlace(compare_addr) ||
            capi::isInPlace(result_addr)) {
          return Window::BoxFetch::kDeclined;
        }
        if (w.fastCompareAndSwap(origin_addr, compare_addr, result_addr, *d, target_rank,
                                 target_disp)) {
          return Window::BoxFetch::kDone;
        }
        if (compare_addr == nullptr) return Window::BoxFetch::kDeclined;
        return w.fastBox(origin_addr, compare_addr, result_addr, *d, target_rank, target_disp,
                         onesided::Op::kReplace);
      },
      [=] {
        capi::requireNotInPlace(origin_addr, "origin_addr");
        capi::requireNotInPlace(compare_addr, "compare_addr");
        capi::requireNotInPlace(result_addr, "result_addr");
        capi::winEntry(win).win->compareAndSwap(origin_addr, compare_addr, result_addr,
                                                capi::datatype(datatype), target_rank, target_disp);
      });
}

}  // extern "C"
