// ingot eager forward == Hugging Face transformers on the committed tiny checkpoints
// (tools/reference/make_model_fixtures.py). Tolerance: max |diff| <= 1e-4 in float32
// compute (weights stored in bf16/f16 are converted to float32 as transformers does).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "../decoder_fixtures.h"
#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/safetensors.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;

// Max |a - b| over the positions that are not padding. Outputs at padded query
// positions are unspecified (transformers' eager attention averages over all keys when a
// row is fully masked, SDPA returns zeros), so they are left out. `batch_dim` is where
// [batch, seq] starts in the output's shape (-1: no seq dim, compare everything).
double max_abs_diff(const Tensor& a, const Tensor& b, const Tensor& mask, int batch_dim) {
  auto va = ingot::testing::values(a), vb = ingot::testing::values(b);
  EXPECT_EQ(va.size(), vb.size());
  auto keep = ingot::testing::values(mask);  // [batch, seq]
  const IntShape sizes = a.sizes();
  int64_t inner = 1, bs = mask.numel();
  for (size_t d = size_t(batch_dim) + 2; batch_dim >= 0 && d < sizes.size(); ++d) inner *= sizes[d];
  double m = 0;
  for (size_t i = 0; i < std::min(va.size(), vb.size()); ++i) {
    if (batch_dim >= 0 && keep[size_t((int64_t(i) / inner) % bs)] == 0) continue;
    m = std::max(m, std::abs(va[i] - vb[i]));
  }
  return m;
}

class HfConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(HfConformance, MatchesTransformersFloat32) {
  const std::string dir = fixture_path("models/" + GetParam());
  auto model = from_pretrained(dir);
  ModelInputs in;
  in.input_ids = formats::load_npy(dir + "/input_ids.npy");
  in.attention_mask = formats::load_npy(dir + "/attention_mask.npy");
  if (GetParam() == "bert") in.token_type_ids = formats::load_npy(dir + "/token_type_ids.npy");
  in.output_hidden_states = true;
  ModelOutputs out = model->forward(in);
  auto named = out.named();
  const std::map<std::string, int> batch_dim = {
      {"logits", 0}, {"last_hidden_state", 0}, {"pooler_output", -1}, {"hidden_states", 1}};
  for (const auto& [key, bdim] : batch_dim) {
    const std::string path = dir + "/" + key + ".npy";
    if (!std::filesystem::exists(path)) continue;
    ASSERT_TRUE(named.contains(key)) << key;
    Tensor expected = formats::load_npy(path);
    ASSERT_EQ(named[key].sizes(), expected.sizes()) << key;
    EXPECT_LE(max_abs_diff(named[key], expected, in.attention_mask, bdim), 1e-4)
        << GetParam() << " " << key;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfConformance,
                         ::testing::ValuesIn(ingot::testing::model_fixtures()),
                         [](const auto& info) { return info.param; });

TEST(FromPretrained, UnknownArchitectureListsSupported) {
  auto dir = std::filesystem::temp_directory_path() / ("ingot_arch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"architectures": ["FalconForCausalLM"]})";
  try {
    from_pretrained(dir.string());
    FAIL();
  } catch (const NotSupportedError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'FalconForCausalLM' is not supported"), std::string::npos) << m;
    EXPECT_NE(m.find("LlamaForCausalLM"), std::string::npos) << m;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ingot::models

namespace ingot::models {
namespace {

namespace fs = std::filesystem;

// A copy of a fixture folder that a test may damage.
fs::path scratch_copy(const std::string& fixture) {
  fs::path dir = fs::temp_directory_path() / ("ingot_broken_" + std::to_string(::getpid()) + fixture);
  fs::remove_all(dir);
  fs::copy(ingot::testing::fixture_path("models/" + fixture), dir);
  return dir;
}

std::string load_error(const fs::path& dir) {
  try {
    from_pretrained(dir.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FromPretrained, MissingTensorWrongShapeAndBadConfigAreNamed) {
  fs::path dir = scratch_copy("qwen3");
  auto sf = formats::SafetensorsFile::open((dir / "model.safetensors").string());
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, e] : sf.entries()) tensors[name] = clone(sf.tensor(name));
  auto rewrite = [&](std::map<std::string, Tensor> t) {
    fs::remove(dir / "model.safetensors");
    formats::save_safetensors((dir / "model.safetensors").string(), t);
  };

  auto missing = tensors;
  missing.erase("model.layers.1.self_attn.k_norm.weight");
  rewrite(missing);
  std::string m = load_error(dir);
  EXPECT_NE(m.find("lacks tensors"), std::string::npos) << m;
  EXPECT_NE(m.find("model.layers.1.self_attn.k_norm.weight"), std::string::npos) << m;

  auto reshaped = tensors;
  reshaped["model.norm.weight"] = Tensor::empty({63}, DType::F32, true);
  rewrite(reshaped);
  m = load_error(dir);
  EXPECT_NE(m.find("model.norm.weight: expected float32 [64], got float32 [63]"), std::string::npos) << m;
  EXPECT_NE(m.find(dir.string()), std::string::npos) << m;

  auto extra = tensors;
  extra["model.layers.9.mlp.up_proj.weight"] = Tensor::empty({1}, DType::F32, true);
  rewrite(extra);
  m = load_error(dir);
  EXPECT_NE(m.find("does not use: model.layers.9.mlp.up_proj.weight"), std::string::npos) << m;

  rewrite(tensors);
  std::ofstream(dir / "config.json")
      << R"({"architectures": ["Qwen3ForCausalLM"], "vocab_size": 96, "hidden_size": "64"})";
  m = load_error(dir);
  EXPECT_NE(m.find("key 'hidden_size' should be an integer"), std::string::npos) << m;
  std::ofstream(dir / "config.json") << "{not json";
  m = load_error(dir);
  EXPECT_NE(m.find("config.json' is not valid JSON"), std::string::npos) << m;
  fs::remove_all(dir);
}

// bfloat16 compute: weights and activations in bf16 with float accumulation. Bound:
// |ingot - transformers_f32| <= 0.08 + 0.05 |ref| on logits (bf16 keeps 8 bits of
// mantissa; errors compound over 2 layers), and the argmax agrees on most positions.
TEST(FromPretrained, Bfloat16ComputeStaysCloseToFloat32Reference) {
  const std::string dir = ingot::testing::fixture_path("models/qwen3");
  auto model = from_pretrained(dir, LoadOptions{DType::BF16});
  EXPECT_EQ(model->state_dict().at("model.norm.weight").dtype(), DType::BF16);
  ModelInputs in;
  in.input_ids = formats::load_npy(dir + "/input_ids.npy");
  in.attention_mask = formats::load_npy(dir + "/attention_mask.npy");
  Tensor logits = model->forward(in).logits;
  EXPECT_EQ(logits.dtype(), DType::BF16);
  Tensor expected = formats::load_npy(dir + "/logits.npy");
  ingot::testing::expect_close(logits, ingot::testing::values(expected), 0.08, 0.05, "bf16 logits");
  Tensor agree = eq(argmax(logits, -1), argmax(expected, -1));
  EXPECT_GE(sum(agree).item<int64_t>(), 16) << "of 18 positions";
}

}  // namespace
}  // namespace ingot::models

namespace ingot::models {
namespace {

// docs/models.md's table lists exactly the registered architectures, and its count is
// the true one.
TEST(SupportedArchitectures, DocsTableAndCountMatchTheRegistry) {
  std::ifstream f(ingot::testing::fixture_path("../../docs/models.md"));
  ASSERT_TRUE(f.good());
  std::set<std::string> documented;
  std::string line, count_line;
  while (std::getline(f, line)) {
    if (line.rfind("| `", 0) == 0 && (line.find("ForCausalLM`") != std::string::npos ||
                                      line.find("ForConditionalGeneration`") != std::string::npos)) {
      documented.insert(line.substr(3, line.find('`', 3) - 3));
    } else if (line.rfind("| `GPT2LMHeadModel`", 0) == 0 || line.rfind("| `BertModel`", 0) == 0) {
      documented.insert(line.substr(3, line.find('`', 3) - 3));
    } else if (line.find("architectures are supported") != std::string::npos) {
      count_line = line;
    }
  }
  const std::vector<std::string> registered = supported_architectures();
  EXPECT_EQ(documented, std::set<std::string>(registered.begin(), registered.end()));
  EXPECT_EQ(count_line.rfind(std::to_string(registered.size()) + " architectures are supported", 0), 0u)
      << count_line;
}

}  // namespace
}  // namespace ingot::models
