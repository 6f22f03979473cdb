#include "ingot/ops/registry.h"

#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ingot {
namespace {

TEST(Schema, ParsesAtenNotationAndRoundTrips) {
  const char* texts[] = {
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
      "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
      "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
      "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
      "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
      "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
  };
  for (const char* text : texts) {
    Schema s = parse_schema(text);
    EXPECT_EQ(parse_schema(s.str()).str(), s.str()) << text;
  }
  Schema copy = parse_schema(texts[2]);
  EXPECT_EQ(copy.mutated_arguments(), std::vector<int>{0});
  EXPECT_EQ(copy.returns_aliasing_mutated_args(), std::vector<int>{0});
  EXPECT_FALSE(copy.is_view());
  EXPECT_TRUE(parse_schema(texts[1]).is_view());
  Schema topk = parse_schema(texts[4]);
  EXPECT_EQ(topk.returns.size(), 2u);
  EXPECT_EQ(topk.returns[1].name, "indices");
  EXPECT_EQ(topk.arguments[2].default_value->sym_int().expect_int(), -1);
  EXPECT_TRUE(parse_schema(texts[3]).arguments[1].type.elements_optional);
  EXPECT_THROW(parse_schema("add(Tensor self"), ValueError);
  EXPECT_THROW(parse_schema("add(Blob self) -> Tensor"), ValueError);
}

TEST(Registry, EveryOpIsComplete) {
  const auto& ops = OpRegistry::instance().all();
  EXPECT_GT(ops.size(), 20u);
  for (const auto& [name, def] : ops) {
    EXPECT_EQ(name, def.schema.qualified_name());
    EXPECT_TRUE(def.shape_fn) << name;
    EXPECT_TRUE(def.cpu_kernel || def.view_fn || def.decomposition_fn || def.compute_fn) << name;
    EXPECT_EQ(def.is_view(), bool(def.view_fn)) << name << ": view schema <=> view function";
  }
}

TEST(Registry, ArgumentErrorsNameOpAndArgument) {
  const OpDef& add = OpRegistry::instance().get("add.Tensor");
  Tensor t = Tensor::empty({2}, DType::F32);
  try {
    call_op(add, {t, 3.0});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[add.Tensor] argument 'other' expects Tensor, got 3");
  }
  EXPECT_THROW(call_op(add, {t}), ValueError);  // missing required 'other'
  EXPECT_THROW(call_op(add, {t, t, 1, 2}), ValueError);
  EXPECT_THROW(OpRegistry::instance().get("no_such_op"), NotSupportedError);
}

// An interceptor sees normalised calls (defaults filled) and can replace the result.
struct RecordingInterceptor : OpInterceptor {
  std::vector<std::string> calls;
  std::vector<Tensor> intercept(const OpArgs& args) override {
    calls.push_back(args.name() + " " + args[2].str());
    return eager_call(args);
  }
};

TEST(Registry, InterceptorScopeSeesCallsAndRestores) {
  RecordingInterceptor rec;
  Tensor t = Tensor::from_vector<float>({1, 2}, {2});
  {
    InterceptorScope scope(&rec);
    add(t, t);
    EXPECT_EQ(current_interceptor(), &rec);
  }
  EXPECT_EQ(current_interceptor(), nullptr);
  add(t, t);
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(rec.calls[0], "add.Tensor 1");
}

}  // namespace
}  // namespace ingot
