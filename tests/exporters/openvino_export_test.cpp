// The OpenVINO exporter without OpenVINO: the config and its JSON keys, the IR v11 it
// writes (Parameters with dynamic dims and intervals, opset versions, Consts sharing the
// weights' bytes, aligned .bin), the stateful decode layout, weight compression, the
// error for an op without a translation, and bad output paths (no half-written files).
// openvino_conformance_test.cpp runs the models in OpenVINO.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/export/custom_op.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/openvino/ir_fixes.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/exporters/openvino/translation.h"
#include "ingot/exporters/openvino/writer.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {
namespace {

using testing::contains;
using testing::rand_tensor;
namespace fs = std::filesystem;

OpenVINOModel& ov_of(ExportArtifact& a) {
  return dynamic_cast<OpenVINOModel&>(a);
}

const openvino::Layer* find_layer(const openvino::Graph& g, const std::string& type,
                                  const std::string& name = "") {
  for (const auto& l : g.layers()) {
    if (l.type == type && (name.empty() || l.name == name)) return &l;
  }
  return nullptr;
}

size_t count_layers(const openvino::Graph& g, const std::string& type) {
  size_t n = 0;
  for (const auto& l : g.layers()) n += l.type == type;
  return n;
}

fs::path scratch(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("ingot_ov_unit_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(OpenVINOConfig, JsonKeysRoundTripAndUnknownKeysAreNamed) {
  auto c = AutoExportConfig::from_json(
      R"({"export_format": "openvino", "dynamic": true, "compress_to_fp16": true,
          "stateful": false, "output_path": "out.xml"})");
  auto* ov = dynamic_cast<OpenVINOConfig*>(c.get());
  ASSERT_NE(ov, nullptr);
  EXPECT_TRUE(ov->dynamic);
  EXPECT_TRUE(ov->compress_to_fp16);
  EXPECT_FALSE(ov->stateful);
  EXPECT_EQ(ov->output_path, "out.xml");
  auto again = AutoExportConfig::from_json(c->to_json());
  EXPECT_EQ(again->to_json(), c->to_json());
  EXPECT_EQ(AutoExporter::from_config(*c)->backend(), "openvino");
  try {
    AutoExportConfig::from_json(R"({"export_format": "openvino", "opset": 18})", "ov.json");
    FAIL() << "an ONNX key is not an OpenVINO key";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "ov.json")) << e.what();
    EXPECT_TRUE(contains(e.what(), "unknown key 'opset' for export_format 'openvino'")) << e.what();
  }
  EXPECT_THROW(AutoExportConfig::from_json(R"({"export_format": "openvino", "stateful": "yes"})"),
               ValueError);
}

TEST(OpenVINOExport, DecoderIrHasNamedParametersWithIntervalsAndSharedWeights) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  OpenVINOConfig c;
  c.dynamic = true;
  auto a = OpenVINOExporter().export_(*model, c);
  auto& p = ov_of(*a);
  EXPECT_EQ(p.input_names, (std::vector<std::string>{"input_ids", "attention_mask"}));
  EXPECT_EQ(p.output_names, (std::vector<std::string>{"logits"}));
  const openvino::Graph& g = p.model.graph;
  const openvino::Layer* ids = find_layer(g, "Parameter", "input_ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->attrs[0], (std::pair<std::string, std::string>{"shape", "1..1024,1..4096"}));
  EXPECT_EQ(ids->outputs[0].dims, (std::vector<int64_t>{-1, -1}));
  // Weights are Consts sharing the program's bytes (no copy until written).
  bool shared = false;
  for (const auto& l : g.layers()) {
    if (l.type == "Const" && l.name == "model.layers.0.self_attn.q_proj.weight")
      shared = l.data.raw_data() == a->program.state.at(l.name).raw_data();
  }
  EXPECT_TRUE(shared);
  // Sizes are computed in the graph: ShapeOf + Gather of the inputs.
  EXPECT_GT(count_layers(g, "ShapeOf"), 0u);
  const std::string xml = openvino::model_xml(p.model);
  EXPECT_TRUE(contains(xml, "<net name=\"ingot\" version=\"11\">")) << xml.substr(0, 200);
  EXPECT_TRUE(contains(xml, "type=\"Gather\" version=\"opset8\"")) << "newest Gather";
  EXPECT_TRUE(contains(xml, "type=\"SoftMax\" version=\"opset8\""));
  EXPECT_TRUE(contains(xml, "output_names=\"logits\""));
  EXPECT_TRUE(contains(xml, "<edges>"));

  // Saved: every Const starts at an aligned offset of the .bin, whose size covers them.
  fs::path dir = scratch("decoder");
  p.save((dir / "model.xml").string());
  ASSERT_TRUE(fs::exists(dir / "model.bin"));
  EXPECT_FALSE(fs::exists(dir / "model.xml.tmp"));
  const std::string saved = xml;
  size_t at = 0, checked = 0;
  while ((at = saved.find(" offset=\"", at)) != std::string::npos) {
    at += 9;
    EXPECT_EQ(std::stoull(saved.substr(at)) % openvino::kWeightAlignment, 0u);
    ++checked;
  }
  EXPECT_GT(checked, 10u);
  fs::remove_all(dir);
}

TEST(OpenVINOExport, CompressToFp16StoresHalfWeightsBehindDecompressionConverts) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  OpenVINOConfig c;
  auto full_size = [&](bool compress) {
    c.compress_to_fp16 = compress;
    auto a = OpenVINOExporter().export_(*model, c);
    auto& p = ov_of(*a);
    fs::path dir = scratch(compress ? "fp16" : "fp32");
    p.save((dir / "m.xml").string());
    const auto bytes = fs::file_size(dir / "m.bin");
    if (compress) {
      const std::string xml = openvino::model_xml(p.model);
      EXPECT_TRUE(contains(xml, "<attribute name=\"decompression\" version=\"0\" />"));
      EXPECT_TRUE(contains(xml, "element_type=\"f16\""));
    }
    fs::remove_all(dir);
    return bytes;
  };
  const auto f32 = full_size(false), f16 = full_size(true);
  EXPECT_LT(f16, f32 * 6 / 10) << f16 << " vs " << f32;
}

TEST(OpenVINOExport, DecodeComponentIsStatefulInGenAisLayout) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions g;
  g.max_cache_len = 32;
  auto parts = OpenVINOExporter().export_for_generation(*model, OpenVINOConfig(), g);
  auto& p = ov_of(*parts.at("decode"));
  EXPECT_EQ(p.input_names,
            (std::vector<std::string>{"attention_mask", "position_ids", "beam_idx", "input_ids"}));
  EXPECT_EQ(p.output_names, (std::vector<std::string>{"logits"}));
  const openvino::Graph& gr = p.model.graph;
  const size_t layers = size_t(model->cache_spec()->num_layers);
  // One variable per cache tensor: key_cache.N, value_cache.N and cache_position.
  EXPECT_EQ(count_layers(gr, "ReadValue"), 2 * layers + 1);
  EXPECT_EQ(count_layers(gr, "Assign"), 2 * layers + 1);
  EXPECT_EQ(p.variables.size(), 2 * layers + 1);
  const std::string xml = openvino::model_xml(p.model);
  EXPECT_TRUE(contains(xml, "variable_id=\"key_cache.0\"")) << xml.substr(0, 400);
  // Without state: the cache is the pair input.<name> / output.<name>.
  OpenVINOConfig plain;
  plain.stateful = false;
  auto parts2 = OpenVINOExporter().export_for_generation(*model, plain, g);
  auto& q = ov_of(*parts2.at("decode"));
  EXPECT_EQ(count_layers(q.model.graph, "ReadValue"), 0u);
  EXPECT_NE(std::find(q.input_names.begin(), q.input_names.end(), "input.key_cache.0"),
            q.input_names.end());
  EXPECT_NE(std::find(q.output_names.begin(), q.output_names.end(), "output.key_cache.0"),
            q.output_names.end());
}

// A cache whose length is a symbol (dynamic_cache_len) cannot live in a fixed-shape
// variable: the stateful export says so and how to get the pairs instead, whose cache
// dims are the interval of cache_len (2.., unbounded).
TEST(OpenVINOExport, SymbolicCacheLengthNeedsStatefulFalse) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions g;
  g.max_cache_len = 32;
  g.dynamic_cache_len = true;
  try {
    OpenVINOExporter().export_for_generation(*model, OpenVINOConfig(), g);
    FAIL() << "a symbolic cache cannot be a variable";
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(contains(e.what(), "the mutated input 'key_cache.0' has a symbolic size"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "stateful = false")) << e.what();
  }
  OpenVINOConfig plain;
  plain.stateful = false;
  auto parts = OpenVINOExporter().export_for_generation(*model, plain, g);
  const openvino::Layer* k =
      find_layer(ov_of(*parts.at("decode")).model.graph, "Parameter", "input.key_cache.0");
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(contains(k->attrs[0].second, ",2..,")) << k->attrs[0].second;
}

const bool kTwice = [] {
  register_custom_op(
      "ovtest::twice(Tensor x) -> Tensor",
      [](const OpArgs& a) { return std::vector<Tensor>{mul(a.tensor(0), Scalar(2))}; },
      [](const OpArgs& a) {
        return std::vector<OutputMeta>{{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
      });
  return true;
}();

TEST(OpenVINOExport, OpWithoutTranslationNamesItTheLineAndTheFix) {
  auto fn = [](const Tensor& x) {
    Tensor y = add(x, Scalar(1));
    return call_custom_op("ovtest::twice", {y})[0];
  };
  try {
    OpenVINOExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)}, OpenVINOConfig());
    FAIL() << "an op without translation must fail the export";
  } catch (const NotSupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "op 'ovtest::twice' has no OpenVINO translation")) << msg;
    EXPECT_TRUE(contains(msg, "openvino_export_test.cpp:")) << msg;
    EXPECT_TRUE(contains(msg, "INGOT_OPENVINO_TRANSLATION(id, \"ovtest::twice\", fn)")) << msg;
  }
}

TEST(OpenVINOExport, EveryOpTheOnnxTableCoversHasATranslation) {
  for (const char* op :
       {"_to_copy",      "add.Tensor",   "arange",       "arange.start",
        "cat",           "cos",          "sin",          "embedding",
        "expand",        "gelu",         "layer_norm",   "le.Tensor",
        "linear",        "logical_and",  "mul.Tensor",   "ne.Scalar",
        "neg",           "reshape",      "rms_norm",     "scaled_dot_product_attention",
        "silu",          "slice.Tensor", "split.Tensor", "tanh",
        "transpose.int", "unsqueeze",    "view",         "select.int",
        "index_copy",    "copy",         "item",         "nonzero",
        "triu",          "tril",         "topk",         "sort",
        "argmax",        "cumsum",       "index_put",    "scatter.src"}) {
    EXPECT_NE(openvino::find_translation(op), nullptr) << op;
  }
}

TEST(OpenVINOExport, UnwritableOutputPathLeavesNoFiles) {
  auto fn = [](const Tensor& x) { return add(x, Scalar(1)); };
  auto a =
      OpenVINOExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)}, OpenVINOConfig());
  fs::path dir = scratch("readonly");
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const bool root = ::geteuid() == 0;  // root writes anywhere; the missing dir case still runs
  if (!root) {
    try {
      a->save((dir / "model.xml").string());
      FAIL() << "a read-only directory cannot take the model";
    } catch (const IoError& e) {
      EXPECT_TRUE(contains(e.what(), (dir / "model.xml").string())) << e.what();
    }
    EXPECT_TRUE(fs::is_empty(dir));
  }
  fs::permissions(dir, fs::perms::owner_all);
  try {
    a->save((dir / "missing" / "model.xml").string());
    FAIL() << "a missing directory cannot take the model";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), "is the directory writable?")) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(OpenVINOExport, IrFixesRunInRegistrationOrderAndReportNotes) {
  // The registry is empty in the library (no OpenVINO gap needed one yet); a fix
  // registered here runs on every export's model and its notes are kept.
  static const bool registered = [] {
    openvino::ir_fixes().add({"test_rename",
                              "test only",
                              [](openvino::Model& m) {
                                m.name = "renamed";
                                return std::vector<std::string>{"renamed the model"};
                              },
                              {}},
                             std::source_location::current());
    return true;
  }();
  ASSERT_TRUE(registered);
  auto a = OpenVINOExporter().export_fn(
      nullptr, [](const Tensor& x) { return neg(x); }, std::tuple{rand_tensor({2}, 1)},
      OpenVINOConfig());
  EXPECT_EQ(ov_of(*a).model.name, "renamed");
  EXPECT_NE(std::find(a->notes.begin(), a->notes.end(), "test_rename: renamed the model"),
            a->notes.end());
}

}  // namespace
}  // namespace ingot::exporters
