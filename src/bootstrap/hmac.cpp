// SPDX-License-Identifier: BSD-3-Clause
#include "bootstrap/hmac.hpp"

#include <algorithm>
#include <cstring>

namespace onesided::bootstrap {
namespace {

constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const std::byte* p) {
  std::array<std::uint32_t, 64> w{};
  for (int i = 0; i < 16; ++i) {
    w[i] = static_cast<std::uint32_t>(p[4 * i]) << 24 |
           static_cast<std::uint32_t>(p[4 * i + 1]) << 16 |
           static_cast<std::uint32_t>(p[4 * i + 2]) << 8 | static_cast<std::uint32_t>(p[4 * i + 3]);
  }
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6],
                h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + s1 + ch + kK[i] + w[i];
    const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::update(std::span<const std::byte> data) {
  total_ += data.size();
  const std::byte* p = data.data();
  std::size_t n = data.size();
  if (used_ > 0) {
    const std::size_t take = std::min(n, buf_.size() - used_);
    std::memcpy(buf_.data() + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
    if (used_ < buf_.size()) return;
    block(buf_.data());
    used_ = 0;
  }
  for (; n >= 64; p += 64, n -= 64) block(p);
  if (n > 0) std::memcpy(buf_.data(), p, n);
  used_ = n;
}

Digest Sha256::finish() {
  const std::uint64_t bits = total_ * 8;
  std::array<std::byte, 72> pad{};
  pad[0] = std::byte{0x80};
  // Pad to 56 mod 64, then the length in bits, big-endian.
  const std::size_t padLen = used_ < 56 ? 56 - used_ : 120 - used_;
  for (int i = 0; i < 8; ++i) {
    pad[padLen + static_cast<std::size_t>(i)] = static_cast<std::byte>(bits >> (56 - 8 * i));
  }
  update(std::span(pad.data(), padLen + 8));
  Digest out{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      out[4 * i + j] = static_cast<std::byte>(h_[i] >> (24 - 8 * j));
    }
  }
  return out;
}

Digest sha256(std::span<const std::byte> data) {
  Sha256 s;
  s.update(data);
  return s.finish();
}

Digest hmacSha256(std::span<const std::byte> key,
                  std::initializer_list<std::span<const std::byte>> parts) {
  std::array<std::byte, 64> k{};
  if (key.size() > k.size()) {
    const Digest d = sha256(key);
    std::memcpy(k.data(), d.data(), d.size());
  } else if (!key.empty()) {
    std::memcpy(k.data(), key.data(), key.size());
  }
  std::array<std::byte, 64> ipad{};
  std::array<std::byte, 64> opad{};
  for (std::size_t i = 0; i < k.size(); ++i) {
    ipad[i] = k[i] ^ std::byte{0x36};
    opad[i] = k[i] ^ std::byte{0x5c};
  }
  Sha256 inner;
  inner.update(ipad);
  for (auto p : parts) inner.update(p);
  const Digest innerDigest = inner.finish();
  Sha256 outer;
  outer.update(opad);
  outer.update(innerDigest);
  return outer.finish();
}

bool equalConstantTime(std::span<const std::byte> a, std::span<const std::byte> b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;  // volatile: no early exit
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = static_cast<unsigned char>(diff | static_cast<unsigned char>(a[i] ^ b[i]));
  }
  return diff == 0;
}

std::string toHex(std::span<const std::byte> data) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * data.size());
  for (std::byte b : data) {
    s.push_back(kDigits[static_cast<unsigned>(b) >> 4]);
    s.push_back(kDigits[static_cast<unsigned>(b) & 15]);
  }
  return s;
}

bool fromHex(std::string_view hex, std::vector<std::byte>& out) {
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return false;
  out.clear();
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int hi = val(hex[i]);
    const int lo = val(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<std::byte>(hi << 4 | lo));
  }
  return true;
}

}  // namespace onesided::bootstrap
