// The ONNX exporter without ONNX Runtime: names, dims, initializers, in-place pairs,
// opset and IR version, the error for an op without a translation, the optimiser, and
// saving with external data. (onnx_export_conformance_test.cpp runs the models in ORT.)
#include <gtest/gtest.h>

#include <filesystem>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/export/custom_op.h"
#include "ingot/exporters/onnx/ir_fixes.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/onnx/optimize.h"
#include "ingot/exporters/onnx/reader.h"
#include "ingot/exporters/onnx/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {
namespace {

using testing::contains;
using testing::rand_tensor;
namespace fs = std::filesystem;

const onnx::ValueInfoProto* find(const std::vector<onnx::ValueInfoProto>& vs,
                                 const std::string& name) {
  for (const auto& v : vs) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::vector<onnx::Dim> shape_of(const onnx::ValueInfoProto* v) {
  return *v->type->shape;
}

bool has_op(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& n : g.node) {
    if (n.op_type == op) return true;
  }
  return false;
}

TEST(OnnxExport, DecoderKeepsHfNamesAndNamedDims) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  OnnxConfig c;
  c.dynamic = true;
  auto a = OnnxExporter().export_(*model, c);
  auto& p = dynamic_cast<OnnxProgram&>(*a);
  const onnx::ModelProto& m = p.model;
  EXPECT_EQ(m.opset_version(), 18);
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(p.input_names, (std::vector<std::string>{"input_ids", "attention_mask"}));
  EXPECT_EQ(p.output_names, (std::vector<std::string>{"logits"}));
  const auto* ids = find(m.graph.input, "input_ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_EQ(ids->type->elem_type, onnx::DataType::Int64);
  EXPECT_EQ(shape_of(ids), (std::vector<onnx::Dim>{"batch", "seq"}));
  const auto* logits = find(m.graph.output, "logits");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(shape_of(logits), (std::vector<onnx::Dim>{"batch", "seq", 96}));
  // Weights are initializers named by their state-dict names, sharing the bytes.
  bool found = false;
  for (const auto& t : m.graph.initializer) {
    if (t.name != "model.layers.0.self_attn.q_proj.weight") continue;
    found = true;
    EXPECT_EQ(t.raw_data.data(), a->program.state.at(t.name).raw_data());
  }
  EXPECT_TRUE(found);
  // rms_norm and attention went through their translations: rms_norm in core ops
  // (opset 18 has no RMSNormalization), the program itself keeps the fused op.
  EXPECT_FALSE(has_op(m.graph, "RMSNormalization"));
  EXPECT_TRUE(has_op(m.graph, "ReduceMean"));
  EXPECT_TRUE(has_op(m.graph, "Softmax"));
  bool fused = false;
  for (const auto& n : a->program.graph->nodes()) fused = fused || n.target == "rms_norm";
  EXPECT_TRUE(fused);
  // Each node names the user's source line.
  size_t with_source = 0;
  for (const auto& n : m.graph.node) with_source += contains(n.doc_string, ".cpp:");
  EXPECT_GT(with_source, m.graph.node.size() / 2);
}

TEST(OnnxExport, DecodeGraphExposesTheCacheAsInputOutputPairs) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  OnnxConfig c;
  c.dynamic = true;
  GenerationExportOptions g;
  g.max_cache_len = 16;
  auto parts = OnnxExporter().export_for_generation(*model, c, g);
  ASSERT_EQ(parts.size(), 1u);  // multi_token_decode: one decode graph
  auto& p = dynamic_cast<OnnxProgram&>(*parts.at("decode"));
  const auto layers = model->cache_spec()->num_layers;
  ASSERT_EQ(p.inplace_pairs.size(), size_t(2 * layers + 1));
  EXPECT_EQ(p.inplace_pairs[0],
            (std::pair<std::string, std::string>{"input.key_cache.0", "output.key_cache.0"}));
  EXPECT_EQ(p.inplace_pairs.back(),
            (std::pair<std::string, std::string>{"input.cache_position", "output.cache_position"}));
  const auto& g0 = p.model.graph;
  EXPECT_EQ(shape_of(find(g0.input, "input_ids")), (std::vector<onnx::Dim>{1, "tokens"}));
  // Pairs have equal types and shapes, so one buffer serves both.
  for (const auto& [in, out] : p.inplace_pairs) {
    const auto* i = find(g0.input, in);
    const auto* o = find(g0.output, out);
    ASSERT_TRUE(i && o) << in << " " << out;
    EXPECT_EQ(*i->type, *o->type) << in;
  }
  EXPECT_EQ(shape_of(find(g0.output, "logits")), (std::vector<onnx::Dim>{1, "tokens", 96}));
  // ONNX has no assert: the room check is dropped and said so.
  bool noted = false;
  for (const auto& n : p.notes)
    noted =
        noted || contains(n, "onnx_drop_runtime_asserts: dropped runtime assert tokens + u0 <= 16");
  EXPECT_TRUE(noted);
  bool meta = false;
  for (const auto& e : p.model.metadata_props)
    meta = meta || (e.key == "ingot.inplace_pairs" &&
                    contains(e.value, "input.key_cache.0=output.key_cache.0"));
  EXPECT_TRUE(meta);
}

const bool kRegisteredOps = [] {
  register_custom_op(
      "onnxtest::twice(Tensor x) -> Tensor",
      [](const OpArgs& a) { return std::vector<Tensor>{mul(a.tensor(0), Scalar(2))}; },
      [](const OpArgs& a) {
        return std::vector<OutputMeta>{{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
      });
  return true;
}();

TEST(OnnxExport, OpWithoutTranslationNamesItTheLineAndTheFix) {
  auto fn = [](const Tensor& x) {
    Tensor y = add(x, Scalar(1));
    return call_custom_op("onnxtest::twice", {y})[0];
  };
  try {
    OnnxExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)}, OnnxConfig());
    FAIL() << "an op without translation must fail the export";
  } catch (const NotSupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "op 'onnxtest::twice' has no ONNX translation")) << msg;
    EXPECT_TRUE(contains(msg, "onnx_export_test.cpp:")) << msg;
    EXPECT_TRUE(contains(msg, "INGOT_ONNX_TRANSLATION(id, \"onnxtest::twice\", fn)")) << msg;
  }
  // The native exporter has no such limit.
  EXPECT_NO_THROW(NativeExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)},
                                             NativeExportConfig()));
}

TEST(OnnxExport, EveryCoreOpOfTheFixtureModelsHasATranslation) {
  for (const char* op : {"_to_copy",
                         "add.Tensor",
                         "arange",
                         "arange.start",
                         "cat",
                         "cos",
                         "sin",
                         "embedding",
                         "expand",
                         "gelu",
                         "layer_norm",
                         "le.Tensor",
                         "linear",
                         "logical_and",
                         "mul.Tensor",
                         "ne.Scalar",
                         "neg",
                         "reshape",
                         "scaled_dot_product_attention",
                         "silu",
                         "slice.Tensor",
                         "split.Tensor",
                         "tanh",
                         "transpose.int",
                         "unsqueeze",
                         "view",
                         "select.int",
                         "index_copy",
                         "copy",
                         "item",
                         "cond",
                         "map",
                         "while_loop",
                         "nonzero"}) {
    EXPECT_NE(onnx::find_translation(op), nullptr) << op;
  }
  EXPECT_NE(onnx::find_translation("rms_norm"), nullptr);
}

TEST(OnnxExport, OpsetIsCheckedAndFollowedByTheIrVersion) {
  auto fn = [](const Tensor& x) { return relu(x); };
  OnnxConfig c;
  c.opset = 21;
  auto a = OnnxExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)}, c);
  EXPECT_EQ(dynamic_cast<OnnxProgram&>(*a).model.opset_version(), 21);
  EXPECT_EQ(dynamic_cast<OnnxProgram&>(*a).model.ir_version, 10);
  c.opset = 16;
  EXPECT_THROW(OnnxExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({3}, 1)}, c),
               ValueError);
}

TEST(OnnxExport, SymbolicSizesAreComputedFromTheInputs) {
  // Sizes 2n and n - 1 are expressions of the input's symbol n.
  auto fn = [](const Tensor& x) {
    Tensor doubled = cat({x, x}, 0);         // [2n, 3]
    Tensor flat = reshape(doubled, {-1});    // [6n]
    return slice(flat, 0, 3, std::nullopt);  // [6n - 3]
  };
  OnnxConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 32}}})";
  auto a = OnnxExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({4, 3}, 1)}, c, {"x"});
  const auto& g = dynamic_cast<OnnxProgram&>(*a).model.graph;
  EXPECT_EQ(shape_of(find(g.input, "x")), (std::vector<onnx::Dim>{"n", 3}));
  EXPECT_EQ(shape_of(find(g.output, "output")), (std::vector<onnx::Dim>{"6*n - 3"}));
  EXPECT_TRUE(has_op(g, "Shape"));
}

TEST(OnnxExport, OptimizeFoldsStaticShapeComputations) {
  auto model = models::from_pretrained(testing::fixture_path("models/gpt2"));
  OnnxConfig c;  // static shapes: the masks and positions are computable at export
  auto plain = OnnxExporter().export_(*model, c);
  c.optimize = true;
  auto optimized = OnnxExporter().export_(*model, c);
  const auto& pm = dynamic_cast<OnnxProgram&>(*plain).model;
  const auto& om = dynamic_cast<OnnxProgram&>(*optimized).model;
  EXPECT_LT(onnx::count_nodes(om), onnx::count_nodes(pm));
  EXPECT_FALSE(has_op(om.graph, "Range")) << "arange over static sizes must fold";
  EXPECT_TRUE(has_op(pm.graph, "Range"));
  bool noted = false;
  for (const auto& n : optimized->notes) noted = noted || contains(n, "optimize:");
  EXPECT_TRUE(noted);
}

TEST(OnnxExport, BFloat16ComputeRunsInFloatForOrt) {
  struct Bf16 : nn::Module {
    Tensor* w;
    Bf16() : Module("Bf16") { w = register_parameter("w", to(rand_tensor({4}, 3), DType::BF16)); }
    Tensor forward(const Tensor& x) { return to(mul(to(x, DType::BF16), *w), DType::F32); }
  } m;
  auto a = OnnxExporter().export_fn(
      &m, [&m](const Tensor& x) { return m.forward(x); }, std::tuple{rand_tensor({2, 4}, 1)},
      OnnxConfig());
  const auto& g = dynamic_cast<OnnxProgram&>(*a).model.graph;
  ASSERT_EQ(g.initializer.size(), 1u);
  EXPECT_EQ(g.initializer[0].data_type, onnx::DataType::BFloat16);
  for (const auto& n : g.node) {
    if (n.op_type == "Mul") {
      // Its bf16 operands were cast up to float first.
      for (const auto& in : n.input) EXPECT_TRUE(contains(in, ".f32")) << in;
    }
  }
  bool noted = false;
  for (const auto& n : a->notes)
    noted = noted || contains(n, "ort_cpu_bfloat16_in_float: 1 bfloat16 nodes");
  EXPECT_TRUE(noted);
}

TEST(OnnxExport, SaveWritesExternalDataWhenAsked) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  OnnxConfig c;
  c.external_data = "always";
  auto a = OnnxExporter().export_(*model, c);
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_onnx_save_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  a->save((dir / "model.onnx").string());
  EXPECT_TRUE(fs::exists(dir / "model.onnx.data"));
  onnx::ModelProto back = onnx::load_model((dir / "model.onnx").string(), /*load_external=*/false);
  size_t external = 0;
  for (const auto& t : back.graph.initializer)
    external += t.data_location == onnx::DataLocation::External;
  EXPECT_GT(external, 0u);
  // "auto" keeps small models in one file.
  c.external_data = "auto";
  OnnxExporter().export_(*model, c)->save((dir / "small.onnx").string());
  EXPECT_FALSE(fs::exists(dir / "small.onnx.data"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot::exporters
