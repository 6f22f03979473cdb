// SymInt / SymBool over a ShapeEnv, and real ops' shape functions run on data-less
// tensors with symbolic sizes (what the export tracer does).
#include "ingot/sym/sym_node.h"

#include <gtest/gtest.h>

#include "../ops/op_test_util.h"

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot::sym {
namespace {

TEST(SymNode, ArithmeticBuildsSimplifiedExpressions) {
  ShapeEnv env;
  SymInt a = create_symint(env, 6), b = create_symint(env, 4);
  EXPECT_TRUE(a.is_symbolic());
  EXPECT_EQ((a + a).str(), "2*s0");
  EXPECT_EQ(floordiv(a * 4, 4).str(), "s0");
  EXPECT_EQ(floordiv(2 * a + 2, 2).str(), "s0 + 1");
  EXPECT_EQ((a * 4 % 2).maybe_int(), 0);
  EXPECT_EQ(sym_min(a, a).str(), "s0");
  EXPECT_EQ(sym_max(a, 1).maybe_int(), std::nullopt);
  EXPECT_EQ(sym_max(a, 1).str(), "s0");  // s0 >= 2
  EXPECT_EQ((a - b + b - a).maybe_int(), 0);
  EXPECT_EQ((a == b).str(), "Eq(s0, s1)");
  EXPECT_EQ((a < b).str(), "s0 < s1");
  EXPECT_EQ((a >= 2).maybe_bool(), true);  // proved from the range, no guard
  EXPECT_EQ((a == 0 || b == 0).maybe_bool(), false);
  EXPECT_TRUE(env.guards().empty());
  EXPECT_EQ(create_symint(env, 1).maybe_int(), 1);  // specialised: a plain int
  EXPECT_FALSE(create_symint(env, 1).is_symbolic());
}

TEST(SymNode, GuardsCarryTheCallersLine) {
  ShapeEnv env;
  SymInt a = create_symint(env, 6), b = create_symint(env, 4);
  const int line = __LINE__ + 1;
  bool bigger = (a > b).guard_bool();
  EXPECT_TRUE(bigger);
  EXPECT_EQ(a.guard_int(), 6);
  ASSERT_EQ(env.guards().size(), 2u);
  EXPECT_EQ(env.guards()[0].condition().str(), "s1 < s0");
  EXPECT_EQ(env.guards()[0].where.line(), uint32_t(line));
  EXPECT_EQ(env.guards()[1].condition().str(), "Eq(s0, 6)");
  EXPECT_EQ(a.maybe_int(), 6);  // specialised by guard_int
}

TEST(SymNode, UnbackedSizesNeedCheck) {
  ShapeEnv env;
  SymInt n = create_unbacked_size(env);
  EXPECT_EQ(n.str(), "u0");
  EXPECT_THROW((n > 0).guard_bool(), DataDependentError);
  env.check(expr_of(n > 0));
  EXPECT_TRUE((n > 0).guard_bool());
  EXPECT_TRUE(env.guards().empty());
}

using ShapeOnly = ingot::testing::ShapeOnlyInterceptor;

TEST(SymNode, ShapeFunctionsOfRealOpsPropagateSymbols) {
  ShapeEnv env;
  SymInt s0 = create_symint(env, 6);
  Tensor x = Tensor::meta(DType::F32, {SymInt(2), s0, SymInt(4)});  // [2, s0, 4]
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);

  Tensor flat = view(x, {SymInt(-1), SymInt(4)});  // [2*s0, 4]
  EXPECT_EQ(flat.sym_size(0).str(), "2*s0");
  Tensor rows = view(x, {s0, SymInt(-1)});  // [s0, 8]
  EXPECT_EQ(rows.sym_size(1).maybe_int(), 8);
  Tensor cut = slice(x, 1, 1, std::nullopt);  // [2, s0 - 1, 4]
  EXPECT_EQ(env.simplify(expr_of(cut.sym_size(1))).str(), "s0 - 1");
  Tensor joined = cat({x, cut}, 1);  // [2, 2*s0 - 1, 4]
  EXPECT_EQ(joined.sym_size(1).str(), "2*s0 - 1");
  Tensor moved = transpose(joined, 0, 1);  // [2*s0 - 1, 2, 4]
  Tensor sum = add(moved, Tensor::meta(DType::F32, {SymInt(4)}));
  EXPECT_EQ(sum.sym_size(0).str(), "2*s0 - 1");
  EXPECT_FALSE(sum.has_storage());
  // None of this needed a decision on s0.
  EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
  EXPECT_EQ(shape_only.ops, (std::vector<std::string>{"view", "view", "slice.Tensor", "cat",
                                                      "transpose.int", "add.Tensor"}));
}

TEST(SymNode, BroadcastingTwoSymbolsGuardsEqualityThenReplaces) {
  ShapeEnv env;
  SymInt s0 = create_symint(env, 3), s1 = create_symint(env, 3);
  Tensor a = Tensor::meta(DType::F32, {s0, SymInt(4)});
  Tensor b = Tensor::meta(DType::F32, {s1, SymInt(4)});
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  Tensor out = add(a, b);
  EXPECT_EQ(out.sym_size(0).str(), "s0");
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition().str(), "Eq(s0, s1)");
  EXPECT_EQ(env.replacements().at(expr_of(s1)), expr_of(s0));
  // After the guard, s1 is s0: cat's total simplifies, and broadcasting again is proved.
  Tensor both = cat({out, b}, 0);
  EXPECT_EQ(both.sym_size(0).str(), "2*s0");
  Tensor again = mul(b, a);
  EXPECT_EQ(env.simplify(expr_of(again.sym_size(0))), expr_of(s0));
  EXPECT_EQ(env.guards().size(), 1u);
}

TEST(SymNode, DataDependentBroadcastFailsUntilChecked) {
  ShapeEnv env;
  SymInt s0 = create_symint(env, 5);
  SymInt u0 = create_unbacked_size(env);  // e.g. rows of nonzero()
  Tensor a = Tensor::meta(DType::F32, {s0, SymInt(2)});
  Tensor nz = Tensor::meta(DType::F32, {u0, SymInt(2)});
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  try {
    add(a, nz);
    FAIL() << "expected DataDependentError";
  } catch (const DataDependentError& e) {
    EXPECT_NE(std::string(e.what()).find("Eq(s0, u0)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check("), std::string::npos) << e.what();
  }
  env.check(expr_of(u0 == s0));  // the user states the fact
  Tensor out = add(a, nz);
  EXPECT_EQ(env.simplify(expr_of(out.sym_size(0))), expr_of(s0));
  EXPECT_TRUE(env.guards().empty());
  ASSERT_EQ(env.runtime_asserts().size(), 1u);
}

TEST(SymNode, UserLocationScopeAttributesGuardsToTheModelLine) {
  ShapeEnv env;
  SymInt s0 = create_symint(env, 3), s1 = create_symint(env, 3), u0 = create_unbacked_size(env);
  Tensor a = Tensor::meta(DType::F32, {s0});
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  const auto user_line = std::source_location::current();  // what the tracer would record
  {
    ShapeEnv::UserLocationScope at(env, user_line);
    add(a, Tensor::meta(DType::F32, {s1}));
  }
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].where.line(), user_line.line());
  EXPECT_NE(env.guards()[0].origin.line(), user_line.line());  // inside core / ops
  try {
    ShapeEnv::UserLocationScope at(env, user_line);
    add(a, Tensor::meta(DType::F32, {u0}));
    FAIL() << "expected DataDependentError";
  } catch (const DataDependentError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(fmt::format("sym_node_test.cpp:{} (inside ", user_line.line())),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace ingot::sym

namespace ingot::sym {
namespace {

// A node that folds to a constant becomes a plain SymInt (core's invariant).
TEST(SymNode, ConstantFoldedExpressionsArePlainInts) {
  ShapeEnv env;
  SymInt s = create_symint(env, 7);
  SymInt folded = sym_min(SymInt(1), s);  // s >= 2 for backed sizes, so this is 1
  EXPECT_TRUE(folded.is_concrete());
  EXPECT_EQ(folded.expect_int(), 1);
  EXPECT_TRUE((s - s).is_concrete());
}

}  // namespace
}  // namespace ingot::sym
