// `ingot export --quantize int8|int4 [--group-size N] [--exclude PATTERN]
// [--quantize-lm-head]`: the archive holds packed weights, the printed report names what
// stayed float, and bad values are clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/core/error.h"
#include "ingot/formats/serialize.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::captured;

TEST(CliExportQuantize, PackedArchiveAndReport) {
  const std::string out = (fs::temp_directory_path() / "ingot_cli_quantize.ingot").string();
  auto [rc, text] =
      captured(run_export, {testing::fixture_path("models/qwen3"), "-o", out, "--quantize", "int4",
                            "--group-size", "64", "--exclude", "layers\\.1\\."});
  EXPECT_EQ(rc, 0);
  // Layer 0's 7 linears and the lm_head (as int8, the int4 default).
  EXPECT_NE(text.find("quantize int4 (group 64): 8 linear layers quantised"), std::string::npos)
      << text;
  EXPECT_NE(text.find("matches exclude pattern"), std::string::npos) << text;
  EXPECT_NE(text.find("as int8 per output channel"), std::string::npos) << text;
  ExportedProgram p = load(out);
  EXPECT_EQ(p.state.at("model.layers.0.mlp.down_proj.qweight").dtype(), DType::U8);
  EXPECT_EQ(p.state.count("model.layers.1.mlp.down_proj.weight"), 1u);  // excluded: float
  fs::remove(out);
}

// --keep-lm-head-float: the int4 export leaves the lm_head float.
TEST(CliExportQuantize, KeepLmHeadFloat) {
  const std::string out = (fs::temp_directory_path() / "ingot_cli_quantize_head.ingot").string();
  auto [rc, text] = captured(run_export, {testing::fixture_path("models/qwen3"), "-o", out,
                                          "--quantize", "int4", "--keep-lm-head-float"});
  EXPECT_EQ(rc, 0);
  EXPECT_NE(text.find("14 linear layers quantised"), std::string::npos) << text;
  EXPECT_NE(text.find("is the lm_head (quantizer.keep_lm_head_float)"), std::string::npos) << text;
  EXPECT_EQ(load(out).state.count("model.embed_tokens.qweight"), 0u);
  fs::remove(out);
}

TEST(CliExportQuantize, BadValuesAreClearErrors) {
  const std::string model = testing::fixture_path("models/qwen3");
  auto error_of = [&](std::vector<std::string> extra) -> std::string {
    std::vector<std::string> args = {model, "-o", "/tmp/ingot_cli_quantize_bad.ingot"};
    args.insert(args.end(), extra.begin(), extra.end());
    try {
      captured(run_export, args);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({"--quantize", "int4", "--group-size", "48"}).find("32, 64 or 128, got 48"),
            std::string::npos);
  EXPECT_NE(
      error_of({"--quantize", "int8", "--exclude", "("}).find("not a valid regular expression"),
      std::string::npos);
  EXPECT_NE(error_of({"--group-size", "64"}).find("need --quantize"), std::string::npos);
  EXPECT_NE(error_of({"--method", "gptq"}).find("need --quantize"), std::string::npos);
  EXPECT_NE(error_of({"--quantize", "int4", "--method", "gptq"}).find("needs calibration"),
            std::string::npos);
  EXPECT_NE(error_of({"--quantize", "int4", "--rule", "v_proj"}).find("PATTERN=BITS"),
            std::string::npos);
  EXPECT_NE(error_of({"--quantize", "int4", "--method", "gptq", "--dataset", "/nonexistent.txt"})
                .find("/nonexistent.txt"),
            std::string::npos);
}

// --method gptq --dataset FILE on the demo LM (a folder with a tokenizer): calibrated, and
// the report says on what; --rule puts the matched weights in int8.
TEST(CliExportQuantize, CalibratedMethodWithRules) {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  const std::string demo =
      (root ? std::string(root) : std::string(INGOT_FIXTURES_DIR) + "/../..") + "/assets/demo-lm";
  const std::string dataset = (fs::temp_directory_path() / "ingot_cli_calibration.txt").string();
  {
    std::ofstream f(dataset);
    for (int i = 0; i < 40; ++i)
      f << "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy "
           "disposition, seemed to unite some of the best blessings of existence. ";
  }
  const std::string out = (fs::temp_directory_path() / "ingot_cli_gptq.ingot").string();
  auto [rc, text] = captured(run_export, {demo, "-o", out, "--quantize", "int4", "--method", "gptq",
                                          "--dataset", dataset, "--num-samples", "8", "--seq-len",
                                          "32", "--rule", "layers\\.0\\..*v_proj=8"});
  EXPECT_EQ(rc, 0);
  EXPECT_NE(text.find("method gptq"), std::string::npos) << text;
  EXPECT_NE(text.find("calibrated on 8 samples (256 tokens)"), std::string::npos) << text;
  EXPECT_NE(text.find("int8 by rule, preset or ratio: 'model.layers.0.self_attn.v_proj.weight'"),
            std::string::npos)
      << text;
  const ExportedProgram p = load(out);
  EXPECT_EQ(p.state.at("model.layers.0.self_attn.v_proj.qweight").size(1), 256);  // int8: k
  EXPECT_EQ(p.state.at("model.layers.1.self_attn.v_proj.qweight").size(1), 128);  // int4: k / 2
  // The per-weight report beside the artifact.
  std::ifstream report_file(out + ".quantization.json");
  const nlohmann::json report = nlohmann::json::parse(report_file);
  const nlohmann::json& weights = report.at("model").at("weights");
  std::map<std::string, nlohmann::json> by_name;
  for (const nlohmann::json& w : weights) by_name[w.at("name")] = w;
  EXPECT_EQ(by_name.at("model.layers.0.self_attn.v_proj.weight").at("bits"), 8);
  EXPECT_EQ(by_name.at("model.layers.0.self_attn.v_proj.weight").at("why"),
            "rule 'layers\\.0\\..*v_proj'; sequential");  // grids from GPTQ's calibration
  EXPECT_EQ(by_name.at("model.layers.1.mlp.down_proj.weight").at("why"),
            "'model.layers.1.mlp.down_proj.weight' has in_features 688, not a multiple of the group "
            "size 32");
  EXPECT_EQ(by_name.at("model.layers.1.self_attn.q_proj.weight").at("method"), "gptq");
  EXPECT_EQ(by_name.at("model.layers.1.self_attn.q_proj.weight").at("group"), 32);
  fs::remove(out);
  fs::remove(out + ".quantization.json");
  fs::remove(dataset);
}

}  // namespace
}  // namespace ingot::cli
