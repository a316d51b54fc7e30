// SPDX-License-Identifier: BSD-3-Clause
// MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap.
//
// Two paths, chosen by the element type alone (never by operation, count, origin or target),
// except in the local message mode (amInts_, window.hpp), where every type goes by message:
//   - 8-byte integers: every access is a transport atomic on the element (NIC atomics on verbs
//     and UCX over RDMA). SUM is one fetch-add, NO_OP a fetch-add of 0, REPLACE a swap,
//     compare-and-swap one CAS; other operations read, compute and compare-and-swap until no
//     one else changed the element in between.
//   - every other type: a read-modify-write run at the origin while it holds the target's
//     accumulate lock (a control word taken with a remote compare-and-swap). Reads (NO_OP)
//     take the lock too.
// So accesses to one location always take one path, whatever the operations: a NIC atomic and
// a plain RDMA write never meet on one word (the NIC's read-modify-write is not atomic with
// respect to a write from elsewhere). Neither path needs the target's CPU, so an accumulate
// never waits for the target to call into MPI. Every accumulate is complete at the target
// when the call returns, which gives the default accumulate_ordering (rar, raw, war, waw).
// Atomicity is per element, as MPI-3.1 §11.7.1 promises; concurrent accumulates to one location
// must use one basic type (and, with the default accumulate_ops = same_op_no_op, one operation
// or NO_OP), which is what makes the per-type choice sufficient.
#include <mpi.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "copy.hpp"
#include "counters.hpp"
#include "onesided/comm.hpp"
#include "onesided/context.hpp"
#include "onesided/window.hpp"
#include "transport/transport.hpp"
#include "window/barrier.hpp"

namespace onesided {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

/// The one predefined type every element of `t` is made of, or -1. Predefined types are their
/// own element (the pair types of MAXLOC / MINLOC included), and so are derived types built
/// from one of them: a vector of MPI_DOUBLE_INT is made of MPI_DOUBLE_INT, not of doubles and
/// ints (its signature's basic elements).
int elementKind(const Datatype& t) { return t.accumulateKind(); }

/// The element kind an accumulate of origin `o` into target `t` with `op` applies to, or -1.
/// The accumulate kinds when they agree (the origin is ignored with NO_OP); failing that, for
/// an operation other than MINLOC / MAXLOC, the basic kind when both signatures are made of
/// one (MPI_2INT into a vector of MPI_INT with MPI_SUM: ints, as before pair types counted
/// whole).
int accumulateKind(const Datatype& o, const Datatype& t, Op op) {
  const int tk = elementKind(t);
  const bool noOp = op == Op::kNoOp;
  if (tk > 0 && (noOp || elementKind(o) == tk)) return tk;
  if (op == Op::kMaxloc || op == Op::kMinloc) return -1;
  const int hk = t.homogeneousKind();
  if (hk > 0 && (noOp || o.homogeneousKind() == hk)) return hk;
  return -1;
}

/// `bytes` contiguous bytes as one committed element: the packed side of a walk.
std::shared_ptr<Datatype> packedBytes(std::size_t bytes) {
  auto t = Datatype::contiguous(static_cast<std::int64_t>(bytes), *Datatype::predefined(MPI_BYTE));
  t->commit();
  return t;
}

std::uint64_t load64(const std::byte* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

/// The one atomic that applies `op` to one 8-byte integer (compare-and-swap when a compare value
/// is given); false when the operation needs a read and a compare-and-swap loop instead.
bool singleAtomic(Op op, bool compare, transport::AtomicOp& a) {
  using transport::AtomicOp;
  if (compare) {
    a = AtomicOp::kCompareSwap;
  } else if (op == Op::kReplace) {
    a = AtomicOp::kSwap;
  } else if (op == Op::kSum || op == Op::kNoOp) {
    a = AtomicOp::kFetchAdd;
  } else {
    return false;
  }
  return true;
}

}  // namespace

void Window::accumulate(const void* origin, std::int64_t ocount, const Datatype& otype, int target,
                        std::int64_t disp, std::int64_t tcount, const Datatype& ttype, Op op) {
  if (op != Op::kNoOp && &otype == &ttype && ocount == tcount &&
      fastLocked(origin, nullptr, ocount, ttype.id(), target, disp, op)) {
    return;
  }
  accumulateSlow(origin, ocount, otype, target, disp, tcount, ttype, op);
}

// Flattened: fastLocked's nine arguments would otherwise go through the stack on every call.
[[gnu::flatten]] bool Window::fastAccumulate(const void* origin, std::int64_t count, int kind,
                                             int target, std::int64_t disp, int op) noexcept {
  return op != static_cast<int>(Op::kNoOp) &&
         fastLocked(origin, nullptr, count, kind, target, disp, static_cast<Op>(op), false);
}

void Window::accumulateSlow(const void* origin, std::int64_t ocount, const Datatype& otype,
                            int target, std::int64_t disp, std::int64_t tcount,
                            const Datatype& ttype, Op op) {
  if (op == Op::kNoOp) {
    throw Error(kErrOp, "MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op only");
  }
  atomicUpdate("accumulate", origin, ocount, otype, nullptr, 0, otype, target, disp, tcount, ttype,
               op, nullptr);
}

void Window::getAccumulate(const void* origin, std::int64_t ocount, const Datatype& otype,
                           void* result, std::int64_t rcount, const Datatype& rtype, int target,
                           std::int64_t disp, std::int64_t tcount, const Datatype& ttype, Op op) {
  if (result != nullptr && &rtype == &ttype && rcount == tcount &&
      (op == Op::kNoOp || (&otype == &ttype && ocount == tcount)) &&
      fastLocked(origin, result, tcount, ttype.id(), target, disp, op)) {
    return;
  }
  atomicUpdate("get_accumulate", origin, ocount, otype, result, rcount, rtype, target, disp, tcount,
               ttype, op, nullptr);
}

bool Window::fastAtomic(const void* origin, const void* compare, void* result, const Datatype& type,
                        int target, std::int64_t disp, Op op) {
  // A handful of comparisons, then one CPU atomic. Anything else, errors included, takes
  // atomicUpdate(), which checks everything in order and names what is wrong.
  if (!cpuAtomics_ || result == nullptr || disp < 0 ||
      static_cast<unsigned>(target) >= targets_.size() || !type.isPredefined() ||
      type.size() != 8 || !isInt64(type.id())) {
    return false;
  }
  transport::AtomicOp a{};
  if (!singleAtomic(op, compare != nullptr, a)) return false;
  std::uint64_t operand = 0;
  const std::uint64_t cmp = compare != nullptr ? load64(static_cast<const std::byte*>(compare)) : 0;
  if (op != Op::kNoOp) {
    if (origin == nullptr) return false;
    operand = load64(static_cast<const std::byte*>(origin));
  }
  std::int64_t bytes = 0;
  std::byte* tp = directFootprint(target, disp, 1, 8, bytes);
  if (tp == nullptr || reinterpret_cast<std::uintptr_t>(tp) % 8 != 0) return false;
  ++pendingOps_;
  counters::get().accDirect.add();
  const std::uint64_t prev = transport::cpuAtomic<std::uint64_t>(a, tp, operand, cmp);
  std::memcpy(result, &prev, 8);
  return true;
}

template <class F>
void Window::underAccLock(int target, F&& fn) {
  const std::uint64_t me = static_cast<std::uint64_t>(comm_.rank()) + 1;
  constexpr int kCas = static_cast<int>(transport::AtomicOp::kCompareSwap);
  for (unsigned attempt = 0; control(target, kAccLockWord, kCas, me, 0) != 0; ++attempt) {
    retryPause(attempt);
  }
  try {
    fn();
  } catch (...) {
    control(target, kAccLockWord, kCas, 0, me);
    throw;
  }
  control(target, kAccLockWord, kCas, 0, me);
}

bool Window::fastLocked(const void* origin, void* result, std::int64_t count, int kind, int target,
                        std::int64_t disp, Op op, bool wait) {
  // The lock path of atomicUpdate() on a CPU-atomic window, for a predefined type without gaps
  // on both sides (and the result): a handful of comparisons, then the lock, the operation in
  // place and the unlock. Anything else, errors included, takes atomicUpdate(), which checks
  // everything in order and names what is wrong. (A derived type's kind is 0: no element size.)
  const std::size_t size = lockedBytes(op, kind);
  if (size == 0 || !cpuAtomics_ || amMode_ || count <= 0 || disp < 0 ||
      static_cast<unsigned>(target) >= targets_.size() || (op != Op::kNoOp && origin == nullptr) ||
      (result == nullptr && op == Op::kNoOp)) {
    return false;
  }
  std::int64_t bytes = 0;
  std::byte* tp = directFootprint(target, disp, count, size, bytes);
  if (tp == nullptr) return false;
  ++pendingOps_;
  auto body = [&] {
    if (result != nullptr) detail::copyBytes(result, tp, static_cast<std::size_t>(bytes));
    if (op != Op::kNoOp) {
      applyOp(op, kind, tp, static_cast<const std::byte*>(origin), static_cast<std::size_t>(count));
    }
  };
  // underAccLock with the CPU atomics inline; a lock held by another origin: wait there. The
  // release is a sequentially consistent read-modify-write (a full barrier on x86), so the
  // operation's stores are visible to whoever takes the lock or synchronises with this rank
  // next, with no fence of their own and none at the next flush.
  auto word =
      detail::controlWord(targets_[static_cast<std::size_t>(target)].ctlDirect, kAccLockWord);
  const std::uint64_t me = static_cast<std::uint64_t>(comm_.rank()) + 1;
  std::uint64_t expected = 0;
  if (!word.compare_exchange_strong(expected, me)) {
    if (!wait) {  // the caller cannot wait (waits can throw): nothing done
      --pendingOps_;
      return false;
    }
    underAccLock(target, body);  // which counts its own attempts
    counters::get().accDirect.add();
    return true;
  }
  controlOps_ += 2;  // the lock and its release
  counters::get().accDirect.add();
  body();
  word.store(0);
  return true;
}

void Window::fetchAndOp(const void* origin, void* result, const Datatype& type, int target,
                        std::int64_t disp, Op op) {
  if (fastFetchAndOp(origin, result, type, target, disp, op)) return;
  fetchAndOpSlow(origin, result, type, target, disp, op);
}

bool Window::fastFetchAndOp(const void* origin, void* result, const Datatype& type, int target,
                            std::int64_t disp, Op op) noexcept {
  return fastAtomic(origin, nullptr, result, type, target, disp, op);
}

bool Window::fastCompareAndSwap(const void* origin, const void* compare, void* result,
                                const Datatype& type, int target, std::int64_t disp) noexcept {
  // fastAtomic takes only 8-byte integers, which compare-and-swap accepts.
  return compare != nullptr &&
         fastAtomic(origin, compare, result, type, target, disp, Op::kReplace);
}

void Window::fetchAndOpSlow(const void* origin, void* result, const Datatype& type, int target,
                            std::int64_t disp, Op op) {
  if (result != nullptr && fastLocked(origin, result, 1, type.id(), target, disp, op)) return;
  if (fastMessage(origin, nullptr, result, type, target, disp, op)) return;
  atomicUpdate("fetch_and_op", origin, 1, type, result, 1, type, target, disp, 1, type, op,
               nullptr);
}

void Window::compareAndSwap(const void* origin, const void* compare, void* result,
                            const Datatype& type, int target, std::int64_t disp) {
  if (fastCompareAndSwap(origin, compare, result, type, target, disp)) return;
  compareAndSwapSlow(origin, compare, result, type, target, disp);
}

void Window::compareAndSwapSlow(const void* origin, const void* compare, void* result,
                                const Datatype& type, int target, std::int64_t disp) {
  if (!casAccepts(elementKind(type)) || Datatype::predefined(type.id()) != &type) {
    throw Error(kErrType, "compare_and_swap on " + type.name() +
                              ": it takes one predefined integer, logical or byte element");
  }
  if (compare == nullptr) throw Error(kErrBuffer, "compare buffer is NULL");
  if (fastMessage(origin, compare, result, type, target, disp, Op::kReplace)) return;
  atomicUpdate("compare_and_swap", origin, 1, type, result, 1, type, target, disp, 1, type,
               Op::kReplace, compare);
}

void Window::atomicUpdate(const char* what, const void* origin, std::int64_t ocount,
                          const Datatype& otype, void* result, std::int64_t rcount,
                          const Datatype& rtype, int target, std::int64_t disp, std::int64_t tcount,
                          const Datatype& ttype, Op op, const void* compare) {
  requireLive();
  const int opId = static_cast<int>(op);
  if (opId <= 0 || opId >= kNumOps) throw Error(kErrOp, "invalid operation " + str(opId));
  const bool fetch = result != nullptr || std::string_view(what) != "accumulate";
  const bool noOp = op == Op::kNoOp;
  // The origin side is ignored with NO_OP (MPI-3.1 §11.3.4): check the result side instead.
  const std::uint64_t offset =
      noOp ? check(what, result, rcount, rtype, target, disp, tcount, ttype)
           : check(what, origin, ocount, otype, target, disp, tcount, ttype);
  if (fetch && !noOp && result == nullptr && tcount > 0) {
    throw Error(kErrBuffer, "result buffer is NULL with count " + str(tcount));
  }
  if (fetch && !noOp) {
    // The result buffer must hold the target's elements too.
    if (rcount < 0) throw Error(kErrCount, "result count " + str(rcount) + " is negative");
    if (&rtype != &ttype || rcount != tcount) {
      if (!signaturesMatch(rtype, static_cast<std::size_t>(rcount), ttype,
                           static_cast<std::size_t>(tcount))) {
        throw Error(kErrType, "result " + str(rcount) + " x " + rtype.describe() +
                                  " does not match target " + str(tcount) + " x " +
                                  ttype.describe());
      }
    }
  }
  const int kind = accumulateKind(otype, ttype, op);
  if (kind <= 0 && elementKind(ttype) <= 0 && ttype.homogeneousKind() <= 0) {
    throw Error(kErrType, std::string(what) + " with target type " + ttype.describe() +
                              ": accumulate types must be built from one predefined type");
  }
  if (kind <= 0) {
    throw Error(kErrType, std::string(what) + ": origin type " + otype.describe() +
                              " and target type " + ttype.describe() +
                              " are not made of the same predefined type");
  }
  if (!opAccepts(op, kind)) {
    throw Error(kErrOp, std::string(opName(opId)) + " is not defined for " +
                            Datatype::predefined(kind)->name());
  }
  if (target == kProcNull) return;
  ++pendingOps_;
  needFence_ = true;
  const std::size_t bytes = static_cast<std::size_t>(tcount) * ttype.size();
  if (bytes == 0) return;
  Target& t = targets_[static_cast<std::size_t>(target)];
  if (!t.resolved) resolve(target);
  auto& ep = comm_.context().endpoint(comm_.worldRank(target));
  // Atomics go through the transport also where loads and stores reach the target (this rank
  // included): its key is needed then too.
  if (t.key == nullptr) {
    t.key = &dataKey(t, ep);
  }
  transport::AtomicOp single{};
  if (!amInts_ && bytes == 8 && isInt64(kind) && Datatype::predefined(ttype.id()) == &ttype &&
      singleAtomic(op, compare != nullptr, single)) {
    // One element on one NIC atomic (MPI_Fetch_and_op / MPI_Compare_and_swap as PGAS codes
    // use them): no packing.
    counters::get().accNic.add();
    const std::uint64_t operand = noOp ? 0 : load64(static_cast<const std::byte*>(origin));
    const std::uint64_t cmp =
        compare != nullptr ? load64(static_cast<const std::byte*>(compare)) : 0;
    t.key = keyFor(t.key, t.base + offset, 8);
    const std::uint64_t prev =
        atomic64(target, static_cast<int>(single), operand, cmp, t.base + offset);
    if (result != nullptr && &rtype == &ttype) {
      std::memcpy(result, &prev, 8);  // the usual MPI_Fetch_and_op: no walk
    } else if (result != nullptr) {
      const std::byte* from = reinterpret_cast<const std::byte*>(&prev);
      walk(
          static_cast<std::byte*>(result), static_cast<std::size_t>(rcount), rtype, 0, 1, ttype,
          [&](std::byte* r, std::uint64_t at, std::size_t len) { std::memcpy(r, from + at, len); });
    }
    return;
  }
  const std::size_t elem = packedSize(kind);
  const std::size_t n = bytes / elem;
  if (accPacked_ == nullptr || accPacked_->size() != bytes) accPacked_ = packedBytes(bytes);
  const Datatype& packed = *accPacked_;

  // Origin values, packed in signature order.
  // (Scratch buffers live in the window: a fresh megabyte per call would cost more in page
  // faults than the accumulate itself.)
  const std::byte* src = nullptr;
  if (!noOp && otype.contiguous()) {
    src = static_cast<const std::byte*>(origin);
  } else if (!noOp) {
    accIn_.resize(bytes);
    walk(static_cast<std::byte*>(const_cast<void*>(origin)), static_cast<std::size_t>(ocount),
         otype, 0, 1, packed, [&](std::byte* o, std::uint64_t at, std::size_t len) {
           detail::copyBytes(&accIn_[at], o, len);
         });
    src = accIn_.data();
  }
  accOld_.resize(bytes);
  std::vector<std::byte>& old = accOld_;

  if (isInt64(kind) && !amInts_) {
    counters::get().accNic.add();
    // Element by element on 8-byte atomics (atomic64); `at` walks the packed stream. (In a
    // dynamic window spanning attached regions, each with its region's key.)
    transport::RemoteKey* const first = t.key;
    walk(old.data(), 1, packed, offset, static_cast<std::size_t>(tcount), ttype,
         [&](std::byte* o, std::uint64_t toff, std::size_t len) {
           const auto at = static_cast<std::size_t>(o - old.data());
           for (std::size_t k = 0; k < len; k += 8) {
             const std::uint64_t raddr = t.base + toff + k;
             if (!dynSpan_.empty()) t.key = keyFor(first, raddr, 8);
             const std::uint64_t operand = noOp ? 0 : load64(src + at + k);
             std::uint64_t prev = 0;
             using transport::AtomicOp;
             auto atom = [&](AtomicOp a, std::uint64_t v, std::uint64_t cmp) {
               return atomic64(target, static_cast<int>(a), v, cmp, raddr);
             };
             if (compare != nullptr) {
               prev = atom(AtomicOp::kCompareSwap, operand,
                           load64(static_cast<const std::byte*>(compare)));
             } else if (op == Op::kSum || noOp) {
               prev = atom(AtomicOp::kFetchAdd, operand, 0);
             } else if (op == Op::kReplace) {
               prev = atom(AtomicOp::kSwap, operand, 0);
             } else {
               prev = atom(AtomicOp::kFetchAdd, 0, 0);
               for (;;) {
                 std::byte next[8];
                 std::memcpy(next, &prev, 8);
                 applyOp(op, kind, next, src + at + k, 1);
                 const std::uint64_t seen = atom(AtomicOp::kCompareSwap, load64(next), prev);
                 if (seen == prev) break;
                 prev = seen;
               }
             }
             std::memcpy(o + k, &prev, 8);
           }
         });
  } else if (amMode_) {
    counters::get().accMessage.add();
    amUpdate(target, src, compare, result != nullptr ? old.data() : nullptr, offset,
             static_cast<std::size_t>(tcount), ttype, op, kind, packed);
  } else {
    // Under the target's accumulate lock: read the elements, compute, write them back.
    counters::get().accLock.add();
    underAccLock(target, [&] {
      if (t.whole != nullptr && ttype.contiguous()) {
        // Load / store path, one run at the target: compute in place, no copies.
        std::byte* tp = t.whole + offset;
        if (result != nullptr) detail::copyBytes(old.data(), tp, bytes);
        if (compare != nullptr) {
          if (std::memcmp(tp, compare, elem) == 0) std::memcpy(tp, src, elem);
        } else {
          applyOp(op, kind, tp, src, n);
        }
        detail::fullBarrier();
      } else {
        auto io = [&](bool read) {
          bool pending = false;
          auto piece = [&](std::byte* o, std::uint64_t toff, std::size_t len) {
            auto remote = [&](std::byte* at, std::uint64_t from, std::uint64_t to) {
              if (from >= to) return;
              // (In a dynamic window, a part per attached region the bytes lie in.)
              byRegion(t.key, t.base + from, to - from,
                       [&](transport::RemoteKey& key, std::uint64_t skip, std::uint64_t addr,
                           std::uint64_t len) {
                         transport::Iov iov{at + skip, static_cast<std::size_t>(len)};
                         const auto issue =
                             read ? ep.get({&iov, 1}, addr, key) : ep.put({&iov, 1}, addr, key);
                         pending = pending || issue == transport::Issue::kPending;
                       });
            };
            // The bytes on the load / store path (all of them, or the whole pages of a
            // create window that does not start or end on a page boundary) by copy; the
            // rest, at most the partial pages at the window's ends, by the transport.
            const std::uint64_t end = toff + len;
            const auto [lo, hi] = t.directPart(toff, end);
            if (hi > lo) {
              std::byte* mid = o + (lo - toff);
              if (read) {
                detail::copyBytes(mid, t.direct + lo, static_cast<std::size_t>(hi - lo));
              } else {
                detail::copyBytes(t.direct + lo, mid, static_cast<std::size_t>(hi - lo));
              }
            }
            remote(o, toff, lo);
            remote(o + (hi - toff), hi, end);
          };
          walk(old.data(), 1, packed, offset, static_cast<std::size_t>(tcount), ttype, piece);
          if (pending) ep.flush();
          detail::fullBarrier();
        };
        io(true);
        std::vector<std::byte>& updated = accNew_;
        updated.assign(old.begin(), old.end());
        if (compare != nullptr) {
          if (std::memcmp(updated.data(), compare, elem) == 0)
            std::memcpy(updated.data(), src, elem);
        } else {
          applyOp(op, kind, updated.data(), src, n);
        }
        // memcmp: std::vector<std::byte>'s operator== compares byte by byte (libstdc++ 12),
        // which took 64 us of a 64 KiB accumulate's 97.
        if (!noOp && std::memcmp(updated.data(), old.data(), bytes) != 0) {
          std::swap(updated, old);
          io(false);
          std::swap(updated, old);
        }
      }
    });
  }
  if (result != nullptr) {
    walk(static_cast<std::byte*>(result), static_cast<std::size_t>(rcount), rtype, 0, 1, packed,
         [&](std::byte* r, std::uint64_t at, std::size_t len) {
           detail::copyBytes(r, &old[at], len);
         });
  }
}

}  // namespace onesided
