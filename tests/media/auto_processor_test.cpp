// AutoProcessor: each registered processor type resolves from a model folder's
// preprocessor_config.json / processor_config.json to its processor, which makes the same
// inputs as the typed processors (the LLaVA, Qwen2-VL and Whisper fixtures); an unknown
// type names the file, the type and the registered ones; a folder without either file is
// an IoError that says to pass preprocessed inputs.
#include "ingot/media/auto_processor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "../ops/op_test_util.h"
#include "error_of.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"
#include "models/fixture_path.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

using ingot::testing::error_of;

nlohmann::json fixture_json(const std::string& relative) {
  std::ifstream f(fixture_path(relative));
  return nlohmann::json::parse(f);
}

// A fresh folder under the temp directory, removed when the test ends.
struct TempFolder {
  fs::path path = fs::temp_directory_path() /
                  ("ingot_auto_processor_" +
                   std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  TempFolder() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() { fs::remove_all(path); }
  void write(const std::string& name, const nlohmann::json& j) const {
    std::ofstream(path / name) << j.dump();
  }
};

TEST(AutoProcessor, FixtureFoldersResolveToTheirProcessors) {
  const auto llava = AutoProcessor::from_folder(fixture_path("vlm/llava"));
  EXPECT_EQ(llava->type(), "LlavaProcessor");
  EXPECT_FALSE(llava->patch_input());
  ProcessedImages a =
      llava->images({fixture_path("vlm/llava/image.png")}, "user : <image> what ? assistant :");
  EXPECT_LE(
      max_abs_diff(a.pixel_values, formats::load_npy(fixture_path("vlm/llava/pixel_values.npy"))),
      1e-6);
  EXPECT_FALSE(a.image_grid_thw.defined());
  EXPECT_EQ(a.prompt.find("<image>"), a.prompt.find("<image><image>"));  // expanded

  const auto qwen = AutoProcessor::from_folder(fixture_path("vlm/qwen2_vl"));
  EXPECT_EQ(qwen->type(), "Qwen2VLProcessor");
  EXPECT_TRUE(qwen->patch_input());
  ProcessedImages q = qwen->images({fixture_path("vlm/qwen2_vl/image.png")}, "a <|image_pad|> b");
  EXPECT_LE(max_abs_diff(q.pixel_values,
                         formats::load_npy(fixture_path("vlm/qwen2_vl/pixel_values.npy"))),
            1e-6);
  EXPECT_EQ(q.image_grid_thw.shape_string(), "[1, 3]");
  // image.png: 40x48 pixels after smart_resize, 10x12 patches, 2x2 merged: 30 tokens.
  size_t pads = 0;
  for (size_t at = q.prompt.find("<|image_pad|>"); at != std::string::npos;
       at = q.prompt.find("<|image_pad|>", at + 1))
    ++pads;
  EXPECT_EQ(pads, 30u);

  const auto whisper = AutoProcessor::from_folder(fixture_path("whisper/whisper"));
  EXPECT_EQ(whisper->type(), "WhisperFeatureExtractor");
  EXPECT_LE(max_abs_diff(whisper->audio(fixture_path("whisper/speech16k.wav")),
                         formats::load_npy(fixture_path("whisper/whisper/input_features.npy"))),
            1e-4);
  // A processor of the other modality says so, naming itself.
  EXPECT_NE(error_of<NotSupportedError>([&] {
              whisper->images({"x.png"}, "p");
            }).find("WhisperFeatureExtractor"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>([&] { llava->audio("x.wav"); }).find("LlavaProcessor"),
            std::string::npos);
}

TEST(AutoProcessor, EveryRegisteredTypeResolves) {
  const std::vector<std::string> registered = AutoProcessor::registered();
  struct Case {
    std::string type, key, fixture, processor;
  };
  const std::vector<Case> cases{
      {"CLIPImageProcessor", "image_processor_type", "vlm/llava", "LlavaProcessor"},
      {"CLIPImageProcessorPil", "image_processor_type", "vlm/llava", "LlavaProcessor"},
      {"LlavaProcessor", "processor_class", "vlm/llava", "LlavaProcessor"},
      {"Qwen2VLImageProcessor", "image_processor_type", "vlm/qwen2_vl", "Qwen2VLProcessor"},
      {"Qwen2VLImageProcessorFast", "image_processor_type", "vlm/qwen2_vl", "Qwen2VLProcessor"},
      {"Qwen2VLImageProcessorPil", "image_processor_type", "vlm/qwen2_vl", "Qwen2VLProcessor"},
      {"Qwen2VLProcessor", "processor_class", "vlm/qwen2_vl", "Qwen2VLProcessor"},
      {"WhisperFeatureExtractor", "feature_extractor_type", "whisper/whisper",
       "WhisperFeatureExtractor"},
      {"WhisperProcessor", "processor_class", "whisper/whisper", "WhisperFeatureExtractor"},
  };
  std::vector<std::string> names;
  for (const Case& c : cases) names.push_back(c.type);
  EXPECT_EQ(registered, names);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    TempFolder tmp;
    // The fixture's settings with the type under the key it names.
    nlohmann::json pre = fixture_json(c.fixture + "/preprocessor_config.json");
    pre.erase("image_processor_type");
    pre.erase("feature_extractor_type");
    pre[c.key] = c.type;
    tmp.write("preprocessor_config.json", pre);
    if (c.fixture == "vlm/llava")
      tmp.write("processor_config.json", fixture_json("vlm/llava/processor_config.json"));
    EXPECT_EQ(AutoProcessor::from_folder(tmp.path.string())->type(), c.processor);
  }
}

TEST(AutoProcessor, ProcessorConfigAlone) {
  // LLaVA's settings in processor_config.json only: its processor_class, and the image
  // processor read from its "image_processor" object.
  TempFolder tmp;
  tmp.write("processor_config.json", fixture_json("vlm/llava/processor_config.json"));
  EXPECT_TRUE(AutoProcessor::has_config(tmp.path.string()));
  EXPECT_EQ(AutoProcessor::from_folder(tmp.path.string())->type(), "LlavaProcessor");
}

TEST(AutoProcessor, UnknownTypeNamesFileTypeAndRegistered) {
  TempFolder tmp;
  tmp.write("preprocessor_config.json", {{"image_processor_type", "SiglipImageProcessor"}});
  const std::string e =
      error_of<NotSupportedError>([&] { AutoProcessor::from_folder(tmp.path.string()); });
  EXPECT_NE(e.find((tmp.path / "preprocessor_config.json").string()), std::string::npos) << e;
  EXPECT_NE(e.find("SiglipImageProcessor"), std::string::npos) << e;
  for (const std::string& name : AutoProcessor::registered())
    EXPECT_NE(e.find(name), std::string::npos) << e;
  // No type at all.
  tmp.write("preprocessor_config.json", nlohmann::json::object());
  EXPECT_NE(error_of<NotSupportedError>([&] {
              AutoProcessor::from_folder(tmp.path.string());
            }).find("names no processor type"),
            std::string::npos);
  // Not JSON: the file is named.
  std::ofstream(tmp.path / "preprocessor_config.json") << "{ nope";
  EXPECT_NE(error_of<IoError>([&] {
              AutoProcessor::from_folder(tmp.path.string());
            }).find("preprocessor_config.json"),
            std::string::npos);
}

TEST(AutoProcessor, MissingFilesSayToPassPreprocessedInputs) {
  TempFolder tmp;
  EXPECT_FALSE(AutoProcessor::has_config(tmp.path.string()));
  const std::string e = error_of<IoError>([&] { AutoProcessor::from_folder(tmp.path.string()); });
  EXPECT_NE(e.find(tmp.path.string()), std::string::npos) << e;
  EXPECT_NE(e.find("preprocessor_config.json"), std::string::npos) << e;
  EXPECT_NE(e.find("--input"), std::string::npos) << e;
}

}  // namespace
}  // namespace ingot::media
