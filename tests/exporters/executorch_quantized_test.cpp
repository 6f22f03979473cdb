// Quantised ExecuTorch exports: the .pte stores the packed uint8 weights and runs the
// dequantise decomposition on ExecuTorch's portable kernels (float compute; no
// quantised portable kernel). ExecuTorch's runtime equals ingot's quantised runtime (the
// native program with ingot's packed kernels) within 1e-3 relative.
#include <gtest/gtest.h>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "et_harness.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

namespace et = testing::et;

TEST(ExecutorchQuantized, DecompositionRunsOnPortableKernels) {
  // The other runtime multiplies f32 activations: ingot's exact path is the reference
  // (the default int8 activations are tested against their own bound in tests/ops).
  cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  for (bool zeros : {false, true}) {
    ExecutorchConfig c;
    c.quantizer.scheme = "int4";
    c.quantizer.zero_point = zeros;
    models::ModelInputs in = example_model_inputs(*model, 2, 7);
    in.input_ids = to(abs(mul(testing::rand_tensor({2, 7}, 3), Scalar(40))), DType::I64);
    auto artifact = ExecutorchExporter().export_(*model, in, c);
    auto& p = dynamic_cast<ExecutorchProgram&>(*artifact);
    int packed = 0, quantized_nodes = 0;
    for (const auto& [name, t] : p.program.state) packed += name.ends_with(".qweight");
    for (const ir::Node& n : p.program.graph->nodes())
      quantized_nodes += n.target == "ingot::quantized_linear";
    EXPECT_EQ(packed, 15);          // 14 linears + the (tied) lm_head, int8 under int4 by default
    EXPECT_EQ(quantized_nodes, 0);  // decomposed
    // The reference: the native quantised program (ingot's packed kernels).
    NativeExportConfig nc;
    nc.quantizer = c.quantizer;
    auto native = NativeExporter().export_(*model, in, nc);
    runtime::ProgramModule mod(native->program);
    const Tensor want = contiguous(mod.run({in.input_ids, in.attention_mask})[0]);
    if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
    et::ScratchDir dir(zeros ? "quantized_int4_zp" : "quantized_int4");
    const auto file = dir.path() / "model.pte";
    p.save(file.string());
    et::Cases cases(dir.path() / "cases");
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const std::string& n : p.input_names)
      inputs.push_back({n, n == "input_ids" ? in.input_ids : in.attention_mask});
    cases.add(inputs, {{0, {p.output_names.at(0), want}}});
    EXPECT_TRUE(cases.run(file, 1e-5, 1e-3).value("ok", false));
  }
}

}  // namespace
}  // namespace ingot::exporters
