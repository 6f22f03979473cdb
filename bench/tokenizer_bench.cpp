// Encode/decode throughput of the tokenizers on ~1 MB of text, for the fixture tokenizers
// of tests/fixtures/tokenizers (GPT-2 / Llama 3 / Qwen2 byte-level BPE, Llama 2
// SentencePiece-style BPE, BERT WordPiece).
//
//   corpus  the conformance corpus (English, code, CJK, emoji, ...) repeated to 1 MB: the
//           BPE word cache is warm, as it is on real text
//   unique  1 MB of distinct pseudo-random words: every BPE word is merged from scratch
//
// Streaming detokenisation of 2,000 generated tokens (the first 2,000 ids of the corpus):
// DecodeStream (a sliding window, O(1) per token) against the naive streamer that decodes
// everything so far at every token (O(n) per token); ns_per_token is the time per token.
#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "ingot/text/decode_stream.h"
#include "ingot/text/tokenizer.h"

namespace {

using ingot::text::Tokenizer;

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

constexpr size_t kStreamTokens = 2000;

std::vector<int64_t> stream_ids(const Tokenizer& tok) {
  std::vector<int64_t> ids = tok.encode(corpus_text());
  ids.resize(std::min(ids.size(), kStreamTokens));
  return ids;
}

// Wall time per token in ns over all iterations (a plain number: Google Benchmark prints
// inverted rates with a seconds suffix).
void set_ns_per_token(benchmark::State& state, std::chrono::steady_clock::time_point start,
                      size_t tokens) {
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  state.counters["ns_per_token"] = ns / double(state.iterations() * tokens);
  state.counters["tokens"] = double(tokens);
}

void BM_StreamDecode(benchmark::State& state, const std::string& name) {
  const Tokenizer& tok = tokenizer(name);
  const std::vector<int64_t> ids = stream_ids(tok);
  size_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    ingot::text::DecodeStream stream(tok, /*skip_special_tokens=*/true);
    bytes = 0;
    for (int64_t id : ids) bytes += stream.step(id).size();
    bytes += stream.flush().size();
    benchmark::DoNotOptimize(bytes);
  }
  set_ns_per_token(state, start, ids.size());
}

// What `ingot generate` did before DecodeStream: decode all ids so far at every token and
// print what extends the printed text.
void BM_NaiveStreamDecode(benchmark::State& state, const std::string& name) {
  const Tokenizer& tok = tokenizer(name);
  const std::vector<int64_t> ids = stream_ids(tok);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::string printed;
    for (size_t i = 1; i <= ids.size(); ++i) {
      std::string text = tok.decode(std::span(ids).first(i), true);
      if (text.size() > printed.size() && text.starts_with(printed)) printed = std::move(text);
    }
    benchmark::DoNotOptimize(printed.data());
  }
  set_ns_per_token(state, start, ids.size());
}

#define STREAM_BENCH(name)                                                        \
  BENCHMARK_CAPTURE(BM_StreamDecode, name, #name)->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(BM_NaiveStreamDecode, name, #name)->Unit(benchmark::kMillisecond);

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

STREAM_BENCH(gpt2)
STREAM_BENCH(llama3)
STREAM_BENCH(llama2)
STREAM_BENCH(mistral)
STREAM_BENCH(bert)

}  // namespace
