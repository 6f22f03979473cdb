// The ATen op fixtures (tests/fixtures/pt2_ops, made by tools/reference/make_pt2_op_fixtures.py):
// each family's archives, both dialects, read and run by ingot; every output equals torch's
// within the manifest's tolerance (float: atol + rtol * |torch|, NaN where torch has NaN;
// integer and bool: exact), with torch's dtype. The same programs decomposed for the
// exporters (decompose_to_core) keep no composite op and still give torch's outputs.
// Bad arguments to the new ops are errors naming the op and the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/export/passes.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(INGOT_FIXTURES_DIR) / "pt2_ops";

std::vector<std::string> families() {
  return {"remainder", "bitwise", "unary_float", "binary_float", "reductions",
          "scatter",   "shapes",  "vision",      "extras",       "pooling"};
}

nlohmann::json manifest(const std::string& family) {
  std::ifstream f(kDir / family / "manifest.json");
  EXPECT_TRUE(f.good()) << family;
  return nlohmann::json::parse(f);
}

// Empty when `got` matches `want`; else what differs.
std::string mismatch(const Tensor& got, const Tensor& want, double atol, double rtol) {
  if (got.dtype() != want.dtype())
    return fmt::format("dtype {} (torch: {})", got.dtype(), want.dtype());
  if (got.sizes() != want.sizes())
    return fmt::format("shape {} (torch: {})", got.shape_string(), want.shape_string());
  const Tensor g = contiguous(to(got, DType::F64)), w = contiguous(to(want, DType::F64));
  const bool exact = !is_floating(want.dtype());
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double a = g.data<double>()[i], b = w.data<double>()[i];
    if (std::isnan(b) ? std::isnan(a)
                      : (exact ? a == b : std::fabs(a - b) <= atol + rtol * std::fabs(b)))
      continue;
    return fmt::format("element {} is {} (torch: {})", i, a, b);
  }
  return {};
}

struct Param {
  std::string family;
  std::string archive;
  bool decompose;  // run decompose_to_core first (what the exporters see)
};

class Pt2OpsTest : public ::testing::TestWithParam<Param> {};

TEST_P(Pt2OpsTest, OutputsEqualTorch) {
  const Param& p = GetParam();
  const fs::path dir = kDir / p.family;
  const nlohmann::json m = manifest(p.family);
  ExportedProgram ep = pt2::load_pt2((dir / p.archive).string());
  if (p.decompose) {
    decompose_to_core(ep);
    for (const ir::Node& n : ep.graph->nodes()) {
      const OpDef* op = OpRegistry::instance().find(n.target);
      EXPECT_FALSE(op && op->decomposition_fn && !op->compute_fn)
          << n.target << " is left after decompose_to_core";
    }
  }
  const double atol = m["atol"], rtol = m["rtol"];
  const auto& labels = m["labels"];
  ASSERT_GE(m["cases"].size(), 1u);
  for (const auto& c : m["cases"]) {
    std::vector<Tensor> inputs;
    for (const auto& name : m["inputs"])
      inputs.push_back(formats::load_npy(
          (dir / c["inputs"][name.get<std::string>()].get<std::string>()).string()));
    runtime::ProgramModule mod(ep);
    const std::vector<Tensor> out = mod.run(inputs);
    ASSERT_EQ(out.size(), labels.size());
    for (size_t j = 0; j < out.size(); ++j) {
      const Tensor want = formats::load_npy((dir / c["outputs"][j].get<std::string>()).string());
      EXPECT_EQ(mismatch(out[j], want, atol, rtol), "")
          << p.family << "/" << p.archive << " output '" << labels[j].get<std::string>() << "'";
    }
  }
}

// Each family in both dialects, and the training dialect decomposed for exporters (not
// bitwise: see BitwiseOpsOnIntegersAreRefusedForExporters).
std::vector<Param> params() {
  std::vector<Param> ps;
  for (const auto& f : families()) {
    ps.push_back({f, "model.pt2", false});
    ps.push_back({f, "model_aten.pt2", false});
    if (f != "bitwise") ps.push_back({f, "model.pt2", true});
  }
  return ps;
}

// Integer bitwise ops have no lowering yet: decomposing them for an exporter is an error
// naming the op, not a wrong graph.
TEST(Pt2Ops, BitwiseOpsOnIntegersAreRefusedForExporters) {
  ExportedProgram ep = pt2::load_pt2((kDir / "bitwise" / "model_aten.pt2").string());
  try {
    decompose_to_core(ep);
    FAIL() << "integer bitwise ops were decomposed";
  } catch (const NotSupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("has no exporter translation"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2OpsTest, ::testing::ValuesIn(params()), [](const auto& info) {
  return info.param.family + (info.param.archive == "model.pt2" ? "_training" : "_aten") +
         (info.param.decompose ? "_decomposed" : "");
});

// The ops each family was written for are in its archives (so the fixtures test what
// they claim to), and the reader calls every one of them.
TEST(Pt2Ops, FixturesCoverTheNewOps) {
  std::set<std::string> seen;
  for (const auto& f : families()) {
    const nlohmann::json m = manifest(f);
    for (const auto& op : m["ops"]) seen.insert(op.get<std::string>());
  }
  for (const char* op : {"remainder.Tensor",
                         "remainder.Scalar",
                         "fmod.Tensor",
                         "fmod.Scalar",
                         "bitwise_not.default",
                         "bitwise_and.Tensor",
                         "bitwise_or.Scalar",
                         "bitwise_xor.Tensor",
                         "logical_xor.default",
                         "outer.default",
                         "unbind.int",
                         "scatter_reduce.two",
                         "scatter_add.default",
                         "flip.default",
                         "roll.default",
                         "repeat.default",
                         "constant_pad_nd.default",
                         "var.correction",
                         "std.dim",
                         "prod.default",
                         "prod.dim_int",
                         "max.dim",
                         "min.dim",
                         "atan2.default",
                         "hypot.default",
                         "maximum.default",
                         "minimum.default",
                         "round.default",
                         "sign.default",
                         "trunc.default",
                         "log1p.default",
                         "expm1.default",
                         "isinf.default",
                         "elu.default",
                         "leaky_relu.default",
                         "hardtanh.default",
                         "fill.Scalar",
                         "_native_batch_norm_legit_no_training.default",
                         "native_group_norm.default",
                         "pad.default",
                         "upsample_bilinear2d.vec",
                         "cumprod.default",
                         "clamp_min.default",
                         "clamp_max.Tensor",
                         "logsumexp.default",
                         "var_mean.correction",
                         "index_add.default",
                         "repeat_interleave.self_int",
                         "expand_as.default",
                         "flatten.using_ints",
                         "max_pool2d_with_indices.default",
                         "avg_pool2d.default",
                         "_adaptive_avg_pool2d.default",
                         "upsample_nearest2d.vec"})
    EXPECT_TRUE(seen.contains(op)) << op << " is in no op fixture";
}

Tensor call1(const char* op, std::vector<Value> args) {
  return call_op(OpRegistry::instance().get(op), std::move(args)).at(0);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(Pt2Ops, BadArgumentsAreNamedErrors) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2});
  const Tensor zero = Tensor::from_vector<int64_t>({0, 1}, {2});
  EXPECT_NE(error_of([&] {
              call1("remainder.Tensor", {i, zero});
            }).find("integer division by zero"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("bitwise_and.Tensor", {x, x});
            }).find("[bitwise_and.Tensor] integer or bool"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { call1("bitwise_not", {x}); }).find("[bitwise_not] 'self' must be an integer"),
      std::string::npos);
  const Tensor idx = Tensor::from_vector<int64_t>({0, 1, 1, 0}, {2, 2});
  EXPECT_NE(error_of([&] {
              call1("scatter_reduce.two", {x, int64_t(1), idx, x, std::string("max")});
            }).find("reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got 'max'"),
            std::string::npos);
  const Tensor far = Tensor::from_vector<int64_t>({0, 5, 1, 0}, {2, 2});
  EXPECT_NE(error_of([&] {
              call1("scatter_add", {x, int64_t(1), far, x});
            }).find("scatter_add"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("outer", {x, x});
            }).find("[outer] 'self' and 'vec2' must be 1-D"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("repeat", {x, IntShape{2}});
            }).find("[repeat] repeats has 1 values"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("constant_pad_nd", {x, IntShape{1}});
            }).find("[constant_pad_nd] pad must have an even length"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("constant_pad_nd", {x, IntShape{-2, -1}});
            }).find("leaves a negative size"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("roll", {x, IntShape{1, 2}, IntShape{0}});
            }).find("[roll] shifts (2 values) and dims (1 values)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("flip", {x, IntShape{0, -2}});
            }).find("[flip] dim 0 appears more than once"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              call1("var.correction", {i});
            }).find("[var.correction] 'self' must be floating"),
            std::string::npos);
}

// Hand-checked values: Python's modulo takes the divisor's sign, C's fmod the dividend's;
// scatter_reduce with include_self=False ignores self where an index lands.
TEST(Pt2Ops, RemainderAndScatterReduceByHand) {
  const Tensor a = Tensor::from_vector<int64_t>({-7, 7, -7, 7}, {4});
  const Tensor b = Tensor::from_vector<int64_t>({3, -3, -3, 3}, {4});
  const Tensor r = call1("remainder.Tensor", {a, b}), f = call1("fmod.Tensor", {a, b});
  EXPECT_EQ(std::vector<int64_t>(r.data<int64_t>(), r.data<int64_t>() + 4),
            (std::vector<int64_t>{2, -2, -1, 1}));
  EXPECT_EQ(std::vector<int64_t>(f.data<int64_t>(), f.data<int64_t>() + 4),
            (std::vector<int64_t>{-1, 1, -1, 1}));
  const Tensor self = Tensor::from_vector<float>({10, 20, 30}, {3});
  const Tensor idx = Tensor::from_vector<int64_t>({0, 0, 2}, {3});
  const Tensor src = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor s =
      call1("scatter_reduce.two", {self, int64_t(0), idx, src, std::string("sum"), false});
  EXPECT_EQ(std::vector<float>(s.data<float>(), s.data<float>() + 3),
            (std::vector<float>{3, 20, 3}));
  const Tensor mn =
      call1("scatter_reduce.two", {self, int64_t(0), idx, src, std::string("mean"), true});
  EXPECT_EQ(std::vector<float>(mn.data<float>(), mn.data<float>() + 3),
            (std::vector<float>{13.0f / 3, 20, 16.5f}));
}

}  // namespace
}  // namespace ingot
