// The quantize stage (exporters/quantize.h) and the `quantizer` config field: which
// linears become ingot::quantized_linear, what stays float and is reported, the packed
// parameters replacing the float weights, the .ingot round trip (mapped, bit-identical
// results), and clear errors for bad group sizes and patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/executorch/executorch_config.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/onnx/onnx_config.h"
#include "ingot/exporters/quantizer.h"
#include "ingot/formats/serialize.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

using testing::contains;

int count_nodes(const ExportedProgram& p, const std::string& target) {
  int n = 0;
  for (const ir::Node& node : p.graph->nodes()) n += node.target == target;
  return n;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const std::string& n : notes)
    if (contains(n, part)) return true;
  return false;
}

std::unique_ptr<ExportArtifact> export_fixture(const std::string& name, const QuantizerConfig& q) {
  auto model = models::from_pretrained(testing::fixture_path("models/" + name));
  NativeExportConfig c;
  c.quantizer = q;
  return NativeExporter().export_(*model, c);
}

QuantizerConfig scheme(const std::string& s, int64_t group = 32, bool zeros = false) {
  QuantizerConfig q;
  q.scheme = s;
  q.group_size = group;
  q.zero_point = zeros;
  return q;
}

TEST(QuantizerConfig, JsonRoundTripOnEveryFormat) {
  for (const char* format : {"native", "onnx", "openvino", "executorch"}) {
    auto c = AutoExportConfig::from_json(
        fmt::format(R"({{"export_format": "{}", "quantizer": {{"scheme": "int4", "group_size": 64,
                    "zero_point": true, "exclude": ["down_proj"]}}}})",
                    format));
    EXPECT_EQ(c->quantizer.scheme, "int4") << format;
    EXPECT_EQ(c->quantizer.group_size, 64);
    EXPECT_TRUE(c->quantizer.zero_point);
    EXPECT_EQ(c->quantizer.exclude, std::vector<std::string>{"down_proj"});
    auto back = AutoExportConfig::from_json(c->to_json());
    EXPECT_EQ(back->quantizer, c->quantizer) << format;
    EXPECT_TRUE(contains(c->to_json(), "\"quantizer\"")) << format;
  }
  // The string form (ExecuTorch's earlier field) and null.
  EXPECT_EQ(AutoExportConfig::from_json(R"({"export_format": "executorch", "quantizer": "int8"})")
                ->quantizer.scheme,
            "int8");
  EXPECT_FALSE(AutoExportConfig::from_json(R"({"export_format": "native", "quantizer": null})")
                   ->quantizer.enabled());
  EXPECT_TRUE(contains(NativeExportConfig().to_json(), "\"quantizer\": null"));
}

// int4 and int8 exports pack the (here tied) lm_head as int8 per output channel by
// default; keep_lm_head_float keeps it float, lm_head packs it with the scheme (int4).
// The JSON carries the field.
TEST(QuantizeStage, Int4LmHeadIsInt8UnlessKeptFloat) {
  const std::string head = "model.embed_tokens";  // tied: the embedding table's weight
  auto q4 = export_fixture("qwen3", scheme("int4"));
  EXPECT_EQ(count_nodes(q4->program, "ingot::quantized_linear"), 15);
  EXPECT_EQ(count_nodes(q4->program, "linear"), 0);
  EXPECT_EQ(q4->program.state.at(head + ".qweight").sizes(), (IntShape{96, 64}));  // [n, k]
  EXPECT_EQ(q4->program.state.at(head + ".scales").sizes(), (IntShape{96, 1}));    // per row
  EXPECT_EQ(q4->program.state.count(head + ".weight"), 1u);  // the gather still reads it
  EXPECT_TRUE(has_note(q4->notes, "as int8 per output channel"))
      << fmt::format("{}", fmt::join(q4->notes, "\n"));

  QuantizerConfig keep = scheme("int4", 32, true);
  keep.keep_lm_head_float = true;
  auto kept = export_fixture("qwen3", keep);
  EXPECT_EQ(count_nodes(kept->program, "ingot::quantized_linear"), 14);
  EXPECT_EQ(count_nodes(kept->program, "linear"), 1);
  EXPECT_EQ(kept->program.state.count(head + ".qweight"), 0u);
  EXPECT_TRUE(has_note(kept->notes, "is the lm_head (quantizer.keep_lm_head_float)"));

  QuantizerConfig as_int4 = scheme("int4", 32, true);
  as_int4.lm_head = true;
  auto four = export_fixture("qwen3", as_int4);
  EXPECT_EQ(four->program.state.at(head + ".qweight").sizes(), (IntShape{96, 32}));  // k / 2
  EXPECT_EQ(four->program.state.count(head + ".qzeros"), 1u);
  EXPECT_FALSE(has_note(four->notes, "as int8 per output channel"));

  auto q8 = export_fixture("qwen3", scheme("int8"));
  EXPECT_EQ(count_nodes(q8->program, "linear"), 0);
  EXPECT_EQ(q8->program.state.at(head + ".scales").sizes(), (IntShape{96, 1}));
  QuantizerConfig q8_keep = scheme("int8");
  q8_keep.keep_lm_head_float = true;
  EXPECT_EQ(count_nodes(export_fixture("qwen3", q8_keep)->program, "linear"), 1);

  auto c = AutoExportConfig::from_json(
      R"({"export_format": "native", "quantizer": {"scheme": "int4", "keep_lm_head_float": true}})");
  EXPECT_TRUE(c->quantizer.keep_lm_head_float);
  EXPECT_EQ(AutoExportConfig::from_json(c->to_json())->quantizer, c->quantizer);
  as_int4.keep_lm_head_float = true;  // both: a contradiction
  EXPECT_THROW(export_fixture("qwen3", as_int4), ValueError);
}

TEST(QuantizerConfig, BadValuesAreClearErrors) {
  auto error_of = [](const std::string& json) -> std::string {
    try {
      AutoExportConfig::from_json(json, "q.json");
    } catch (const ValueError& e) {
      return e.what();
    }
    return "";
  };
  const std::string g =
      error_of(R"({"export_format": "native", "quantizer": {"scheme": "int4", "group_size": 48}})");
  EXPECT_TRUE(contains(g, "group_size is 32, 64 or 128, got 48") && contains(g, "q.json")) << g;
  const std::string p =
      error_of(R"({"export_format": "onnx", "quantizer": {"scheme": "int8", "exclude": ["(a"]}})");
  EXPECT_TRUE(contains(p, "exclude pattern '(a' is not a valid regular expression")) << p;
  const std::string s = error_of(R"({"export_format": "native", "quantizer": "int3"})");
  EXPECT_TRUE(contains(s, "\"int8\" or \"int4\"")) << s;
  const std::string k =
      error_of(R"({"export_format": "native", "quantizer": {"scheme": "int8", "bits": 8}})");
  EXPECT_TRUE(contains(k, "unknown key 'quantizer.bits'")) << k;
  // The exporter checks a config built in code too.
  QuantizerConfig bad = scheme("int4", 100);
  EXPECT_THROW(export_fixture("qwen3", bad), ValueError);
}

// Every linear becomes quantized_linear (the lm_head too, int8 per channel by default);
// float weights leave the program; packed parameters have the layout's shapes and dtypes.
TEST(QuantizeStage, ReplacesLinearsAndWeights) {
  auto f32 = export_fixture("qwen3", {});
  const int linears = count_nodes(f32->program, "linear");
  auto q = export_fixture("qwen3", scheme("int8"));
  const ExportedProgram& p = q->program;
  EXPECT_EQ(count_nodes(p, "ingot::quantized_linear"), linears);  // 2 layers x 7 + lm_head
  EXPECT_EQ(count_nodes(p, "linear"), 0);
  EXPECT_EQ(p.state.count("model.layers.0.mlp.down_proj.weight"), 0u);
  const Tensor& qw = p.state.at("model.layers.0.mlp.down_proj.qweight");
  EXPECT_EQ(qw.dtype(), DType::U8);
  EXPECT_EQ(qw.sizes(), (IntShape{64, 128}));
  EXPECT_EQ(p.state.at("model.layers.0.mlp.down_proj.scales").sizes(), (IntShape{64, 1}));
  EXPECT_TRUE(has_note(q->notes, "quantize int8 (per output channel): 15 linear layers"))
      << fmt::format("{}", fmt::join(q->notes, "\n"));

  auto q4 = export_fixture("qwen3", scheme("int4", 32, true));
  EXPECT_EQ(q4->program.state.at("model.layers.1.self_attn.q_proj.qweight").sizes(),
            (IntShape{128, 32}));  // [out, in / 2]
  EXPECT_EQ(q4->program.state.at("model.layers.1.self_attn.q_proj.qzeros").sizes(),
            (IntShape{128, 2}));
}

// What the scheme cannot take stays float and is named in the report: a group size that
// does not divide in_features, excluded names, the lm_head with keep_lm_head_float.
TEST(QuantizeStage, KeptFloatIsReported) {
  auto q = export_fixture("qwen3", scheme("int4", 128));  // in_features 64 except down_proj
  // in_features 128: down_proj and o_proj (4 heads x 32) of both layers; and the lm_head
  // as int8 (per channel: no group size to divide).
  EXPECT_EQ(count_nodes(q->program, "ingot::quantized_linear"), 5);
  EXPECT_TRUE(has_note(q->notes,
                       "'model.layers.0.self_attn.q_proj.weight' has in_features 64, "
                       "not a multiple of the group size 128"));
  QuantizerConfig ex = scheme("int8");
  ex.exclude = {"mlp\\.(gate|up)_proj"};
  ex.keep_lm_head_float = true;
  auto e = export_fixture("qwen3", ex);
  EXPECT_EQ(count_nodes(e->program, "ingot::quantized_linear"), 15 - 4 - 1);
  EXPECT_TRUE(has_note(e->notes, "matches exclude pattern 'mlp\\.(gate|up)_proj'"));
  EXPECT_TRUE(has_note(e->notes, "is the lm_head (quantizer.keep_lm_head_float)"));
  // MoE experts: the expert weights are sliced in the graph (not parameters of a linear).
  auto moe = export_fixture("qwen3_moe", scheme("int8"));
  EXPECT_TRUE(has_note(moe->notes, "kept float")) << fmt::format("{}", fmt::join(moe->notes, "\n"));
  // GPT-2's Conv1D: linear(x, transpose(W [in, out])) quantises W as [out, in].
  auto gpt2 = export_fixture("gpt2", scheme("int8"));
  EXPECT_EQ(count_nodes(gpt2->program, "ingot::quantized_linear"), 9);  // 2 x 4 + lm_head
  EXPECT_EQ(gpt2->program.state.at("transformer.h.0.mlp.c_fc.qweight").size(0), 256);
}

// The archive stores packed weights like any parameter (mapped on load); the loaded
// program computes exactly what the exported one does.
TEST(QuantizeStage, ArchiveRoundTrip) {
  auto q = export_fixture("llama", scheme("int4", 32, true));
  const std::string path =
      (std::filesystem::temp_directory_path() / "ingot_quantize_roundtrip.ingot").string();
  q->save(path);
  ExportedProgram loaded = load(path);
  const Tensor& a = q->program.state.at("model.layers.0.mlp.up_proj.qweight");
  const Tensor& b = loaded.state.at("model.layers.0.mlp.up_proj.qweight");
  ASSERT_EQ(b.dtype(), DType::U8);
  EXPECT_TRUE(b.storage()->is_mapped());
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), size_t(a.numel())));
  runtime::ProgramModule before(q->program), after(loaded);
  const Tensor x = before.run(q->program.example_inputs)[0];
  const Tensor y = after.run(loaded.example_inputs)[0];
  testing::expect_near_tensors(x, y, 0.0);
}

}  // namespace
}  // namespace ingot::exporters

namespace ingot::exporters {
namespace {

// Mixed precision: a rule's bits win over the scheme's; the q4_k_m preset puts v_proj and
// down_proj of llama.cpp's "more bits" layers in int8 (with 2 layers: layer 1, the last
// eighth).
TEST(QuantizeStage, RulesAndPresetChooseTheBitsOfEachWeight) {
  QuantizerConfig q = scheme("int4");
  q.rules = {{"layers\\.0\\.self_attn\\.v_proj", 8}};
  auto a = export_fixture("qwen3", q);
  const auto& state = a->program.state;
  EXPECT_EQ(state.at("model.layers.0.self_attn.v_proj.qweight").sizes(), (IntShape{64, 64}));
  EXPECT_EQ(state.at("model.layers.1.self_attn.v_proj.qweight").sizes(), (IntShape{64, 32}));
  EXPECT_TRUE(has_note(a->notes, "int8 by rule, preset or ratio: 'model.layers.0.self_attn.v_proj.weight'"))
      << fmt::format("{}", fmt::join(a->notes, "\n"));

  QuantizerConfig p = scheme("int4");
  p.preset = "q4_k_m";
  auto b = export_fixture("qwen3", p);
  const auto& s = b->program.state;
  EXPECT_EQ(s.at("model.layers.1.self_attn.v_proj.qweight").sizes(), (IntShape{64, 64}));
  EXPECT_EQ(s.at("model.layers.1.mlp.down_proj.qweight").sizes(), (IntShape{64, 128}));
  EXPECT_EQ(s.at("model.layers.0.self_attn.v_proj.qweight").sizes(), (IntShape{64, 32}));
  EXPECT_EQ(s.at("model.layers.1.self_attn.q_proj.qweight").sizes(), (IntShape{128, 32}));
  // The mixed program computes what the float one does, within int4's error.
  auto f32 = export_fixture("qwen3", {});
  runtime::ProgramModule fm(f32->program), qm(b->program);
  const Tensor want = contiguous(fm.run(f32->program.example_inputs)[0]);
  const Tensor got = contiguous(qm.run(b->program.example_inputs)[0]);
  double err = 0, ref = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    err = std::max(err, double(std::fabs(want.data<float>()[i] - got.data<float>()[i])));
    ref = std::max(ref, double(std::fabs(want.data<float>()[i])));
  }
  EXPECT_LT(err / ref, 0.3);
}

// ratio: the int4 weights' parameters split between int4 (`ratio` of them, at least) and
// int8 (the most sensitive: largest mean int4 error), each choice in the report.
TEST(QuantizeStage, RatioPutsTheMostSensitiveWeightsInInt8) {
  QuantizerConfig q = scheme("int4");
  q.ratio = 0.6;
  auto a = export_fixture("qwen3", q);
  int64_t int4 = 0, int8 = 0;
  int by_ratio = 0;
  for (const WeightReport& w : a->quantization) {
    if (w.name.find("embed_tokens") != std::string::npos) continue;  // the lm_head: int8 anyway
    // scales [n, k / group]: n * k parameters.
    const Tensor& scales = a->program.state.at(w.name.substr(0, w.name.size() - 7) + ".scales");
    const int64_t params = scales.size(0) * scales.size(1) * w.group;
    (w.bits == 4 ? int4 : int8) += params;
    by_ratio += w.why.starts_with("ratio 0.6: among the most sensitive");
  }
  EXPECT_GT(by_ratio, 0);
  EXPECT_GT(int8, 0);
  // Greedy by sensitivity: int8 stops as soon as it holds 40%, so int4 keeps >= 60% less
  // one weight's share.
  EXPECT_GE(double(int4) / double(int4 + int8), 0.6 - 0.25);
  EXPECT_LE(double(int4) / double(int4 + int8), 0.6 + 1e-9);
  QuantizerConfig bad = scheme("int8");
  bad.ratio = 0.5;
  EXPECT_THROW(export_fixture("qwen3", bad), ValueError);
}

std::string export_error(const QuantizerConfig& q) {
  try {
    export_fixture("qwen3", q);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(QuantizeStage, BadMethodsAndRulesAreClearErrors) {
  QuantizerConfig q = scheme("int4");
  q.rules = {{"no_such_weight", 8}};
  EXPECT_TRUE(contains(export_error(q), "rule 'no_such_weight' (8 bits) matches none")) << export_error(q);
  q.rules = {{"v_proj", 6}};
  EXPECT_TRUE(contains(export_error(q), "rules take 4 or 8")) << export_error(q);
  q.rules.clear();
  q.method = "gptq";  // no dataset
  EXPECT_TRUE(contains(export_error(q), "method 'gptq' needs calibration")) << export_error(q);
  q.method = "awq-typo";
  EXPECT_TRUE(contains(export_error(q), "unknown method 'awq-typo'")) << export_error(q);
  q.method = "scale-search";
  q.preset = "q5_k_s";
  EXPECT_TRUE(contains(export_error(q), "unknown preset 'q5_k_s'")) << export_error(q);
}

// A quantiser for one format only, registered for this test.
class OnnxOnlyQuantizer final : public Quantizer {
 public:
  std::string name() const override { return "test-onnx-only"; }
  std::vector<std::string> formats() const override { return {"onnx"}; }
  QuantizedWeight quantize(const WeightToQuantize&) const override { return {}; }
};
INGOT_REGISTER_QUANTIZER(test_onnx_only, "test-onnx-only",
                         [](const QuantizerConfig&) { return std::make_unique<OnnxOnlyQuantizer>(); });

TEST(QuantizeStage, AQuantizerRefusesAFormatItDoesNotSupport) {
  QuantizerConfig q = scheme("int8");
  q.method = "test-onnx-only";
  const std::string e = export_error(q);
  EXPECT_TRUE(contains(e, "method 'test-onnx-only' does not quantise for format 'native'")) << e;
}

}  // namespace
}  // namespace ingot::exporters
