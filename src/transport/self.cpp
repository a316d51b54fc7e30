// SPDX-License-Identifier: BSD-3-Clause
// The in-process transport: all ranks share this address space, so a remote address is a local
// pointer and put / get are memcpy. Used for singletons (ONESIDED_TRANSPORT=self) and for tests
// that run ranks as threads without a network stack.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

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
  [[nodiscard]] DirectSpan direct() const override { return {0, UINTPTR_MAX, 0}; }
};

template <class T>
T atomicOn(AtomicOp op, void* where, T operand, T compare) {
  std::atomic_ref<T> a(*static_cast<T*>(where));
  switch (op) {
    case AtomicOp::kFetchAdd:
      return a.fetch_add(operand);
    case AtomicOp::kSwap:
      return a.exchange(operand);
    case AtomicOp::kCompareSwap:
      a.compare_exchange_strong(compare, operand);
      return compare;
  }
  return T{};
}

class SelfEndpoint final : public Endpoint {
 public:
  std::unique_ptr<RemoteKey> unpackRkey(std::span<const std::byte> /*packed*/) override {
    return std::make_unique<SelfKey>();
  }
  Issue put(std::span<const Iov> src, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    auto* dst = reinterpret_cast<std::byte*>(raddr);  // NOLINT(performance-no-int-to-ptr)
    for (const auto& s : src) {
      std::memcpy(dst, s.addr, s.len);
      dst += s.len;
    }
    return Issue::kDone;
  }
  Issue get(std::span<const Iov> dst, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    const auto* src = reinterpret_cast<const std::byte*>(raddr);  // NOLINT
    for (const auto& d : dst) {
      std::memcpy(d.addr, src, d.len);
      src += d.len;
    }
    return Issue::kDone;
  }
  void atomic(AtomicOp op, std::size_t bytes, std::uint64_t operand, std::uint64_t compare,
              void* result, std::uint64_t raddr, const RemoteKey& /*key*/) override {
    void* where = reinterpret_cast<void*>(raddr);  // NOLINT(performance-no-int-to-ptr)
    if (bytes == 8) {
      auto old = atomicOn<std::uint64_t>(op, where, operand, compare);
      if (result != nullptr) std::memcpy(result, &old, 8);
    } else if (bytes == 4) {
      auto old = atomicOn<std::uint32_t>(op, where, static_cast<std::uint32_t>(operand),
                                         static_cast<std::uint32_t>(compare));
      if (result != nullptr) std::memcpy(result, &old, 4);
    } else {
      throw Error(kErrIntern, "self transport: atomic of " + std::to_string(bytes) + " bytes");
    }
  }
  // Copies are complete when put / get return; the fence's release / acquire flags order them.
  void flush() override {}
};

class SelfTransport final : public Transport {
 public:
  [[nodiscard]] std::string name() const override { return "self"; }
  [[nodiscard]] std::vector<std::byte> address() const override { return {}; }
  std::unique_ptr<Endpoint> connect(int /*peer*/, std::span<const std::byte> /*addr*/) override {
    return std::make_unique<SelfEndpoint>();
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
  void flushAll() override {}
  unsigned progress() override { return 0; }
};

}  // namespace

std::unique_ptr<Transport> makeSelfTransport() { return std::make_unique<SelfTransport>(); }

std::vector<std::string> availableTransports() {
  std::vector<std::string> t{"self"};
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
