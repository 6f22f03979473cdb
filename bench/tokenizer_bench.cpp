// Encode/decode throughput of the tokenizers on ~1 MB of text, for the fixture tokenizers
// of tests/fixtures/tokenizers (GPT-2 / Llama 3 / Qwen2 byte-level BPE, Llama 2
// SentencePiece-style BPE, BERT WordPiece).
//
//   corpus  the conformance corpus (English, code, CJK, emoji, ...) repeated to 1 MB: the
//           BPE word cache is warm, as it is on real text
//   unique  1 MB of distinct pseudo-random words: every BPE word is merged from scratch
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "ingot/models/tokenizer.h"

namespace {

using ingot::models::Tokenizer;

std::string fixtures_dir() {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  std::string file = __FILE__;
  std::string source = root ? root : file.substr(0, file.rfind("/bench/"));
  return source + "/tests/fixtures/tokenizers/";
}

constexpr size_t kTextBytes = 1 << 20;

const std::string& corpus_text() {
  static const std::string text = [] {
    std::ifstream f(fixtures_dir() + "corpus.json");
    auto strings = nlohmann::json::parse(f)["strings"];
    std::string all;
    while (all.size() < kTextBytes) {
      for (const auto& s : strings) {
        all += s.get<std::string>();
        all += '\n';
      }
    }
    return all.substr(0, all.find('\n', kTextBytes));
  }();
  return text;
}

const std::string& unique_words_text() {
  static const std::string text = [] {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> letter('a', 'z'), length(3, 12);
    std::string all;
    while (all.size() < kTextBytes) {
      int n = length(rng);
      for (int i = 0; i < n; ++i) all += static_cast<char>(letter(rng));
      all += ' ';
    }
    return all;
  }();
  return text;
}

const Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, Tokenizer::from_folder(fixtures_dir() + name)).first;
  }
  return it->second;
}

void BM_Encode(benchmark::State& state, const std::string& name, bool unique) {
  const Tokenizer& tok = tokenizer(name);
  const std::string& text = unique ? unique_words_text() : corpus_text();
  size_t tokens = 0;
  for (auto _ : state) {
    auto ids = tok.encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_Decode(benchmark::State& state, const std::string& name) {
  const Tokenizer& tok = tokenizer(name);
  std::vector<int64_t> ids = tok.encode(corpus_text());
  for (auto _ : state) {
    std::string text = tok.decode(ids);
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * corpus_text().size()));
}

#define TOKENIZER_BENCH(name)                                                               \
  BENCHMARK_CAPTURE(BM_Encode, name##_corpus, #name, false)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Encode, name##_unique, #name, true)->Unit(benchmark::kMillisecond);  \
  BENCHMARK_CAPTURE(BM_Decode, name, #name)->Unit(benchmark::kMillisecond);

TOKENIZER_BENCH(gpt2)
TOKENIZER_BENCH(llama3)
TOKENIZER_BENCH(qwen2)
TOKENIZER_BENCH(llama2)
TOKENIZER_BENCH(mistral)
TOKENIZER_BENCH(bert)

}  // namespace
