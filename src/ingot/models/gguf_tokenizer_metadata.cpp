#include "ingot/models/gguf_tokenizer_metadata.h"

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/formats/gguf_writer.h"
#include "ingot/models/gguf_tokenizer.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// llama.cpp's token types (llama_token_type).
enum TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4,
                           kUnused = 5, kByte = 6 };

std::optional<json> read_json(const fs::path& path) {
  std::ifstream f(path);
  if (!f.good()) return std::nullopt;
  json j = json::parse(f, nullptr, false);
  INGOT_CHECK(!j.is_discarded(), IoError, "[gguf] '{}' is not valid JSON", path.string());
  return j;
}

// The "type" of a tokenizer component, "" for null.
std::string type_of(const json& j) {
  return j.is_object() ? j.value("type", "") : "";
}

// A token named in tokenizer_config.json: a string or an AddedToken {"content": ...}.
std::optional<std::string> token_text(const json& config, const char* key) {
  if (!config.contains(key)) return std::nullopt;
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}

// The pre-tokenizer's steps (a Sequence's, or the one step), as JSON objects.
std::vector<json> steps(const json& pre, const char* list_key) {
  if (!pre.is_object()) return {};
  if (type_of(pre) == "Sequence") return pre[list_key].get<std::vector<json>>();
  return {pre};
}

// tokenizer.ggml.pre for a byte-level tokenizer's pre-tokenizer; NotSupportedError naming
// it when llama.cpp has no pre-tokenizer that splits the same way.
std::string byte_level_pre(const json& pre, const std::string& origin) {
  const std::vector<json> s = steps(pre, "pretokenizers");
  auto is = [&](size_t i, const char* type) { return s.size() > i && type_of(s[i]) == type; };
  if (s.size() == 1 && is(0, "ByteLevel") && s[0].value("use_regex", true)) return "gpt-2";
  if (s.size() == 2 && is(0, "Digits") && s[0].value("individual_digits", false) &&
      is(1, "ByteLevel") && s[1].value("use_regex", true))
    return "smollm";
  if (s.size() == 2 && is(0, "Split") && is(1, "ByteLevel") && !s[1].value("use_regex", true) &&
      s[0].value("behavior", "") == "Isolated" && !s[0].value("invert", false) &&
      s[0].contains("pattern") && s[0]["pattern"].contains("Regex")) {
    const std::string regex = s[0]["pattern"]["Regex"].get<std::string>();
    if (auto name = gguf_pre_for_split(regex)) return *name;
    INGOT_THROW(NotSupportedError,
                "[gguf] {}: the pre-tokenizer's Split regex '{}' is none llama.cpp names "
                "(tokenizer.ggml.pre); ingot writes gpt-2, smollm, llama-bpe, qwen2, qwen35, "
                "tekken and gpt-4o",
                origin, regex);
  }
  INGOT_THROW(NotSupportedError,
              "[gguf] {}: pre-tokenizer {} is not one llama.cpp runs (ingot writes ByteLevel, "
              "Digits + ByteLevel, Split + ByteLevel)",
              origin, pre.dump());
}

// The post-processor's TemplateProcessing (alone or in a Sequence), or null.
json template_processing(const json& post) {
  for (const json& p : steps(post, "processors")) {
    if (type_of(p) == "TemplateProcessing") return p;
  }
  return nullptr;
}

}  // namespace

std::vector<std::pair<std::string, formats::GgufValue>> gguf_tokenizer_metadata(
    const std::string& folder, int64_t vocab_size) {
  const fs::path dir(folder);
  const std::string origin = "'" + (dir / "tokenizer.json").string() + "'";
  const std::optional<json> tok = read_json(dir / "tokenizer.json");
  INGOT_CHECK(tok.has_value(), NotSupportedError,
              "[gguf] '{}' has no tokenizer.json: a GGUF carries the tokenizer llama.cpp runs",
              folder);
  const json config = read_json(dir / "tokenizer_config.json").value_or(json::object());
  const json model_config = read_json(dir / "config.json").value_or(json::object());
  const json& model = (*tok)["model"];
  INGOT_CHECK(type_of(model) == "BPE", NotSupportedError,
              "[gguf] {}: a {} tokenizer; ingot writes BPE tokenizers (byte-level or "
              "SentencePiece-style) to a GGUF",
              origin, model.value("type", "?"));
  const bool byte_fallback = model.value("byte_fallback", false);
  const json pre = tok->value("pre_tokenizer", json(nullptr));
  const json norm = tok->value("normalizer", json(nullptr));
  bool byte_level = false;
  for (const json& s : steps(pre, "pretokenizers")) byte_level |= type_of(s) == "ByteLevel";
  INGOT_CHECK(byte_level != byte_fallback, NotSupportedError,
              "[gguf] {}: a BPE tokenizer with neither a ByteLevel pre-tokenizer nor "
              "byte_fallback (or both) has no llama.cpp tokenizer model",
              origin);

  std::vector<std::pair<std::string, formats::GgufValue>> out;
  auto set = [&](const std::string& k, formats::GgufValue v) { out.emplace_back(k, std::move(v)); };
  if (byte_level) {
    // llama.cpp does not normalise; NFC leaves the texts it is judged on unchanged.
    INGOT_CHECK(norm.is_null() || type_of(norm) == "NFC", NotSupportedError,
                "[gguf] {}: normalizer {} is not one llama.cpp runs", origin, norm.dump());
    set("tokenizer.ggml.model", formats::gguf_string("gpt2"));
    set("tokenizer.ggml.pre", formats::gguf_string(byte_level_pre(pre, origin)));
  } else {
    // SentencePiece's prefix space: a Metaspace pre-tokenizer, or transformers' older
    // Prepend("▁") + Replace(" ", "▁") normalizer; llama.cpp's llama tokenizer does both.
    const std::vector<json> n = steps(norm, "normalizers");
    const bool metaspace = type_of(pre) == "Metaspace" && norm.is_null();
    const bool prepend = pre.is_null() && n.size() == 2 && type_of(n[0]) == "Prepend" &&
                         type_of(n[1]) == "Replace";
    INGOT_CHECK(metaspace || prepend, NotSupportedError,
                "[gguf] {}: a byte-fallback tokenizer with pre-tokenizer {} and normalizer {} is "
                "not SentencePiece's (Metaspace, or Prepend + Replace)",
                origin, pre.dump(), norm.dump());
    set("tokenizer.ggml.model", formats::gguf_string("llama"));
    set("tokenizer.ggml.pre", formats::gguf_string("default"));
  }

  // Tokens by id: the vocabulary, the added tokens, [PADn] up to vocab_size.
  std::map<int64_t, std::string> by_id;
  for (const auto& [text, id] : model["vocab"].items()) by_id[id.get<int64_t>()] = text;
  std::map<int64_t, int32_t> added_type;
  for (const json& a : tok->value("added_tokens", json::array())) {
    const int64_t id = a["id"].get<int64_t>();
    by_id[id] = a["content"].get<std::string>();
    added_type[id] = a.value("special", false) ? kControl : kUserDefined;
  }
  const int64_t n_tokens = by_id.empty() ? 0 : by_id.rbegin()->first + 1;
  INGOT_CHECK(n_tokens <= vocab_size, ValueError,
              "[gguf] {}: {} tokens but the model's embedding has {} rows", origin, n_tokens,
              vocab_size);
  std::vector<std::string> tokens(static_cast<size_t>(vocab_size));
  std::vector<int32_t> types(size_t(vocab_size), kNormal);
  std::map<std::string, int64_t> id_of;
  for (int64_t i = 0; i < vocab_size; ++i) {
    auto it = by_id.find(i);
    if (it == by_id.end()) {
      tokens[size_t(i)] = "[PAD" + std::to_string(i) + "]";
      types[size_t(i)] = kUnused;
      continue;
    }
    tokens[size_t(i)] = it->second;
    id_of.emplace(it->second, i);
    if (auto a = added_type.find(i); a != added_type.end()) {
      types[size_t(i)] = a->second;
    } else if (byte_fallback && it->second.size() == 6 && it->second.starts_with("<0x") &&
               it->second.back() == '>') {
      types[size_t(i)] = kByte;
    }
  }

  // Merges ("a b"), in rank order; tokenizers writes them as strings or as pairs.
  std::vector<std::string> merges;
  std::vector<float> scores(size_t(vocab_size), 0.0f);
  for (const json& m : model.value("merges", json::array())) {
    std::string merged;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      merges.push_back(s);
      merged = s.substr(0, s.find(' ')) + s.substr(s.find(' ') + 1);
    } else {
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
      merged = m[0].get<std::string>() + m[1].get<std::string>();
    }
    // SentencePiece merges the highest-scoring pair first: minus the merge's rank.
    if (auto it = id_of.find(merged); it != id_of.end() && scores[size_t(it->second)] == 0.0f)
      scores[size_t(it->second)] = -float(merges.size());
  }
  // A normal multi-character token no merge makes: merged last (SentencePiece would not
  // reach it through a merge either).
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (types[i] == kNormal && scores[i] == 0.0f && tokens[i].size() > 1 &&
        !(tokens[i].size() <= 4 && (uint8_t(tokens[i][0]) & 0xC0) == 0xC0 &&
          tokens[i].size() == size_t(std::countl_one(uint8_t(tokens[i][0])))))
      scores[i] = -float(merges.size() + 1);
  }
  set("tokenizer.ggml.tokens", formats::gguf_string_array(tokens));
  if (!byte_level) set("tokenizer.ggml.scores", formats::gguf_f32_array(scores));
  set("tokenizer.ggml.token_type", formats::gguf_i32_array(types));
  set("tokenizer.ggml.merges", formats::gguf_string_array(merges));

  // Special tokens: tokenizer_config.json's, else config.json's ids, else the template's.
  const json tp = template_processing(tok->value("post_processor", json(nullptr)));
  auto template_special = [&](bool first) -> std::optional<std::string> {
    if (tp.is_null() || !tp.contains("single") || tp["single"].empty()) return std::nullopt;
    const json& s = first ? tp["single"].front() : tp["single"].back();
    if (!s.contains("SpecialToken")) return std::nullopt;
    return s["SpecialToken"]["id"].get<std::string>();
  };
  auto id_key = [&](const char* token_key, const char* config_id_key,
                    std::optional<std::string> fallback, const char* gguf_key) {
    std::optional<std::string> text = token_text(config, token_key);
    std::optional<int64_t> id;
    if (text && id_of.contains(*text)) id = id_of.at(*text);
    if (!id && model_config.contains(config_id_key)) {
      const json& v = model_config[config_id_key];
      if (v.is_number_integer()) id = v.get<int64_t>();
      if (v.is_array() && !v.empty() && v[0].is_number_integer()) id = v[0].get<int64_t>();
    }
    if (!id && fallback && id_of.contains(*fallback)) id = id_of.at(*fallback);
    if (id && *id >= 0 && *id < vocab_size) set(gguf_key, formats::gguf_u32(uint32_t(*id)));
  };
  id_key("bos_token", "bos_token_id", template_special(true), "tokenizer.ggml.bos_token_id");
  id_key("eos_token", "eos_token_id", std::nullopt, "tokenizer.ggml.eos_token_id");
  id_key("unk_token", "unk_token_id", model.value("unk_token", json(nullptr)).is_string()
                                          ? std::optional<std::string>(model["unk_token"])
                                          : std::nullopt,
         "tokenizer.ggml.unknown_token_id");
  id_key("pad_token", "pad_token_id", std::nullopt, "tokenizer.ggml.padding_token_id");
  const bool add_bos = config.contains("add_bos_token") && config["add_bos_token"].is_boolean()
                           ? config["add_bos_token"].get<bool>()
                           : template_special(true).has_value();
  const bool add_eos = config.contains("add_eos_token") && config["add_eos_token"].is_boolean()
                           ? config["add_eos_token"].get<bool>()
                           : (template_special(false).has_value() &&
                              !(tp["single"].size() == 1 && add_bos));
  set("tokenizer.ggml.add_bos_token", formats::gguf_bool(add_bos));
  set("tokenizer.ggml.add_eos_token", formats::gguf_bool(add_eos));

  // The chat template: tokenizer_config.json's (a string, or the "default" of a list of
  // named ones), else chat_template.jinja.
  std::optional<std::string> chat;
  if (config.contains("chat_template")) {
    const json& c = config["chat_template"];
    if (c.is_string()) chat = c.get<std::string>();
    if (c.is_array()) {
      for (const json& t : c) {
        if (t.value("name", "") == "default") chat = t.value("template", "");
      }
    }
  }
  if (!chat) {
    std::ifstream f(dir / "chat_template.jinja");
    if (f.good()) {
      std::stringstream s;
      s << f.rdbuf();
      chat = s.str();
    }
  }
  if (chat) set("tokenizer.chat_template", formats::gguf_string(*chat));
  return out;
}

}  // namespace ingot::models
