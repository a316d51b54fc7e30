// SPDX-License-Identifier: BSD-3-Clause
// The rank side of onesided-run's rendezvous: one TCP connection to the launcher on 127.0.0.1,
// over which allgather / barrier / finalize / abort travel (wire.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/wire.hpp"
#include "log.hpp"
#include "onesided/errors.hpp"

namespace onesided::bootstrap {
namespace {

[[noreturn]] void lost(const std::string& why) {
  throw Error(kErrOther, "bootstrap: lost connection to onesided-run (" + why + ")");
}

int envInt(const char* name, int min, int max) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    throw Error(kErrOther, std::string("bootstrap: ") + name + " is not set");
  }
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < min || x > max) {
    throw Error(kErrOther, std::string("bootstrap: ") + name + "='" + v +
                               "' is not an integer in [" + std::to_string(min) + ", " +
                               std::to_string(max) + "]");
  }
  return static_cast<int>(x);
}

class Tcp final : public Bootstrap {
 public:
  Tcp() {
    size_ = envInt("ONESIDED_SIZE", 1, 1 << 24);
    rank_ = envInt("ONESIDED_RANK", 0, size_ - 1);
    const char* addr = std::getenv("ONESIDED_RENDEZVOUS");
    std::string a = addr != nullptr ? addr : "";
    auto colon = a.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    char* end = nullptr;
    long port = colon == std::string::npos ? 0 : std::strtol(a.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || port <= 0 || port > 65535 || *end != '\0' ||
        inet_pton(AF_INET, a.substr(0, colon).c_str(), &sa.sin_addr) != 1) {
      throw Error(kErrOther, "bootstrap: ONESIDED_RENDEZVOUS='" + a + "' is not HOST:PORT");
    }
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    // The launcher listens before it forks, so a refusal means it is gone; retry briefly anyway.
    for (int attempt = 0;; ++attempt) {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd_ < 0) lost(std::string("socket: ") + std::strerror(errno));
      if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) break;
      int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (attempt == 50) lost("connect to " + a + ": " + std::strerror(err));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::int32_t r = rank_;
    send(wire::Type::kHello, &r, sizeof r);
    log::boot().debug("rank {} of {} connected to {}", rank_, size_, a);
  }
  ~Tcp() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Tcp(const Tcp&) = delete;
  Tcp& operator=(const Tcp&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::vector<int> nodePeers() const override {
    std::vector<int> all(static_cast<std::size_t>(size_));
    for (int i = 0; i < size_; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;  // onesided-run starts every rank on this machine
  }
  [[nodiscard]] std::string kind() const override { return "tcp"; }

  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override {
    send(wire::Type::kAllgather, mine.data(), mine.size());
    wire::Header h{};
    recvAll(&h, sizeof h);
    if (h.type != wire::Type::kAllgather) lost("unexpected message type");
    std::vector<std::byte> payload(h.len);
    recvAll(payload.data(), payload.size());
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size_));
    std::size_t pos = 0;
    for (auto& blob : out) {
      std::uint64_t n = 0;
      if (pos + 8 > payload.size()) lost("short allgather reply");
      std::memcpy(&n, payload.data() + pos, 8);
      pos += 8;
      if (pos + n > payload.size()) lost("short allgather reply");
      blob.assign(payload.begin() + static_cast<std::ptrdiff_t>(pos),
                  payload.begin() + static_cast<std::ptrdiff_t>(pos + n));
      pos += n;
    }
    return out;
  }

  void barrier() override { (void)allgather({}); }

  void finalize() override { send(wire::Type::kFinalize, nullptr, 0); }

  void abort(int code, std::string_view message) override {
    std::vector<std::byte> p(4 + message.size());
    std::int32_t c = code;
    std::memcpy(p.data(), &c, 4);
    std::memcpy(p.data() + 4, message.data(), message.size());
    try {
      send(wire::Type::kAbort, p.data(), p.size());
    } catch (const Error&) {  // the launcher is gone: nothing left to tell
    }
  }

 private:
  void send(wire::Type type, const void* data, std::size_t len) {
    wire::Header h{type, 0, len};
    sendAll(&h, sizeof h);
    if (len != 0) sendAll(data, len);
  }
  void sendAll(const void* data, std::size_t len) {
    const auto* p = static_cast<const char*>(data);
    while (len > 0) {
      ssize_t n = ::send(fd_, p, len, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        lost(std::string("send: ") + std::strerror(errno));
      }
      p += n;
      len -= static_cast<std::size_t>(n);
    }
  }
  /// Waits for readable data, driving the transport meanwhile (UCX over tcp needs the target
  /// to progress even while it sits in a bootstrap collective).
  void waitReadable() {
    pollfd pfd{fd_, POLLIN, 0};
    for (unsigned i = 0;; ++i) {
      progress();
      int timeoutMs = i < 256 ? 0 : 1;
      int r = ::poll(&pfd, 1, timeoutMs);
      if (r > 0) return;
      if (r < 0 && errno != EINTR) lost(std::string("poll: ") + std::strerror(errno));
    }
  }
  void recvAll(void* data, std::size_t len) {
    auto* p = static_cast<char*>(data);
    while (len > 0) {
      waitReadable();
      ssize_t n = ::recv(fd_, p, len, 0);
      if (n == 0) lost("connection closed");
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        lost(std::string("recv: ") + std::strerror(errno));
      }
      p += n;
      len -= static_cast<std::size_t>(n);
    }
  }

  int fd_ = -1;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Bootstrap> makeTcp() { return std::make_unique<Tcp>(); }

}  // namespace onesided::bootstrap
