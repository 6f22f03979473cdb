#include "ingot/models/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fixture_path.h"
#include "ingot/models/config.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;

TEST(Checkpoint, ShardedIndexMapsEveryTensor) {
  Checkpoint c = Checkpoint::open_folder(fixture_path("models/llama"));
  EXPECT_TRUE(c.contains("model.layers.1.mlp.down_proj.weight"));
  EXPECT_TRUE(c.contains("lm_head.weight"));  // untied
  Tensor w = c.tensor("model.embed_tokens.weight");
  EXPECT_EQ(w.sizes(), (IntShape{96, 64}));
  EXPECT_EQ(w.dtype(), DType::F32);
  EXPECT_TRUE(w.storage()->is_mapped());
  EXPECT_EQ(c.nbytes(), 345344u);  // "total_size" in the index
  EXPECT_THROW(c.tensor("model.nope"), IoError);
}

TEST(Checkpoint, SingleFileWithBf16Weights) {
  Checkpoint c = Checkpoint::open_folder(fixture_path("models/llama_llama3_rope_tied_bf16"));
  EXPECT_FALSE(c.contains("lm_head.weight"));  // tied to the embedding
  EXPECT_EQ(c.tensor("model.norm.weight").dtype(), DType::BF16);
}

TEST(Checkpoint, BrokenFoldersAreErrorsNamingTheFile) {
  fs::path dir = fs::temp_directory_path() / ("ingot_ckpt_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto message = [&] {
    try {
      Checkpoint::open_folder(dir.string());
    } catch (const IoError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message().find("neither model.safetensors"), std::string::npos);
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"weight_map": {"a.weight": "model-00001-of-00002.safetensors"}})";
  EXPECT_NE(message().find("model-00001-of-00002.safetensors"), std::string::npos);
  std::ofstream(dir / "model.safetensors.index.json") << R"({"weight_map": {"a": "../x"}})";
  EXPECT_NE(message().find("must be a file in the folder"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Config, TypedGettersNameFileAndKey) {
  auto c = ConfigReader::from_json_text(
      R"({"hidden_size": 64, "rms_norm_eps": 1e-6, "architectures": ["Qwen3ForCausalLM"],
          "tie_word_embeddings": true, "num_heads": "four", "sliding_window": null})",
      "x/config.json");
  EXPECT_EQ(c.get_int("hidden_size"), 64);
  EXPECT_DOUBLE_EQ(c.get_double("rms_norm_eps"), 1e-6);
  EXPECT_EQ(c.architecture(), "Qwen3ForCausalLM");
  EXPECT_FALSE(c.has("sliding_window"));
  EXPECT_EQ(c.get_int("head_dim", 16), 16);
  try {
    c.get_int("num_heads");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "[config] 'x/config.json': key 'num_heads' should be an integer, got \"four\"");
  }
  EXPECT_THROW(c.get_int("vocab_size"), IoError);
  EXPECT_THROW(ConfigReader::from_json_text("{", "bad.json"), IoError);
}

TEST(Config, RopeFromNewAndLegacyKeys) {
  auto v5 = ConfigReader::from_file(fixture_path("models/llama_llama3_rope_tied_bf16/config.json"));
  RopeConfig r = v5.rope();
  EXPECT_EQ(r.type, "llama3");
  EXPECT_DOUBLE_EQ(r.theta, 500000.0);
  EXPECT_DOUBLE_EQ(r.factor, 8.0);
  EXPECT_EQ(r.original_max_position_embeddings, 16);
  auto v4 = ConfigReader::from_json_text(
      R"({"rope_theta": 1000000.0, "rope_scaling": {"type": "linear", "factor": 4.0}})", "v4");
  EXPECT_EQ(v4.rope().type, "linear");
  EXPECT_DOUBLE_EQ(v4.rope().theta, 1000000.0);
  auto bad = ConfigReader::from_json_text(R"({"rope_scaling": {"rope_type": "mrope"}})", "b");
  EXPECT_THROW(bad.rope(), NotSupportedError);
  // longrope: the factor lists are read; without them the config is refused.
  auto su = ConfigReader::from_json_text(
      R"({"original_max_position_embeddings": 32, "rope_scaling": {"type": "su",
          "short_factor": [1.0, 2.0], "long_factor": [3.0, 4.0]}})", "su");
  EXPECT_EQ(su.rope().type, "longrope");
  EXPECT_EQ(su.rope().long_factor, (std::vector<double>{3.0, 4.0}));
  EXPECT_EQ(su.rope().original_max_position_embeddings, 32);
  auto no_factors = ConfigReader::from_json_text(
      R"({"rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 8}})", "nf");
  EXPECT_THROW(no_factors.rope(), IoError);
  // Gemma 3: a rope set per layer type.
  auto per_type = ConfigReader::from_json_text(
      R"({"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
          "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})", "g3");
  EXPECT_DOUBLE_EQ(per_type.rope().theta, 1e6);
  EXPECT_DOUBLE_EQ(per_type.rope("sliding_attention").theta, 1e4);
}

}  // namespace
}  // namespace ingot::models
