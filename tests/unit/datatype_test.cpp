// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>
#include <mpi.h>

#include "datatype/loop.hpp"
#include "onesided/datatype.hpp"
#include "onesided/errors.hpp"

namespace onesided {
namespace {

TEST(Datatype, PredefinedSizesMatchC) {
  struct {
    int id;
    std::size_t size;
  } cases[] = {{MPI_CHAR, 1},
               {MPI_SHORT, sizeof(short)},
               {MPI_INT, sizeof(int)},
               {MPI_LONG, sizeof(long)},
               {MPI_LONG_LONG, 8},
               {MPI_FLOAT, 4},
               {MPI_DOUBLE, 8},
               {MPI_LONG_DOUBLE, sizeof(long double)},
               {MPI_INT8_T, 1},
               {MPI_UINT64_T, 8},
               {MPI_C_BOOL, sizeof(bool)},
               {MPI_AINT, sizeof(MPI_Aint)},
               {MPI_OFFSET, sizeof(MPI_Offset)},
               {MPI_COUNT, sizeof(MPI_Count)},
               {MPI_WCHAR, sizeof(wchar_t)},
               {MPI_C_DOUBLE_COMPLEX, 16},
               {MPI_2INT, 2 * sizeof(int)}};
  for (auto c : cases) {
    const Datatype* d = Datatype::predefined(c.id);
    ASSERT_NE(d, nullptr) << c.id;
    EXPECT_EQ(d->size(), c.size) << d->name();
    EXPECT_EQ(d->extent(), static_cast<std::ptrdiff_t>(c.size)) << d->name();
    EXPECT_TRUE(d->contiguous()) << d->name();
  }
  EXPECT_EQ(Datatype::predefined(0), nullptr);
  EXPECT_EQ(Datatype::predefined(ONESIDED_NUM_PREDEFINED_TYPES), nullptr);
  EXPECT_EQ(Datatype::predefined(-3), nullptr);
}

TEST(Datatype, PairTypesHaveTheirStructLayout) {
  struct DI {
    double d;
    int i;
  };
  const Datatype* d = Datatype::predefined(MPI_DOUBLE_INT);
  EXPECT_EQ(d->size(), sizeof(double) + sizeof(int));
  EXPECT_EQ(d->extent(), static_cast<std::ptrdiff_t>(sizeof(DI)));
  EXPECT_FALSE(d->contiguous());
  std::int64_t lo = -1;
  std::int64_t hi = -1;
  ASSERT_TRUE(d->footprint(3, lo, hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, static_cast<std::int64_t>(2 * sizeof(DI) + offsetof(DI, i) + 4));
  struct SI {
    short s;
    int i;
  };
  const Datatype* s = Datatype::predefined(MPI_SHORT_INT);
  EXPECT_EQ(s->extent(), static_cast<std::ptrdiff_t>(sizeof(SI)));
  auto segs = detail::segments(*s, 1);
  ASSERT_EQ(segs.size(), 2U);
  EXPECT_EQ(segs[1].offset, static_cast<std::ptrdiff_t>(offsetof(SI, i)));
}

TEST(Datatype, SignatureMatching) {
  auto t = [](int id) -> const Datatype& { return *Datatype::predefined(id); };
  EXPECT_TRUE(signaturesMatch(t(MPI_INT), 4, t(MPI_INT), 4));
  EXPECT_FALSE(signaturesMatch(t(MPI_INT), 4, t(MPI_INT), 3));
  EXPECT_FALSE(signaturesMatch(t(MPI_INT), 2, t(MPI_DOUBLE), 1));  // same bytes, other types
  EXPECT_FALSE(signaturesMatch(t(MPI_INT), 1, t(MPI_FLOAT), 1));
  EXPECT_TRUE(signaturesMatch(t(MPI_2INT), 3, t(MPI_INT), 6));  // (int,int) x 3
  EXPECT_TRUE(signaturesMatch(t(MPI_DOUBLE_INT), 2, t(MPI_DOUBLE_INT), 2));
  EXPECT_FALSE(signaturesMatch(t(MPI_DOUBLE_INT), 1, t(MPI_INT), 3));
  EXPECT_TRUE(signaturesMatch(t(MPI_BYTE), 0, t(MPI_DOUBLE), 0));
  EXPECT_TRUE(signaturesMatch(t(MPI_PACKED), 8, t(MPI_DOUBLE), 1));
  EXPECT_FALSE(signaturesMatch(t(MPI_BYTE), 8, t(MPI_DOUBLE), 1));
}

TEST(Errors, ClassNames) {
  EXPECT_STREQ(errorClassName(MPI_ERR_RMA_RANGE), "MPI_ERR_RMA_RANGE");
  EXPECT_STREQ(errorClassName(MPI_ERR_RMA_SYNC), "MPI_ERR_RMA_SYNC");
  EXPECT_STREQ(errorClassName(MPI_SUCCESS), "MPI_SUCCESS");
  EXPECT_STREQ(errorClassName(12345), "MPI_ERR_UNKNOWN");
  Error e(kErrDisp, "x");
  EXPECT_EQ(e.errorClass(), MPI_ERR_DISP);
}

}  // namespace
}  // namespace onesided
