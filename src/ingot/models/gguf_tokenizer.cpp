#include "ingot/models/gguf_tokenizer.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "ingot/core/error.h"

namespace ingot::models {
namespace {

using formats::GgufFile;
using nlohmann::json;

constexpr int64_t kControl = 3;      // llama.cpp's LLAMA_TOKEN_TYPE_CONTROL
constexpr int64_t kUserDefined = 4;  // LLAMA_TOKEN_TYPE_USER_DEFINED

// The Split regexes transformers uses for `tokenizer.ggml.pre` names (others: ByteLevel's
// own GPT-2 regex).
const char* kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen35Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kTekkenSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kGpt4oSplit =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const char* split_regex(const std::string& pre) {
  static const std::map<std::string, const char*> m = {
      {"llama3", kLlama3Split},       {"llama-v3", kLlama3Split},
      {"llama-bpe", kLlama3Split},    {"falcon3", kLlama3Split},
      {"falcon-h1", kLlama3Split},    {"pixtral", kLlama3Split},
      {"midm-2.0", kLlama3Split},     {"lfm2", kLlama3Split},
      {"jina-v5-nano", kLlama3Split}, {"dbrx", kLlama3Split},
      {"smaug-bpe", kLlama3Split},    {"tekken", kTekkenSplit},
      {"qwen2", kQwen2Split},         {"deepseek-r1-qwen", kQwen2Split},
      {"kormo", kQwen2Split},         {"f2llmv2", kQwen2Split},
      {"megrez", kQwen2Split},        {"qwen35", kQwen35Split},
      {"gpt-4o", kGpt4oSplit},        {"llama4", kGpt4oSplit},
      {"kanana2", kGpt4oSplit},       {"talkie", kGpt4oSplit},
      {"minimax-m2", kGpt4oSplit},
  };
  auto it = m.find(pre);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace

std::optional<std::string> gguf_pre_for_split(const std::string& regex) {
  // The names llama.cpp's converter writes for these pre-tokenizers, in the table above.
  for (const char* name : {"llama-bpe", "qwen2", "qwen35", "tekken", "gpt-4o"}) {
    if (regex == split_regex(name)) return std::string(name);
  }
  return std::nullopt;
}

namespace {

// UTF-8 encoding of code point `cp`.
std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

// The byte offsets where each code point of `s` starts (a byte that is not valid UTF-8
// counts as one code point), with s.size() appended.
std::vector<size_t> code_point_starts(const std::string& s) {
  std::vector<size_t> out;
  size_t i = 0;
  while (i < s.size()) {
    out.push_back(i);
    const auto c = uint8_t(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    for (size_t k = 1; k < n; ++k) {
      if ((uint8_t(s[i + k]) & 0xC0) != 0x80) {
        n = 1;
        break;
      }
    }
    i += n;
  }
  out.push_back(s.size());
  return out;
}

// GPT-2's bytes_to_unicode: byte -> the UTF-8 of the code point that spells it.
const std::vector<std::string>& byte_alphabet() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[b] = utf8(printable ? b : next++);
    }
    return t;
  }();
  return table;
}

// A token written in GPT-2's byte alphabet: as is when every character already belongs
// to it, else each UTF-8 byte respelled (transformers' byte_level_tokenizer).
std::string byte_level_spelling(const std::string& token) {
  static const std::set<std::string> alphabet(byte_alphabet().begin(), byte_alphabet().end());
  const std::vector<size_t> starts = code_point_starts(token);
  bool in_alphabet = true;
  for (size_t i = 0; i + 1 < starts.size() && in_alphabet; ++i)
    in_alphabet = alphabet.contains(token.substr(starts[i], starts[i + 1] - starts[i]));
  if (in_alphabet) return token;
  std::string out;
  for (unsigned char c : token) out += byte_alphabet()[c];
  return out;
}

bool in_byte_alphabet(const std::string& token) {
  return byte_level_spelling(token) == token;
}

// Gemma files store a token of spaces as spaces ("  "); transformers' GemmaTokenizer looks
// it up as "▁▁": a token holding a space and only whitespace becomes that many "▁".
std::string gemma_spelling(const std::string& token) {
  if (token.find(' ') == std::string::npos) return token;
  for (char c : token) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return token;
  }
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) out += "\u2581";
  return out;
}

// An insertion-ordered dict with Python's semantics: a repeated key keeps its first
// position and takes the last value.
template <typename V>
struct OrderedDict {
  std::vector<std::string> keys;
  std::unordered_map<std::string, V> values;
  void set(const std::string& k, V v) {
    if (!values.contains(k)) keys.push_back(k);
    values[k] = v;
  }
};

// transformers' generate_merges(vocab, vocab_scores): every split of a token into two
// vocabulary pieces, ordered by the token's score (highest first), then by the pieces'
// lengths (longest first), ties in vocabulary order.
std::vector<std::pair<std::string, std::string>> merges_from_scores(
    const OrderedDict<int64_t>& vocab, const OrderedDict<double>& scores) {
  struct Merge {
    std::string l, r;
    double score;
    size_t len_l, len_r;  // in code points
  };
  std::vector<Merge> merges;
  for (const std::string& token : scores.keys) {
    const double score = scores.values.at(token);
    const std::vector<size_t> starts = code_point_starts(token);
    std::vector<Merge> local;
    for (size_t i = 1; i + 1 < starts.size(); ++i) {
      std::string l = token.substr(0, starts[i]), r = token.substr(starts[i]);
      if (vocab.values.contains(l) && vocab.values.contains(r))
        local.push_back({std::move(l), std::move(r), score, i, starts.size() - 1 - i});
    }
    std::stable_sort(local.begin(), local.end(), [&](const Merge& a, const Merge& b) {
      const int64_t al = vocab.values.at(a.l), bl = vocab.values.at(b.l);
      return al != bl ? al < bl : vocab.values.at(a.r) < vocab.values.at(b.r);
    });
    for (Merge& m : local) merges.push_back(std::move(m));
  }
  // sorted(..., key=(score, len_l, len_r), reverse=True) keeps ties in order.
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.len_l != b.len_l) return a.len_l > b.len_l;
    return a.len_r > b.len_r;
  });
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (Merge& m : merges) out.emplace_back(std::move(m.l), std::move(m.r));
  return out;
}

std::vector<std::pair<std::string, std::string>> merges_from_file(const GgufFile& f) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& m : f.get_string_array("tokenizer.ggml.merges")) {
    const size_t space = m.find(' ');
    INGOT_CHECK(space != std::string::npos, IoError,
                "[gguf] '{}': key 'tokenizer.ggml.merges' holds '{}', not two tokens separated "
                "by a space",
                f.path(), m);
    out.emplace_back(m.substr(0, space), m.substr(space + 1));
  }
  return out;
}

struct Special {
  std::optional<std::string> bos, eos, unk, pad;
};

Special special_tokens(const GgufFile& f, const std::vector<std::string>& tokens) {
  auto token = [&](const char* key) -> std::optional<std::string> {
    auto id = f.get_optional_int(key);
    if (!id) return std::nullopt;
    INGOT_CHECK(*id >= 0 && *id < int64_t(tokens.size()), IoError,
                "[gguf] '{}': key '{}' is {}, outside the {}-token vocabulary", f.path(), key, *id,
                tokens.size());
    return tokens[size_t(*id)];
  };
  return {token("tokenizer.ggml.bos_token_id"), token("tokenizer.ggml.eos_token_id"),
          token("tokenizer.ggml.unknown_token_id"), token("tokenizer.ggml.padding_token_id")};
}

std::string tokenizer_model(const GgufFile& f) {
  const std::string model = f.get_string("tokenizer.ggml.model");
  INGOT_CHECK(model == "gpt2" || model == "llama", NotSupportedError,
              "[gguf] '{}': tokenizer model '{}' (key 'tokenizer.ggml.model') is not supported "
              "(supported: gpt2, llama)",
              f.path(), model);
  return model;
}

bool add_bos(const GgufFile& f, const std::string& model) {
  return f.get_optional_bool("tokenizer.ggml.add_bos_token").value_or(model == "llama");
}

// A special token of the post-processor: its text and id.
using SpecialId = std::optional<std::pair<std::string, int64_t>>;

json template_processing(const SpecialId& bos_id, const SpecialId& eos_id) {
  const std::optional<std::string> bos =
      bos_id ? std::optional<std::string>(bos_id->first) : std::nullopt;
  const std::optional<std::string> eos =
      eos_id ? std::optional<std::string>(eos_id->first) : std::nullopt;
  json single = json::array(), pair = json::array(), specials = json::object();
  auto special = [&](const std::string& t, int type_id) {
    return json{{"SpecialToken", {{"id", t}, {"type_id", type_id}}}};
  };
  auto sequence = [](const char* id, int type_id) {
    return json{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
  };
  if (bos) single.push_back(special(*bos, 0)), pair.push_back(special(*bos, 0));
  single.push_back(sequence("A", 0));
  pair.push_back(sequence("A", 0));
  if (eos) single.push_back(special(*eos, 0)), pair.push_back(special(*eos, 0));
  if (bos) pair.push_back(special(*bos, 1));
  pair.push_back(sequence("B", 1));
  if (eos) pair.push_back(special(*eos, 1));
  for (const SpecialId& t : {bos_id, eos_id}) {
    if (t) specials[t->first] = {{"id", t->first}, {"ids", {t->second}}, {"tokens", {t->first}}};
  }
  return {{"type", "TemplateProcessing"},
          {"single", single},
          {"pair", pair},
          {"special_tokens", specials}};
}

}  // namespace

std::string gguf_tokenizer_json(const GgufFile& f) {
  const std::string model = tokenizer_model(f);
  const bool byte_level = model == "gpt2";
  const std::string arch = f.get_optional_string("general.architecture").value_or("");
  const bool gemma = !byte_level && (arch == "gemma" || arch == "gemma2" || arch == "gemma3");
  std::vector<std::string> tokens = f.get_string_array("tokenizer.ggml.tokens");
  std::vector<double> types;
  if (f.has("tokenizer.ggml.token_type")) types = f.get_number_array("tokenizer.ggml.token_type");
  INGOT_CHECK(types.empty() || types.size() == tokens.size(), IoError,
              "[gguf] '{}': key 'tokenizer.ggml.token_type' has {} entries for {} tokens", f.path(),
              types.size(), tokens.size());
  const Special sp = special_tokens(f, tokens);

  // The vocabulary's spelling of each token.
  std::vector<std::string> spelled = tokens;
  for (std::string& t : spelled)
    t = byte_level ? byte_level_spelling(t) : gemma ? gemma_spelling(t) : t;
  OrderedDict<int64_t> vocab;
  for (size_t i = 0; i < tokens.size(); ++i) vocab.set(spelled[i], int64_t(i));
  std::vector<std::pair<std::string, std::string>> merges;
  if (f.has("tokenizer.ggml.merges")) {
    merges = merges_from_file(f);
  } else {
    INGOT_CHECK(!byte_level, IoError, "[gguf] '{}': a gpt2 tokenizer needs 'tokenizer.ggml.merges'",
                f.path());
    const std::vector<double> scores = f.get_number_array("tokenizer.ggml.scores");
    INGOT_CHECK(scores.size() == tokens.size(), IoError,
                "[gguf] '{}': key 'tokenizer.ggml.scores' has {} entries for {} tokens", f.path(),
                scores.size(), tokens.size());
    // Gemma's scores do not follow its merge order, the file's token order does.
    OrderedDict<double> by_score;
    for (size_t i = 0; i < tokens.size(); ++i)
      by_score.set(spelled[i], gemma ? -double(i) : scores[i]);
    merges = merges_from_scores(vocab, by_score);
  }

  // Added tokens: the class's special tokens (bos/eos/unk/pad, and the defaults the
  // tokenizer class declares when the vocabulary has them), control tokens, then
  // user-defined ones. A control token outside the byte alphabet of a byte-level
  // vocabulary is a llama.cpp mislabel transformers skips.
  std::map<int64_t, json> added;
  std::set<std::string> added_contents;
  int64_t next_id = int64_t(tokens.size());  // where tokens the vocabulary lacks go
  auto add = [&](const std::string& content, bool special, bool append_if_absent = false) {
    auto it = vocab.values.find(content);
    if (added_contents.contains(content)) return;
    if (it == vocab.values.end() && !append_if_absent) return;
    const int64_t id = it == vocab.values.end() ? next_id++ : it->second;
    added_contents.insert(content);
    added[id] = {{"id", id},          {"content", content}, {"single_word", false},
                 {"lstrip", false},   {"rstrip", false},    {"normalized", false},
                 {"special", special}};
  };
  // The tokenizer class's own special tokens (bos, eos, unk, pad, mask order), appended
  // after the vocabulary when it lacks them, as transformers' classes do.
  const std::vector<std::string> defaults =
      byte_level ? std::vector<std::string>{"<|endoftext|>"}
      : gemma    ? std::vector<std::string>{"<bos>", "<eos>", "<unk>", "<pad>", "<mask>"}
                 : std::vector<std::string>{"<s>", "</s>", "<unk>"};
  for (const std::string& t : defaults) add(t, true, true);
  for (const auto& t : {sp.bos, sp.eos, sp.unk, sp.pad}) {
    if (t) add(byte_level ? byte_level_spelling(*t) : *t, true);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == double(kControl) && (!byte_level || in_byte_alphabet(tokens[i])))
      add(tokens[i], true);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == double(kUserDefined)) add(tokens[i], false);
  }

  json t;
  t["version"] = "1.0";
  t["truncation"] = nullptr;
  t["padding"] = nullptr;
  t["added_tokens"] = json::array();
  for (auto& [id, a] : added) t["added_tokens"].push_back(a);
  t["normalizer"] = nullptr;
  const bool bos = add_bos(f, model);
  const bool eos = f.get_optional_bool("tokenizer.ggml.add_eos_token").value_or(false);
  auto special_id = [&](const std::optional<std::string>& token, const char* key) -> SpecialId {
    if (!token) return std::nullopt;
    return std::make_pair(*token, *f.get_optional_int(key));
  };
  t["post_processor"] =
      template_processing(bos ? special_id(sp.bos, "tokenizer.ggml.bos_token_id") : std::nullopt,
                          eos ? special_id(sp.eos, "tokenizer.ggml.eos_token_id") : std::nullopt);
  json bpe = {
      {"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"ignore_merges", false}};
  if (byte_level) {
    const json byte_level_pre = {{"type", "ByteLevel"},
                                 {"add_prefix_space", false},
                                 {"trim_offsets", true},
                                 {"use_regex", true}};
    const char* split = split_regex(f.get_optional_string("tokenizer.ggml.pre").value_or(""));
    if (split) {
      json bl = byte_level_pre;
      bl["use_regex"] = false;
      t["pre_tokenizer"] = {{"type", "Sequence"},
                            {"pretokenizers",
                             {{{"type", "Split"},
                               {"pattern", {{"Regex", split}}},
                               {"behavior", "Isolated"},
                               {"invert", false}},
                              bl}}};
    } else {
      t["pre_tokenizer"] = byte_level_pre;
    }
    t["decoder"] = {{"type", "ByteLevel"},
                    {"add_prefix_space", true},
                    {"trim_offsets", true},
                    {"use_regex", true}};
    bpe["continuing_subword_prefix"] = "";
    bpe["end_of_word_suffix"] = "";
    bpe["fuse_unk"] = false;
    bpe["byte_fallback"] = false;
  } else {
    if (gemma) {
      // transformers' GemmaTokenizer: spaces become "▁" in a normalizer, words split after
      // each space, no prefix space, no Strip in the decoder, "<unk>" as the BPE's unknown.
      t["normalizer"] = {
          {"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}};
      t["pre_tokenizer"] = {{"type", "Split"},
                            {"pattern", {{"String", " "}}},
                            {"behavior", "MergedWithPrevious"},
                            {"invert", false}};
    } else if (arch == "phi3") {
      // transformers' phi3_tokenizer: the prefix space from a normalizer, no Metaspace.
      t["normalizer"] = {
          {"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", "\u2581"}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}};
      t["pre_tokenizer"] = nullptr;
    } else {
      t["pre_tokenizer"] = {{"type", "Metaspace"},
                            {"replacement", "\u2581"},
                            {"prepend_scheme", "first"},
                            {"split", false}};
    }
    json decoders = {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                     {{"type", "ByteFallback"}},
                     {{"type", "Fuse"}}};
    if (!gemma)
      decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
    t["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
    if (gemma) bpe["unk_token"] = "<unk>";
    bpe["continuing_subword_prefix"] = nullptr;
    bpe["end_of_word_suffix"] = nullptr;
    bpe["fuse_unk"] = true;
    bpe["byte_fallback"] = true;
  }
  json v = json::object();
  for (const std::string& k : vocab.keys) v[k] = vocab.values.at(k);
  bpe["vocab"] = std::move(v);
  json m = json::array();
  for (auto& [l, r] : merges) m.push_back({l, r});
  bpe["merges"] = std::move(m);
  t["model"] = std::move(bpe);
  return t.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string gguf_tokenizer_config_json(const GgufFile& f) {
  const std::string model = tokenizer_model(f);
  const std::vector<std::string> tokens = f.get_string_array("tokenizer.ggml.tokens");
  const Special sp = special_tokens(f, tokens);
  json c;
  c["bos_token"] = sp.bos ? json(*sp.bos) : json(nullptr);
  c["eos_token"] = sp.eos ? json(*sp.eos) : json(nullptr);
  c["unk_token"] = sp.unk ? json(*sp.unk) : json(nullptr);
  c["pad_token"] = sp.pad ? json(*sp.pad) : json(nullptr);
  c["add_bos_token"] = add_bos(f, model);
  c["add_eos_token"] = f.get_optional_bool("tokenizer.ggml.add_eos_token").value_or(false);
  if (auto t = f.get_optional_string("tokenizer.chat_template")) c["chat_template"] = *t;
  return c.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace ingot::models
