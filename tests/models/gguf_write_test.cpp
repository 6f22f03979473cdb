// The models side of writing a GGUF: Hugging Face names map to llama.cpp's and back over
// the reader's tables, the rope permutation is the inverse of the reader's, config.json
// becomes the metadata llama.cpp reads (rope scaling included; what it cannot run is a
// named NotSupportedError), and a folder's tokenizer written as tokenizer.ggml.* reads
// back (gguf_tokenizer.h) as a tokenizer that encodes and decodes every corpus string as
// the folder's own does.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../error_of.h"
#include "fixture_path.h"
#include "ingot/core/error.h"
#include "ingot/formats/gguf_writer.h"
#include "ingot/models/config.h"
#include "ingot/models/gguf_model_metadata.h"
#include "ingot/models/gguf_tokenizer.h"
#include "ingot/models/gguf_tokenizer_metadata.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/models/model.h"
#include "ingot/nn/rotary.h"
#include "ingot/ops/functional.h"
#include "ingot/text/tokenizer.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using ingot::testing::error_of;
using ingot::testing::fixture_path;
using nlohmann::json;

std::string source_file(const std::string& relative) {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  return (root ? std::string(root) : std::string(INGOT_FIXTURES_DIR) + "/../..") + "/" + relative;
}

TEST(GgufWriteNames, EveryWeightOfLlamaAndQwen3MapsToLlamaCppAndBack) {
  for (const auto& [folder, arch] : {std::pair{"llama", "llama"}, std::pair{"qwen3", "qwen3"}}) {
    auto model = from_pretrained(fixture_path(std::string("models/") + folder));
    int mapped = 0;
    for (const auto& [hf, t] : model->state_dict()) {
      if (hf.ends_with("inv_freq")) continue;
      const std::string g = hf_to_gguf_name(hf, arch);
      ASSERT_FALSE(g.empty()) << hf;
      EXPECT_EQ(gguf_to_hf_name(g, arch, "test"), hf) << g;
      ++mapped;
    }
    EXPECT_GT(mapped, 10) << folder;
  }
  EXPECT_EQ(hf_to_gguf_name("model.layers.3.self_attn.q_proj.bias", "qwen2"), "blk.3.attn_q.bias");
  EXPECT_EQ(hf_to_gguf_name("lm_head.weight", "llama"), "output.weight");
  EXPECT_EQ(hf_to_gguf_name("model.layers.0.mlp.experts_weird.weight", "llama"), "");
}

TEST(GgufWriteNames, PermuteIsTheInverseOfTheReadersUnpermute) {
  // One head of 8 rows (d = 4): GGUF row 2i + j holds HF row j * 4 + i.
  Tensor t = Tensor::empty({8, 2}, DType::F32);
  for (int64_t i = 0; i < 16; ++i) t.data<float>()[i] = float(i / 2);
  Tensor p = permute_rope_rows(t, 1);
  const std::vector<float> rows = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int64_t r = 0; r < 8; ++r) EXPECT_EQ(p.data<float>()[r * 2], rows[size_t(r)]) << r;
  // Two heads of k rows, and the round trip.
  Tensor k = Tensor::empty({16, 3}, DType::F32);
  for (int64_t i = 0; i < 48; ++i) k.data<float>()[i] = float(i);
  Tensor back = unpermute_rope_rows(permute_rope_rows(k, 2), 2);
  for (int64_t i = 0; i < 48; ++i) EXPECT_EQ(back.data<float>()[i], float(i));
  EXPECT_THROW(permute_rope_rows(k, 3), ShapeError);
}

const formats::GgufValue* find(const GgufModelMetadata& m, const std::string& key) {
  for (const auto& [k, v] : m.metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

TEST(GgufWriteMetadata, ConfigBecomesLlamaCppsKeys) {
  const GgufModelMetadata m = gguf_model_metadata(fixture_path("models/llama"));
  EXPECT_EQ(m.arch.gguf_name, "llama");
  EXPECT_TRUE(m.arch.unpermute_qk);
  EXPECT_EQ(m.n_head, 4);
  EXPECT_EQ(m.n_kv_head, 2);
  EXPECT_EQ(std::get<uint64_t>(find(m, "llama.embedding_length")->value), 64u);
  EXPECT_EQ(std::get<uint64_t>(find(m, "llama.attention.head_count_kv")->value), 2u);
  EXPECT_EQ(std::get<uint64_t>(find(m, "llama.attention.key_length")->value), 16u);
  EXPECT_EQ(std::get<double>(find(m, "llama.rope.freq_base")->value), 10000.0);
  EXPECT_EQ(find(m, "llama.rope.scaling.type"), nullptr);
  EXPECT_TRUE(m.rope_freqs.empty());

  const GgufModelMetadata q = gguf_model_metadata(fixture_path("models/qwen3"));
  EXPECT_EQ(q.arch.gguf_name, "qwen3");
  EXPECT_FALSE(q.arch.unpermute_qk);
  EXPECT_TRUE(q.tied);

  const GgufModelMetadata y = gguf_model_metadata(fixture_path("models/qwen2_yarn_rope"));
  EXPECT_EQ(find(y, "qwen2.rope.scaling.type")->str(), "yarn");
  EXPECT_EQ(std::get<double>(find(y, "qwen2.rope.scaling.factor")->value), 4.0);
  EXPECT_EQ(std::get<uint64_t>(find(y, "qwen2.rope.scaling.original_context_length")->value), 32u);
  const GgufModelMetadata l = gguf_model_metadata(fixture_path("models/qwen2_linear_rope"));
  EXPECT_EQ(find(l, "qwen2.rope.scaling.type")->str(), "linear");

  // llama3 rope: llama.cpp divides each default frequency by its factor; that is the
  // frequency ingot's own llama3 rotary embedding uses (its cos at position 3).
  const std::string l3 = fixture_path("models/llama_llama3_rope_tied_bf16");
  const GgufModelMetadata r = gguf_model_metadata(l3);
  const ConfigReader c = ConfigReader::from_file(l3 + "/config.json");
  const int64_t head_dim = c.get_int("head_dim", c.get_int("hidden_size") / r.n_head);
  ASSERT_EQ(int64_t(r.rope_freqs.size()), head_dim / 2);
  EXPECT_EQ(r.rope_freqs.back(), 8.0f);  // the slowest frequencies: divided by `factor`
  nn::RotaryEmbedding rope(head_dim, c.rope(), c.get_int("max_position_embeddings"));
  Tensor pos = Tensor::empty({1, 1}, DType::I64);
  pos.data<int64_t>()[0] = 3;
  const Tensor cos = contiguous(rope.forward(pos, DType::F32).first);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    const double inv = 1.0 / std::pow(c.rope().theta, double(2 * i) / double(head_dim));
    EXPECT_NEAR(cos.data<float>()[i], std::cos(3.0 * inv / r.rope_freqs[size_t(i)]), 2e-5) << i;
  }
}

TEST(GgufWriteMetadata, WhatLlamaCppCannotRunIsNamed) {
  EXPECT_NE(error_of<NotSupportedError>([] {
              gguf_model_metadata(fixture_path("models/qwen2_sliding_window"));
            }).find("sliding_attention"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>([] {
              gguf_model_metadata(fixture_path("models/mistral_sliding_window"));
            }).find("sliding_window 4"),
            std::string::npos);
  const std::string gemma = error_of<NotSupportedError>(
      [] { gguf_model_metadata(fixture_path("models/gemma2")); });
  EXPECT_NE(gemma.find("'Gemma2ForCausalLM' cannot be written"), std::string::npos) << gemma;
  EXPECT_NE(gemma.find("Qwen3ForCausalLM"), std::string::npos) << gemma;
}

// tokenizer.ggml.* of `folder` written to a GGUF, read back as a tokenizer.
text::Tokenizer round_trip(const std::string& folder, int64_t vocab_size, const std::string& name) {
  formats::GgufWriter w;
  w.set("general.architecture", formats::gguf_string("llama"));
  for (auto& [k, v] : gguf_tokenizer_metadata(folder, vocab_size)) w.set(k, v);
  const fs::path path =
      fs::temp_directory_path() / ("ingot_gguf_tok_" + name + std::to_string(::getpid()) + ".gguf");
  w.write(path.string());
  formats::GgufFile f = formats::GgufFile::open(path.string());
  text::Tokenizer t = text::Tokenizer::from_json_text(gguf_tokenizer_json(f), path.string());
  fs::remove(path);
  return t;
}

class GgufWriteTokenizer : public ::testing::TestWithParam<std::string> {};

// Why string `text` cannot round-trip through tokenizer.ggml.* for the tokenizer.json `tok`
// ("" when it must): what GGUF cannot say, and where the reader builds transformers'
// GGUF tokenizer rather than the folder's.
std::string not_expressible(const json& tok, const std::string& text, bool has_endoftext) {
  for (const json& a : tok["added_tokens"]) {
    const bool flags = a.value("lstrip", false) || a.value("rstrip", false) ||
                       a.value("single_word", false);
    if (flags && text.find(a["content"].get<std::string>()) != std::string::npos)
      return "an added token with lstrip / rstrip / single_word (GGUF has no such flags)";
  }
  const json& n = tok["normalizer"];
  if (n.is_object() && n.value("type", "") == "NFC" &&
      text::tokenizer::unicode_normalize(text, text::tokenizer::NormalForm::NFC) != text)
    return "NFC changes it (llama.cpp does not normalise)";
  if (!has_endoftext && text.find("<|endoftext|>") != std::string::npos)
    return "the reader adds transformers' <|endoftext|> to a byte-level vocabulary";
  return "";
}

TEST_P(GgufWriteTokenizer, ReadsBackAsTheFoldersTokenizer) {
  const std::string folder = GetParam() == "demo-lm" ? source_file("assets/demo-lm")
                                                     : fixture_path("tokenizers/" + GetParam());
  const text::Tokenizer want = text::Tokenizer::from_folder(folder);
  std::ifstream tf(folder + "/tokenizer.json");
  const json tok = json::parse(tf);
  const bool has_endoftext = tok["model"]["vocab"].contains("<|endoftext|>");
  // Two rows more than tokens: written as [PADn] tokens, as llama.cpp's converter pads.
  const int64_t vocab = int64_t(want.vocab_size()) + 2;
  const text::Tokenizer got = round_trip(folder, vocab, GetParam());
  std::ifstream f(fixture_path("tokenizers/corpus.json"));
  const json corpus = json::parse(f);
  int failures = 0, strings = 0, skipped = 0;
  for (const json& s : corpus["strings"]) {
    const std::string text = s.get<std::string>();
    if (!not_expressible(tok, text, has_endoftext).empty()) {
      ++skipped;
      continue;
    }
    const auto with = want.encode(text, true), without = want.encode(text, false);
    const bool ok = got.encode(text, true) == with && got.encode(text, false) == without &&
                    got.decode(with) == want.decode(with);
    if (!ok && ++failures <= 3)
      ADD_FAILURE() << GetParam() << ": '" << text << "'\n  want " << fmt::format("{}", fmt::join(with, " "))
                    << "\n  got  " << fmt::format("{}", fmt::join(got.encode(text, true), " "))
                    << "\n  decoded want '" << want.decode(with) << "' got '" << got.decode(with) << "'";
    ++strings;
  }
  std::printf("[gguf tokenizer] %s: %d strings equal, %d skipped (not expressible)\n",
              GetParam().c_str(), strings - failures, skipped);
  EXPECT_EQ(failures, 0) << "of " << strings;
  EXPECT_GE(strings, 60);
}

// Not llama2: its Prepend + Replace normalizer (transformers' older SentencePiece form,
// which llama.cpp's tokenizer follows) reads back as transformers' GGUF tokenizer builds
// it, with a Metaspace that adds no second space after a space or a special token; the
// llama.cpp judge (tests/cli/gguf_export_test.cpp) tokenizes it with llama.cpp itself.
INSTANTIATE_TEST_SUITE_P(Folders, GgufWriteTokenizer,
                         ::testing::Values("gpt2", "qwen2", "llama3", "mistral", "demo-lm"));

TEST(GgufWriteTokenizerMetadata, TypesSpecialsAndUnsupportedTokenizers) {
  const auto kv = gguf_tokenizer_metadata(source_file("assets/demo-lm"), 4100);
  std::map<std::string, formats::GgufValue> m(kv.begin(), kv.end());
  EXPECT_EQ(m.at("tokenizer.ggml.model").str(), "gpt2");
  EXPECT_EQ(m.at("tokenizer.ggml.pre").str(), "gpt-2");
  EXPECT_EQ(m.at("tokenizer.ggml.tokens").array().size(), 4100u);
  EXPECT_EQ(m.at("tokenizer.ggml.tokens").array()[4097].str(), "[PAD4097]");
  EXPECT_EQ(std::get<int64_t>(m.at("tokenizer.ggml.token_type").array()[0].value), 3);  // control
  EXPECT_EQ(std::get<int64_t>(m.at("tokenizer.ggml.token_type").array()[4097].value), 5);
  EXPECT_EQ(std::get<uint64_t>(m.at("tokenizer.ggml.eos_token_id").value), 0u);
  EXPECT_EQ(std::get<bool>(m.at("tokenizer.ggml.add_bos_token").value), false);

  const auto sp = gguf_tokenizer_metadata(fixture_path("tokenizers/llama2"), 1159);
  std::map<std::string, formats::GgufValue> s(sp.begin(), sp.end());
  EXPECT_EQ(s.at("tokenizer.ggml.model").str(), "llama");
  EXPECT_TRUE(s.contains("tokenizer.ggml.scores"));
  EXPECT_EQ(std::get<bool>(s.at("tokenizer.ggml.add_bos_token").value), true);

  EXPECT_NE(error_of<NotSupportedError>([] {
              gguf_tokenizer_metadata(fixture_path("tokenizers/bert"), 100000);
            }).find("WordPiece"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([] {
              gguf_tokenizer_metadata(fixture_path("tokenizers/gpt2"), 10);
            }).find("embedding has 10 rows"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>([] {
              gguf_tokenizer_metadata(fixture_path("models/llama"), 96);
            }).find("no tokenizer.json"),
            std::string::npos);
}

}  // namespace
}  // namespace ingot::models
