// The decoders' forward is trace-friendly: run on data-less tensors with symbolic batch
// and sequence (what the export tracer does, here with only shape functions), every
// output size is the expected expression and no size had to be decided — without a
// cache, with a growing KVCache of symbolic length, and with a StaticCache.
#include <gtest/gtest.h>

#include <algorithm>

#include "../decoder_fixtures.h"
#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/models/model.h"
#include "ingot/sym/shape_env.h"
#include "ingot/sym/sym_node.h"

namespace ingot::models {
namespace {

using ShapeOnly = ingot::testing::ShapeOnlyInterceptor;

class TraceShapes : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    model_ = from_pretrained(ingot::testing::fixture_path("models/" + GetParam()));
    spec_ = *model_->cache_spec();
    vocab_ = vocab_of(*model_);  // from one eager token
  }
  static int64_t vocab_of(PretrainedModel& m) {
    ModelInputs in;
    in.input_ids = Tensor::from_vector<int64_t>({1}, {1, 1});
    return m.forward(in).logits.size(2);
  }
  std::string str(const sym::ShapeEnv& env, const SymInt& s) const {
    return env.simplify(sym::expr_of(s)).str();
  }
  // [b, h, len, d] traced cache tensors for every layer.
  std::vector<Tensor> meta_layers(const SymInt& b, const SymInt& len) const {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < spec_.num_layers; ++i) {
      out.push_back(
          Tensor::meta(spec_.dtype, {b, SymInt(spec_.num_kv_heads), len, SymInt(spec_.head_dim)}));
    }
    return out;
  }
  std::shared_ptr<PretrainedModel> model_;
  nn::CacheSpec spec_;
  int64_t vocab_ = 0;
};

TEST_P(TraceShapes, NoCache) {
  sym::ShapeEnv env;
  const SymInt b = sym::create_symint(env, 2), s = sym::create_symint(env, 5);
  ModelInputs in;
  in.input_ids = Tensor::meta(DType::I64, {b, s});
  in.attention_mask = Tensor::meta(DType::I64, {b, s});
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  Tensor logits = model_->forward(in).logits;
  ASSERT_EQ(logits.dim(), 3);
  EXPECT_FALSE(logits.has_storage());
  EXPECT_EQ(str(env, logits.sym_size(0)), "s0");
  EXPECT_EQ(str(env, logits.sym_size(1)), "s1");
  EXPECT_EQ(logits.sym_size(2).maybe_int(), vocab_);
  EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
}

TEST_P(TraceShapes, GrowingCacheOfSymbolicLength) {
  sym::ShapeEnv env;
  const SymInt b = sym::create_symint(env, 2), s = sym::create_symint(env, 3),
               past = sym::create_symint(env, 6);
  nn::KVCache cache(meta_layers(b, past), meta_layers(b, past));
  ModelInputs in;
  in.input_ids = Tensor::meta(DType::I64, {b, s});
  in.attention_mask = Tensor::meta(DType::I64, {b, past + s});
  in.cache = &cache;
  ShapeOnly shape_only;
  InterceptorScope scope(&shape_only);
  Tensor logits = model_->forward(in).logits;
  EXPECT_EQ(str(env, logits.sym_size(1)), "s1");
  EXPECT_EQ(str(env, cache.named_tensors()[0].second.sym_size(2)), "s1 + s2");
  EXPECT_TRUE(env.guards().empty()) << env.guards()[0].str();
}

// The exported decode graph's shape: symbolic batch, query length and cache length; the
// writes are in-place index_copy_ on the cache buffers and copy_ on its position.
TEST_P(TraceShapes, StaticCacheWithSymbolicQueryAndCacheLength) {
  sym::ShapeEnv env;
  const SymInt b = sym::create_symint(env, 2), s = sym::create_symint(env, 3),
               len = sym::create_symint(env, 32);
  nn::StaticCache cache(meta_layers(b, len), meta_layers(b, len), Tensor::meta(DType::I64, {}));
  ModelInputs in;
  in.input_ids = Tensor::meta(DType::I64, {b, s});
  in.attention_mask = Tensor::meta(DType::I64, {b, len});
  in.position_ids = Tensor::meta(DType::I64, {b, s});
  in.cache = &cache;
  ShapeOnly shape_only;
  {
    InterceptorScope scope(&shape_only);
    Tensor logits = model_->forward(in).logits;
    EXPECT_EQ(str(env, logits.sym_size(0)), "s0");
    EXPECT_EQ(str(env, logits.sym_size(1)), "s1");
  }
  auto count = [&](const std::vector<std::string>& ops, const std::string& name) {
    return std::count(ops.begin(), ops.end(), name);
  };
  EXPECT_EQ(count(shape_only.ops, "index_copy_"), 2 * spec_.num_layers);
  EXPECT_EQ(count(shape_only.ops, "copy_"), 1);
  // A static cache never concatenates: the only cats are the ones without a cache
  // (rotary tables).
  ModelInputs plain;
  plain.input_ids = Tensor::meta(DType::I64, {b, s});
  ShapeOnly no_cache;
  {
    InterceptorScope scope(&no_cache);
    model_->forward(plain);
  }
  EXPECT_EQ(count(shape_only.ops, "cat"), count(no_cache.ops, "cat"));
  // The only decision: the new tokens fit the cache (s1 <= s2).
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.guards()[0].condition().str(), "s1 <= s2");
}

INSTANTIATE_TEST_SUITE_P(Decoders, TraceShapes,
                         ::testing::ValuesIn(ingot::testing::decoder_fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::models
