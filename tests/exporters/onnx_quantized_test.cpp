// Quantised ONNX exports (exporters/onnx/translate_quantized.cpp) judged by ONNX Runtime:
// MatMulNBits (com.microsoft) for int8 / int4 (with and without zero points) and the
// standard DequantizeLinear + MatMul form, each equal to ingot's quantised runtime on the
// same program within 1e-3 relative (plus 1e-5 absolute for logits near zero). The packed
// bytes are stored once (the program's parameters re-labelled with ONNX's shapes).
#include <gtest/gtest.h>

#include <cstdio>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/runtime/executor/program_module.h"
#include "ort_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ort = testing::ort;

struct Case {
  const char* name;
  const char* scheme;
  int64_t group;
  bool zeros;
  const char* form;
  int64_t opset;
};

class OnnxQuantized : public ::testing::TestWithParam<Case> {};

int count_op(const onnx::ModelProto& m, const std::string& op) {
  int n = 0;
  for (const onnx::NodeProto& node : m.graph.node) n += node.op_type == op;
  return n;
}

TEST_P(OnnxQuantized, OrtEqualsIngotQuantisedRuntime) {
  // The other runtime multiplies f32 activations: ingot's exact path is the reference
  // (the default int8 activations are tested against their own bound in tests/ops).
  cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  const Case c = GetParam();
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  OnnxConfig config;
  config.quantizer.scheme = c.scheme;
  config.quantizer.group_size = c.group;
  config.quantizer.zero_point = c.zeros;
  config.quantized_matmul = c.form;
  config.opset = c.opset;
  models::ModelInputs in = example_model_inputs(*model, 2, 7);
  in.input_ids = to(abs(mul(testing::rand_tensor({2, 7}, 5), Scalar(40))), DType::I64);
  auto artifact = OnnxExporter().export_(*model, in, config);
  auto& p = dynamic_cast<OnnxProgram&>(*artifact);
  // 14 quantised linears and the lm_head (int8 per channel), written in the chosen form.
  const int linears = 15;
  EXPECT_EQ(
      count_op(p.model, std::string(c.form) == "matmul_nbits" ? "MatMulNBits" : "DequantizeLinear"),
      linears);
  // Each packed weight is stored once (re-labelled or as is, never both).
  int packed = 0;
  for (const onnx::TensorProto& t : p.model.graph.initializer)
    packed += t.name.find("qweight") != std::string::npos &&
              t.name.find("zero_point") == std::string::npos;
  EXPECT_EQ(packed, linears);
  if (!ort::have_venv()) GTEST_SKIP() << ort::skip_reason();
  ort::ScratchDir dir(std::string("quantized_") + c.name);
  const fs::path file = dir.path() / "model.onnx";
  p.save(file.string());
  // The program the ONNX model was lowered from still holds ingot::quantized_linear: it
  // runs ingot's packed kernels.
  runtime::ProgramModule mod(p.program);
  const Tensor logits = mod.run({in.input_ids, in.attention_mask})[0];
  ort::Cases cases(dir.path() / "cases");
  cases.add({{"input_ids", in.input_ids}, {"attention_mask", in.attention_mask}},
            {{"logits", contiguous(logits)}});
  // The runtime's exact mode must agree; its default mode (faster, may quantise the
  // activations) is printed (tools/quant/run_quantized_cases.py).
  std::vector<std::string> args{"ort", file.string()};
  for (const auto& d : fs::directory_iterator(dir.path() / "cases")) {
    args.push_back("--case");
    args.push_back(d.path().string());
  }
  const auto r = ort::run_tool("../quant/run_quantized_cases.py", args);
  std::printf("%s", r.log.c_str());
  EXPECT_EQ(r.status, 0) << r.log;
}

INSTANTIATE_TEST_SUITE_P(
    Forms, OnnxQuantized,
    ::testing::Values(Case{"nbits_int8", "int8", 32, false, "matmul_nbits", 18},
                      Case{"nbits_int4_g32", "int4", 32, false, "matmul_nbits", 18},
                      Case{"nbits_int4_g64_zp", "int4", 64, true, "matmul_nbits", 18},
                      Case{"dq_int8", "int8", 32, false, "dequantize_linear", 18},
                      Case{"dq_int4_g32", "int4", 32, false, "dequantize_linear", 21},
                      Case{"dq_int4_g32_zp", "int4", 32, true, "dequantize_linear", 21}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OnnxQuantizedErrors, Int4DequantizeLinearNeedsOpset21) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  OnnxConfig config;
  config.quantizer.scheme = "int4";
  config.quantized_matmul = "dequantize_linear";
  try {
    OnnxExporter().export_(*model, config);
    FAIL() << "opset 18 accepted";
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(testing::contains(e.what(), "opset >= 21")) << e.what();
  }
}

}  // namespace
}  // namespace ingot::exporters
