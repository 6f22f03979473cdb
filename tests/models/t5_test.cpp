// T5ForConditionalGeneration == transformers 5.23 on the tiny random fixtures of
// tools/reference/make_encdec_fixtures.py (t5: v1.0 relu, tied and rescaled; t5_gated:
// v1.1 gated-gelu with its own lm_head): the relative-position buckets exactly, the
// encoder states, every layer's cross-attention K/V, the teacher-forced logits (full
// forward and decode through a StaticCache one token at a time). Tolerance 1e-4 (float32).
#include "ingot/models/t5.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

Tensor fixture(const std::string& model, const std::string& name) {
  return formats::load_npy(fixture_path("encdec/" + model + "/" + name + ".npy"));
}

std::shared_ptr<EncoderDecoderModel> load(const std::string& model) {
  auto m = std::dynamic_pointer_cast<EncoderDecoderModel>(
      from_pretrained(fixture_path("encdec/" + model)));
  EXPECT_NE(m, nullptr) << "T5ForConditionalGeneration is not an EncoderDecoderModel";
  return m;
}

TEST(T5, RelativePositionBucketsEqualTorch) {
  std::ifstream f(fixture_path("encdec/relative_buckets.json"));
  const nlohmann::json doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc["cases"].size(), 8u);
  for (const auto& c : doc["cases"]) {
    const bool bidirectional = c["bidirectional"].get<bool>();
    const int64_t buckets = c["num_buckets"], distance = c["max_distance"];
    const int64_t first = c["first_relative_position"];
    const std::vector<int64_t> table =
        t5_relative_position_buckets(bidirectional, buckets, distance);
    ASSERT_EQ(int64_t(table.size()), 2 * distance + 1);
    const std::vector<int64_t> expected = c["buckets"].get<std::vector<int64_t>>();
    for (size_t i = 0; i < expected.size(); ++i) {
      const int64_t r = first + int64_t(i);
      const int64_t clamped = std::clamp(r, -distance, distance);
      ASSERT_EQ(table[size_t(clamped + distance)], expected[i])
          << "relative position " << r << " bidirectional " << bidirectional << " buckets "
          << buckets << " max_distance " << distance;
    }
  }
}

class T5Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(T5Fixture, EncoderAndCrossAttentionCacheMatchTransformers) {
  auto m = load(GetParam());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->decoder_start_token_id(), 0);
  Tensor enc = m->encode(fixture(GetParam(), "input_ids"));
  EXPECT_LE(max_abs_diff(enc, fixture(GetParam(), "encoder_hidden_states")), 1e-4);
  CrossAttentionCache cross =
      m->cross_attention_cache(fixture(GetParam(), "encoder_hidden_states"));
  Tensor keys = fixture(GetParam(), "cross_key"), values = fixture(GetParam(), "cross_value");
  ASSERT_EQ(int64_t(cross.num_layers()), keys.size(0));
  for (size_t i = 0; i < cross.num_layers(); ++i) {
    EXPECT_LE(max_abs_diff(cross.keys[i], select(keys, 0, int64_t(i))), 1e-4) << "layer " << i;
    EXPECT_LE(max_abs_diff(cross.values[i], select(values, 0, int64_t(i))), 1e-4) << "layer " << i;
  }
  EXPECT_EQ(CrossAttentionCache::from_named(cross.named()).num_layers(), cross.num_layers());
}

TEST_P(T5Fixture, ForwardLogitsMatchTransformers) {
  auto m = load(GetParam());
  ASSERT_NE(m, nullptr);
  ModelInputs in;
  in.input_ids = fixture(GetParam(), "input_ids");
  in.decoder_input_ids = fixture(GetParam(), "decoder_input_ids");
  EXPECT_LE(max_abs_diff(m->forward(in).logits, fixture(GetParam(), "logits")), 1e-4);
  // An all-ones attention mask changes nothing.
  in.attention_mask = ones({1, in.input_ids.size(1)}, DType::I64);
  EXPECT_LE(max_abs_diff(m->forward(in).logits, fixture(GetParam(), "logits")), 1e-4);
}

TEST_P(T5Fixture, StepwiseDecodeThroughAStaticCacheMatchesTransformers) {
  auto m = load(GetParam());
  ASSERT_NE(m, nullptr);
  CrossAttentionCache cross = m->cross_attention_cache(m->encode(fixture(GetParam(), "input_ids")));
  nn::StaticCache cache(*m->cache_spec(), 1, 32);
  Tensor ids = fixture(GetParam(), "decoder_input_ids"), logits = fixture(GetParam(), "logits");
  // The first three tokens in one call, then one at a time.
  Tensor first = m->decode(slice(ids, 1, 0, 3), cross, &cache);
  EXPECT_LE(max_abs_diff(first, slice(logits, 1, 0, 3)), 1e-4);
  for (int64_t t = 3; t < ids.size(1); ++t) {
    Tensor step = m->decode(slice(ids, 1, t, t + 1), cross, &cache);
    EXPECT_LE(max_abs_diff(step, slice(logits, 1, t, t + 1)), 1e-4) << "token " << t;
  }
  EXPECT_EQ(cache.seq_length(), ids.size(1));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, T5Fixture, ::testing::Values("t5", "t5_gated"));

TEST(T5, DecoderPromptComesFromGenerationConfig) {
  auto m = load("t5");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->decoder_prompt(fixture_path("encdec/t5")), std::vector<int64_t>{0});
}

TEST(T5, ErrorsNameTheMissingInput) {
  auto m = load("t5");
  ASSERT_NE(m, nullptr);
  ModelInputs in;
  in.input_ids = fixture("t5", "input_ids");
  try {
    m->forward(in);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("decoder_input_ids"), std::string::npos) << e.what();
  }
  try {
    m->encode(Tensor());
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("input_ids"), std::string::npos) << e.what();
  }
  try {
    m->cross_attention_cache(zeros({1, 4, 7}, DType::F32));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder_hidden_states"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::models
