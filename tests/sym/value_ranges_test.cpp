// Interval arithmetic and range-based proofs.
#include "ingot/sym/value_ranges.h"

#include <gtest/gtest.h>

namespace ingot::sym {
namespace {

using R = ValueRange;
constexpr int64_t kInf = R::kPosInf;

TEST(ValueRanges, Arithmetic) {
  EXPECT_EQ(R::between(1, 3) + R::between(10, 20), R::between(11, 23));
  EXPECT_EQ(R::at_least(2) + R::exactly(-5), R::at_least(-3));
  EXPECT_EQ(-R::at_least(2), R::between(R::kNegInf, -2));
  EXPECT_EQ(R::between(-2, 3) * R::between(4, 5), R::between(-10, 15));
  EXPECT_EQ(R::at_least(2) * R::exactly(0), R::exactly(0));
  EXPECT_EQ(R::at_least(2) * R::at_least(3), R::at_least(6));
  EXPECT_EQ(floordiv(R::between(-7, 9), R::exactly(2)), R::between(-4, 4));
  EXPECT_EQ(floordiv(R::at_least(2), R::at_least(2)), R::at_least(0));
  EXPECT_EQ(floordiv(R::between(1, 2), R::between(-1, 1)), R::all());
  EXPECT_EQ(mod(R::at_least(0), R::exactly(4)), R::between(0, 3));
  EXPECT_EQ(mod(R::between(0, 2), R::exactly(4)), R::between(0, 2));
  EXPECT_EQ(min(R::at_least(2), R::between(0, 5)), R::between(0, 5));
  EXPECT_EQ(max(R::at_least(2), R::between(0, 5)), R::at_least(2));
  EXPECT_EQ(R::at_least(2).str(), "[2, inf)");
  EXPECT_EQ(R::all().str(), "(-inf, inf)");
  EXPECT_TRUE(R::between(3, 2).empty());
}

TEST(ValueRanges, ProvesRelationsThreeWays) {
  const Expr s0 = symbol("s0"), s1 = symbol("s1"), u0 = symbol("u0");
  auto ranges = [&](const Expr& s) {
    if (s == s0) return R::at_least(2);
    if (s == s1) return R::between(0, 8);
    return R::all();
  };
  auto truth = [&](const Expr& c) { return truth_of(bound(c, ranges)); };
  EXPECT_EQ(truth(ge(s0, integer(1))), Truth::True);
  EXPECT_EQ(truth(eq(s0, integer(0))), Truth::False);
  EXPECT_EQ(truth(lt(s0, integer(5))), Truth::Unknown);
  EXPECT_EQ(truth(lt(s1, integer(9))), Truth::True);
  EXPECT_EQ(truth(lt(mod(s0, integer(4)), integer(4))), Truth::True);
  EXPECT_EQ(truth(le(floordiv(s1, integer(2)), integer(4))), Truth::True);
  EXPECT_EQ(truth(lt(u0, integer(0))), Truth::Unknown);
  EXPECT_EQ(truth(logical_and(ge(s0, integer(2)), lt(s1, integer(100)))), Truth::True);
  EXPECT_EQ(truth(logical_or(lt(s0, integer(0)), lt(s1, integer(0)))), Truth::False);
  EXPECT_EQ(truth(logical_not(lt(s0, s1))), Truth::Unknown);
  EXPECT_EQ(bound(s0 * s1 + 1, ranges), R::at_least(1));
  EXPECT_EQ(bound(min(s0, s1), ranges), R::between(0, 8));
  (void)kInf;
}

}  // namespace
}  // namespace ingot::sym
