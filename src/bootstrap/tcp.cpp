// SPDX-License-Identifier: BSD-3-Clause
// The rank side of onesided-run's rendezvous: one TCP connection to the launcher on 127.0.0.1,
// over which allgather / barrier / finalize / abort travel (wire.hpp). The connection first
// answers the launcher's challenge with a proof made from the job's secret (ONESIDED_SECRET).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/hmac.hpp"
#include "bootstrap/wire.hpp"
#include "log.hpp"
#include "onesided/errors.hpp"
#include "settings.hpp"

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

void randomNonce(std::span<std::byte> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0 && errno != EINTR) {
      throw Error(kErrOther, std::string("bootstrap: getrandom: ") + std::strerror(errno));
    }
    if (n > 0) got += static_cast<std::size_t>(n);
  }
}

std::vector<std::byte> envSecret() {
  const char* v = settings::raw(settings::Id::kSecret);
  std::vector<std::byte> secret;
  if (v == nullptr || *v == '\0') {
    throw Error(kErrOther,
                "bootstrap: ONESIDED_SECRET is not set (onesided-run gives it to the ranks it "
                "starts; the tcp bootstrap works only under onesided-run)");
  }
  if (!fromHex(v, secret) || secret.size() < wire::kMinSecretBytes) {
    throw Error(kErrOther, "bootstrap: ONESIDED_SECRET is not a hex string of at least " +
                               std::to_string(2 * wire::kMinSecretBytes) + " digits");
  }
  return secret;
}

class Tcp final : public Bootstrap {
 public:
  Tcp() {
    size_ = envInt(settings::get(settings::Id::kSize).name, 1, 1 << 24);
    rank_ = envInt(settings::get(settings::Id::kRank).name, 0, size_ - 1);
    const std::vector<std::byte> secret = envSecret();
    const char* jobid = settings::raw(settings::Id::kJobid);
    if (jobid == nullptr || *jobid == '\0') {
      throw Error(kErrOther, "bootstrap: ONESIDED_JOBID is not set");
    }
    const char* addr = settings::raw(settings::Id::kRendezvous);
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
    // The launcher speaks first: a fresh nonce, answered with this rank's proof.
    wire::Header h{};
    recvAll(&h, sizeof h);
    if (h.type == wire::Type::kRefused) refused(h);
    if (h.type != wire::Type::kChallenge || h.len != wire::kNonceBytes) {
      lost("expected the launcher's challenge");
    }
    std::array<std::byte, wire::kNonceBytes> nonce{};
    recvAll(nonce.data(), nonce.size());
    std::array<std::byte, wire::kNonceBytes> mine{};
    randomNonce(mine);
    const std::int32_t r = rank_;
    const Digest mac = wire::proof(wire::kRankLabel, secret, nonce, mine, r, jobid);
    std::array<std::byte, wire::kHelloLen> hello{};
    std::memcpy(hello.data(), &r, 4);
    std::memcpy(hello.data() + 4, mine.data(), mine.size());
    std::memcpy(hello.data() + 4 + mine.size(), mac.data(), mac.size());
    send(wire::Type::kHello, hello.data(), hello.size());
    // The launcher's answer: its own proof (it holds the secret too), or why it refused.
    recvAll(&h, sizeof h);
    if (h.type == wire::Type::kRefused) refused(h);
    if (h.type != wire::Type::kWelcome || h.len != wire::kProofBytes) {
      lost("expected the launcher's welcome");
    }
    Digest theirs{};
    recvAll(theirs.data(), theirs.size());
    if (!equalConstantTime(theirs,
                           wire::proof(wire::kLauncherLabel, secret, nonce, mine, r, jobid))) {
      throw Error(kErrOther, "bootstrap: the process listening on " + a +
                                 " does not know the job's secret: not this job's onesided-run");
    }
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
    if (mine.size() > wire::kMaxBlob) {
      throw Error(kErrOther, "bootstrap: this rank's start-up data (" +
                                 std::to_string(mine.size()) + " bytes) exceeds the " +
                                 std::to_string(wire::kMaxBlob) + " bytes onesided-run takes");
    }
    send(wire::Type::kAllgather, mine.data(), mine.size());
    wire::Header h{};
    recvAll(&h, sizeof h);
    if (h.type == wire::Type::kRefused) refused(h);
    if (h.type != wire::Type::kAllgather) lost("unexpected message type");
    // Each rank's blob is at most kMaxBlob after its 8-byte length (size_ <= 2^24: no wrap).
    if (h.len > static_cast<std::uint64_t>(size_) * (8 + wire::kMaxBlob)) {
      lost("allgather reply of " + std::to_string(h.len) + " bytes");
    }
    std::vector<std::byte> payload(h.len);
    recvAll(payload.data(), payload.size());
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size_));
    std::size_t pos = 0;
    for (auto& blob : out) {
      std::uint64_t n = 0;
      if (payload.size() - pos < 8) lost("short allgather reply");
      std::memcpy(&n, payload.data() + pos, 8);
      pos += 8;
      if (n > payload.size() - pos) lost("short allgather reply");
      blob.assign(payload.begin() + static_cast<std::ptrdiff_t>(pos),
                  payload.begin() + static_cast<std::ptrdiff_t>(pos + n));
      pos += n;
    }
    return out;
  }

  void barrier() override { (void)allgather({}); }

  void finalize() override { send(wire::Type::kFinalize, nullptr, 0); }

  void abort(int code, std::string_view message) override {
    message = message.substr(0, wire::kMaxAbortText);
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
  /// The launcher refused this process (kRefused: a rank already claimed, a bad proof).
  [[noreturn]] void refused(const wire::Header& h) {
    std::string why(static_cast<std::size_t>(std::min<std::uint64_t>(h.len, 1024)), '\0');
    try {
      recvAll(why.data(), why.size());
    } catch (const Error&) {
      why = "no reason given";
    }
    throw Error(kErrOther,
                "bootstrap: onesided-run refused rank " + std::to_string(rank_) + ": " + why);
  }
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
