// The one generation export of the framework (Exporter::export_for_generation): every
// backend gets the same programs from the same capture and step function, components are
// keyed by seed 003's names, per-component configs apply, and a generation directory
// says which runtime its components are for.
#include "ingot/exporters/generation_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/export/passes.h"
#include "ingot/exporters/fixes.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;

// The op of every node, in order (subgraphs are not used by decode graphs).
std::vector<std::string> ops_of(const ExportedProgram& p) {
  std::vector<std::string> out;
  for (const ir::Node& n : p.graph->nodes()) out.push_back(n.target);
  return out;
}

// The metadata of every graph input ("i64[1, tokens]"), in order.
std::vector<std::string> input_meta(const ExportedProgram& p) {
  std::vector<std::string> out;
  for (ir::ValueId v : p.graph->inputs) out.push_back(ir::meta_str(p.graph->value(v)));
  return out;
}

// The metadata of the user input `target`.
const ir::ValueInfo& user_input(const ExportedProgram& p, const std::string& target) {
  for (size_t i = 0; i < p.signature.inputs.size(); ++i) {
    if (p.signature.inputs[i].target == target) return p.graph->value(p.graph->inputs[i]);
  }
  throw std::runtime_error("no input " + target);
}

// What the ONNX exporter does to a traced program before translating it: its node fixes
// (stage 6), decomposition to core ops and its node fixes again (stage 7).
void apply_onnx_program_stages(ExportedProgram& p) {
  apply_node_fixes("onnx", p);
  eliminate_dead_code(p);
  decompose_to_core(p);
  apply_node_fixes("onnx", p);
  eliminate_dead_code(p);
}

struct Case {
  const char* model;
  bool multi_token_decode;
};

class SameProgramForEveryBackend : public ::testing::TestWithParam<Case> {};

// The ONNX model is lowered from exactly the native decode program, changed only by the
// ONNX backend's own stages: same components, same inputs and outputs, and the same
// nodes once those stages are replayed on the native program.
TEST_P(SameProgramForEveryBackend, OnnxLowersTheNativeProgram) {
  const Case c = GetParam();
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + c.model));
  GenerationExportOptions g;
  g.max_cache_len = 32;
  g.multi_token_decode = c.multi_token_decode;
  auto native = NativeExporter().export_for_generation(*model, NativeExportConfig(), g);
  auto replayed = NativeExporter().export_for_generation(*model, NativeExportConfig(), g);
  auto onnx = OnnxExporter().export_for_generation(*model, OnnxConfig(), g);
  ASSERT_EQ(native.size(), onnx.size());
  const std::vector<std::string> expected = c.multi_token_decode
                                                ? std::vector<std::string>{"decode"}
                                                : std::vector<std::string>{"decode", "prefill"};
  std::vector<std::string> names;
  for (const auto& [name, a] : native) names.push_back(name);
  EXPECT_EQ(names, expected);
  for (const auto& [name, a] : native) {
    SCOPED_TRACE(name);
    const ExportedProgram& n = a->program;
    const ExportedProgram& o = onnx.at(name)->program;
    EXPECT_EQ(n.signature.str(), o.signature.str());
    EXPECT_EQ(input_meta(n), input_meta(o));
    // Before lowering, the native program keeps the fused rms_norm (of the models that
    // have one) and the cache's room check (asserts), which ONNX cannot express.
    const std::vector<std::string> native_ops = ops_of(n);
    EXPECT_EQ(std::find(native_ops.begin(), native_ops.end(), "rms_norm") != native_ops.end(),
              std::string(c.model) != "gpt2");
    EXPECT_NE(std::find(native_ops.begin(), native_ops.end(), "assert"), native_ops.end());
    ExportedProgram& r = replayed.at(name)->program;
    apply_onnx_program_stages(r);
    EXPECT_EQ(r.graph->nodes().size(), o.graph->nodes().size());
    EXPECT_EQ(ops_of(r), ops_of(o));
  }
  // prefill and multi-token decode take any number of tokens, the one-token decode one.
  EXPECT_EQ(user_input(native.at("decode")->program, "input_ids").sizes.at(1).is_integer(),
            !c.multi_token_decode);
  if (!c.multi_token_decode) {
    EXPECT_FALSE(user_input(native.at("prefill")->program, "input_ids").sizes.at(1).is_integer());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SameProgramForEveryBackend,
                         ::testing::Values(Case{"qwen3", true}, Case{"qwen3", false},
                                           Case{"llama", true}, Case{"gpt2", false}));

TEST(ExportForGeneration, PerComponentConfigsAndTheirErrors) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions g;
  g.max_cache_len = 16;
  g.multi_token_decode = false;
  // A config for each component: the decode one may differ from the prefill one.
  auto decode_config = std::make_shared<NativeExportConfig>();
  decode_config->prefer_deferred_runtime_asserts_over_guards = true;
  ComponentConfigs both(
      {{"prefill", std::make_shared<NativeExportConfig>()}, {"decode", decode_config}});
  auto parts = NativeExporter().export_for_generation(*model, both, g);
  EXPECT_EQ(parts.size(), 2u);
  // A missing component config names it and the given ones.
  ComponentConfigs decode_only({{"decode", decode_config}});
  try {
    NativeExporter().export_for_generation(*model, decode_only, g);
    FAIL() << "no error for a missing prefill config";
  } catch (const ValueError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "no config for component 'prefill'")) << e.what();
    EXPECT_TRUE(testing::contains(e.what(), "decode")) << e.what();
  }
  // Generation components set their own dynamic shapes.
  NativeExportConfig with_spec;
  with_spec.dynamic_shapes_json = R"({"input_ids": {"1": "seq"}})";
  EXPECT_THROW(NativeExporter().export_for_generation(*model, with_spec, g), ValueError);
  g.max_cache_len = 4;
  EXPECT_THROW(NativeExporter().export_for_generation(*model, NativeExportConfig(), g), ValueError);
}

TEST(ExportForGeneration, CapturedCallsCanBeEditedBeforeExport) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  GenerationExportOptions g;
  g.max_cache_len = 16;
  auto calls = decompose_for_generation(*model, example_generation_prompt(1), g);
  calls.erase("prefill");  // the multi-token decode graph is traced on the prompt call
  try {
    NativeExporter().export_captured(*model, calls, NativeExportConfig(), g);
    FAIL() << "no error for a missing captured call";
  } catch (const ValueError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "no captured 'prefill' call")) << e.what();
  }
}

// The backend's policy is the exporter's, not its caller's: an OpenVINO generation
// directory holds one stateful openvino_model.xml (a multi-token decode), and an
// encoder-decoder's decode serves its decoder prompt and single tokens (multi-token too),
// whatever the options ask.
TEST(ExportForGeneration, MultiTokenDecodeIsForcedWhereTheLayoutNeedsIt) {
  GenerationExportOptions g;
  g.max_cache_len = 16;
  g.multi_token_decode = false;
  auto llama = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExport ov = OpenVINOExporter().export_for_generation(*llama, OpenVINOConfig(), g);
  EXPECT_EQ(ov.size(), 1u);
  EXPECT_TRUE(ov.contains("decode"));
  EXPECT_TRUE(ov.manifest.multi_token_decode);
  EXPECT_EQ(ov.manifest.components.at("decode").file, "openvino_model.xml");
  // The native exporter keeps the options' prefill + decode.
  EXPECT_EQ(NativeExporter().export_for_generation(*llama, NativeExportConfig(), g).size(), 2u);
  auto t5 = models::from_pretrained(testing::fixture_path("encdec/t5"));
  GenerationExport encdec = NativeExporter().export_for_generation(*t5, NativeExportConfig(), g);
  std::vector<std::string> names;
  for (const auto& [name, artifact] : encdec) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"cross_kv", "decode", "encoder"}));
  EXPECT_TRUE(encdec.manifest.multi_token_decode);
  ASSERT_TRUE(encdec.manifest.encoder_decoder.has_value());
}

TEST(GenerationDirectory, ManifestNamesTheFormatAndTheGeneratorRunsOnlyNative) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions g;
  g.max_cache_len = 16;
  const fs::path tmp = fs::temp_directory_path() / ("ingot_gendir_" + std::to_string(::getpid()));
  const std::string native_dir = (tmp / "native").string(), onnx_dir = (tmp / "onnx").string();
  GenerationExport native = NativeExporter().export_for_generation(*model, NativeExportConfig(), g);
  native.save(native_dir, testing::fixture_path("models/llama"));
  OnnxExporter()
      .export_for_generation(*model, OnnxConfig(), g)
      .save(onnx_dir, testing::fixture_path("models/llama"));
  // The manifest on disk is the one in memory, with each input's role.
  EXPECT_EQ(generation::GenerationManifest::read(native_dir).to_json(), native.manifest.to_json());
  const generation::StepLayout& decode = native.manifest.layout("decode");
  EXPECT_EQ(decode.inputs.front().role, generation::InputRole::kInputIds);
  EXPECT_GT(decode.count(generation::InputRole::kKeyCache), 0u);
  EXPECT_EQ(decode.count(generation::InputRole::kKeyCache),
            decode.count(generation::InputRole::kValueCache));
  EXPECT_EQ(decode.inputs.back().role, generation::InputRole::kCachePosition);
  EXPECT_TRUE(fs::exists(fs::path(native_dir) / "decode.ingot"));
  EXPECT_TRUE(fs::exists(fs::path(onnx_dir) / "decode.onnx"));
  runtime::Generator gen = runtime::Generator::load(native_dir);
  EXPECT_EQ(gen.max_cache_len(), 16);
  try {
    runtime::Generator::load(onnx_dir);
    FAIL() << "the Generator loaded ONNX components";
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "holds onnx components")) << e.what();
  }
  // A manifest pointing outside its directory, of an older version, or with a mistyped
  // field, is refused.
  nlohmann::json outside = native.manifest.to_json();
  outside["components"]["decode"] = "../native/decode.ingot";
  std::ofstream(fs::path(native_dir) / "manifest.json") << outside.dump();
  EXPECT_THROW(runtime::Generator::load(native_dir), IoError);
  nlohmann::json old = native.manifest.to_json();
  old["version"] = 1;
  std::ofstream(fs::path(native_dir) / "manifest.json") << old.dump();
  EXPECT_THROW(runtime::Generator::load(native_dir), IoError);
  std::ofstream(fs::path(native_dir) / "manifest.json") << R"({"format": 3, "components": {}})";
  EXPECT_THROW(runtime::Generator::load(native_dir), IoError);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace ingot::exporters
