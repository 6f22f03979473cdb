// An instruct model used as one: `ingot generate --chat` on the instruct_chatml fixture
// (a tiny Qwen2 chat model trained by tools/reference/make_instruct_fixture.py) renders
// Qwen 2.5's chat template, encodes its <|im_start|> / <|im_end|> special tokens, takes
// eos_token_id [<|im_end|>, <|endoftext|>] from generation_config.json (config.json names
// only <|endoftext|>) and stops at <|im_end|> with transformers' greedy ids; so does the
// directory `ingot export --task generation` writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;
using cli_testing::captured;

class InstructChat : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream f(model + "/reference.json");
    ASSERT_TRUE(f.good()) << model;
    reference = nlohmann::json::parse(f);
    tmp = fs::temp_directory_path() / ("ingot_instruct_" + std::to_string(::getpid()));
    fs::create_directories(tmp);
  }
  void TearDown() override { fs::remove_all(tmp); }

  // The prompt options of a reference case: --chat [--system], or --messages FILE.json.
  std::vector<std::string> prompt_args(const nlohmann::json& c) {
    if (!c.contains("chat")) {
      const fs::path file = tmp / (c["name"].get<std::string>() + ".json");
      std::ofstream(file) << c["messages"].dump();
      return {"--messages", file.string()};
    }
    std::vector<std::string> args{"--chat", c["chat"]};
    if (c.contains("system")) args.insert(args.end(), {"--system", c["system"]});
    return args;
  }

  // `ingot generate source <prompt of c> --max-new-tokens 32 --json [extra]` as JSON.
  nlohmann::json generate(const std::string& source, const nlohmann::json& c,
                          std::vector<std::string> extra = {}) {
    std::vector<std::string> args{source};
    for (std::string& a : prompt_args(c)) args.push_back(std::move(a));
    args.insert(args.end(), {"--max-new-tokens", std::to_string(max_new_tokens()), "--json"});
    args.insert(args.end(), extra.begin(), extra.end());
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    return nlohmann::json::parse(out);
  }

  int64_t max_new_tokens() const { return reference["max_new_tokens"]; }

  const std::string model = testing::fixture_path("models/instruct_chatml");
  nlohmann::json reference;
  fs::path tmp;
};

TEST_F(InstructChat, StopsAtImEndWithTransformersGreedyIds) {
  const int64_t im_end = reference["im_end_id"];
  ASSERT_EQ(reference["cases"].size(), 3u);  // --chat, --chat --system, --messages
  for (const nlohmann::json& c : reference["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    nlohmann::json j = generate(model, c);
    EXPECT_EQ(j["prompt_ids"], c["prompt_ids"]);  // apply_chat_template, then the tokenizer
    EXPECT_EQ(j["generated_ids"], c["generated_ids"]);
    EXPECT_EQ(j["text"], c["text"]);  // the answer, <|im_end|> skipped
    EXPECT_EQ(j["stop_reason"], "stop_token");
    ASSERT_FALSE(j["generated_ids"].empty());
    EXPECT_EQ(j["generated_ids"].back(), im_end);
    EXPECT_LT(j["new_tokens"].get<int64_t>(), max_new_tokens());
    EXPECT_EQ(j["new_tokens"], j["generated_ids"].size());
  }
}

TEST_F(InstructChat, IgnoreEosRunsToMaxNewTokens) {
  const nlohmann::json& c = reference["cases"][0];
  nlohmann::json j = generate(model, c, {"--ignore-eos"});
  EXPECT_EQ(j["generated_ids"], c["ignore_eos_ids"]);  // through <|im_end|> and beyond
  EXPECT_EQ(j["stop_reason"], "max_new_tokens");
  EXPECT_EQ(j["new_tokens"], max_new_tokens());
}

TEST_F(InstructChat, EosComesFromGenerationConfig) {
  // Without generation_config.json the eos ids are config.json's, as in transformers:
  // <|endoftext|> only, which the answers never contain, so nothing stops at <|im_end|>.
  const fs::path copy = tmp / "no_generation_config";
  fs::create_directories(copy);
  for (const auto& entry : fs::directory_iterator(model)) {
    if (entry.path().filename() != "generation_config.json")
      fs::copy_file(entry.path(), copy / entry.path().filename());
  }
  const nlohmann::json& c = reference["cases"][0];
  nlohmann::json j = generate(copy.string(), c);
  EXPECT_EQ(j["generated_ids"], c["ignore_eos_ids"]);
  EXPECT_EQ(j["stop_reason"], "max_new_tokens");
}

TEST_F(InstructChat, ExportedDirectoryCarriesTemplateAndEos) {
  const std::string dir = (tmp / "gen").string();
  ASSERT_EQ(call(run_export, {model, "--task", "generation", "-o", dir}), 0);
  for (const char* f : {"chat_template.jinja", "generation_config.json", "tokenizer.json"})
    EXPECT_TRUE(fs::exists(fs::path(dir) / f)) << f;
  for (const nlohmann::json& c : reference["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    nlohmann::json j = generate(dir, c);
    EXPECT_EQ(j["prompt_ids"], c["prompt_ids"]);
    EXPECT_EQ(j["generated_ids"], c["generated_ids"]);
    EXPECT_EQ(j["stop_reason"], "stop_token");
  }
  nlohmann::json j = generate(dir, reference["cases"][0], {"--ignore-eos"});
  EXPECT_EQ(j["generated_ids"], reference["cases"][0]["ignore_eos_ids"]);
}

TEST_F(InstructChat, ExportedDirectoryCarriesChatTemplateJson) {
  // A folder whose template is in chat_template.json (as transformers 4 processors save
  // it) instead of chat_template.jinja: the generation directory keeps it.
  const fs::path folder = tmp / "template_json";
  fs::create_directories(folder);
  for (const auto& entry : fs::directory_iterator(model)) {
    if (entry.path().filename() != "chat_template.jinja")
      fs::copy_file(entry.path(), folder / entry.path().filename());
  }
  std::ifstream jinja(model + "/chat_template.jinja");
  const std::string text{std::istreambuf_iterator<char>(jinja), {}};
  std::ofstream(folder / "chat_template.json") << nlohmann::json{{"chat_template", text}}.dump();
  const std::string dir = (tmp / "gen_json").string();
  ASSERT_EQ(call(run_export, {folder.string(), "--task", "generation", "-o", dir}), 0);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "chat_template.json"));
  const nlohmann::json& c = reference["cases"][1];
  nlohmann::json j = generate(dir, c);
  EXPECT_EQ(j["prompt_ids"], c["prompt_ids"]);
  EXPECT_EQ(j["generated_ids"], c["generated_ids"]);
}

// --chat prints the answer, not the rendered template with its special tokens before it.
TEST_F(InstructChat, ChatPrintsTheAnswerNotTheTemplate) {
  const nlohmann::json& c = reference["cases"][0];
  std::vector<std::string> args{model};
  for (std::string& a : prompt_args(c)) args.push_back(std::move(a));
  args.insert(args.end(), {"--max-new-tokens", std::to_string(max_new_tokens())});
  auto [rc, out] = captured(run_generate, args);
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(out.find("<|im_start|>"), std::string::npos) << out;
  EXPECT_EQ(out.rfind(c["text"].get<std::string>(), 0), 0u) << out;  // the answer comes first
}

}  // namespace
}  // namespace ingot::cli
