#include "ingot/models/encdec/whisper_generation.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Whisper's languages: English names (and the aliases transformers accepts) -> the
// language codes of its <|code|> tokens.
const std::map<std::string, std::string>& language_codes() {
  static const std::map<std::string, std::string> codes = {
      {"afrikaans", "af"},   {"albanian", "sq"},   {"amharic", "am"},
      {"arabic", "ar"},      {"armenian", "hy"},   {"assamese", "as"},
      {"azerbaijani", "az"}, {"bashkir", "ba"},    {"basque", "eu"},
      {"belarusian", "be"},  {"bengali", "bn"},    {"bosnian", "bs"},
      {"breton", "br"},      {"bulgarian", "bg"},  {"burmese", "my"},
      {"cantonese", "yue"},  {"castilian", "es"},  {"catalan", "ca"},
      {"chinese", "zh"},     {"croatian", "hr"},   {"czech", "cs"},
      {"danish", "da"},      {"dutch", "nl"},      {"english", "en"},
      {"estonian", "et"},    {"faroese", "fo"},    {"finnish", "fi"},
      {"flemish", "nl"},     {"french", "fr"},     {"galician", "gl"},
      {"georgian", "ka"},    {"german", "de"},     {"greek", "el"},
      {"gujarati", "gu"},    {"haitian", "ht"},    {"haitian creole", "ht"},
      {"hausa", "ha"},       {"hawaiian", "haw"},  {"hebrew", "he"},
      {"hindi", "hi"},       {"hungarian", "hu"},  {"icelandic", "is"},
      {"indonesian", "id"},  {"italian", "it"},    {"japanese", "ja"},
      {"javanese", "jw"},    {"kannada", "kn"},    {"kazakh", "kk"},
      {"khmer", "km"},       {"korean", "ko"},     {"lao", "lo"},
      {"latin", "la"},       {"latvian", "lv"},    {"letzeburgesch", "lb"},
      {"lingala", "ln"},     {"lithuanian", "lt"}, {"luxembourgish", "lb"},
      {"macedonian", "mk"},  {"malagasy", "mg"},   {"malay", "ms"},
      {"malayalam", "ml"},   {"maltese", "mt"},    {"mandarin", "zh"},
      {"maori", "mi"},       {"marathi", "mr"},    {"moldavian", "ro"},
      {"moldovan", "ro"},    {"mongolian", "mn"},  {"myanmar", "my"},
      {"nepali", "ne"},      {"norwegian", "no"},  {"nynorsk", "nn"},
      {"occitan", "oc"},     {"panjabi", "pa"},    {"pashto", "ps"},
      {"persian", "fa"},     {"polish", "pl"},     {"portuguese", "pt"},
      {"punjabi", "pa"},     {"pushto", "ps"},     {"romanian", "ro"},
      {"russian", "ru"},     {"sanskrit", "sa"},   {"serbian", "sr"},
      {"shona", "sn"},       {"sindhi", "sd"},     {"sinhala", "si"},
      {"sinhalese", "si"},   {"slovak", "sk"},     {"slovenian", "sl"},
      {"somali", "so"},      {"spanish", "es"},    {"sundanese", "su"},
      {"swahili", "sw"},     {"swedish", "sv"},    {"tagalog", "tl"},
      {"tajik", "tg"},       {"tamil", "ta"},      {"tatar", "tt"},
      {"telugu", "te"},      {"thai", "th"},       {"tibetan", "bo"},
      {"turkish", "tr"},     {"turkmen", "tk"},    {"ukrainian", "uk"},
      {"urdu", "ur"},        {"uzbek", "uz"},      {"valencian", "ca"},
      {"vietnamese", "vi"},  {"welsh", "cy"},      {"yiddish", "yi"},
      {"yoruba", "yo"},
  };
  return codes;
}

std::vector<int64_t> int_list(const json& j, const char* key, const std::string& origin) {
  std::vector<int64_t> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  INGOT_CHECK(j[key].is_array(), ValueError,
              "[whisper generation] '{}': \"{}\" must be a list of ids", origin, key);
  for (const json& v : j[key]) {
    INGOT_CHECK(v.is_number_integer(), ValueError,
                "[whisper generation] '{}': \"{}\" must hold integers", origin, key);
    out.push_back(v.get<int64_t>());
  }
  return out;
}

std::map<std::string, int64_t> id_map(const json& j, const char* key, const std::string& origin) {
  std::map<std::string, int64_t> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  INGOT_CHECK(j[key].is_object(), ValueError,
              "[whisper generation] '{}': \"{}\" must be an object of ids", origin, key);
  for (auto it = j[key].begin(); it != j[key].end(); ++it) {
    INGOT_CHECK(it.value().is_number_integer(), ValueError,
                "[whisper generation] '{}': \"{}\".\"{}\" must be an integer", origin, key,
                it.key());
    out[it.key()] = it.value().get<int64_t>();
  }
  return out;
}

std::optional<std::string> opt_string(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  INGOT_CHECK(j[key].is_string(), ValueError, "[whisper generation] '{}': \"{}\" must be a string",
              origin, key);
  return j[key].get<std::string>();
}

}  // namespace

WhisperGenerationConfig WhisperGenerationConfig::from_json_text(const std::string& text,
                                                                const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[whisper generation] '{}' is not valid JSON: {}", origin, e.what());
  }
  INGOT_CHECK(j.is_object(), IoError, "[whisper generation] '{}' is not a JSON object", origin);
  WhisperGenerationConfig g;
  try {
    if (j.contains("decoder_start_token_id") && !j["decoder_start_token_id"].is_null())
      g.decoder_start_token_id = j["decoder_start_token_id"].get<int64_t>();
    g.language = opt_string(j, "language", origin);
    g.task = opt_string(j, "task", origin);
    g.lang_to_id = id_map(j, "lang_to_id", origin);
    g.task_to_id = id_map(j, "task_to_id", origin);
    if (j.contains("no_timestamps_token_id") && !j["no_timestamps_token_id"].is_null())
      g.no_timestamps_token_id = j["no_timestamps_token_id"].get<int64_t>();
    g.return_timestamps = j.value("return_timestamps", false);
    if (j.contains("forced_decoder_ids") && j["forced_decoder_ids"].is_array()) {
      for (const json& p : j["forced_decoder_ids"]) {
        INGOT_CHECK(p.is_array() && p.size() == 2 && p[0].is_number_integer(), ValueError,
                    "[whisper generation] '{}': forced_decoder_ids entries must be [position, id]",
                    origin);
        // A null id (the language left to detection) is -1.
        g.forced_decoder_ids.emplace_back(p[0].get<int64_t>(),
                                          p[1].is_null() ? -1 : p[1].get<int64_t>());
      }
    }
    g.suppress_tokens = int_list(j, "suppress_tokens", origin);
    g.begin_suppress_tokens = int_list(j, "begin_suppress_tokens", origin);
    if (j.contains("eos_token_id") && j["eos_token_id"].is_number_integer())
      g.eos_token_ids = {j["eos_token_id"].get<int64_t>()};
    else
      g.eos_token_ids = int_list(j, "eos_token_id", origin);
    if (j.contains("max_length") && j["max_length"].is_number_integer())
      g.max_length = j["max_length"].get<int64_t>();
    if (j.contains("max_new_tokens") && j["max_new_tokens"].is_number_integer())
      g.max_new_tokens = j["max_new_tokens"].get<int64_t>();
  } catch (const json::exception& e) {
    INGOT_THROW(ValueError, "[whisper generation] '{}': {}", origin, e.what());
  }
  return g;
}

WhisperGenerationConfig WhisperGenerationConfig::from_folder(const std::string& folder) {
  fs::path p = fs::path(folder) / "generation_config.json";
  if (!fs::exists(p)) p = fs::path(folder) / "config.json";
  std::ifstream f(p);
  INGOT_CHECK(f.good(), IoError,
              "[whisper generation] '{}' has neither generation_config.json nor config.json",
              folder);
  std::stringstream text;
  text << f.rdbuf();
  return from_json_text(text.str(), p.string());
}

int64_t WhisperGenerationConfig::language_id(const std::string& language) const {
  std::string l = language;
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char ch) { return char(std::tolower(ch)); });
  std::string token;
  if (lang_to_id.contains(l)) {
    token = l;
  } else if (language_codes().contains(l)) {
    token = "<|" + language_codes().at(l) + "|>";
  } else {
    const bool code = std::any_of(language_codes().begin(), language_codes().end(),
                                  [&](const auto& kv) { return kv.second == l; });
    INGOT_CHECK(code, ValueError,
                "[whisper generation] unsupported language '{}': give a Whisper language code "
                "(\"en\"), its name (\"english\") or its token (\"<|en|>\")",
                language);
    token = "<|" + l + "|>";
  }
  auto it = lang_to_id.find(token);
  INGOT_CHECK(it != lang_to_id.end(), ValueError,
              "[whisper generation] language '{}' ({}) is not in this model's "
              "generation_config.json lang_to_id",
              language, token);
  return it->second;
}

bool WhisperGenerationConfig::needs_language_detection() const {
  if (language || lang_to_id.empty()) return false;
  // forced_decoder_ids (used without language and task) may name the language.
  if (!task) {
    for (const auto& [pos, id] : forced_decoder_ids)
      if (pos == 1 && id >= 0) return false;
  }
  return true;
}

std::vector<int64_t> WhisperGenerationConfig::decoder_prompt(
    const std::function<Tensor()>& first_logits) const {
  std::vector<int64_t> p = {decoder_start_token_id};
  if (!language && !task) {
    // Older checkpoints: forced_decoder_ids [[1, lang], [2, task], [3, notimestamps]].
    int64_t i = 1;
    for (const auto& [pos, id] : forced_decoder_ids) {
      INGOT_CHECK(pos == i, ValueError,
                  "[whisper generation] forced_decoder_ids {} do not follow Whisper's prompt "
                  "pattern (positions 1, 2, ... in order)",
                  pos);
      p.push_back(id);
      ++i;
    }
  }
  const bool lang_undefined = p.size() <= 1 || p[1] < 0;
  std::optional<int64_t> lang;
  if (language) {
    lang = language_id(*language);
  } else if (!lang_to_id.empty() && lang_undefined) {
    INGOT_CHECK(first_logits != nullptr, ValueError,
                "[whisper generation] the language must be detected from the audio (no "
                "\"language\" in generation_config.json); set one, e.g. --language en");
    Tensor logits = contiguous(to(first_logits(), DType::F32));
    const float* v = logits.data<float>();
    int64_t best = -1;
    for (const auto& [token, id] : lang_to_id) {
      INGOT_CHECK(id >= 0 && id < logits.numel(), ValueError,
                  "[whisper generation] lang_to_id '{}' = {} is outside the vocabulary", token, id);
      if (best < 0 || v[id] > v[best] || (v[id] == v[best] && id < best)) best = id;
    }
    lang = best;
  }
  if (lang) {
    if (p.size() > 1)
      p[1] = *lang;
    else
      p.push_back(*lang);
  }
  auto is_task = [&](int64_t id) {
    return std::any_of(task_to_id.begin(), task_to_id.end(),
                       [&](const auto& kv) { return kv.second == id; });
  };
  if (task) {
    auto it = task_to_id.find(*task);
    INGOT_CHECK(it != task_to_id.end(), ValueError,
                "[whisper generation] task '{}' is not in generation_config.json task_to_id "
                "(transcribe, translate)",
                *task);
    p.push_back(it->second);  // appended, as transformers 5.23 does
  } else if (language && task_to_id.contains("transcribe")) {
    if (std::none_of(p.begin(), p.end(), is_task)) p.push_back(task_to_id.at("transcribe"));
  }
  if (!return_timestamps && no_timestamps_token_id && p.back() != *no_timestamps_token_id) {
    p.push_back(*no_timestamps_token_id);
  } else if (return_timestamps && no_timestamps_token_id && p.back() == *no_timestamps_token_id) {
    p.pop_back();
  }
  for (int64_t id : p)
    INGOT_CHECK(id >= 0, ValueError,
                "[whisper generation] the decoder prompt has an undefined token");
  return p;
}

void WhisperGenerationConfig::suppress(Tensor& logits, int64_t generated) const {
  INGOT_CHECK(logits.dtype() == DType::F32 && logits.is_contiguous(), ValueError,
              "[whisper generation] suppress needs contiguous float32 logits");
  float* v = logits.data<float>();
  const int64_t n = logits.numel();
  auto mask = [&](const std::vector<int64_t>& ids) {
    for (int64_t id : ids)
      if (id >= 0 && id < n) v[id] = -std::numeric_limits<float>::infinity();
  };
  mask(suppress_tokens);
  if (generated == 0) mask(begin_suppress_tokens);
}

}  // namespace ingot::models
