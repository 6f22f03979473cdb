// Whisper through the framework's export_for_generation and the native Generator (issue
// 18, fixtures of tools/reference/make_whisper_fixtures.py): the components are encoder
// (input_features [1, 16, 100], static), cross_kv and decode; the encoder and decode
// programs equal transformers on the fixture (1e-4); greedy generation (decoder prompt
// from generation_config.json: <|startoftranscript|> <|de|> <|transcribe|>
// <|notimestamps|>; suppress_tokens / begin_suppress_tokens as GenerateOptions) equals
// transformers' generate for 20 tokens, from the fixture's input_features, from ingot's
// own features of the raw WAVs, and from a saved generation directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/media/whisper_features.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/whisper_generation.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::max_abs_diff;

std::string wdir() {
  return testing::fixture_path("whisper/whisper");
}
Tensor fixture(const std::string& name) {
  return formats::load_npy(wdir() + "/" + name + ".npy");
}
std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

class WhisperGeneration : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ =
        std::dynamic_pointer_cast<models::EncoderDecoderModel>(models::from_pretrained(wdir()));
    ASSERT_NE(model_, nullptr);
    exporters::GenerationExportOptions o;
    o.max_cache_len = 32;
    o.model_folder = wdir();  // the decoder prompt from its generation_config.json
    artifacts_ = exporters::NativeExporter().export_for_generation(
        *model_, exporters::NativeExportConfig(), o);
  }
  runtime::Generator generator() {
    runtime::Generator gen(artifacts_.package());
    return gen;
  }
  static runtime::GenerateOptions greedy() {
    const auto w = models::WhisperGenerationConfig::from_folder(wdir());
    runtime::GenerateOptions go;
    go.max_new_tokens = 20;
    go.stop_tokens = w.eos_token_ids;
    go.suppress_tokens = w.suppress_tokens;
    go.begin_suppress_tokens = w.begin_suppress_tokens;
    return go;
  }
  std::shared_ptr<models::EncoderDecoderModel> model_;
  exporters::GenerationExport artifacts_;
};

TEST_F(WhisperGeneration, ComponentsAndProgramsMatchTransformers) {
  std::vector<std::string> names;
  for (const auto& [name, a] : artifacts_) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"cross_kv", "decode", "encoder"}));
  runtime::ProgramModule encoder(artifacts_.at("encoder")->program);
  runtime::ProgramModule cross_kv(artifacts_.at("cross_kv")->program);
  runtime::ProgramModule decode(artifacts_.at("decode")->program);
  Tensor states = encoder.run({fixture("input_features")}).at(0);
  EXPECT_LE(max_abs_diff(states, fixture("encoder_hidden")), 1e-4);
  // decode over the program's cross K/V and an empty cache: the prompt's logits.
  std::vector<Tensor> inputs{fixture("decoder_input_ids")};
  const std::vector<Tensor> kv = cross_kv.run({states});
  EXPECT_EQ(kv.size(), 4u);  // 2 layers x (key, value)
  inputs.insert(inputs.end(), kv.begin(), kv.end());
  nn::StaticCache cache(*model_->cache_spec(), 1, 32);
  for (const auto& [name, t] : cache.named_tensors()) inputs.push_back(t);
  Tensor logits = decode.run(inputs).at(0);  // [1, 4, vocab]
  EXPECT_LE(max_abs_diff(logits, slice(fixture("logits"), 1, 0, 4)), 1e-4);
}

TEST_F(WhisperGeneration, GreedyIdsEqualTransformers) {
  EXPECT_EQ(model_->decoder_prompt(wdir()), ints(fixture("decoder_input_ids")));
  runtime::Generator gen = generator();
  const std::vector<int64_t> expected = ints(fixture("greedy"));
  ASSERT_GE(expected.size(), 16u);
  EXPECT_EQ(gen.generate_from_encoder_input(fixture("input_features"), greedy()), expected);
  // The raw audio through ingot's feature extractor.
  const auto fe = media::WhisperFeatureExtractor::from_folder(wdir());
  EXPECT_EQ(gen.generate_from_encoder_input(
                fe.preprocess_file(testing::fixture_path("whisper/speech16k.wav")), greedy()),
            expected);
  EXPECT_EQ(gen.generate_from_encoder_input(
                fe.preprocess_file(testing::fixture_path("whisper/stereo8k.wav")), greedy()),
            ints(fixture("greedy_8k")));
}

TEST_F(WhisperGeneration, SavedDirectoryGeneratesTheSameIds) {
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_whisper_gen_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  artifacts_.save(dir.string(), wdir());
  std::ifstream f(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  EXPECT_EQ(manifest["pipeline"]["kind"], "encoder-decoder");
  EXPECT_EQ(manifest["pipeline"]["encoder_input"], "input_features");
  EXPECT_EQ(manifest["pipeline"]["decoder_prompt"],
            nlohmann::json(ints(fixture("decoder_input_ids"))));
  EXPECT_TRUE(fs::exists(dir / "preprocessor_config.json"));  // for --audio
  runtime::Generator gen = runtime::Generator::load(dir.string());
  ASSERT_TRUE(gen.is_encoder_decoder());
  EXPECT_EQ(gen.encoder_input_name(), "input_features");
  EXPECT_EQ(gen.generate_from_encoder_input(fixture("input_features"), greedy()),
            ints(fixture("greedy")));
  fs::remove_all(dir);
}

TEST_F(WhisperGeneration, SuppressOptionsChangeTheIds) {
  runtime::Generator gen = generator();
  runtime::GenerateOptions plain = greedy();
  plain.suppress_tokens.clear();
  plain.begin_suppress_tokens.clear();
  EXPECT_NE(gen.generate_from_encoder_input(fixture("input_features"), plain),
            ints(fixture("greedy")));
}

}  // namespace
}  // namespace ingot
