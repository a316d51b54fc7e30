// SPDX-License-Identifier: BSD-3-Clause
// SmallVec: the collectives' per-call lists, inline up to N and on the heap past it.
#include "collectives/small_vec.hpp"

#include <gtest/gtest.h>

#include <span>

namespace onesided::detail {
namespace {

struct Item {
  int a = 0;
  long b = 0;
};

// Every size from empty to well past N, pushed both ways, read back through data(), indexing,
// iteration, the span and a copy (which must not share storage with the original).
TEST(SmallVec, KeepsEveryElementInlineAndPastN) {
  for (int n = 0; n <= 11; ++n) {
    SmallVec<Item, 4> v;
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        v.push_back(Item{i, 10L * i});
      } else {
        v.emplace_back(i, 10L * i);
      }
    }
    ASSERT_EQ(v.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(v.empty(), n == 0);
    const SmallVec<Item, 4> copy(v);
    int seen = 0;
    for (const Item& x : v) {
      EXPECT_EQ(x.a, seen);
      EXPECT_EQ(x.b, 10L * seen);
      ++seen;
    }
    EXPECT_EQ(seen, n);
    const std::span<const Item> s = copy;
    ASSERT_EQ(s.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(s[static_cast<std::size_t>(i)].a, i);
      EXPECT_EQ(v[static_cast<std::size_t>(i)].b, 10L * i);
    }
    if (n > 0) {
      v[0].a = -1;
      EXPECT_EQ(copy[0].a, 0) << "a copy has storage of its own";
      EXPECT_NE(copy.data(), v.data());
    }
  }
}

}  // namespace
}  // namespace onesided::detail
