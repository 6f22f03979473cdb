// The generation_config.json reader against what transformers reads from the same folders
// (tests/fixtures/generation_config/expected.json, by
// tools/reference/make_generation_config_fixtures.py), and its errors on bad files.
#include "ingot/models/generation_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixture_path.h"
#include "ingot/core/error.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  return json::parse(f);
}

// A field as transformers' expected.json writes it (null when unset).
template <class T>
json shown(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json as_json(const GenerationConfig& c) {
  json eos = nullptr;
  if (c.eos_token_ids)
    eos = c.eos_token_ids->size() == 1 ? json((*c.eos_token_ids)[0]) : json(*c.eos_token_ids);
  return {{"eos_token_id", eos},
          {"bos_token_id", shown(c.bos_token_id)},
          {"pad_token_id", shown(c.pad_token_id)},
          {"do_sample", shown(c.do_sample)},
          {"temperature", shown(c.temperature)},
          {"top_k", shown(c.top_k)},
          {"top_p", shown(c.top_p)},
          {"min_p", shown(c.min_p)},
          {"repetition_penalty", shown(c.repetition_penalty)},
          {"max_new_tokens", shown(c.max_new_tokens)},
          {"max_length", shown(c.max_length)}};
}

TEST(GenerationConfig, MatchesTransformersOnEveryFolder) {
  json expected = read_json(fixture_path("generation_config/expected.json"))["folders"];
  ASSERT_GE(expected.size(), 15u);
  for (const auto& [folder, fields] : expected.items()) {
    GenerationConfig c = GenerationConfig::from_folder(fixture_path("../../" + folder));
    // transformers writes one eos id as an int, several as a list; ingot always has a list.
    json want = fields;
    if (want["eos_token_id"].is_array() && want["eos_token_id"].size() == 1)
      want["eos_token_id"] = want["eos_token_id"][0];
    EXPECT_EQ(as_json(c), want) << folder;
  }
}

class GenerationConfigFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ingot_generation_config_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // The message of the error `f` throws as E (fails when it throws nothing or another type).
  template <class E, class F>
  static std::string error_of(F f) {
    try {
      f();
    } catch (const E& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an exception";
    return {};
  }
  fs::path dir_;
};

TEST_F(GenerationConfigFiles, AbsentFilesLeaveEverythingUnset) {
  GenerationConfig c = GenerationConfig::from_folder(dir_.string());
  EXPECT_EQ(as_json(c), as_json(GenerationConfig{}));
  EXPECT_FALSE(c.eos_token_ids);
  EXPECT_FALSE(c.new_token_limit(10));
}

TEST_F(GenerationConfigFiles, ReadsEveryField) {
  std::string path = write("generation_config.json", R"({
    "eos_token_id": [3, 4], "bos_token_id": 1, "pad_token_id": 0, "do_sample": true,
    "temperature": 1, "top_k": 20, "top_p": 0.9, "min_p": 0.1, "repetition_penalty": 1.1,
    "max_new_tokens": 100, "max_length": 50, "num_beams": 1, "transformers_version": "5.0"})");
  GenerationConfig c = GenerationConfig::from_file(path);
  EXPECT_EQ(*c.eos_token_ids, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(*c.bos_token_id, 1);
  EXPECT_EQ(*c.pad_token_id, 0);
  EXPECT_TRUE(*c.do_sample);
  EXPECT_EQ(*c.temperature, 1.0);  // an integer where a number is expected is fine
  EXPECT_EQ(*c.top_k, 20);
  EXPECT_EQ(*c.top_p, 0.9);
  EXPECT_EQ(*c.min_p, 0.1);
  EXPECT_EQ(*c.repetition_penalty, 1.1);
  EXPECT_EQ(c.new_token_limit(10), 100);  // max_new_tokens wins over max_length
  c.max_new_tokens.reset();
  EXPECT_EQ(c.new_token_limit(10), 40);
  EXPECT_EQ(c.new_token_limit(60), 0);
  EXPECT_THROW(c.new_token_limit(-1), ValueError);
}

TEST_F(GenerationConfigFiles, WrongTypesNameTheFileAndTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"temperature": "hot"})", "key 'temperature' should be a number, got \"hot\""},
      {R"({"eos_token_id": [2, "x"]})", "key 'eos_token_id' should be an integer or a list"},
      {R"({"eos_token_id": 2.5})", "key 'eos_token_id' should be an integer or a list"},
      {R"({"do_sample": 1})", "key 'do_sample' should be true or false, got 1"},
      {R"({"top_k": 5.5})", "key 'top_k' should be an integer, got 5.5"},
      {R"({"max_new_tokens": [1]})", "key 'max_new_tokens' should be an integer"},
  };
  for (auto [text, message] : cases) {
    std::string path = write("generation_config.json", text);
    std::string what = error_of<ValueError>([&] { GenerationConfig::from_folder(dir_.string()); });
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(message), std::string::npos) << what;
  }
}

TEST_F(GenerationConfigFiles, MalformedJsonIsAnIoErrorNamingTheFile) {
  for (const char* text : {"{\"eos_token_id\": ", "[1, 2]", "", "\"text\""}) {
    std::string path = write("generation_config.json", text);
    std::string what = error_of<IoError>([&] { GenerationConfig::from_file(path); });
    EXPECT_NE(what.find(path), std::string::npos) << what;
  }
  std::string what =
      error_of<IoError>([&] { GenerationConfig::from_file((dir_ / "missing.json").string()); });
  EXPECT_NE(what.find("missing.json"), std::string::npos) << what;
}

// config.json's keys are read only when generation_config.json is absent; an error there
// names config.json (and the sub-config).
TEST_F(GenerationConfigFiles, ModelConfigFallback) {
  std::string config =
      write("config.json", R"({"eos_token_id": 7, "text_config": {"bos_token_id": "x"}})");
  std::string what = error_of<ValueError>([&] { GenerationConfig::from_folder(dir_.string()); });
  EXPECT_NE(what.find(config), std::string::npos) << what;
  EXPECT_NE(what.find("(text_config): key 'bos_token_id'"), std::string::npos) << what;

  write("config.json",
        R"({"eos_token_id": 7, "text_config": {"eos_token_id": 9, "bos_token_id": 3}})");
  GenerationConfig c = GenerationConfig::from_folder(dir_.string());
  EXPECT_EQ(*c.eos_token_ids, std::vector<int64_t>{7});
  EXPECT_EQ(*c.bos_token_id, 3);

  write("generation_config.json", R"({"max_new_tokens": 5})");
  c = GenerationConfig::from_folder(dir_.string());
  EXPECT_FALSE(c.eos_token_ids) << "config.json is not read when generation_config.json exists";
  EXPECT_EQ(*c.max_new_tokens, 5);
}

}  // namespace
}  // namespace ingot::models
