#include "ingot/core/sym_int.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

TEST(SymInt, PlainArithmeticStaysPlain) {
  SymInt a = 7, b = -2;
  EXPECT_EQ((a + b).expect_int(), 5);
  EXPECT_EQ((a * b).expect_int(), -14);
  EXPECT_EQ(floordiv(a, b).expect_int(), -4);  // Python: 7 // -2 == -4
  EXPECT_EQ((a % b).expect_int(), -1);         // Python: 7 % -2 == -1
  EXPECT_EQ(sym_max(a, b).expect_int(), 7);
  EXPECT_TRUE(bool(a > b));
  EXPECT_FALSE((a == b).guard_bool());
  EXPECT_EQ(a.str(), "7");
}

}  // namespace
}  // namespace ingot
