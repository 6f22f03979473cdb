// Programs traced from a model whose GGUF Q4_0 / Q8_0 weights were kept packed on load
// (models/gguf_packed_linears.h): the packed layers are `ingot::quantized_linear` nodes
// on uint8 / f32 parameters straight away (no quantizer configured, no float copy of those
// weights in the program), the program computes what the float-path program does, and a
// quantizer on top packs only the layers still float, leaving the file's blocks as read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../models/fixture_path.h"
#include "../models/relative_diff.h"
#include "ingot/exporters/exporter.h"
#include "ingot/models/model.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

int count_nodes(const ExportedProgram& p, const std::string& target) {
  int n = 0;
  for (const ir::Node& node : p.graph->nodes()) n += node.target == target;
  return n;
}

const std::string kLlama = "gguf/models/llama/llama.gguf";  // 5 Q4_0 / Q8_0 linears of 8

std::unique_ptr<ExportArtifact> export_gguf(bool packed, const QuantizerConfig& q = {}) {
  models::LoadOptions o;
  o.gguf_packed = packed;
  auto model = models::from_pretrained(testing::fixture_path(kLlama), o);
  NativeExportConfig c;
  c.quantizer = q;
  return NativeExporter().export_(*model, c);
}

using ingot::testing::relative_diff;

TEST(GgufPackedExport, PackedLayersAreQuantizedLinearNodesWithoutAQuantizer) {
  auto packed = export_gguf(true), plain = export_gguf(false);
  EXPECT_EQ(count_nodes(packed->program, "ingot::quantized_linear"), 5);
  EXPECT_EQ(count_nodes(packed->program, "linear"),
            3);  // attn_v Q5_0, attn_output Q4_1, ffn_up Q5_1
  EXPECT_EQ(count_nodes(plain->program, "ingot::quantized_linear"), 0);
  const auto& s = packed->program.state;
  for (const char* m :
       {"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj",
        "model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj", "lm_head"}) {
    SCOPED_TRACE(m);
    EXPECT_EQ(s.at(std::string(m) + ".qweight").dtype(), DType::U8);
    EXPECT_EQ(s.at(std::string(m) + ".scales").dtype(), DType::F32);
    EXPECT_FALSE(s.contains(std::string(m) + ".weight"));
  }
  const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  runtime::ProgramModule pm(packed->program), fm(plain->program);
  EXPECT_LE(relative_diff(pm.run(packed->program.example_inputs)[0],
                          fm.run(plain->program.example_inputs)[0]),
            1e-5);
}

TEST(GgufPackedExport, AQuantizerPacksOnlyTheLayersStillFloat) {
  QuantizerConfig q;
  q.scheme = "int4";
  q.group_size = 32;
  auto packed = export_gguf(true);
  auto both = export_gguf(true, q);
  EXPECT_EQ(count_nodes(both->program, "ingot::quantized_linear"), 8);
  EXPECT_EQ(count_nodes(both->program, "linear"), 0);
  const std::string gate = "model.layers.0.mlp.gate_proj.qweight";  // Q4_0 in the file
  const Tensor& a = packed->program.state.at(gate);
  const Tensor& b = both->program.state.at(gate);
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(std::memcmp(contiguous(a).raw_data(), contiguous(b).raw_data(), a.nbytes()), 0);
}

}  // namespace
}  // namespace ingot::exporters
