// `ingot export`, `ingot inspect` and `ingot run model.ingot` end to end on a fixture.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

TEST(CliExport, ExportInspectAndRunTheArchiveMatchTransformers) {
  const std::string dir = testing::fixture_path("models/qwen3");
  const fs::path tmp = temp_dir("ingot_cli_export");
  const std::string archive = (tmp / "qwen3.ingot").string();
  ASSERT_EQ(call(run_export, {dir, "--dynamic", "-o", archive}), 0);
  EXPECT_EQ(call(run_inspect, {archive}), 0);
  ASSERT_EQ(call(run_run,
                 {archive, "--input", "input_ids=" + dir + "/input_ids.npy", "--input",
                  "attention_mask=" + dir + "/attention_mask.npy", "-o", (tmp / "out").string()}),
            0);
  Tensor logits = formats::load_npy((tmp / "out" / "logits.npy").string());
  Tensor expected = formats::load_npy(dir + "/logits.npy");
  ASSERT_EQ(logits.sizes(), expected.sizes());
  testing::expect_close(logits, testing::values(expected), 1e-4, 0, "logits");
  // input_ids alone: the program's attention_mask defaults to ones, as the model folder's
  // forward does, so both give the same logits.
  ASSERT_EQ(call(run_run, {archive, "--input", "input_ids=" + dir + "/input_ids.npy", "-o",
                           (tmp / "out2").string()}),
            0);
  ASSERT_EQ(call(run_run, {dir, "--input", "input_ids=" + dir + "/input_ids.npy", "-o",
                           (tmp / "eager").string()}),
            0);
  testing::expect_close(formats::load_npy((tmp / "out2" / "logits.npy").string()),
                        testing::values(formats::load_npy((tmp / "eager" / "logits.npy").string())),
                        1e-5, 0, "the program's and the folder's logits on input_ids alone");
  // A missing input without a default is named.
  try {
    call(run_run, {archive, "--input", "attention_mask=" + dir + "/attention_mask.npy", "-o",
                   (tmp / "out3").string()});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("needs input 'input_ids'"), std::string::npos) << e.what();
  }
  fs::remove_all(tmp);
}

TEST(CliExport, DynamicShapesFromJson) {
  const std::string dir = testing::fixture_path("models/gpt2");
  const fs::path tmp = temp_dir("ingot_cli_spec");
  const std::string spec = (tmp / "spec.json").string();
  std::ofstream(spec) << R"({"input_ids": {"0": "batch", "1": {"name": "seq", "min": 1, "max": 32}},
                             "attention_mask": {"0": "batch", "1": {"name": "seq", "min": 1, "max": 32}}})";
  const std::string archive = (tmp / "gpt2.ingot").string();
  ASSERT_EQ(call(run_export, {dir, "--dynamic-shapes", spec, "-o", archive}), 0);
  std::ofstream(spec) << R"({"pixel_values": {"0": "batch"}})";
  EXPECT_THROW(call(run_export, {dir, "--dynamic-shapes", spec, "-o", archive}), ValueError);
  EXPECT_THROW(call(run_export, {dir, "--dynamic", "--dynamic-shapes", spec, "-o", archive}),
               ValueError);
  EXPECT_THROW(call(run_inspect, {(tmp / "missing.ingot").string()}), IoError);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace ingot::cli

namespace ingot::cli {
namespace {

TEST(CliGenerate, ExportForGenerationThenGenerate) {
  const std::string dir = testing::fixture_path("models/qwen3");
  const fs::path tmp = fs::temp_directory_path() / ("ingot_cli_gen_" + std::to_string(::getpid()));
  const std::string out = (tmp / "gen").string();
  std::vector<std::string> export_args{
      dir, "--task", "generation", "--multi-token-decode", "--max-cache-len", "32", "-o", out};
  std::vector<char*> argv;
  for (auto& a : export_args) argv.push_back(a.data());
  ASSERT_EQ(run_export(int(argv.size()), argv.data()), 0);
  EXPECT_TRUE(fs::exists(fs::path(out) / "manifest.json"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "decode.ingot"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "prefill.ingot"));
  // Without --multi-token-decode: a prefill and a one-token decode component, which
  // ingot generate runs.
  const std::string split = (tmp / "split").string();
  const std::string demo = testing::fixture_path("../../assets/demo-lm");  // has a tokenizer
  std::vector<std::string> split_args{demo, "--task", "generation", "--max-cache-len",
                                      "32", "-o",     split};
  argv.clear();
  for (auto& a : split_args) argv.push_back(a.data());
  ASSERT_EQ(run_export(int(argv.size()), argv.data()), 0);
  EXPECT_TRUE(fs::exists(fs::path(split) / "prefill.ingot"));
  EXPECT_TRUE(fs::exists(fs::path(split) / "decode.ingot"));
  std::vector<std::string> generate_args{split, "--prompt", "Hello", "--max-new-tokens", "4"};
  argv.clear();
  for (auto& a : generate_args) argv.push_back(a.data());
  EXPECT_EQ(run_generate(int(argv.size()), argv.data()), 0);
  std::vector<std::string> bad{dir, "--task", "translation", "-o", out};
  argv.clear();
  for (auto& a : bad) argv.push_back(a.data());
  EXPECT_THROW(run_export(int(argv.size()), argv.data()), ValueError);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace ingot::cli
