// Loading a model folder's chat template and rendering conversations with it.
#include "ingot/text/chat_template.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/text/chat/json.h"
#include "ingot/text/chat/text.h"

namespace ingot::text {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) INGOT_THROW(IoError, "[chat_template] cannot read '{}'", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json read_json(const fs::path& path) {
  try {
    return nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    INGOT_THROW(IoError, "[chat_template] '{}' is not valid JSON: {}", path.string(), e.what());
  }
}

// The template from a "chat_template" entry: a string, or [{"name", "template"}, ...].
std::string template_from_entry(const nlohmann::json& entry, const std::string& where) {
  if (entry.is_string()) return entry.get<std::string>();
  if (entry.is_array()) {
    std::string names;
    for (const auto& item : entry) {
      if (!item.is_object() || !item.contains("name") || !item.contains("template") ||
          !item["name"].is_string() || !item["template"].is_string()) {
        INGOT_THROW(IoError,
                    "[chat_template] {}: each entry of the list must be an object with string "
                    "'name' and 'template'",
                    where);
      }
      if (item["name"] == "default") return item["template"].get<std::string>();
      names += (names.empty() ? "" : ", ") + item["name"].get<std::string>();
    }
    INGOT_THROW(IoError, "[chat_template] {} has no template named 'default' (it has: {})", where,
                names);
  }
  INGOT_THROW(IoError, "[chat_template] {} must be a string or a list of {{name, template}}",
              where);
}

chat::DictData special_tokens_of(const nlohmann::json& config) {
  chat::DictData tokens;
  for (const char* name : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                           "cls_token", "mask_token"}) {
    if (!config.is_object() || !config.contains(name)) continue;
    const auto& v = config[name];
    if (v.is_string()) {
      tokens.set(chat::Value(name), chat::Value(v.get<std::string>()));
    } else if (v.is_object() && v.contains("content") && v["content"].is_string()) {
      tokens.set(chat::Value(name), chat::Value(v["content"].get<std::string>()));
    }
  }
  return tokens;
}

void check_utf8(const chat::Value& v, const std::string& where) {
  if (v.is_string()) {
    size_t bad = chat::find_invalid_utf8(v.as_string());
    if (bad != std::string::npos) {
      INGOT_THROW(ValueError, "[chat_template] {} is not valid UTF-8 (byte offset {})", where, bad);
    }
  } else if (v.is_list()) {
    for (size_t i = 0; i < v.as_list().items.size(); ++i) {
      check_utf8(v.as_list().items[i], fmt::format("{}[{}]", where, i));
    }
  } else if (v.is_dict()) {
    for (const auto& [k, x] : v.as_dict().items) {
      check_utf8(k, where + " key");
      check_utf8(x, fmt::format("{}[{}]", where, chat::to_repr(k)));
    }
  }
}

}  // namespace

bool ChatTemplate::folder_has_template(const std::string& folder) {
  fs::path dir(folder);
  if (fs::exists(dir / "chat_template.jinja") || fs::exists(dir / "chat_template.json"))
    return true;
  fs::path config = dir / "tokenizer_config.json";
  if (!fs::exists(config)) return false;
  try {
    nlohmann::json j = nlohmann::json::parse(read_file(config));
    return j.is_object() && j.contains("chat_template") && !j["chat_template"].is_null();
  } catch (const std::exception&) {
    return false;
  }
}

ChatTemplate ChatTemplate::from_folder(const std::string& folder) {
  fs::path dir(folder);
  fs::path config_path = dir / "tokenizer_config.json";
  nlohmann::json config =
      fs::exists(config_path) ? read_json(config_path) : nlohmann::json::object();
  chat::DictData tokens = special_tokens_of(config);
  fs::path jinja = dir / "chat_template.jinja";
  if (fs::exists(jinja)) return from_text(read_file(jinja), jinja.string(), std::move(tokens));
  fs::path json = dir / "chat_template.json";
  if (fs::exists(json)) {
    nlohmann::json j = read_json(json);
    if (!j.is_object() || !j.contains("chat_template")) {
      INGOT_THROW(IoError, "[chat_template] '{}' has no 'chat_template' entry", json.string());
    }
    std::string where = fmt::format("'{}' entry 'chat_template'", json.string());
    return from_text(template_from_entry(j["chat_template"], where),
                     json.string() + ":chat_template", std::move(tokens));
  }
  if (config.is_object() && config.contains("chat_template") &&
      !config["chat_template"].is_null()) {
    std::string where = fmt::format("'{}' entry 'chat_template'", config_path.string());
    return from_text(template_from_entry(config["chat_template"], where),
                     config_path.string() + ":chat_template", std::move(tokens));
  }
  INGOT_THROW(IoError,
              "[chat_template] '{}' has no chat template: there is no chat_template.jinja, no "
              "chat_template.json and no 'chat_template' entry in tokenizer_config.json. Use a "
              "plain prompt instead, or add the model's chat_template.jinja to the folder.",
              folder);
}

ChatTemplate ChatTemplate::from_text(std::string_view source, std::string origin,
                                     chat::DictData special_tokens) {
  return ChatTemplate(chat::Template::parse(source, std::move(origin)), std::move(special_tokens));
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                 bool add_generation_prompt, const chat::DictData& extra) const {
  std::vector<chat::Value> list;
  for (const ChatMessage& m : messages) {
    list.push_back(
        chat::Value::dict({{"role", chat::Value(m.role)}, {"content", chat::Value(m.content)}}));
  }
  return render_values(chat::Value::list(std::move(list)), add_generation_prompt, extra);
}

std::string ChatTemplate::render_values(const chat::Value& messages, bool add_generation_prompt,
                                        const chat::DictData& extra) const {
  if (!messages.is_list()) {
    INGOT_THROW(ValueError, "[chat_template] messages must be a list, not {}",
                messages.type_name());
  }
  check_utf8(messages, "messages");
  for (const auto& [k, v] : extra.items) check_utf8(v, "template variable " + chat::to_str(k));
  // What transformers passes: messages, tools, documents, add_generation_prompt, then the
  // special tokens and the caller's variables.
  chat::DictData variables;
  variables.set(chat::Value("messages"), messages);
  variables.set(chat::Value("tools"), chat::Value(chat::None{}));
  variables.set(chat::Value("documents"), chat::Value(chat::None{}));
  variables.set(chat::Value("add_generation_prompt"), chat::Value(add_generation_prompt));
  for (const auto& [k, v] : special_tokens_.items) variables.set(k, v);
  for (const auto& [k, v] : extra.items) variables.set(k, v);
  return template_.render(variables);
}

chat::Value ChatTemplate::messages_from_json(std::string_view text, const std::string& origin) {
  chat::Value v = chat::value_from_json(text, origin);
  if (!v.is_list()) {
    INGOT_THROW(IoError, "[chat_template] '{}' must hold a JSON list of messages, not {}", origin,
                v.type_name());
  }
  const auto& items = v.as_list().items;
  for (size_t i = 0; i < items.size(); ++i) {
    const chat::Value* role = items[i].is_dict() ? items[i].as_dict().find("role") : nullptr;
    if (!role || !role->is_string()) {
      INGOT_THROW(IoError,
                  "[chat_template] '{}': message {} must be an object with a string \"role\"",
                  origin, i);
    }
  }
  return v;
}

std::optional<std::string> ChatTemplate::special_token(std::string_view name) const {
  const chat::Value* v = special_tokens_.find(name);
  if (!v || !v->is_string()) return std::nullopt;
  return v->as_string();
}

}  // namespace ingot::text
