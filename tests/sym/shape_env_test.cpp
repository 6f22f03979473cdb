// ShapeEnv: symbols, specialisation, guards, unbacked errors, checks, replacements.
#include "ingot/sym/shape_env.h"

#include <gtest/gtest.h>

namespace ingot::sym {
namespace {

Expr I(int64_t v) {
  return integer(v);
}

// "shape_env_test.cpp:<line>" suffix of a where string.
std::string here(int line) {
  return fmt::format("shape_env_test.cpp:{}", line);
}

TEST(ShapeEnv, BackedSymbolsAndZeroOneSpecialisation) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(8);
  Expr s1 = env.create_symbol(3);
  EXPECT_EQ(s0.str(), "s0");
  EXPECT_EQ(s1.str(), "s1");
  EXPECT_EQ(env.range(s0), ValueRange::at_least(2));  // 0 and 1 were excluded
  EXPECT_EQ(env.create_symbol(1), I(1));              // specialised to constants
  EXPECT_EQ(env.create_symbol(0), I(0));
  Expr keep = env.create_symbol(1, {.specialize_zero_one = false});
  EXPECT_TRUE(keep.is_symbol());
  EXPECT_EQ(env.range(keep), ValueRange::at_least(0));
  Expr named = env.create_symbol(5, {.range = ValueRange::between(2, 64), .name = "batch"});
  EXPECT_EQ(named.str(), "batch");
  EXPECT_EQ(env.range(named), ValueRange::between(2, 64));
  EXPECT_THROW(env.create_symbol(100, {.range = ValueRange::between(2, 64)}), ValueError);
  EXPECT_THROW(env.create_symbol(5, {.name = "batch"}), ValueError);
  EXPECT_EQ(env.size_hint(2 * s0 + s1), 19);
  EXPECT_EQ(env.symbols().size(), 4u);
}

TEST(ShapeEnv, GuardsRecordDecisionsWithSourceLines) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(8), s1 = env.create_symbol(3);
  // Provable: no guard.
  EXPECT_TRUE(env.evaluate_guard(ge(s0, I(2))));
  EXPECT_TRUE(env.evaluate_guard(lt(s0, s0 + 1)));
  EXPECT_TRUE(env.guards().empty());
  // Decided by hints: guards with the caller's line.
  const int line = __LINE__ + 1;
  EXPECT_TRUE(env.evaluate_guard(gt(s0, s1)));
  EXPECT_FALSE(env.evaluate_guard(eq(s0, I(4))));
  ASSERT_EQ(env.guards().size(), 2u);
  EXPECT_EQ(env.guards()[0].condition().str(), "s1 < s0");
  EXPECT_NE(env.guards()[0].str().find(here(line)), std::string::npos) << env.guards()[0].str();
  EXPECT_EQ(env.guards()[1].condition().str(), "Ne(s0, 4)");
  // The decision is now a fact: asking again records nothing.
  EXPECT_TRUE(env.evaluate_guard(lt(s1, s0)));
  EXPECT_FALSE(env.evaluate_guard(eq(s0, I(4))));
  EXPECT_EQ(env.guards().size(), 2u);
}

TEST(ShapeEnv, GuardsNarrowRanges) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(8);
  EXPECT_TRUE(env.evaluate_guard(gt(s0, I(5))));
  EXPECT_EQ(env.range(s0), ValueRange::at_least(6));
  EXPECT_TRUE(env.evaluate_guard(le(2 * s0, I(40))));
  EXPECT_EQ(env.range(s0), ValueRange::between(6, 20));
  EXPECT_EQ(env.prove(lt(s0, I(21))), Truth::True);
  EXPECT_EQ(env.prove(lt(s0, I(6))), Truth::False);
  EXPECT_EQ(env.prove(lt(s0, I(10))), Truth::Unknown);
  EXPECT_EQ(env.simplify(min(s0, I(3))), I(3));
  EXPECT_EQ(env.simplify(max(s0, I(25))), I(25));
  EXPECT_EQ(env.simplify(floordiv(s0, I(32))), I(0));
  EXPECT_EQ(env.simplify(mod(s0, I(21))), s0);
}

TEST(ShapeEnv, EvaluateIntSpecialises) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(6);
  EXPECT_EQ(env.evaluate_int(2 * s0), 12);
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition().str(), "Eq(s0, 6)");
  EXPECT_EQ(env.simplify(s0 + 1), I(7));  // s0 is now the constant 6
}

TEST(ShapeEnv, UnbackedConditionsNeedCheck) {
  ShapeEnv env;
  Expr u0 = env.create_unbacked_size();
  EXPECT_EQ(u0.str(), "u0");
  EXPECT_EQ(env.range(u0), ValueRange::at_least(0));
  EXPECT_TRUE(env.evaluate_guard(ge(u0, I(0))));  // provable from the range
  const int line = __LINE__ + 2;
  try {
    env.evaluate_guard(gt(u0, I(0)));
    FAIL() << "expected DataDependentError";
  } catch (const DataDependentError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("0 < u0"), std::string::npos) << msg;
    EXPECT_NE(msg.find(here(line)), std::string::npos) << msg;
    EXPECT_NE(msg.find("cond("), std::string::npos) << msg;
    EXPECT_NE(msg.find("check(0 < u0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("u0 in [0, inf)"), std::string::npos) << msg;
    EXPECT_EQ(e.expr(), gt(u0, I(0)));
  }
  EXPECT_THROW(env.size_hint(u0), DataDependentError);
  EXPECT_THROW(env.evaluate_int(u0 + 1), DataDependentError);
  EXPECT_TRUE(env.guards().empty());

  // check() states the fact: later guards are proved, and it is a runtime assert.
  const int check_line = __LINE__ + 1;
  env.check(ge(u0, I(1)));
  EXPECT_EQ(env.range(u0), ValueRange::at_least(1));
  EXPECT_TRUE(env.evaluate_guard(gt(u0, I(0))));
  EXPECT_FALSE(env.evaluate_guard(eq(u0, I(0))));
  EXPECT_TRUE(env.guards().empty());
  ASSERT_EQ(env.runtime_asserts().size(), 1u);
  EXPECT_EQ(env.runtime_asserts()[0].expr.str(), "1 <= u0");
  EXPECT_NE(env.runtime_asserts()[0].str().find(here(check_line)), std::string::npos);
}

TEST(ShapeEnv, CheckRelatesUnbackedToBacked) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(10), u0 = env.create_unbacked_symint();
  EXPECT_EQ(env.range(u0), ValueRange::all());
  env.check_is_size(u0);
  EXPECT_EQ(env.range(u0), ValueRange::at_least(0));
  EXPECT_THROW(env.evaluate_guard(le(u0, s0)), DataDependentError);
  env.check(le(u0, s0));  // not a single-symbol bound: kept as a linear fact
  EXPECT_TRUE(env.evaluate_guard(le(u0, s0)));
  EXPECT_TRUE(env.evaluate_guard(lt(u0, s0 + 1)));
  EXPECT_FALSE(env.evaluate_guard(gt(u0, s0 + 3)));
  EXPECT_EQ(env.simplify(min(u0, s0)), u0);
  // Checks that are false now are errors; ones already known record nothing.
  EXPECT_THROW(env.check(lt(s0, I(0))), ValueError);
  EXPECT_THROW(env.check(gt(s0, I(20))), ValueError);  // false for the example
  env.check(ge(u0, I(0)));
  EXPECT_EQ(env.runtime_asserts().size(), 2u);
  // Eq with a backed symbol replaces the unbacked one.
  env.check(eq(u0, s0));
  EXPECT_EQ(env.simplify(u0 + 1), s0 + 1);
  EXPECT_EQ(env.size_hint(u0), 10);
}

TEST(ShapeEnv, EqualityGuardReplacesTheNewerSymbol) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(4), s1 = env.create_symbol(4), s2 = env.create_symbol(9);
  EXPECT_TRUE(env.evaluate_guard(eq(s1, s0)));
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition().str(), "Eq(s0, s1)");
  ASSERT_EQ(env.replacements().count(s1), 1u);
  EXPECT_EQ(env.replacements().at(s1), s0);
  EXPECT_EQ(env.simplify(s1 * s2 - s0 * s2), I(0));
  EXPECT_EQ(env.simplify(eq(s0, s1)), boolean(true));
  // Transitive: s2 == 2*s0 + 1 makes s2 go too, and replacements stay resolved.
  EXPECT_TRUE(env.evaluate_guard(eq(s2, 2 * s1 + 1)));
  EXPECT_EQ(env.simplify(s2), 2 * s0 + 1);
  // A constant equality specialises.
  EXPECT_TRUE(env.evaluate_guard(eq(s0, I(4))));
  EXPECT_EQ(env.simplify(s2 + s1), I(13));
  EXPECT_EQ(env.range(s0), ValueRange::exactly(4));
}

TEST(ShapeEnv, ScaledEqualityReplacesTheUnitSymbol) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(3), s1 = env.create_symbol(6), s2 = env.create_symbol(4);
  EXPECT_TRUE(env.evaluate_guard(eq(2 * s0, s1)));
  EXPECT_EQ(env.simplify(s1 - s0), s0);
  EXPECT_EQ(env.simplify(floordiv(s1, I(2))), s0);
  // No unit coefficient: kept as a fact, still proves the same question.
  EXPECT_TRUE(env.evaluate_guard(eq(3 * s2, 2 * s1)));
  EXPECT_EQ(env.guards().size(), 2u);
  EXPECT_TRUE(env.evaluate_guard(eq(2 * s1, 3 * s2)));
  EXPECT_EQ(env.guards().size(), 2u);
}

TEST(ShapeEnv, EvaluateWithBindings) {
  ShapeEnv env;
  Expr s0 = env.create_symbol(4), s1 = env.create_symbol(4);
  env.evaluate_guard(eq(s0, s1));
  Expr e = floordiv(s0 * s1 + 1, I(2));
  EXPECT_EQ(env.evaluate(e, {{"s0", 3}, {"s1", 5}}), 8);
  // Every guard can be checked against new inputs.
  EXPECT_EQ(env.evaluate(env.guards()[0].condition(), {{"s0", 3}, {"s1", 5}}), 0);
  EXPECT_EQ(env.evaluate(env.guards()[0].condition(), {{"s0", 7}, {"s1", 7}}), 1);
  // s1 missing: resolved through its replacement s0.
  EXPECT_EQ(env.evaluate(e, {{"s0", 3}}), 5);
  try {
    env.evaluate(e, {{"s1", 3}});
    FAIL();
  } catch (const ValueError& err) {
    EXPECT_NE(std::string(err.what()).find("no value bound for symbol s0"), std::string::npos);
  }
}

}  // namespace
}  // namespace ingot::sym
