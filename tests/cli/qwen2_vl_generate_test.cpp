// `ingot export FOLDER --task generation -o DIR` and `ingot generate` for Qwen2-VL (issue
// 18, tools/reference/make_qwen2vl_fixtures.py): greedy ids == transformers' generate for
// all 20 new tokens from the processor's tensors (--input input_ids / pixel_values /
// image_grid_thw / mm_token_type_ids) and from the raw text and images (--prompt TEXT
// --image FILE: C++ smart resize, patches and placeholder expansion), with one image and
// with two, for the directory and the model folder; the prompt ids equal the processor's.
// Errors: a prompt without the placeholder, image tokens without an image, pixel_values
// without image_grid_thw, a grid that does not fit the patches.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;

std::string qwen(const std::string& f = "") {
  return testing::fixture_path("vlm/qwen2_vl/" + f);
}

std::vector<int64_t> npy_ids(const std::string& name) {
  Tensor t = formats::load_npy(qwen(name + ".npy"));
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

std::string text_of(const std::string& file) {
  std::ifstream f(qwen(file));
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

class Qwen2VLCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ =
        (fs::temp_directory_path() / ("ingot_qwen2vl_cli_" + std::to_string(::getpid()))).string();
    ASSERT_EQ(
        call(run_export, {qwen(), "--task", "generation", "--max-cache-len", "160", "-o", dir_}),
        0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static nlohmann::json generate(std::vector<std::string> args) {
    args.insert(args.end(), {"--max-new-tokens", "20", "--ignore-eos", "--json"});
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    return nlohmann::json::parse(out);
  }
  static std::string dir_;
};
std::string Qwen2VLCli::dir_;

TEST_F(Qwen2VLCli, DirectoryHasTheComponentsWithoutAProjector) {
  for (const char* f : {"image_encoder.ingot", "language_model.ingot", "lm_head.ingot",
                        "decode.ingot", "preprocessor_config.json", "tokenizer.json"})
    EXPECT_TRUE(fs::exists(fs::path(dir_) / f)) << f;
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "multi_modal_projector.ingot"));
}

TEST_F(Qwen2VLCli, InputPathEqualsTransformers) {
  for (const std::string& source : {dir_, qwen()}) {
    nlohmann::json j = generate({source, "--input", "input_ids=" + qwen("input_ids.npy"), "--input",
                                 "pixel_values=" + qwen("pixel_values.npy"), "--input",
                                 "image_grid_thw=" + qwen("image_grid_thw.npy"), "--input",
                                 "mm_token_type_ids=" + qwen("mm_token_type_ids.npy"), "--input",
                                 "attention_mask=" + qwen("attention_mask.npy")});
    EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(), npy_ids("greedy")) << source;
    j = generate({source, "--input", "input_ids=" + qwen("input_ids_two.npy"), "--input",
                  "pixel_values=" + qwen("pixel_values_two.npy"), "--input",
                  "image_grid_thw=" + qwen("image_grid_thw_two.npy")});
    EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(), npy_ids("greedy_two")) << source;
  }
}

TEST_F(Qwen2VLCli, PromptAndImagePathEqualsTransformers) {
  for (const std::string& source : {dir_, qwen()}) {
    nlohmann::json j =
        generate({source, "--prompt", text_of("prompt.txt"), "--image", qwen("image.png")});
    EXPECT_EQ(j["prompt_ids"].get<std::vector<int64_t>>(), npy_ids("input_ids")) << source;
    EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(), npy_ids("greedy")) << source;
    j = generate({source, "--prompt", text_of("prompt_two.txt"), "--image", qwen("image.png"),
                  "--image", qwen("image_big.png")});
    EXPECT_EQ(j["prompt_ids"].get<std::vector<int64_t>>(), npy_ids("input_ids_two")) << source;
    EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(), npy_ids("greedy_two")) << source;
  }
}

TEST_F(Qwen2VLCli, ErrorsNameTheInput) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  // An image but no placeholder in the prompt.
  EXPECT_NE(message([&] {
              generate({dir_, "--prompt", "what is this ?", "--image", qwen("image.png")});
            }).find("'<|image_pad|>'"),
            std::string::npos);
  // Image tokens in the prompt but no image.
  EXPECT_NE(message([&] {
              generate({dir_, "--input", "input_ids=" + qwen("input_ids.npy")});
            }).find("no image was given"),
            std::string::npos);
  // pixel_values without image_grid_thw.
  EXPECT_NE(message([&] {
              generate({dir_, "--input", "input_ids=" + qwen("input_ids.npy"), "--input",
                        "pixel_values=" + qwen("pixel_values.npy")});
            }).find("image_grid_thw"),
            std::string::npos);
  // The big image's grid for the small image's patches.
  EXPECT_NE(message([&] {
              generate({dir_, "--input", "input_ids=" + qwen("input_ids.npy"), "--input",
                        "pixel_values=" + qwen("pixel_values.npy"), "--input",
                        "image_grid_thw=" + qwen("image_grid_thw_big.npy")});
            }).find("pixel_values"),
            std::string::npos);
  // mm_token_type_ids that do not mark the image tokens.
  EXPECT_NE(message([&] {
              generate({dir_, "--input", "input_ids=" + qwen("input_ids.npy"), "--input",
                        "pixel_values=" + qwen("pixel_values.npy"), "--input",
                        "image_grid_thw=" + qwen("image_grid_thw.npy"), "--input",
                        "mm_token_type_ids=" + qwen("attention_mask.npy")});
            }).find("mm_token_type_ids"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::cli
