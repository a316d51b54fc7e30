// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 against FIPS 180-4's examples, HMAC-SHA256 against RFC 4231's test cases 1-7.
#include "bootstrap/hmac.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ob = onesided::bootstrap;

namespace {

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string hmacHex(const std::string& key, const std::string& data) {
  return ob::toHex(ob::hmacSha256(bytes(key), {bytes(data)}));
}

}  // namespace

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(ob::toHex(ob::sha256(bytes(""))),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ob::toHex(ob::sha256(bytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      ob::toHex(ob::sha256(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a's, fed in pieces that straddle the 64-byte blocks.
  ob::Sha256 s;
  const std::string chunk(997, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    const std::size_t n = std::min(left, chunk.size());
    s.update(std::string_view(chunk.data(), n));
    left -= n;
  }
  EXPECT_EQ(ob::toHex(s.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(HmacSha256, Rfc4231) {
  EXPECT_EQ(hmacHex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmacHex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmacHex(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4.push_back(static_cast<char>(i));
  EXPECT_EQ(hmacHex(key4, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Test case 5 is truncated to 128 bits.
  EXPECT_EQ(hmacHex(std::string(20, '\x0c'), "Test With Truncation").substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
  EXPECT_EQ(
      hmacHex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmacHex(std::string(131, '\xaa'),
                    "This is a test using a larger than block-size key and a larger than "
                    "block-size data. The key needs to be hashed before being used by the HMAC "
                    "algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, PartsAreConcatenated) {
  const std::string key = "k";
  EXPECT_EQ(ob::hmacSha256(bytes(key), {bytes("what do "), bytes(""), bytes("ya want")}),
            ob::hmacSha256(bytes(key), {bytes("what do ya want")}));
}

TEST(HmacSha256, CompareAndHex) {
  const std::string a = "abcd", b = "abce", c = "abc";
  EXPECT_TRUE(ob::equalConstantTime(bytes(a), bytes(a)));
  EXPECT_FALSE(ob::equalConstantTime(bytes(a), bytes(b)));
  EXPECT_FALSE(ob::equalConstantTime(bytes(a), bytes(c)));
  std::vector<std::byte> v;
  ASSERT_TRUE(ob::fromHex("00ffA5", v));
  EXPECT_EQ(ob::toHex(v), "00ffa5");
  EXPECT_FALSE(ob::fromHex("abc", v));
  EXPECT_FALSE(ob::fromHex("zz", v));
}
