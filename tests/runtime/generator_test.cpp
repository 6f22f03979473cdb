// The Generator over exported components: greedy tokens equal HF transformers' generate
// (fixtures from tools/reference/make_generation_fixtures.py) for every decoder, for the
// merged multi-token decode graph and for separate prefill / decode graphs, with the
// cache allocated once and written in place.
#include "ingot/runtime/generator.h"

#include <gtest/gtest.h>

#include "../decoder_fixtures.h"
#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/generation/generate.h"

namespace ingot {
namespace {

using exporters::decompose_for_generation;
using exporters::GenerationExportOptions;

// The native components of the framework's export_for_generation / export_captured.
runtime::GenerationPackage export_for_generation(models::PretrainedModel& model,
                                                 const GenerationExportOptions& o) {
  return (exporters::NativeExporter().export_for_generation(model, exporters::NativeExportConfig(),
                                                            o))
      .package();
}
runtime::GenerationPackage export_captured(
    models::PretrainedModel& model, const std::map<std::string, exporters::CapturedCall>& calls,
    const GenerationExportOptions& o) {
  return (exporters::NativeExporter().export_captured(model, calls, exporters::NativeExportConfig(),
                                                      o))
      .package();
}

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

struct Case {
  const char* model;
  bool multi_token;
};

class GeneratorTest : public ::testing::TestWithParam<Case> {};

TEST_P(GeneratorTest, GreedyTokensEqualTransformers) {
  const Case c = GetParam();
  const std::string fixtures = testing::fixture_path(std::string("generation/") + c.model);
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + c.model));
  std::vector<int64_t> prompt = ints(formats::load_npy(fixtures + "/prompt.npy"));
  std::vector<int64_t> expected = ints(formats::load_npy(fixtures + "/greedy.npy"));
  // The fixture holds prompt + new tokens.
  if (expected.size() > prompt.size() &&
      std::equal(prompt.begin(), prompt.end(), expected.begin())) {
    expected.erase(expected.begin(), expected.begin() + long(prompt.size()));
  }
  ASSERT_GE(expected.size(), 32u);
  GenerationExportOptions o;
  o.max_cache_len = int64_t(prompt.size() + expected.size()) + 4;
  o.multi_token_decode = c.multi_token;
  runtime::Generator gen(export_for_generation(*model, o));
  const void* cache_data = gen.cache_tensors().at(0).raw_data();
  std::vector<int64_t> streamed;
  runtime::GenerateOptions go;
  go.max_new_tokens = int64_t(expected.size());
  go.on_token = [&](int64_t t) { streamed.push_back(t); };
  runtime::GenerationStats stats;
  std::vector<int64_t> got = gen.generate(prompt, go, &stats);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(streamed, got);
  EXPECT_EQ(stats.stop_reason, "max_new_tokens");
  EXPECT_EQ(gen.cache_tensors().at(0).raw_data(), cache_data);
  // Generating again reuses the same cache and gives the same tokens.
  EXPECT_EQ(gen.generate(prompt, go), expected);
}

// Every decoder fixture, through the merged multi-token decode graph and through
// separate prefill / decode components.
std::vector<Case> generator_cases() {
  std::vector<Case> cases;
  for (const std::string& name : testing::decoder_fixtures()) {
    cases.push_back({name.c_str(), true});
    cases.push_back({name.c_str(), false});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GeneratorTest, ::testing::ValuesIn(generator_cases()));

TEST(Generator, CacheLimitsAndEmptyPrompt) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  GenerationExportOptions o;
  o.max_cache_len = 8;
  runtime::Generator gen(export_for_generation(*model, o));
  EXPECT_THROW(gen.generate({}, {}), ValueError);
  EXPECT_THROW(gen.generate(std::vector<int64_t>(8, 1), {}), ValueError);  // prompt >= cache
  runtime::GenerateOptions go;
  go.max_new_tokens = 100;
  runtime::GenerationStats stats;
  std::vector<int64_t> got = gen.generate({1, 2, 3}, go, &stats);
  EXPECT_EQ(stats.stop_reason, "cache_full");
  EXPECT_EQ(got.size(), 6u);  // 3 prompt + 5 cached tokens fill 8 slots, + the last logits
  // A stop token ends generation at its first occurrence (this tiny model repeats its
  // first token, so that is the first one).
  go.stop_tokens = {got[0]};
  EXPECT_EQ(gen.generate({1, 2, 3}, go, &stats).size(), 1u);
  EXPECT_EQ(stats.stop_reason, "stop_token");
}

// A generation export's example inputs hold a whole KV cache; the runtime never reads
// them, so the Generator keeps none: once its caller lets the programs go, that memory
// is free (peak RSS during decode = weights + cache).
TEST(Generator, KeepsNoExampleInputs) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  GenerationExportOptions o;
  o.max_cache_len = 64;
  auto components = export_for_generation(*model, o);
  std::vector<std::weak_ptr<Storage>> examples;
  for (const auto& [name, program] : components)
    for (const Tensor& t : program.example_inputs)
      if (t.defined() && t.has_storage()) examples.push_back(t.storage());
  ASSERT_GT(examples.size(), 2u) << "the export stores example inputs (ids and the cache)";
  runtime::Generator gen(std::move(components));
  for (const auto& e : examples) EXPECT_TRUE(e.expired()) << "an example input is still held";
  EXPECT_EQ(gen.generate({1, 2, 3}, {}).empty(), false);
}

TEST(Generator, DecodeStepsAllocateNothingProportionalToTheCache) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions o;
  o.max_cache_len = 512;
  runtime::Generator gen(export_for_generation(*model, o));
  int64_t cache_bytes = 0;
  for (const Tensor& t : gen.cache_tensors()) cache_bytes += int64_t(t.nbytes());
  std::vector<int64_t> per_step;
  runtime::GenerateOptions go;
  go.max_new_tokens = 24;
  int64_t last = Storage::allocated_bytes_total();
  go.on_token = [&](int64_t) {
    const int64_t now = Storage::allocated_bytes_total();
    per_step.push_back(now - last);
    last = now;
  };
  gen.generate({5, 6, 7}, go);
  // After a few warm-up steps the pool serves every intermediate: what is left per step
  // (0-d scalar operands) is a tiny fraction of the cache.
  for (size_t i = 4; i < per_step.size(); ++i) {
    EXPECT_LT(per_step[i], cache_bytes / 100)
        << "step " << i << " allocated " << per_step[i] << " bytes";
  }
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

TEST(Generator, SeededSamplingIsReproducibleAndDynamicCacheLengthIsChosenAtLoad) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions o;
  o.max_cache_len = 64;
  o.dynamic_cache_len = true;
  auto components = export_for_generation(*model, o);
  runtime::Generator small(components, 16), large(components, 48);
  EXPECT_EQ(small.max_cache_len(), 16);
  EXPECT_EQ(large.max_cache_len(), 48);
  runtime::GenerateOptions go;
  go.max_new_tokens = 12;
  go.do_sample = true;
  go.sampling.temperature = 1.5;
  go.sampling.top_k = 20;
  go.seed = 7;
  std::vector<int64_t> a = small.generate({3, 4, 5}, go), b = large.generate({3, 4, 5}, go);
  EXPECT_EQ(a, b);  // same program, same seed: same tokens whatever the cache length
  go.seed = 8;
  EXPECT_NE(large.generate({3, 4, 5}, go), a);
  // Greedy on both lengths equals greedy on a static-length export.
  go.do_sample = false;
  GenerationExportOptions fixed;
  fixed.max_cache_len = 32;
  runtime::Generator reference(export_for_generation(*model, fixed));
  EXPECT_EQ(small.generate({3, 4, 5}, go), reference.generate({3, 4, 5}, go));
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

TEST(Generator, DecomposeForGenerationCapturesTheForwardCallsOfGenerate) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  GenerationExportOptions o;
  o.max_cache_len = 32;
  Tensor prompt = Tensor::from_vector<int64_t>({5, 6, 7, 8, 9}, {1, 5});
  auto calls = decompose_for_generation(*model, prompt, o);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls.at("prefill").input_ids.sizes(), (IntShape{1, 5}));
  EXPECT_EQ(calls.at("decode").input_ids.sizes(), (IntShape{1, 1}));
  EXPECT_EQ(nn::StaticCache::from_named_tensors(calls.at("prefill").cache).seq_length(), 0);
  EXPECT_EQ(nn::StaticCache::from_named_tensors(calls.at("decode").cache).seq_length(), 5);
  EXPECT_EQ(calls.at("decode").attention_mask.sizes(), (IntShape{1, 32}));  // static cache slots
  // The captured calls can be inspected and changed before export.
  auto padded = calls;
  Tensor mask = clone(padded.at("prefill").attention_mask);
  mask.data<int64_t>()[0] = 0;
  padded.at("prefill").attention_mask = mask;
  EXPECT_THROW(export_captured(*model, padded, o), NotSupportedError);
  // Exported from the captured calls, the components reproduce eager greedy decoding.
  o.multi_token_decode = false;
  runtime::Generator gen(export_captured(*model, calls, o));
  runtime::GenerateOptions go;
  go.max_new_tokens = 8;
  generation::GenerationConfig config;
  config.max_new_tokens = 8;
  generation::GenerationResult eager = generation::generate(*model, prompt, config);
  std::vector<int64_t> expected = ints(eager.sequences);
  expected.erase(expected.begin(), expected.begin() + 5);
  EXPECT_EQ(gen.generate({5, 6, 7, 8, 9}, go), expected);
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// The Generator's repetition penalty (over prompt + generated ids) gives transformers'
// greedy tokens with repetition_penalty = 1.3 (the eager generate's fixture), through the
// exported prefill + decode components.
TEST(Generator, RepetitionPenaltyEqualsTransformers) {
  for (const char* name : {"llama", "gpt2", "mistral_sliding_window"}) {
    SCOPED_TRACE(name);
    const std::string fixtures = testing::fixture_path(std::string("generation/") + name);
    auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + name));
    std::vector<int64_t> prompt = ints(formats::load_npy(fixtures + "/prompt.npy"));
    std::vector<int64_t> expected = ints(formats::load_npy(fixtures + "/penalty.npy"));
    std::vector<int64_t> plain = ints(formats::load_npy(fixtures + "/greedy.npy"));
    expected.erase(expected.begin(), expected.begin() + long(prompt.size()));
    plain.erase(plain.begin(), plain.begin() + long(prompt.size()));
    GenerationExportOptions o;
    o.max_cache_len = int64_t(prompt.size() + expected.size()) + 4;
    o.multi_token_decode = false;
    runtime::Generator gen(export_for_generation(*model, o));
    runtime::GenerateOptions go;
    go.max_new_tokens = int64_t(expected.size());
    go.sampling.repetition_penalty = 1.3;
    EXPECT_EQ(gen.generate(prompt, go), expected);
    go.sampling.repetition_penalty = 1.0;
    std::vector<int64_t> unpenalised = gen.generate(prompt, go);
    EXPECT_EQ(std::vector<int64_t>(plain.begin(), plain.begin() + long(expected.size())),
              unpenalised);
    EXPECT_NE(unpenalised, expected);  // the penalty changes these tokens
  }
}

}  // namespace
}  // namespace ingot
