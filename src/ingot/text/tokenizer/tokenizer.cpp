// The tokenizer pipeline (encode / decode) and the reading of tokenizer.json.
#include "ingot/text/tokenizer.h"

#include <fstream>
#include <sstream>
#include <unordered_set>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/added_tokens.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text {

using namespace tokenizer;

struct Tokenizer::Impl {
  std::string origin;
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<Model> model;
  std::unique_ptr<PostProcessor> post_processor;
  std::unique_ptr<Decoder> decoder;
  AddedVocabulary added;

  void encode_text(std::string_view text, bool at_origin, std::vector<int64_t>& ids) const;
  std::string decode(std::span<const int64_t> ids, bool skip_special_tokens, bool continued) const;
};

namespace {

std::vector<AddedToken> read_added_tokens(const JsonNode& list) {
  std::vector<AddedToken> tokens;
  for (size_t i = 0; i < list.array_size(); ++i) {
    JsonNode t = list.at(i);
    AddedToken token;
    token.content = t.string("content");
    token.single_word = t.boolean("single_word", false);
    token.lstrip = t.boolean("lstrip", false);
    token.rstrip = t.boolean("rstrip", false);
    token.special = t.boolean("special", false);
    token.normalized = t.boolean("normalized", !token.special);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Tokenizer Tokenizer::from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    INGOT_THROW(IoError, "[tokenizer] '{}' is not valid JSON: {}", origin, e.what());
  }
  auto impl = std::make_unique<Impl>();
  impl->origin = origin;
  JsonNode root(document, "", impl->origin);
  if (!document.is_object()) root.fail("should be a JSON object (a tokenizer.json)");
  if (auto version = root.find("version")) {
    if (version->get_string() != "1.0") version->fail("should be \"1.0\"");
  }
  if (auto n = root.find("normalizer")) impl->normalizer = make_normalizer(*n);
  if (auto p = root.find("pre_tokenizer")) impl->pre_tokenizer = make_pre_tokenizer(*p);
  impl->model = make_model(root.at("model"));
  if (auto p = root.find("post_processor")) impl->post_processor = make_post_processor(*p);
  if (auto d = root.find("decoder")) impl->decoder = make_decoder(*d);
  if (auto list = root.find("added_tokens")) {
    impl->added.add(read_added_tokens(*list), *impl->model, impl->normalizer.get());
  }
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INGOT_CHECK(f.good(), IoError, "[tokenizer] cannot read '{}'", path);
  std::stringstream ss;
  ss << f.rdbuf();
  INGOT_CHECK(!f.bad(), IoError, "[tokenizer] error while reading '{}'", path);
  return from_json_text(ss.str(), path);
}

Tokenizer Tokenizer::from_folder(const std::string& folder) {
  std::string path = folder + "/tokenizer.json";
  std::ifstream probe(path);
  INGOT_CHECK(probe.good(), IoError,
              "[tokenizer] '{}' has no tokenizer.json: ingot reads the fast-tokenizer file that "
              "Hugging Face model folders ship (convert a slow tokenizer with transformers' "
              "save_pretrained to get one)",
              folder);
  return from_file(path);
}

// Normalizes one stretch of raw text between added tokens and encodes it.
void Tokenizer::Impl::encode_text(std::string_view text, bool at_origin,
                                  std::vector<int64_t>& ids) const {
  std::string normalized(text);
  if (normalizer) normalizer->normalize(normalized);
  if (normalized.empty()) return;
  std::vector<Segment> segments;
  added.split(normalized, /*normalized_tokens=*/true, segments);
  std::vector<Piece> pieces;
  for (const Segment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    if (s.end == s.start) continue;
    pieces.clear();
    pieces.push_back({normalized.substr(s.start, s.end - s.start), at_origin && s.start == 0});
    if (pre_tokenizer) pre_tokenizer->pre_tokenize(pieces);
    for (const Piece& p : pieces) {
      if (!p.text.empty()) model->tokenize(p.text, ids);
    }
  }
}

std::vector<int64_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  size_t bad = find_invalid_utf8(text);
  INGOT_CHECK(bad == std::string_view::npos, ValueError,
              "[tokenizer.encode] the text is not valid UTF-8 (byte {} of {}: 0x{:02X})", bad,
              text.size(), bad < text.size() ? static_cast<unsigned char>(text[bad]) : 0);
  std::vector<int64_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::vector<Segment> segments;
  impl_->added.split(text, /*normalized_tokens=*/false, segments);
  for (const Segment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
    } else if (s.end > s.start) {
      impl_->encode_text(text.substr(s.start, s.end - s.start), s.start == 0, ids);
    }
  }
  if (impl_->post_processor) impl_->post_processor->process(ids, add_special_tokens);
  return ids;
}

std::string Tokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
  return impl_->decode(ids, skip_special_tokens, /*continued=*/false);
}

std::string Tokenizer::decode_continued(std::span<const int64_t> ids,
                                        bool skip_special_tokens) const {
  return impl_->decode(ids, skip_special_tokens, /*continued=*/true);
}

bool Tokenizer::decode_looks_ahead() const {
  return impl_->decoder && impl_->decoder->looks_ahead();
}

bool Tokenizer::decode_ignores(int64_t id, bool skip_special_tokens) const {
  const std::string* token = impl_->added.id_to_token(id);
  if (!token) token = impl_->model->id_to_token(id);
  return !token || (skip_special_tokens && impl_->added.is_special_token(*token));
}

std::string Tokenizer::Impl::decode(std::span<const int64_t> ids, bool skip_special_tokens,
                                    bool continued) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int64_t id : ids) {
    const std::string* token = added.id_to_token(id);
    if (!token) token = model->id_to_token(id);
    if (!token) continue;
    if (skip_special_tokens && added.is_special_token(*token)) continue;
    tokens.push_back(*token);
  }
  if (!decoder) {
    std::string joined;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) joined += ' ';
      joined += tokens[i];
    }
    return joined;
  }
  if (continued) {
    decoder->decode_chain_continued(tokens);
  } else {
    decoder->decode_chain(tokens);
  }
  std::string joined;
  for (const std::string& t : tokens) joined += t;
  return joined;
}

std::optional<int64_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto id = impl_->added.token_to_id(token)) return id;
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(int64_t id) const {
  const std::string* token = impl_->added.id_to_token(id);
  if (!token) token = impl_->model->id_to_token(id);
  return token ? std::optional<std::string>(*token) : std::nullopt;
}

bool Tokenizer::is_special(int64_t id) const {
  return impl_->added.is_special_id(id);
}

size_t Tokenizer::vocab_size() const {
  // tokenizers' get_vocab(true): the model vocabulary overlaid with the added tokens,
  // counted as distinct tokens.
  size_t extra = 0;
  for (const auto& [content, id] : impl_->added.ids()) {
    if (!impl_->model->token_to_id(content)) ++extra;
  }
  return impl_->model->vocab_size() + extra;
}

size_t Tokenizer::model_vocab_size() const {
  return impl_->model->vocab_size();
}

const std::string& Tokenizer::origin() const {
  return impl_->origin;
}

}  // namespace ingot::text
