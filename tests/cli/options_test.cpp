// The command line as a user meets it: every command has --help, a misspelt option is
// an error that suggests the right one, and --json gives scripts one object to parse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/safetensors.h"
#include "ingot/ops/functional.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;

using cli_testing::captured;

// The message of the ValueError `command(args)` throws ("" when it does not).
std::string error_of(int (*command)(int, char**), std::vector<std::string> args) {
  try {
    call(command, std::move(args));
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

TEST(CliOptions, EveryCommandHasHelpListingItsOptions) {
  const std::pair<int (*)(int, char**), std::vector<const char*>> commands[] = {
      {run_export, {"--format", "--task", "--max-cache-len", "--multi-token-decode", "--opset"}},
      {run_generate,
       {"--prompt", "--input", "--max-new-tokens", "--ignore-eos", "--json", "--top-p"}},
      {run_run, {"--input", "--output", "--json"}},
      {run_inspect, {"program"}},
      {run_info, {"folder"}},
      {run_demo, {"fixtures"}},
  };
  for (const auto& [command, options] : commands) {
    for (const char* help : {"--help", "-h"}) {
      auto [rc, out] = captured(command, {help});
      EXPECT_EQ(rc, 0);
      EXPECT_NE(out.find("Usage: ingot "), std::string::npos) << out;
      for (const char* o : options)
        EXPECT_NE(out.find(o), std::string::npos) << o << " in\n" << out;
    }
  }
}

TEST(CliOptions, MisspeltOptionsSuggestTheClosestOne) {
  const std::string dir = testing::fixture_path("models/llama");
  std::string e = error_of(run_export, {dir, "--max-cach-len", "8", "-o", "/nonexistent/x"});
  EXPECT_NE(e.find("unknown option '--max-cach-len' (did you mean --max-cache-len?)"),
            std::string::npos)
      << e;
  e = error_of(run_generate, {dir, "--prompt", "x", "--max_new_tokens", "3"});
  EXPECT_NE(e.find("did you mean --max-new-tokens?"), std::string::npos) << e;
  e = error_of(run_run, {dir, "--inptu", "input_ids=x.npy", "-o", "/nonexistent/x"});
  EXPECT_NE(e.find("did you mean --input?"), std::string::npos) << e;
  // Wrong values and missing arguments name the option and point to --help.
  e = error_of(run_generate, {dir, "--prompt", "x", "--max-new-tokens", "many"});
  EXPECT_NE(e.find("--max-new-tokens"), std::string::npos) << e;
  EXPECT_NE(e.find("see 'ingot generate --help'"), std::string::npos) << e;
  e = error_of(run_export, {"--task", "generation"});
  EXPECT_NE(e.find("folder is required"), std::string::npos) << e;
  e = error_of(run_export, {dir, "--task", "translation", "-o", "/nonexistent/x"});
  EXPECT_NE(e.find("--task"), std::string::npos) << e;
  EXPECT_EQ(closest_word("genrate", {"export", "generate", "run"}), "generate");
  EXPECT_EQ(closest_word("zzzzzz", {"export", "generate", "run"}), "");
}

TEST(CliOptions, GenerateJsonReportsIdsTextAndTimings) {
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  auto [rc, out] = captured(run_generate,
                            {demo, "--prompt", "It is a truth", "--max-new-tokens", "6", "--json"});
  ASSERT_EQ(rc, 0);
  nlohmann::json j = nlohmann::json::parse(out);  // exactly one object, nothing else
  EXPECT_EQ(j["generated_ids"].size(), 6u);
  EXPECT_EQ(j["new_tokens"], 6);
  EXPECT_EQ(j["stop_reason"], "max_new_tokens");
  EXPECT_EQ(j["prompt_tokens"], j["prompt_ids"].size());
  EXPECT_TRUE(j["text"].is_string());
  for (const char* k : {"prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_s"}) {
    EXPECT_GT(j[k].get<double>(), 0) << k;
  }
  // The same prompt as preprocessed input_ids gives the same tokens.
  const fs::path ids =
      fs::temp_directory_path() / ("ingot_cli_ids_" + std::to_string(::getpid()) + ".npy");
  formats::save_npy(ids.string(), Tensor::from_vector(j["prompt_ids"].get<std::vector<int64_t>>(),
                                                      {1, int64_t(j["prompt_ids"].size())}));
  auto [rc2, out2] = captured(run_generate, {demo, "--input", "input_ids=" + ids.string(),
                                             "--max-new-tokens", "6", "--json"});
  ASSERT_EQ(rc2, 0);
  EXPECT_EQ(nlohmann::json::parse(out2)["generated_ids"], j["generated_ids"]);
  EXPECT_NE(error_of(run_generate, {demo, "--input", "pixel_values=" + ids.string()})
                .find("no input named"),
            std::string::npos);
  EXPECT_NE(error_of(run_generate, {demo, "--prompt", "x", "--input", "input_ids=" + ids.string()})
                .find("excludes"),
            std::string::npos);
  fs::remove(ids);
}

TEST(CliOptions, GenerateComputesInBf16WhenTheCheckpointIsStoredInBf16) {
  // The demo LM stored in bfloat16 (weights converted, config.json's dtype saying so):
  // `ingot generate` takes the bf16 fast path by default; --dtype float32 overrides it;
  // the float32 checkpoint computes in float32.
  const fs::path demo = testing::fixture_path("../../assets/demo-lm");
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_cli_bf16_demo_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    fs::copy_file(demo / f, dir / f, fs::copy_options::overwrite_existing);
  const auto weights = formats::SafetensorsFile::open((demo / "model.safetensors").string());
  std::map<std::string, Tensor> bf16;
  for (const auto& [name, entry] : weights.entries())
    bf16[name] = to(weights.tensor(name), DType::BF16);
  formats::save_safetensors((dir / "model.safetensors").string(), bf16);
  std::ifstream cf(demo / "config.json");
  nlohmann::json config = nlohmann::json::parse(cf);
  ASSERT_EQ(config["dtype"], "float32");
  config["dtype"] = "bfloat16";
  std::ofstream(dir / "config.json") << config.dump(2);

  auto compute_dtype = [](const fs::path& folder, std::vector<std::string> extra) {
    std::vector<std::string> args = {folder.string(),    "--prompt", "It is a truth",
                                     "--max-new-tokens", "4",        "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    const nlohmann::json j = nlohmann::json::parse(out);
    EXPECT_EQ(j["generated_ids"].size(), 4u);
    return j["compute_dtype"].get<std::string>();
  };
  EXPECT_EQ(compute_dtype(dir, {}), "bfloat16");
  EXPECT_EQ(compute_dtype(dir, {"--dtype", "float32"}), "float32");
  EXPECT_EQ(compute_dtype(demo, {}), "float32");
  EXPECT_EQ(compute_dtype(demo, {"--dtype", "bfloat16"}), "bfloat16");
  EXPECT_NE(error_of(run_generate, {dir.string(), "--prompt", "x", "--dtype", "int8"})
                .find("expected auto, float32 or bfloat16"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(CliOptions, RunJsonListsOutputNamesShapesAndDtypes) {
  const std::string dir = testing::fixture_path("models/qwen3");
  const fs::path outdir =
      fs::temp_directory_path() / ("ingot_cli_json_" + std::to_string(::getpid()));
  auto [rc, out] = captured(run_run, {dir, "--input", "input_ids=" + dir + "/input_ids.npy", "-o",
                                      outdir.string(), "--json"});
  ASSERT_EQ(rc, 0);
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["outputs"].size(), 2u);  // the eager forward: last_hidden_state and logits
  const nlohmann::json& logits = j["outputs"][1];
  EXPECT_EQ(logits["name"], "logits");
  EXPECT_EQ(logits["dtype"], "float32");
  Tensor ids = formats::load_npy(dir + "/input_ids.npy");
  EXPECT_EQ(logits["shape"], (std::vector<int64_t>{ids.size(0), ids.size(1), 96}));
  EXPECT_EQ(formats::load_npy(logits["file"].get<std::string>()).sizes(),
            (IntShape{ids.size(0), ids.size(1), 96}));
  fs::remove_all(outdir);
}

// Negative or too small sizes name the flag, not an internal option they feed.
TEST(CliOptions, GenerationSizesNameTheFlag) {
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  std::string e = error_of(run_generate, {demo, "--prompt", "x", "--max-new-tokens", "-5"});
  EXPECT_NE(e.find("--max-new-tokens must be at least 1 (got -5)"), std::string::npos) << e;
  e = error_of(run_generate, {demo, "--prompt", "x", "--max-cache-len", "4"});
  EXPECT_NE(e.find("--max-cache-len must be at least 8 (got 4)"), std::string::npos) << e;
}

// `ingot generate FOLDER` runs the programs `ingot export FOLDER --task generation` writes
// (separate prefill and decode), and --verbose reports what the load-time passes did.
TEST(CliOptions, FolderAndExportedDirectoryGiveTheSameTokens) {
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  const fs::path dir = fs::temp_directory_path() / ("ingot_cli_same_" + std::to_string(::getpid()));
  ASSERT_EQ(call(run_export, {demo, "--task", "generation", "-o", dir.string()}), 0);
  const std::vector<std::string> args{"--prompt", "It is a truth", "--max-new-tokens",
                                      "8",        "--json",        "--verbose"};
  std::vector<std::string> from_folder{demo}, from_dir{dir.string()};
  from_folder.insert(from_folder.end(), args.begin(), args.end());
  from_dir.insert(from_dir.end(), args.begin(), args.end());
  auto [rc1, a] = captured(run_generate, from_folder);
  auto [rc2, b] = captured(run_generate, from_dir);
  ASSERT_EQ(rc1, 0);
  ASSERT_EQ(rc2, 0);
  EXPECT_EQ(nlohmann::json::parse(a)["generated_ids"], nlohmann::json::parse(b)["generated_ids"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot::cli
