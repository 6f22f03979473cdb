// `ingot export FOLDER --task generation -o DIR` and `ingot generate` for LLaVA (issue 18,
// tools/reference/make_vlm_fixtures.py): greedy ids == transformers' generate for all 20
// new tokens from the processor's tensors (--input input_ids=... --input pixel_values=...)
// and from the raw text and image (--prompt TEXT --image FILE), for the directory and for
// the model folder; errors for a prompt without an image or an image without a placeholder.
#include <gtest/gtest.h>

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

std::string llava(const std::string& f = "") {
  return testing::fixture_path("vlm/llava/" + f);
}

std::vector<int64_t> reference_greedy() {
  std::ifstream f(llava("reference.json"));
  return nlohmann::json::parse(f)["greedy"].get<std::vector<int64_t>>();
}

// transformers' greedy ids after the JPEG's pixel values (a lossy copy of the PNG).
std::vector<int64_t> reference_greedy_jpeg() {
  Tensor t = formats::load_npy(llava("greedy_jpeg.npy"));
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

std::string prompt_text() {
  std::ifstream f(llava("prompt.txt"));
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

class LlavaCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (fs::temp_directory_path() / ("ingot_llava_cli_" + std::to_string(::getpid()))).string();
    ASSERT_EQ(
        call(run_export, {llava(), "--task", "generation", "--max-cache-len", "64", "-o", dir_}),
        0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static nlohmann::json generate(std::vector<std::string> args) {
    args.insert(args.end(), {"--max-new-tokens", "20", "--json"});
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    return nlohmann::json::parse(out);
  }
  static std::string dir_;
};
std::string LlavaCli::dir_;

TEST_F(LlavaCli, DirectoryHasEveryComponentAndTheProcessorFiles) {
  for (const char* f : {"image_encoder.ingot", "multi_modal_projector.ingot",
                        "language_model.ingot", "lm_head.ingot", "decode.ingot",
                        "preprocessor_config.json", "processor_config.json", "tokenizer.json"})
    EXPECT_TRUE(fs::exists(fs::path(dir_) / f)) << f;
}

TEST_F(LlavaCli, InputPathEqualsTransformers) {
  for (const std::string& source : {dir_, llava()}) {
    nlohmann::json j = generate({source, "--input", "input_ids=" + llava("input_ids.npy"),
                                 "--input", "pixel_values=" + llava("pixel_values.npy"), "--input",
                                 "attention_mask=" + llava("attention_mask.npy")});
    EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(), reference_greedy()) << source;
    EXPECT_EQ(j["prompt_tokens"], 27) << source;
  }
}

TEST_F(LlavaCli, PromptAndImagePathEqualsTransformers) {
  for (const std::string& source : {dir_, llava()}) {
    for (const std::string image : {"image.png", "image.jpg"}) {
      nlohmann::json j = generate({source, "--prompt", prompt_text(), "--image", llava(image)});
      EXPECT_EQ(j["generated_ids"].get<std::vector<int64_t>>(),
                image == "image.png" ? reference_greedy() : reference_greedy_jpeg())
          << source << image;
      EXPECT_EQ(j["prompt_tokens"], 27) << source << image;  // the processor's input_ids length
    }
  }
}

TEST_F(LlavaCli, ErrorsNameTheInput) {
  // Image tokens in the prompt but no image.
  EXPECT_THROW(generate({dir_, "--input", "input_ids=" + llava("input_ids.npy")}), ValueError);
  // An image but no placeholder in the prompt.
  try {
    generate({dir_, "--prompt", "what is this ?", "--image", llava("image.png")});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no image placeholder '<image>'"), std::string::npos)
        << e.what();
  }
  // A file that is not an image.
  try {
    generate({dir_, "--prompt", prompt_text(), "--image", llava("prompt.txt")});
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("prompt.txt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::cli
