// Chat templates against jinja2: every model folder under tests/fixtures/chat_templates/
// (made by tools/reference/make_chat_template_fixtures.py from published templates) must
// render every conversation byte for byte as jinja2 did under transformers' settings, and
// raise where the template raises, with the template's message.
#include "ingot/text/chat_template.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/json.h"
#include "models/fixture_path.h"

namespace ingot::text {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using ojson = nlohmann::ordered_json;

ojson read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  return ojson::parse(f);
}

chat::Value to_value(const ojson& j) {
  return chat::value_from_json(j.dump(), "fixture");
}

class ChatTemplateConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(ChatTemplateConformance, RendersLikeJinja2) {
  const std::string name = GetParam();
  ChatTemplate tpl = ChatTemplate::from_folder(fixture_path("chat_templates/" + name));
  ojson conversations = read_json(fixture_path("chat_templates/conversations.json"));
  ojson expected = read_json(fixture_path("chat_templates/" + name + "/expected.json"));
  ASSERT_EQ(expected.size(), conversations.size() * 2);
  size_t rendered = 0, raised = 0;
  for (const ojson& c : expected) {
    ojson conversation;
    for (const ojson& k : conversations) {
      if (k["name"] == c["conversation"]) conversation = k;
    }
    ASSERT_FALSE(conversation.is_null()) << c["conversation"];
    chat::Value messages = to_value(conversation["messages"]);
    chat::DictData extra;
    if (conversation.contains("extra")) extra = to_value(conversation["extra"]).as_dict();
    const bool add_generation_prompt = c["add_generation_prompt"].get<bool>();
    SCOPED_TRACE(fmt::format("{} / {} / add_generation_prompt={}", name,
                             c["conversation"].get<std::string>(), add_generation_prompt));
    if (c.contains("output")) {
      EXPECT_EQ(tpl.render_values(messages, add_generation_prompt, extra),
                c["output"].get<std::string>());
      ++rendered;
      continue;
    }
    ASSERT_EQ(c["error"]["kind"], "raise_exception") << c.dump();
    try {
      tpl.render_values(messages, add_generation_prompt, extra);
      ADD_FAILURE() << "expected raise_exception: " << c["error"]["message"];
    } catch (const chat::TemplateRaised& e) {
      EXPECT_EQ(e.template_message(), c["error"]["message"].get<std::string>());
      EXPECT_NE(std::string(e.what()).find(tpl.origin()), std::string::npos) << e.what();
      ++raised;
    }
  }
  EXPECT_GT(rendered, 0u);
  RecordProperty("rendered", static_cast<int>(rendered));
  RecordProperty("raised", static_cast<int>(raised));
}

INSTANTIATE_TEST_SUITE_P(Models, ChatTemplateConformance,
                         ::testing::Values("llama3_1", "qwen2_5", "qwen3", "qwen3_early",
                                           "mistral_v0_3", "mistral_nemo", "gemma2", "gemma3",
                                           "phi3", "phi3_5", "smollm2"));

TEST(ChatTemplate, ChatMessagesRenderLikeValues) {
  ChatTemplate tpl = ChatTemplate::from_folder(fixture_path("chat_templates/smollm2"));
  std::vector<ChatMessage> messages = {{"system", "Be brief."}, {"user", "Hi"}};
  std::string text = tpl.render(messages, true);
  EXPECT_EQ(text,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  chat::Value as_values = ChatTemplate::messages_from_json(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])",
      "m.json");
  EXPECT_EQ(tpl.render_values(as_values, true), text);
}

TEST(ChatTemplate, SpecialTokensFromTokenizerConfig) {
  // gemma2's bos_token is an {"content": ...} object in its tokenizer_config.json.
  ChatTemplate gemma = ChatTemplate::from_folder(fixture_path("chat_templates/gemma2"));
  EXPECT_EQ(gemma.special_token("bos_token"), "<bos>");
  EXPECT_EQ(gemma.special_token("eos_token"), "<eos>");
  ChatTemplate qwen = ChatTemplate::from_folder(fixture_path("chat_templates/qwen3"));
  EXPECT_EQ(qwen.special_token("bos_token"), std::nullopt);
  EXPECT_EQ(qwen.special_token("eos_token"), "<|im_end|>");
}

TEST(ChatTemplate, ExtraVariablesOverride) {
  ChatTemplate tpl = ChatTemplate::from_folder(fixture_path("chat_templates/qwen3"));
  chat::DictData extra;
  extra.set(chat::Value("enable_thinking"), chat::Value(false));
  std::string text = tpl.render({ChatMessage{"user", "Hi"}}, true, extra);
  EXPECT_EQ(text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fmt::format("ingot-chat-{}-{}", ::getpid(), counter()++);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ChatTemplate, MissingTemplateNamesTheFolder) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  EXPECT_FALSE(ChatTemplate::folder_has_template(dir.path.string()));
  std::string message = error_of([&] { ChatTemplate::from_folder(dir.path.string()); });
  EXPECT_NE(message.find(dir.path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("chat_template.jinja"), std::string::npos) << message;
  EXPECT_THROW(ChatTemplate::from_folder(dir.path.string()), IoError);
}

TEST(ChatTemplate, TemplateSourcesInOrder) {
  TempDir dir;
  dir.write("tokenizer_config.json", R"({"chat_template": "from config", "bos_token": "<s>"})");
  EXPECT_TRUE(ChatTemplate::folder_has_template(dir.path.string()));
  EXPECT_EQ(ChatTemplate::from_folder(dir.path.string()).render(std::vector<ChatMessage>{}, false),
            "from config");
  dir.write("chat_template.json", R"({"chat_template": "from json {{ bos_token }}"})");
  EXPECT_EQ(ChatTemplate::from_folder(dir.path.string()).render(std::vector<ChatMessage>{}, false),
            "from json <s>");
  dir.write("chat_template.jinja", "from jinja {{ bos_token }}\n");
  EXPECT_EQ(ChatTemplate::from_folder(dir.path.string()).render(std::vector<ChatMessage>{}, false),
            "from jinja <s>");
}

TEST(ChatTemplate, NamedTemplatesNeedADefault) {
  TempDir dir;
  dir.write(
      "tokenizer_config.json",
      R"({"chat_template": [{"name": "tool_use", "template": "t"}, {"name": "rag", "template": "r"}]})");
  std::string message = error_of([&] { ChatTemplate::from_folder(dir.path.string()); });
  EXPECT_NE(message.find("no template named 'default'"), std::string::npos) << message;
  EXPECT_NE(message.find("tool_use, rag"), std::string::npos) << message;
}

TEST(ChatTemplate, SyntaxErrorNamesFileAndLine) {
  TempDir dir;
  dir.write("chat_template.jinja",
            "{% for m in messages %}\n{{ m.content | frobnicate }}\n{% endfor %}");
  std::string message = error_of([&] { ChatTemplate::from_folder(dir.path.string()); });
  EXPECT_NE(message.find("chat_template.jinja' line 2: no filter named 'frobnicate'"),
            std::string::npos)
      << message;
}

TEST(ChatTemplate, RejectsBadMessages) {
  ChatTemplate tpl = ChatTemplate::from_text("{{ messages[0].content }}", "inline");
  EXPECT_THROW(tpl.render({ChatMessage{"user", "bad \xff byte"}}, false), ValueError);
  EXPECT_THROW(ChatTemplate::messages_from_json("{\"role\": \"user\"}", "m.json"), IoError);
  EXPECT_THROW(ChatTemplate::messages_from_json("[{\"content\": \"x\"}]", "m.json"), IoError);
  EXPECT_THROW(ChatTemplate::messages_from_json("[{", "m.json"), IoError);
}

}  // namespace
}  // namespace ingot::text
