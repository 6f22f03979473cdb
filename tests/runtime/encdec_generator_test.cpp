// T5 through the framework's export_for_generation and the native Generator (issue 18,
// fixtures of tools/reference/make_encdec_fixtures.py): the components are encoder,
// cross_kv and decode with a symbolic source length; each program equals transformers'
// module on the fixture (1e-4) at the fixture's length and at other lengths (== ingot's
// eager model); greedy generation from the encoder input equals transformers' generate
// for all 20 tokens, in memory and from a saved generation directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::max_abs_diff;

std::string dir_of(const std::string& model) {
  return testing::fixture_path("encdec/" + model);
}
Tensor fixture(const std::string& model, const std::string& name) {
  return formats::load_npy(dir_of(model) + "/" + name + ".npy");
}
std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

using Artifacts = exporters::GenerationExport;

class T5Generation : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    model_ = std::dynamic_pointer_cast<models::EncoderDecoderModel>(
        models::from_pretrained(dir_of(GetParam())));
    ASSERT_NE(model_, nullptr);
    exporters::GenerationExportOptions o;
    o.max_cache_len = 32;
    o.model_folder = dir_of(GetParam());  // the decoder prompt from its generation_config.json
    artifacts_ = exporters::NativeExporter().export_for_generation(
        *model_, exporters::NativeExportConfig(), o);
  }
  runtime::Generator generator() {
    runtime::Generator gen(artifacts_.package());
    return gen;
  }
  static runtime::GenerateOptions greedy() {
    runtime::GenerateOptions go;
    go.max_new_tokens = 20;
    go.stop_tokens = {1};  // </s>: the fixture's greedy run never reaches it
    return go;
  }

  std::shared_ptr<models::EncoderDecoderModel> model_;
  Artifacts artifacts_;
};

TEST_P(T5Generation, ComponentsAreEncoderCrossKvAndDecode) {
  std::vector<std::string> names;
  for (const auto& [name, a] : artifacts_) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"cross_kv", "decode", "encoder"}));
}

TEST_P(T5Generation, ProgramsMatchTransformersAndTakeAnySourceLength) {
  runtime::ProgramModule encoder(artifacts_.at("encoder")->program);
  runtime::ProgramModule cross_kv(artifacts_.at("cross_kv")->program);
  Tensor ids = fixture(GetParam(), "input_ids");  // [1, 15]
  Tensor states = encoder.run({ids}).at(0);
  EXPECT_LE(max_abs_diff(states, fixture(GetParam(), "encoder_hidden_states")), 1e-4);
  std::vector<Tensor> kv = cross_kv.run({fixture(GetParam(), "encoder_hidden_states")});
  const std::vector<std::string> names = artifacts_.at("cross_kv")->program.out_spec.leaf_paths("");
  ASSERT_EQ(kv.size(), names.size());
  Tensor keys = fixture(GetParam(), "cross_key"), values = fixture(GetParam(), "cross_value");
  ASSERT_EQ(int64_t(kv.size()), 2 * keys.size(0));
  for (size_t i = 0; i < kv.size(); ++i) {
    const bool key = names[i].starts_with("cross_key_cache.");
    const int64_t layer = std::stoll(names[i].substr(names[i].rfind('.') + 1));
    EXPECT_LE(max_abs_diff(kv[i], select(key ? keys : values, 0, layer)), 1e-4) << names[i];
  }
  // Other source lengths (3 and 40 tokens, past max_distance) == the eager model.
  for (int64_t n : {3, 40}) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(3 + (i * 7) % 39);
    Tensor src = Tensor::from_vector(v, {1, n});
    EXPECT_LE(max_abs_diff(encoder.run({src}).at(0), model_->encode(src)), 1e-4) << n;
  }
}

TEST_P(T5Generation, GreedyIdsEqualTransformers) {
  runtime::Generator gen = generator();
  EXPECT_TRUE(gen.is_encoder_decoder());
  runtime::GenerationStats stats;
  std::vector<int64_t> out =
      gen.generate_from_encoder_input(fixture(GetParam(), "input_ids"), greedy(), &stats);
  EXPECT_EQ(out, ints(fixture(GetParam(), "greedy")));
  EXPECT_EQ(stats.prompt_tokens, 1);  // the decoder prompt: decoder_start_token_id
  EXPECT_EQ(stats.stop_reason, "max_new_tokens");
  // A second input reuses the generator (the cross K/V are replaced, the cache rewound).
  std::vector<int64_t> again =
      gen.generate_from_encoder_input(fixture(GetParam(), "input_ids"), greedy());
  EXPECT_EQ(again, out);
}

// Another source length (40 tokens, past max_distance) through the programs == ingot's
// eager model decoding greedily with a growing cache.
TEST_P(T5Generation, OtherSourceLengthsDecodeLikeTheEagerModel) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < 40; ++i) v.push_back(3 + (i * 7) % 39);
  Tensor src = Tensor::from_vector(v, {1, 40});
  models::CrossAttentionCache cross = model_->cross_attention_cache(model_->encode(src));
  nn::KVCache cache;
  std::vector<int64_t> eager;
  int64_t token = model_->decoder_start_token_id();
  for (int i = 0; i < 12; ++i) {
    Tensor logits =
        model_->decode(Tensor::from_vector(std::vector<int64_t>{token}, {1, 1}), cross, &cache);
    token = runtime::argmax_last(logits);
    eager.push_back(token);
  }
  runtime::Generator gen = generator();
  runtime::GenerateOptions go;
  go.max_new_tokens = 12;
  EXPECT_EQ(gen.generate_from_encoder_input(src, go), eager);
}

TEST_P(T5Generation, SavedDirectoryGeneratesTheSameIds) {
  const fs::path dir = fs::temp_directory_path() / ("ingot_encdec_" + GetParam());
  fs::remove_all(dir);
  artifacts_.save(dir.string(), dir_of(GetParam()));
  std::ifstream f(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  EXPECT_EQ(manifest["pipeline"]["kind"], "encoder-decoder");
  EXPECT_EQ(manifest["pipeline"]["encoder_input"], "input_ids");
  EXPECT_EQ(manifest["pipeline"]["decoder_prompt"], nlohmann::json::array({0}));
  runtime::Generator gen = runtime::Generator::load(dir.string());
  ASSERT_TRUE(gen.is_encoder_decoder());
  EXPECT_EQ(gen.generate_from_encoder_input(fixture(GetParam(), "input_ids"), greedy()),
            ints(fixture(GetParam(), "greedy")));
  fs::remove_all(dir);
}

TEST_P(T5Generation, ErrorsNameWhatIsMissing) {
  runtime::Generator gen = generator();
  try {
    gen.generate({0}, greedy());  // decoder ids without the encoder's K/V
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("cross-attention"), std::string::npos) << e.what();
  }
  try {
    gen.generate_from_encoder_input(Tensor(), greedy());
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("input_ids"), std::string::npos) << e.what();
  }
  // A manifest whose encoder-decoder pipeline lacks the encoder is refused at construction.
  runtime::GenerationPackage decode_only = artifacts_.package();
  decode_only.programs.erase("encoder");
  decode_only.manifest.components.erase("encoder");
  try {
    runtime::Generator bare(std::move(decode_only));
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'encoder'"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, T5Generation, ::testing::Values("t5", "t5_gated"));

}  // namespace
}  // namespace ingot
