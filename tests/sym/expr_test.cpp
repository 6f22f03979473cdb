// Canonical forms, simplification rules and printing of sym::Expr.
#include "ingot/sym/expr.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "ingot/core/error.h"

namespace ingot::sym {
namespace {

const Expr s0 = symbol("s0"), s1 = symbol("s1"), s2 = symbol("s2"), s10 = symbol("s10");
Expr I(int64_t v) {
  return integer(v);
}

TEST(SymExpr, ConstantsFoldWithPythonSemantics) {
  EXPECT_EQ(add(I(2), I(3)), I(5));
  EXPECT_EQ(floordiv(I(-7), I(2)), I(-4));
  EXPECT_EQ(mod(I(-7), I(2)), I(1));
  EXPECT_EQ(mod(I(7), I(-2)), I(-1));
  EXPECT_EQ(floordiv(I(7), I(-2)), I(-4));
  EXPECT_EQ(min(I(3), I(-1)), I(-1));
  EXPECT_EQ(eq(I(3), I(3)), boolean(true));
  EXPECT_EQ(lt(I(3), I(3)), boolean(false));
  EXPECT_THROW(floordiv(s0, I(0)), ValueError);
  EXPECT_THROW(mul(I(INT64_MAX), I(2)), ValueError);
}

TEST(SymExpr, SumsCollectLikeTerms) {
  EXPECT_EQ(s0 + s0, 2 * s0);
  EXPECT_EQ((s0 + s1) - s0, s1);
  EXPECT_EQ(s0 - s0, I(0));
  EXPECT_EQ(s1 + s0, s0 + s1);  // commutative: one canonical order
  EXPECT_EQ((2 * s0 + s1 - 3).str(), "2*s0 + s1 - 3");
  EXPECT_EQ((I(5) - s0).str(), "-s0 + 5");
  EXPECT_EQ((s0 + 1).str(), "s0 + 1");
}

TEST(SymExpr, ProductsExpandAndSort) {
  EXPECT_EQ(s1 * s0, s0 * s1);
  EXPECT_EQ((s0 * s1).str(), "s0*s1");
  EXPECT_EQ(((s0 + 1) * s1).str(), "s1 + s0*s1");
  EXPECT_EQ(((s0 + 1) * (s0 - 1)), s0 * s0 - 1);
  EXPECT_EQ((s0 * s0 * s1).str(), "s0**2*s1");
  EXPECT_EQ(0 * s0, I(0));
}

TEST(SymExpr, FloorDivRules) {
  EXPECT_EQ(floordiv(s0 * 4, I(4)), s0);
  EXPECT_EQ(floordiv(2 * s0 + 2, I(2)), s0 + 1);
  // A divisor with a coefficient (a view's -1 over a symbolic numel, as .pt2 graphs have).
  EXPECT_EQ(floordiv(32 * s0, 16 * s0), I(2));
  EXPECT_EQ(floordiv(2 * s0 + 3, I(2)), s0 + 1);
  EXPECT_EQ(floordiv(s0, I(1)), s0);
  EXPECT_EQ(floordiv(s0, s0), I(1));
  EXPECT_EQ(floordiv(s0, I(2)).str(), "(s0//2)");
  EXPECT_EQ(floordiv(s0 + 1, I(2)).str(), "((s0 + 1)//2)");
  // Divisible terms come out; a common factor cancels.
  EXPECT_EQ(floordiv(4 * s0 + 2 * s1, I(4)), s0 + floordiv(s1, I(2)));
  EXPECT_EQ(floordiv(floordiv(s0, I(2)), I(3)), floordiv(s0, I(6)));
  EXPECT_EQ(floordiv(s0, s1).str(), "(s0//s1)");
  // Symbolic divisors: divisible terms come out.
  EXPECT_EQ(floordiv(8 * s0, s0), I(8));
  EXPECT_EQ(floordiv(s0 * s1 + s1, s1), s0 + 1);
  EXPECT_EQ(floordiv(s0 * s1 + 3, s1), s0 + floordiv(I(3), s1));
  EXPECT_EQ(mod(s0 * s1 + 3, s1), mod(I(3), s1));
}

TEST(SymExpr, ModRules) {
  EXPECT_EQ(mod(4 * s0, I(2)), I(0));
  EXPECT_EQ(mod(4 * s0 + 3, I(2)), I(1));
  EXPECT_EQ(mod(3 * s0 + 5, I(3)), I(2));
  EXPECT_EQ(mod(s0 + 4, I(2)).str(), "Mod(s0, 2)");
  EXPECT_EQ(mod(mod(s0, I(6)), I(3)), mod(s0, I(3)));
  EXPECT_EQ(mod(s0, s0), I(0));
  EXPECT_EQ(mod(s0, I(1)), I(0));
}

TEST(SymExpr, MinMaxRules) {
  EXPECT_EQ(min(s0, s0), s0);
  EXPECT_EQ(max(s0, s0 + 1), s0 + 1);
  EXPECT_EQ(min(s0, s0 - 2), s0 - 2);
  EXPECT_EQ(min(s1, s0), min(s0, s1));
  EXPECT_EQ(min(s0, s1).str(), "Min(s0, s1)");
  EXPECT_EQ(max(s0, max(s0, s1)), max(s0, s1));
}

TEST(SymExpr, RelationsAreCanonical) {
  EXPECT_EQ(eq(s0, s1), eq(s1, s0));
  EXPECT_EQ(eq(s1, s0).str(), "Eq(s0, s1)");
  EXPECT_EQ(ne(s0, I(0)).str(), "Ne(s0, 0)");
  EXPECT_EQ(lt(s0, I(5)).str(), "s0 < 5");
  EXPECT_EQ(gt(s0, I(5)).str(), "5 < s0");
  EXPECT_EQ(ge(s0, I(2)).str(), "2 <= s0");
  EXPECT_EQ(lt(s0 + 2, s1).str(), "s0 + 2 < s1");
  EXPECT_EQ(eq(2 * s0, I(4)), eq(s0, I(2)));  // common factor divided out
  EXPECT_EQ(eq(2 * s0, I(3)), boolean(false));
  EXPECT_EQ(lt(s0, s0 + 1), boolean(true));
  EXPECT_EQ(le(2 * s0, I(5)), le(s0, I(2)));
}

TEST(SymExpr, BooleanAlgebra) {
  Expr a = lt(s0, I(5)), b = eq(s1, I(2));
  EXPECT_EQ(logical_not(eq(s0, s1)), ne(s0, s1));
  EXPECT_EQ(logical_not(lt(s0, s1)), le(s1, s0));
  EXPECT_EQ(logical_not(logical_not(a)), a);
  EXPECT_EQ(logical_and(a, boolean(true)), a);
  EXPECT_EQ(logical_and(a, boolean(false)), boolean(false));
  EXPECT_EQ(logical_or(a, boolean(true)), boolean(true));
  EXPECT_EQ(logical_and(a, a), a);
  EXPECT_EQ(logical_and(a, b), logical_and(b, a));
  EXPECT_EQ(logical_and(a, b).str(), "Eq(s1, 2) & (s0 < 5)");
  EXPECT_EQ(logical_not(logical_or(a, b)).str(), "~(Eq(s1, 2) | (s0 < 5))");
  EXPECT_THROW(logical_and(s0, a), ValueError);
  EXPECT_THROW(add(a, s0), ValueError);
}

TEST(SymExpr, EqualityAndHashAgree) {
  Expr a = 2 * s0 + s1 - 3, b = s1 - 3 + s0 + s0;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a == s0 + s1);
  std::unordered_set<Expr> set = {a, b, s0};
  EXPECT_EQ(set.size(), 2u);
}

TEST(SymExpr, SymbolsSortNaturally) {
  EXPECT_LT(compare(s2, s10), 0);
  EXPECT_EQ((s10 + s2).str(), "s2 + s10");
  EXPECT_EQ(free_symbols(s10 * s2 + floordiv(s0, I(2))), (std::vector<Expr>{s0, s2, s10}));
}

TEST(SymExpr, SubstituteAndEvaluate) {
  Expr e = floordiv(s0 * s1 + 1, I(2));
  Expr r = substitute(e, [&](const Expr& s) -> std::optional<Expr> {
    if (s == s1) return I(4);
    return std::nullopt;
  });
  EXPECT_EQ(r, 2 * s0);  // (4*s0 + 1)//2 -> 2*s0
  auto values = [](const Expr& s) -> int64_t { return s.name() == "s0" ? 3 : -5; };
  EXPECT_EQ(evaluate(e, values), -7);  // (-15 + 1)//2
  EXPECT_EQ(evaluate(mod(s1, I(3)), values), 1);
  EXPECT_EQ(evaluate(logical_and(lt(s1, s0), ne(s0, I(0))), values), 1);
}

}  // namespace
}  // namespace ingot::sym
