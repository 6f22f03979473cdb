// `ingot run` and `ingot info` end to end on a committed fixture.
#include <gtest/gtest.h>

#include <filesystem>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;

TEST(CliRun, WritesOutputsMatchingTransformers) {
  const std::string dir = testing::fixture_path("models/qwen3");
  const fs::path out = fs::temp_directory_path() / ("ingot_cli_" + std::to_string(::getpid()));
  ASSERT_EQ(call(run_run, {dir, "--input", "input_ids=" + dir + "/input_ids.npy", "--input",
                           "attention_mask=" + dir + "/attention_mask.npy", "-o", out.string()}),
            0);
  Tensor logits = formats::load_npy((out / "logits.npy").string());
  Tensor expected = formats::load_npy(dir + "/logits.npy");
  ASSERT_EQ(logits.sizes(), expected.sizes());
  testing::expect_close(logits, testing::values(expected), 1e-4, 0, "logits");
  fs::remove_all(out);
}

TEST(CliRun, BadArgumentsAreErrorsNamingThem) {
  const std::string dir = testing::fixture_path("models/qwen3");
  // Every call below fails before writing anything.
  const std::string never = (fs::temp_directory_path() / "ingot_cli_never_written").string();
  EXPECT_THROW(call(run_run, {dir, "--input", "nonsense", "-o", never}), ValueError);
  EXPECT_THROW(
      call(run_run, {dir, "--input", "pixel_values=" + dir + "/input_ids.npy", "-o", never}),
      ValueError);
  EXPECT_THROW(call(run_run, {dir, "--input", "input_ids=" + dir + "/logits.npy", "-o", never}),
               DTypeError);
  EXPECT_THROW(call(run_run, {dir, "--input", "input_ids=/nonexistent.npy", "-o", never}), IoError);
  EXPECT_THROW(call(run_run, {dir}), ValueError);
  EXPECT_EQ(call(run_info, {dir}), 0);
  EXPECT_THROW(call(run_info, {"/nonexistent"}), IoError);
}

}  // namespace
}  // namespace ingot::cli
