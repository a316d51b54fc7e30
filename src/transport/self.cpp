// SPDX-License-Identifier: BSD-3-Clause
// The in-process transport: all ranks share this address space, so a remote address is a local
// pointer and put / get are memcpy. Used for singletons (ONESIDED_TRANSPORT=self) and for tests
// that run ranks as threads without a network stack.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "copy.hpp"
#include "onesided/errors.hpp"
#include "transport/transport.hpp"

namespace onesided::transport {
namespace {

class SelfRegion final : public MemoryRegion {
 public:
  SelfRegion(void* base, std::size_t len, bool owned) : base_(base), len_(len), owned_(owned) {}
  ~SelfRegion() override {
    if (owned_) std::free(base_);  // NOLINT(cppcoreguidelines-no-malloc)
  }
  SelfRegion(const SelfRegion&) = delete;
  SelfRegion& operator=(const SelfRegion&) = delete;
  [[nodiscard]] void* base() const override { return base_; }
  [[nodiscard]] std::size_t length() const override { return len_; }
  [[nodiscard]] std::vector<std::byte> packRkey() const override { return {}; }

 private:
  void* base_;
  std::size_t len_;
  bool owned_;
};

class SelfKey final : public RemoteKey {
 public:
  explicit SelfKey(bool deferred) : deferred_(deferred) {}
  [[nodiscard]] DirectSpan direct() const override {
    return deferred_ ? DirectSpan{} : DirectSpan{0, UINTPTR_MAX, 0};
  }

 private:
  bool deferred_;
};

/// An aligned 8-byte piece goes as one atomic store (release) or load (acquire), as a NIC writes
/// it: a peer may be polling the word (the fence barrier's counters), and the ordering makes
/// the data written before it visible with it.
void copyOne(std::byte* dst, const std::byte* src, std::size_t n) {
  const bool word = n == 8 && reinterpret_cast<std::uintptr_t>(dst) % 8 == 0 &&
                    reinterpret_cast<std::uintptr_t>(src) % 8 == 0;
  if (!word) {
    detail::copyBytes(dst, src, n);
    return;
  }
  // atomic_ref needs a non-const object; the load does not write.
  auto* from = const_cast<std::uint64_t*>(reinterpret_cast<const std::uint64_t*>(src));
  const std::uint64_t v = std::atomic_ref<std::uint64_t>(*from).load(std::memory_order_acquire);
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(dst))
      .store(v, std::memory_order_release);
}
void copyPut(std::span<const Iov> src, std::uint64_t raddr) {
  auto* dst = reinterpret_cast<std::byte*>(raddr);  // NOLINT(performance-no-int-to-ptr)
  for (const auto& s : src) {
    copyOne(dst, static_cast<const std::byte*>(s.addr), s.len);
    dst += s.len;
  }
}
void copyGet(std::span<const Iov> dst, std::uint64_t raddr) {
  const auto* src = reinterpret_cast<const std::byte*>(raddr);  // NOLINT
  for (const auto& d : dst) {
    copyOne(static_cast<std::byte*>(d.addr), src, d.len);
    src += d.len;
  }
}

/// "self_deferred" behaves like an RDMA NIC towards the core: no load / store path, and every
/// put / get completes only at post() or flush(), so origin buffers are read and filled late.
/// Tests run the transport path of windows (datatype walks, bounce buffers, deferred unpacks)
/// with threads as ranks on it.
class SelfEndpoint final : public Endpoint {
 public:
  explicit SelfEndpoint(bool deferred) : deferred_(deferred) {}
  std::unique_ptr<RemoteKey> unpackRkey(std::span<const std::byte> /*packed*/) override {
    return std::make_unique<SelfKey>(deferred_);
  }
  Issue put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    if (deferred_) {
      queue_.push_back({true, {src.begin(), src.end()}, raddr});
      return Issue::kPending;
    }
    copyPut(src, raddr);
    return Issue::kDone;
  }
  Issue get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    if (deferred_) {
      queue_.push_back({false, {dst.begin(), dst.end()}, raddr});
      return Issue::kPending;
    }
    copyGet(dst, raddr);
    return Issue::kDone;
  }
  void post() override { flush(); }
  void atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand, std::uint64_t compare,
              void* result, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    void* where = reinterpret_cast<void*>(raddr);  // NOLINT(performance-no-int-to-ptr)
    if (bytes == 8) {
      auto old = cpuAtomic<std::uint64_t>(op, where, operand, compare);
      if (result != nullptr) std::memcpy(result, &old, 8);
    } else if (bytes == 4) {
      auto old = cpuAtomic<std::uint32_t>(op, where, static_cast<std::uint32_t>(operand),
                                          static_cast<std::uint32_t>(compare));
      if (result != nullptr) std::memcpy(result, &old, 4);
    } else {
      throw Error(kErrIntern, "self transport: atomic of " + std::to_string(bytes) + " bytes");
    }
  }
  // Copies are complete when put / get return; the fence's release / acquire flags order them.
  void flush() override {
    for (const auto& op : queue_) {
      if (op.put) {
        copyPut(op.local, op.raddr);
      } else {
        copyGet(op.local, op.raddr);
      }
    }
    queue_.clear();
  }

 private:
  struct Op {
    bool put;
    std::vector<Iov> local;
    std::uint64_t raddr;
  };
  bool deferred_;
  std::vector<Op> queue_;
};

class SelfTransport final : public Transport {
 public:
  explicit SelfTransport(bool deferred) : deferred_(deferred) {}
  [[nodiscard]] std::string name() const override { return deferred_ ? "self_deferred" : "self"; }
  [[nodiscard]] std::vector<std::byte> address() const override { return {}; }
  std::unique_ptr<Endpoint> connect(int /*peer*/, std::span<const std::byte> /*addr*/) override {
    auto ep = std::make_unique<SelfEndpoint>(deferred_);
    endpoints_.push_back(ep.get());
    return ep;
  }
  std::unique_ptr<MemoryRegion> registerMemory(void* base, std::size_t len, Placement placement,
                                               Access /*access*/) override {
    if (placement == Placement::kAllocate) {
      // 64-byte alignment, as the UCX transport's allocations have at least.
      void* p = std::aligned_alloc(64, ((len + 63) / 64) * 64 + 64);
      if (p == nullptr) throw std::bad_alloc();
      return std::make_unique<SelfRegion>(p, len, true);
    }
    return std::make_unique<SelfRegion>(base, len, false);
  }
  void flushAll() override {
    for (auto* ep : endpoints_) ep->flush();
  }
  unsigned progress() override { return 0; }

 private:
  bool deferred_;
  // Endpoints live as long as the Context, which outlives every flushAll() call on this.
  std::vector<SelfEndpoint*> endpoints_;
};

}  // namespace

std::unique_ptr<Transport> makeSelfTransport(bool deferred) {
  return std::make_unique<SelfTransport>(deferred);
}

std::vector<std::string> availableTransports() {
  std::vector<std::string> t{"self", "self_deferred"};
#ifdef ONESIDED_HAVE_UCX
  t.emplace_back("ucx");
#endif
#ifdef ONESIDED_HAVE_VERBS
  t.emplace_back("verbs");
#endif
  return t;
}

#ifndef ONESIDED_HAVE_VERBS
std::unique_ptr<Transport> makeVerbsTransport() {
  throw Error(kErrUnsupportedOperation, "transport verbs: this build has no verbs support");
}
bool verbsPortActive() { return false; }
#endif

#ifndef ONESIDED_HAVE_UCX
std::unique_ptr<Transport> makeUcxTransport(const UcxOptions& /*options*/) {
  throw Error(kErrUnsupportedOperation, "transport ucx: this build has no UCX support");
}
#endif

}  // namespace onesided::transport
