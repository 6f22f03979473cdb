// Loading GGUF files as models: the tiny llama / qwen2 / qwen3 GGUFs of
// tools/reference/make_gguf_model_fixtures.py give transformers' logits (its GGUF loader
// read the same files; max |diff| <= 1e-4 relative to the largest logit; the Q4_0 / Q8_0
// layers, kept packed, run with f32 activations here, as transformers' f32 arithmetic on the
// dequantised weights does: gguf_packed_model_test.cpp has the int8-activation default), the rope
// permutation is undone, unknown architectures name themselves, and a folder holding one
// .gguf loads like the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../error_of.h"
#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "relative_diff.h"
#include "ingot/formats/gguf.h"
#include "ingot/formats/npy.h"
#include "ingot/models/config.h"
#include "ingot/models/gguf_config.h"
#include "ingot/models/gguf_folder.h"
#include "ingot/models/gguf_tokenizer.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/models/model.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using ingot::testing::error_of;
using ingot::testing::fixture_path;

using ingot::testing::relative_diff;

class GgufModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufModel, LogitsEqualTransformersReadingTheSameFile) {
  const std::string dir = fixture_path("gguf/models/" + GetParam());
  const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);  // as transformers
  auto model = from_pretrained(dir + "/" + GetParam() + ".gguf");
  ModelInputs in;
  in.input_ids = formats::load_npy(dir + "/input_ids.npy");
  Tensor logits = model->forward(in).logits;
  Tensor expected = formats::load_npy(dir + "/logits.npy");
  ASSERT_EQ(logits.sizes(), expected.sizes());
  EXPECT_LE(relative_diff(logits, expected), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Architectures, GgufModel,
                         ::testing::Values("llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3",
                                           "stablelm", "qwen3moe"));

TEST(GgufModelConfig, MetadataBecomesTheHuggingFaceConfig) {
  formats::GgufFile f = formats::GgufFile::open(fixture_path("gguf/models/qwen3/qwen3.gguf"));
  ConfigReader c = ConfigReader::from_json_text(gguf_config_json(f), "qwen3.gguf");
  EXPECT_EQ(c.architecture(), "Qwen3ForCausalLM");
  EXPECT_EQ(c.get_int("hidden_size"), 64);
  EXPECT_EQ(c.get_int("head_dim"), 128);  // attention.key_length
  EXPECT_EQ(c.get_int("num_key_value_heads"), 1);
  EXPECT_EQ(c.get_int("vocab_size"), 96);
  EXPECT_TRUE(c.get_bool("tie_word_embeddings", false));  // no output.weight
  EXPECT_EQ(c.rope().theta, 10000.0);
  formats::GgufFile l = formats::GgufFile::open(fixture_path("gguf/models/llama/llama.gguf"));
  EXPECT_TRUE(gguf_architecture(l).unpermute_qk);
  EXPECT_FALSE(gguf_architecture(f).unpermute_qk);
}

TEST(GgufModelWeights, UnpermuteUndoesLlamaCppsRopePermutation) {
  // 2 heads of 2 * d = 6 rows; llama.cpp stores HF row (h, j, i) at (h, i, j).
  const int64_t n_head = 2, d = 3, rows = n_head * 2 * d;
  std::vector<float> hf(size_t(rows * 2));
  for (size_t i = 0; i < hf.size(); ++i) hf[i] = float(i);
  std::vector<float> stored(hf.size());
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t i = 0; i < d; ++i)
        for (int64_t c = 0; c < 2; ++c)
          stored[size_t((h * 2 * d + 2 * i + j) * 2 + c)] =
              hf[size_t((h * 2 * d + j * d + i) * 2 + c)];
  Tensor back = unpermute_rope_rows(Tensor::from_vector(stored, {rows, 2}), n_head);
  EXPECT_EQ(ingot::testing::values(back), std::vector<double>(hf.begin(), hf.end()));
  Tensor bias = unpermute_rope_rows(Tensor::from_vector(std::vector<float>{0, 1, 2, 3}, {4}), 1);
  EXPECT_EQ(ingot::testing::values(bias), (std::vector<double>{0, 2, 1, 3}));
  EXPECT_THROW(unpermute_rope_rows(Tensor::empty({0, 4}, DType::F32), 2), ShapeError);
  EXPECT_THROW(unpermute_rope_rows(Tensor::empty({6, 4}, DType::F32), 2), ShapeError);
}

TEST(GgufModelWeights, NamesMapToHuggingFaceAndUnknownOnesAreErrors) {
  EXPECT_EQ(gguf_to_hf_name("blk.11.ffn_down.weight", "llama", "x"),
            "model.layers.11.mlp.down_proj.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.0.attn_k.bias", "qwen2", "x"),
            "model.layers.0.self_attn.k_proj.bias");
  EXPECT_EQ(gguf_to_hf_name("output.weight", "llama", "x"), "lm_head.weight");
  EXPECT_EQ(gguf_to_hf_name("rope_freqs.weight", "llama", "x"), "");
  const std::string e =
      error_of<IoError>([] { gguf_to_hf_name("blk.0.ssm_conv1d.weight", "llama", "m.gguf"); });
  EXPECT_NE(e.find("'blk.0.ssm_conv1d.weight'"), std::string::npos) << e;
  EXPECT_EQ(gguf_to_hf_name("blk.2.ffn_up.weight", "phi3", "x"),
            "model.layers.2.mlp.gate_up_proj.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.2.ffn_up.weight", "llama", "x"),
            "model.layers.2.mlp.up_proj.weight");
  EXPECT_THROW(gguf_to_hf_name("rope_factors_long.weight", "phi3", "x"), NotSupportedError);
}

// A temporary folder removed at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ingot_gguf_model_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(GgufModelLoad, AnUnsupportedArchitectureIsNamed) {
  TempDir tmp;
  // A GGUF with only general.architecture = "rwkv6".
  std::string b = "GGUF";
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  u32(3), u64(0), u64(1), u64(20), b += "general.architecture", u32(8), u64(5), b += "rwkv6";
  const std::string p = (tmp.path / "rwkv.gguf").string();
  std::ofstream(p, std::ios::binary) << b;
  const std::string e = error_of<NotSupportedError>([&] { from_pretrained(p); });
  EXPECT_NE(e.find("architecture 'rwkv6'"), std::string::npos) << e;
  EXPECT_NE(e.find("llama"), std::string::npos) << e;
}

TEST(GgufModelLoad, AFolderWithOneGgufAndNoConfigLoadsLikeTheFile) {
  TempDir tmp;
  const std::string src = fixture_path("gguf/models/qwen2/qwen2.gguf");
  fs::copy_file(src, tmp.path / "m.gguf");
  EXPECT_EQ(gguf_source(tmp.path.string()), (tmp.path / "m.gguf").string());
  const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);  // as transformers
  auto model = from_pretrained(tmp.path.string());
  ModelInputs in;
  in.input_ids = formats::load_npy(fixture_path("gguf/models/qwen2/input_ids.npy"));
  EXPECT_LE(relative_diff(model->forward(in).logits,
                          formats::load_npy(fixture_path("gguf/models/qwen2/logits.npy"))),
            1e-4);
  fs::copy_file(src, tmp.path / "other.gguf");
  const std::string e = error_of<IoError>([&] { gguf_source(tmp.path.string()); });
  EXPECT_NE(e.find("holds 2 .gguf files"), std::string::npos) << e;
}

TEST(GgufModelLoad, TheMaterialisedFolderHasAConfigAndLoadsTheWeightsThroughTheLink) {
  TempDir tmp;
  setenv("XDG_CACHE_HOME", tmp.path.c_str(), 1);
  const std::string gguf = fixture_path("gguf/models/llama/llama.gguf");
  const std::string folder = gguf_model_folder(gguf);
  unsetenv("XDG_CACHE_HOME");
  EXPECT_TRUE(fs::exists(fs::path(folder) / "config.json"));
  EXPECT_TRUE(fs::is_symlink(fs::path(folder) / "model.gguf"));
  const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);  // as transformers
  auto model = from_pretrained(folder);
  ModelInputs in;
  in.input_ids = formats::load_npy(fixture_path("gguf/models/llama/input_ids.npy"));
  EXPECT_LE(relative_diff(model->forward(in).logits,
                          formats::load_npy(fixture_path("gguf/models/llama/logits.npy"))),
            1e-4);
  EXPECT_EQ(gguf_model_folder("/not/a/gguf/folder"), "/not/a/gguf/folder");
}

// Corrupted copies of a real GGUF (the tiny llama: metadata, tokenizer, permuted q/k)
// through everything that reads one: each either loads or fails with an ingot::Error,
// never another exception (a crash would end the test binary). A deterministic
// complement to fuzz/gguf_fuzz.cpp, which covers the formats/ reader alone.
TEST(GgufModelLoad, CorruptedFilesFailWithIngotErrorsOnly) {
  TempDir tmp;
  std::ifstream in(fixture_path("gguf/models/llama/llama.gguf"), std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), {});
  const std::string p = (tmp.path / "m.gguf").string();
  uint64_t state = 40;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 6000; ++i) {
    std::string bytes = original;
    // A few bytes of the header region (metadata and tensor infos), where a flip changes
    // a count, a length, a type, a key or a token rather than only a weight.
    const size_t region = std::min<size_t>(bytes.size(), 4000);
    for (int k = 0; k < 1 + int(next() % 4); ++k)
      bytes[(next() >> 16) % region] ^= char(1 << (next() % 8));
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    try {
      formats::GgufFile f = formats::GgufFile::open(p);
      gguf_config_json(f);
      gguf_tokenizer_json(f);
      gguf_tokenizer_config_json(f);
      from_pretrained(p);
      ++loaded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  // Some flips land on bytes the loaders never read (padding, unused strings).
  EXPECT_GT(rejected, 0);
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace ingot::models
