// `ingot inspect / run / export` on torch.export archives, and `--format pt2`.
#include <gtest/gtest.h>

#include <filesystem>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/export/pt2/reader.h"
#include "ingot/export/serialize.h"
#include "ingot/formats/npy.h"
#include "ingot/runtime/program_module.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ingot_cli_pt2_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(CliPt2, InspectNamesTheArchiveAndTorchsSymbols) {
  const std::string pt2 = testing::fixture_path("pt2/llama/model.pt2");
  auto [rc, out] = captured(run_inspect, {pt2});
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("torch.export archive: torch 2.15.0"), std::string::npos) << out;
  EXPECT_NE(out.find("schema 8.20, TRAINING dialect"), std::string::npos) << out;
  EXPECT_NE(out.find("input_ids: i64[1, s70]"), std::string::npos) << out;
}

TEST(CliPt2, RunWritesTorchsOutputs) {
  const std::string dir = testing::fixture_path("pt2/qwen3");
  const fs::path out = scratch("run");
  ASSERT_EQ(call(run_run, {dir + "/model_aten.pt2", "--input", "input_ids=" + dir + "/case1_input_ids.npy", "-o",
                           out.string()}),
            0);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(out)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const Tensor got = formats::load_npy(files[0].string());
  const Tensor want = formats::load_npy(dir + "/case1_out0.npy");
  ASSERT_EQ(got.sizes(), want.sizes());
  testing::expect_close(got, testing::values(want), 1e-5, 0, "logits");
  fs::remove_all(out);
}

TEST(CliPt2, ExportToNativeAndBackToPt2) {
  const std::string dir = testing::fixture_path("pt2/gpt2");
  const fs::path out = scratch("export");
  // .pt2 -> .ingot
  ASSERT_EQ(call(run_export, {dir + "/model.pt2", "-o", (out / "m.ingot").string()}), 0);
  // model folder -> .pt2 (dynamic), read back by ingot
  const std::string folder = testing::fixture_path("models/gpt2");
  ASSERT_EQ(call(run_export, {folder, "--format", "pt2", "--dynamic", "-o", (out / "m.pt2").string()}), 0);
  const Tensor want = formats::load_npy(dir + "/case0_out0.npy");
  const Tensor ids = formats::load_npy(dir + "/case0_input_ids.npy");
  const ExportedProgram native = load((out / "m.ingot").string());
  const auto a = runtime::ProgramModule(native).run({ids});
  testing::expect_close(a.at(0), testing::values(want), 1e-5, 0, "pt2 -> ingot");
  const ExportedProgram back = pt2::load_pt2((out / "m.pt2").string());
  const Tensor mask = Tensor::from_vector<int64_t>(std::vector<int64_t>(size_t(ids.numel()), 1), ids.sizes());
  const auto b = runtime::ProgramModule(back).run({ids, mask});
  testing::expect_close(b.at(0), testing::values(want), 1e-4, 0, "folder -> pt2");
  fs::remove_all(out);
}

}  // namespace
}  // namespace ingot::cli
