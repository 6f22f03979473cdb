// GenerationManifest: the typed, versioned generation contract. A manifest round-trips
// through JSON unchanged; one of another version, or with a field of the wrong type, is
// refused with an error naming the file, the field and what to do.
#include "ingot/generation/manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"

namespace ingot::generation {
namespace {

namespace fs = std::filesystem;

GenerationManifest text_manifest() {
  GenerationManifest m;
  m.architecture = "LlamaForCausalLM";
  m.max_cache_len = 64;
  m.multi_token_decode = true;
  m.components["decode"] = {"decode.ingot",
                            {{{"input_ids", InputRole::kInputIds},
                              {"key_cache.0", InputRole::kKeyCache, 0},
                              {"value_cache.0", InputRole::kValueCache, 0},
                              {"cache_position", InputRole::kCachePosition}}}};
  return m;
}

std::string what_of(const nlohmann::json& j) {
  try {
    GenerationManifest::from_json(j, "DIR/manifest.json");
  } catch (const IoError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no IoError for " << j.dump();
  return "";
}

TEST(GenerationManifest, RoundTripsThroughJson) {
  GenerationManifest m = text_manifest();
  m.encoder_decoder = EncoderDecoderPipeline{"input_features", {50258, 50259}, {}};
  m.encoder_decoder->steps.push_back({"encoder", "", "", {"input_features"}, {"h"}});
  const GenerationManifest back = GenerationManifest::from_json(m.to_json(), "m");
  EXPECT_EQ(back.to_json(), m.to_json());
  EXPECT_EQ(back.kind(), PipelineKind::kEncoderDecoder);
  const StepLayout& layout = back.layout("decode");
  ASSERT_EQ(layout.inputs.size(), 4u);
  EXPECT_EQ(layout.inputs[1].role, InputRole::kKeyCache);
  EXPECT_EQ(layout.inputs[1].layer, 0);
  EXPECT_EQ(layout.find(InputRole::kCachePosition), 3u);
  EXPECT_FALSE(layout.has(InputRole::kRopeDeltas));
  EXPECT_EQ(back.encoder_decoder->decoder_prompt, (std::vector<int64_t>{50258, 50259}));
}

TEST(GenerationManifest, EveryRoleHasOneSpelling) {
  for (int r = 0; r <= int(InputRole::kHiddenStates); ++r) {
    const InputRole role = InputRole(r);
    EXPECT_NE(role_name(role), "unknown") << r;
    EXPECT_EQ(role_from_name(role_name(role)), role) << role_name(role);
  }
  EXPECT_FALSE(role_from_name("logits").has_value());
}

TEST(GenerationManifest, AnotherVersionIsAClearError) {
  nlohmann::json j = text_manifest().to_json();
  j["version"] = 1;
  std::string what = what_of(j);
  EXPECT_NE(what.find("version 1"), std::string::npos) << what;
  EXPECT_NE(what.find("re-export"), std::string::npos) << what;
  EXPECT_NE(what.find("DIR/manifest.json"), std::string::npos) << what;
  j["version"] = kManifestVersion + 1;
  what = what_of(j);
  EXPECT_NE(what.find("newer ingot"), std::string::npos) << what;
  j.erase("version");
  EXPECT_NE(what_of(j).find("\"version\""), std::string::npos);
}

TEST(GenerationManifest, MalformedFieldsNameTheField) {
  nlohmann::json j = text_manifest().to_json();
  j["format"] = "something-else";
  EXPECT_NE(what_of(j).find("not an ingot generation manifest"), std::string::npos);

  j = text_manifest().to_json();
  j["components"]["decode"] = "../outside/decode.ingot";
  EXPECT_NE(what_of(j).find("components.decode"), std::string::npos);

  j = text_manifest().to_json();
  j["inputs"]["decode"][1]["role"] = "kv_thing";
  const std::string what = what_of(j);
  EXPECT_NE(what.find("inputs.decode[1].role"), std::string::npos) << what;
  EXPECT_NE(what.find("kv_thing"), std::string::npos) << what;

  j = text_manifest().to_json();
  j["inputs"].erase("decode");
  EXPECT_NE(what_of(j).find("inputs.decode is missing"), std::string::npos);

  j = text_manifest().to_json();
  j["max_cache_len"] = "64";
  EXPECT_NE(what_of(j).find("\"max_cache_len\" must be an integer"), std::string::npos);

  j = text_manifest().to_json();
  j["pipeline"] = {{"kind", "vision-language"}, {"image_token_id", 3}};
  EXPECT_NE(what_of(j).find("pipeline.image_input is missing"), std::string::npos);
}

TEST(GenerationManifest, ReadsAndWritesADirectory) {
  const fs::path dir = fs::temp_directory_path() / ("ingot_manifest_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_FALSE(is_generation_directory(dir.string()));
  EXPECT_THROW(GenerationManifest::read(dir.string()), IoError);
  text_manifest().write(dir.string());
  EXPECT_TRUE(is_generation_directory(dir.string()));
  EXPECT_EQ(GenerationManifest::read(dir.string()).to_json(), text_manifest().to_json());
  std::ofstream(dir / kManifestFile) << "{not json";
  EXPECT_THROW(GenerationManifest::read(dir.string()), IoError);
  fs::remove_all(dir);
}

TEST(GenerationManifest, UnknownComponentNamesTheOnesThereAre) {
  try {
    text_manifest().layout("prefill");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("components: decode"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::generation
