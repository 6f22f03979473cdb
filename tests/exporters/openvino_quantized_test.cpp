// Quantised OpenVINO exports (exporters/openvino/translate_quantized.cpp) judged by the
// OpenVINO CPU plugin: u8 / u4 Consts decompressed by Convert / Subtract / Multiply before
// a MatMul, equal to ingot's quantised runtime within 1e-3 relative; the .bin holds the
// packed bytes (about a quarter / an eighth of the float weights).
#include <gtest/gtest.h>

#include <cstdio>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/runtime/executor/program_module.h"
#include "ov_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ovt = testing::ov;

struct Case {
  const char* name;
  const char* scheme;
  int64_t group;
  bool zeros;
};

class OpenVINOQuantized : public ::testing::TestWithParam<Case> {};

TEST_P(OpenVINOQuantized, CpuPluginEqualsIngotQuantisedRuntime) {
  // The other runtime multiplies f32 activations: ingot's exact path is the reference
  // (the default int8 activations are tested against their own bound in tests/ops).
  cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  const Case c = GetParam();
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  OpenVINOConfig config;
  config.quantizer.scheme = c.scheme;
  config.quantizer.group_size = c.group;
  config.quantizer.zero_point = c.zeros;
  models::ModelInputs in = example_model_inputs(*model, 2, 7);
  in.input_ids = to(abs(mul(testing::rand_tensor({2, 7}, 9), Scalar(40))), DType::I64);
  auto artifact = OpenVINOExporter().export_(*model, in, config);
  auto& p = dynamic_cast<OpenVINOModel&>(*artifact);
  int compressed = 0;
  for (const auto& l : p.model.graph.layers())
    for (const auto& [key, value] : l.attrs)
      compressed += l.type == "Const" && key == "element_type" &&
                    value == (std::string(c.scheme) == "int8" ? "u8" : "u4");
  EXPECT_GE(compressed, 14);  // one per quantised linear (plus the scalar zero point)
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  ovt::ScratchDir dir(std::string("quantized_") + c.name);
  const fs::path file = dir.path() / "model.xml";
  p.save(file.string());
  runtime::ProgramModule mod(p.program);
  const Tensor logits = mod.run({in.input_ids, in.attention_mask})[0];
  ovt::Cases cases(dir.path() / "cases");
  cases.add({{"input_ids", in.input_ids}, {"attention_mask", in.attention_mask}},
            {{"logits", contiguous(logits)}});
  // The runtime's exact mode must agree; its default mode (faster, may quantise the
  // activations) is printed (tools/quant/run_quantized_cases.py).
  std::vector<std::string> args{"ov", file.string()};
  for (const auto& d : fs::directory_iterator(dir.path() / "cases")) {
    args.push_back("--case");
    args.push_back(d.path().string());
  }
  const auto r = ovt::run_tool("../quant/run_quantized_cases.py", args);
  std::printf("%s", r.log.c_str());
  EXPECT_EQ(r.status, 0) << r.log;
}

INSTANTIATE_TEST_SUITE_P(Schemes, OpenVINOQuantized,
                         ::testing::Values(Case{"int8", "int8", 32, false},
                                           Case{"int4_g32", "int4", 32, false},
                                           Case{"int4_g64_zp", "int4", 64, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ingot::exporters
