// The ops MoE .pt2 archives need, in OpenVINO (decomposed once in ops/: ops/histc.cpp,
// ops/grouped_mm.cpp), on the hand-computed cases of tests/runtime/
// pt2_moe_ops_test.cpp (values torch gives): histc over a fixed range with values outside
// it and a NaN (not counted), the max element in the last bin, min == max (the data's
// range) and all-equal data (the range widened by 1); grouped_mm_fallback with an expert
// that has no rows and a row past the last offset (0). Each program is traced from a call
// of the registry op, exported to OpenVINO, run by OpenVINO's CPU plugin and compared
// exactly (atol 0: small integers in f32). The fixture archives (pt2_openvino_test.cpp)
// check both against torch at model scale. SKIPs without the venv of
// tools/openvino/setup-venv.
#include <gtest/gtest.h>

#include <cmath>

#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ov_harness.h"

namespace ingot::exporters {
namespace {

namespace ovt = testing::ov;

Tensor call1(const char* op, std::vector<Value> args) {
  return call_op(OpRegistry::instance().get(op), std::move(args)).at(0);
}

// Exports `fn(x)` (a program holding the node `op`) to OpenVINO, runs it on `x` and
// checks its output equals `want`.
template <typename Fn>
void expect_openvino_gives(const std::string& name, const std::string& op, Fn fn, const Tensor& x,
                           const Tensor& want) {
  SCOPED_TRACE(name);
  auto artifact = OpenVINOExporter().export_fn(nullptr, fn, std::tuple{x}, OpenVINOConfig(), {"x"});
  auto& p = dynamic_cast<OpenVINOModel&>(*artifact);
  size_t nodes = 0;  // decomposed in ops/ before the translation table: no node of it left
  for (const auto& n : p.program.graph->nodes()) nodes += n.target == op;
  EXPECT_EQ(nodes, 0u) << "the lowered program still has a " << op << " node";
  EXPECT_FALSE(p.program.graph->nodes().empty());
  ASSERT_EQ(p.output_names.size(), 1u);
  ovt::ScratchDir dir("moe_ops_" + name);
  const auto model = dir.path() / "model.xml";
  p.save(model.string());
  ovt::Cases cases(dir.path() / "cases");
  cases.add({{"x", x}}, {{p.output_names[0], want}});
  const nlohmann::json summary = cases.run(model, 0.0);
  EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
}

TEST(OpenVINOMoeOps, HistcCountsLikeTorch) {
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  expect_openvino_gives(
      "histc_range", "histc",
      [](const Tensor& x) {
        return call1("histc", {x, int64_t(4), Scalar(0), Scalar(3)});
      },
      Tensor::from_vector<float>({0, 1, 1, 3, 3, -1, 5, NAN}, {8}),
      Tensor::from_vector<float>({1, 2, 0, 2}, {4}));
  // min == max: the data's range.
  expect_openvino_gives(
      "histc_data_range", "histc",
      [](const Tensor& x) {
        return call1("histc", {x, int64_t(3), Scalar(0), Scalar(0)});
      },
      Tensor::from_vector<float>({1, 2, 2, 4}, {4}), Tensor::from_vector<float>({1, 2, 1}, {3}));
  // ... widened by 1 when the data are all equal.
  expect_openvino_gives(
      "histc_one_value", "histc",
      [](const Tensor& x) {
        return call1("histc", {x, int64_t(2), Scalar(0), Scalar(0)});
      },
      Tensor::from_vector<float>({2, 2}, {2}), Tensor::from_vector<float>({0, 2}, {2}));
}

TEST(OpenVINOMoeOps, GroupedMmMultipliesEachExpertsRows) {
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  const Tensor w = Tensor::from_vector<float>({1, 0, 0, 1, 9, 9, 9, 9, 2, 1, 0, 3}, {3, 2, 2});
  const Tensor offs = Tensor::from_vector<int32_t>({2, 2, 4}, {3});  // expert 1 has no rows
  // rows 0-1 · identity, rows 2-3 · [[2, 1], [0, 3]], row 4 past offs[-1]: 0
  expect_openvino_gives(
      "grouped_mm", "transformers::grouped_mm_fallback",
      [&](const Tensor& x) {
        return call1("transformers::grouped_mm_fallback", {x, w, offs});
      },
      Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2}),
      Tensor::from_vector<float>({1, 2, 3, 4, 10, 23, 14, 31, 0, 0}, {5, 2}));
}

}  // namespace
}  // namespace ingot::exporters
