// Shape functions must work on data-less tensors with symbolic sizes: this is what the
// export tracer relies on. A toy SymNodeImpl (expression text + example value) stands in
// for sym/'s ShapeEnv, and an interceptor runs only shape functions.
#include <gtest/gtest.h>

#include "op_test_util.h"

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

// Expression text with the example value it evaluates to; guards are logged.
class ToyNode : public SymNodeImpl {
 public:
  ToyNode(std::string text, int64_t hint, bool is_bool, std::vector<std::string>* guards)
      : text_(std::move(text)), hint_(hint), is_bool_(is_bool), guards_(guards) {}

  bool is_bool() const override { return is_bool_; }
  std::optional<int64_t> maybe_constant() const override { return std::nullopt; }
  std::string str() const override { return text_; }
  SymNode wrap_int(int64_t v) const override { return constant(v, false); }
  SymNode wrap_bool(bool v) const override { return constant(v, true); }

  SymNode add(const SymNode& o) const override { return bin(o, "+", hint_ + h(o), false); }
  SymNode sub(const SymNode& o) const override { return bin(o, "-", hint_ - h(o), false); }
  SymNode mul(const SymNode& o) const override { return bin(o, "*", hint_ * h(o), false); }
  SymNode floordiv(const SymNode& o) const override {
    return bin(o, "//", floordiv_int(hint_, h(o)), false);
  }
  SymNode mod(const SymNode& o) const override { return bin(o, "%", mod_int(hint_, h(o)), false); }
  SymNode min(const SymNode& o) const override { return bin(o, " min ", std::min(hint_, h(o)), false); }
  SymNode max(const SymNode& o) const override { return bin(o, " max ", std::max(hint_, h(o)), false); }
  SymNode eq(const SymNode& o) const override { return bin(o, "==", hint_ == h(o), true); }
  SymNode lt(const SymNode& o) const override { return bin(o, "<", hint_ < h(o), true); }
  SymNode le(const SymNode& o) const override { return bin(o, "<=", hint_ <= h(o), true); }
  SymNode logical_and(const SymNode& o) const override { return bin(o, "&", hint_ && h(o), true); }
  SymNode logical_or(const SymNode& o) const override { return bin(o, "|", hint_ || h(o), true); }
  SymNode logical_not() const override {
    return std::make_shared<ToyNode>("!" + text_, !hint_, true, guards_);
  }
  int64_t guard_int(const std::source_location&) const override {
    guards_->push_back(text_ + " == " + std::to_string(hint_));
    return hint_;
  }
  bool guard_bool(const std::source_location&) const override {
    guards_->push_back(text_ + (hint_ ? "" : " is False"));
    return hint_ != 0;
  }

 private:
  static int64_t h(const SymNode& o) { return static_cast<const ToyNode&>(*o).hint_; }
  SymNode constant(int64_t v, bool b) const {
    return std::make_shared<ToyNode>(std::to_string(v), v, b, guards_);
  }
  SymNode bin(const SymNode& o, const char* op, int64_t hint, bool b) const {
    return std::make_shared<ToyNode>("(" + text_ + op + o->str() + ")", hint, b, guards_);
  }
  std::string text_;
  int64_t hint_;
  bool is_bool_;
  std::vector<std::string>* guards_;
};

using ShapeOnly = ingot::testing::ShapeOnlyInterceptor;

TEST(SymbolicShapes, ShapeFunctionsPropagateSymbolsWithoutData) {
  std::vector<std::string> guards;
  SymInt s(std::make_shared<ToyNode>("s0", 6, false, &guards));
  Tensor x = Tensor::meta(DType::F32, {SymInt(2), s, SymInt(4)});
  Tensor bias = Tensor::meta(DType::F32, {SymInt(4)});
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);

  Tensor y = add(transpose(x, 0, 1), bias);  // [s0, 2, 4]
  EXPECT_EQ(y.sym_size(0).str(), "s0");
  EXPECT_FALSE(y.has_storage());

  Tensor flat = view(y, {SymInt(-1), SymInt(4)});  // [s0*2, 4], inferred symbolically
  EXPECT_TRUE(flat.sym_size(0).is_symbolic());
  EXPECT_EQ(flat.sym_size(0).guard_int(), 12);

  Tensor cut = slice(x, 1, 1, std::nullopt);  // [2, s0 - 1, 4]
  EXPECT_EQ(cut.sym_size(1).guard_int(), 5);
  EXPECT_EQ(shape_only.ops,
            (std::vector<std::string>{"transpose.int", "add.Tensor", "view", "slice.Tensor"}));
}

TEST(SymbolicShapes, BroadcastingTwoSymbolsGuardsTheirEquality) {
  std::vector<std::string> guards;
  SymInt a(std::make_shared<ToyNode>("s0", 3, false, &guards));
  SymInt b(std::make_shared<ToyNode>("s1", 3, false, &guards));
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  Tensor out = mul(Tensor::meta(DType::F32, {a}), Tensor::meta(DType::F32, {b}));
  EXPECT_EQ(out.sym_size(0).str(), "s0");
  ASSERT_FALSE(guards.empty());
  EXPECT_EQ(guards.back(), "(s0==s1)");
}

}  // namespace
}  // namespace ingot
