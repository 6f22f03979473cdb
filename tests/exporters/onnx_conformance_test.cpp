// ONNX Runtime as the judge: each hand-built model is written by ingot, checked by the
// onnx checker (full_check) and re-serialised byte for byte by the onnx package, run by
// ONNX Runtime on .npy inputs, and its outputs compared with values computed here in C++.
// Needs the venv of tools/onnx/setup-venv ($INGOT_ONNX_VENV, default
// ~/.cache/ingot/onnx-venv); without it every test is skipped with that reason.
#include <gtest/gtest.h>

#include <filesystem>

#include "../ops/op_test_util.h"
#include "ingot/exporters/onnx/writer.h"
#include "ingot/formats/npy.h"
#include "onnx_test_models.h"
#include "ort_harness.h"

namespace ingot::exporters::onnx {
namespace {

namespace fs = std::filesystem;

// f32 models here compute a handful of products of short sums: ORT and the C++ loops
// may order them differently, well inside this tolerance.
constexpr double kAtol = 1e-5;

class OnnxConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ingot::testing::ort::have_venv()) GTEST_SKIP() << ingot::testing::ort::skip_reason();
    dir_ = fs::temp_directory_path() /
           ("ingot_onnx_ort_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string input(const std::string& name, const Tensor& t) {
    std::string path = (dir_ / (name + ".npy")).string();
    formats::save_npy(path, t);
    return name + "=" + path;
  }

  // Saves the model, runs check_and_run.py with `args` and returns the outputs directory.
  fs::path check_and_run(const ModelProto& m, const std::vector<std::string>& args,
                         const SaveOptions& options = {}) {
    fs::path model = dir_ / "model.onnx";
    save_model(m, model.string(), options);
    std::vector<std::string> all{model.string(), "--roundtrip", "--output-dir",
                                 (dir_ / "out").string()};
    all.insert(all.end(), args.begin(), args.end());
    const ingot::testing::ToolResult r = ingot::testing::ort::run_tool("check_and_run.py", all);
    EXPECT_EQ(r.status, 0) << r.log;
    return dir_ / "out";
  }

  Tensor output(const std::string& name) {
    return formats::load_npy((dir_ / "out" / (name + ".npy")).string());
  }

  fs::path dir_;
};

std::vector<double> as_double(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

TEST_F(OnnxConformance, AddMatMulAtSeveralBatchSizes) {
  ModelProto m = testing::add_matmul_model();
  for (int64_t batch : {1, 3, 5}) {
    std::vector<float> x = testing::ramp(batch * 3, 0.5f),
                       y = testing::ramp(batch * 3, -0.25f, 1.f);
    check_and_run(m, {"--input", input("x", Tensor::from_vector(x, {batch, 3})), "--input",
                      input("y", Tensor::from_vector(y, {batch, 3}))});
    Tensor out = output("out");
    ASSERT_EQ(out.sizes(), (IntShape{batch, 4}));
    ingot::testing::expect_close(out, as_double(testing::add_matmul_reference(x, y, batch)), kAtol,
                                 0, "out");
  }
}

TEST_F(OnnxConformance, IfTakesEitherBranch) {
  ModelProto m = testing::if_model();
  std::vector<float> x = {1.5f, -2.f, 0.f};
  for (bool flag : {true, false}) {
    check_and_run(m, {"--input", input("flag", Tensor::scalar(flag)), "--input",
                      input("x", Tensor::from_vector(x, {3}))});
    std::vector<double> want;
    for (float v : x) want.push_back(flag ? v * 2.0 : v - 1.0);
    ingot::testing::expect_close(output("out"), want, 0, 0, flag ? "then" : "else");
  }
}

TEST_F(OnnxConformance, LoopCarriesAndScans) {
  check_and_run(testing::loop_model(),
                {"--input", input("trips", Tensor::scalar(int64_t(3))), "--input",
                 input("x", Tensor::from_vector(std::vector<float>{1.f, -2.f}, {2})), "--input",
                 input("acc0", Tensor::from_vector(std::vector<float>{0.5f, 0.f}, {2}))});
  ingot::testing::expect_close(output("acc"), {3.5, -6.0}, 0, 0, "acc");
  Tensor steps = output("steps");
  ASSERT_EQ(steps.sizes(), (IntShape{3, 2}));
  ingot::testing::expect_close(steps, {1.5, -2.0, 2.5, -4.0, 3.5, -6.0}, 0, 0, "steps");
}

TEST_F(OnnxConformance, ExternalDataInitializer) {
  SaveOptions options;
  options.external_data_file = "model.onnx.data";
  std::vector<float> x = testing::ramp(2 * 64, 0.125f, -0.5f);
  check_and_run(testing::external_model(), {"--input", input("x", Tensor::from_vector(x, {2, 64}))},
                options);
  ASSERT_TRUE(fs::exists(dir_ / "model.onnx.data"));
  ingot::testing::expect_close(output("y"), as_double(testing::external_reference(x, 2)), 1e-4, 0,
                               "y");
}

TEST_F(OnnxConformance, HalfAndBFloat16Initializers) {
  std::vector<float> x = {1.f, 2.f, -3.f, 0.25f};
  check_and_run(testing::half_model(), {"--input", input("x", Tensor::from_vector(x, {4}))});
  std::vector<double> want;
  for (size_t i = 0; i < 4; ++i) {
    want.push_back(float(x[i] + float(testing::half_values()[i])) +
                   float(testing::bfloat_values()[i]));
  }
  ingot::testing::expect_close(output("sum"), want, kAtol, 0, "sum");
  Tensor sum16 = output("sum16");
  ASSERT_EQ(sum16.dtype(), DType::F16);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sum16.data<Half>()[i].bits, Half(float(want[i])).bits);
}

TEST_F(OnnxConformance, IoBindingWritesTheCacheInPlace) {
  // output.cache is read back from input.cache's own buffer: it holds the update only
  // when ONNX Runtime wrote into that buffer.
  std::vector<float> cache(12);
  for (size_t i = 0; i < 12; ++i) cache[i] = float(i);
  check_and_run(testing::cache_update_model(),
                {"--input", input("input.cache", Tensor::from_vector(cache, {4, 3})), "--input",
                 input("pos", Tensor::from_vector(std::vector<int64_t>{2}, {1, 1})), "--input",
                 input("update", Tensor::from_vector(std::vector<float>{-1.f, -2.f, -3.f}, {1, 3})),
                 "--io-binding", "--share", "input.cache=output.cache"});
  ingot::testing::expect_close(output("output.cache"), {0, 1, 2, 3, 4, 5, -1, -2, -3, 9, 10, 11}, 0,
                               0, "output.cache");
}

}  // namespace
}  // namespace ingot::exporters::onnx
