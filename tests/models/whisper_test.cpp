// WhisperForConditionalGeneration == transformers 5.23 on the tiny random fixture of
// tools/reference/make_whisper_fixtures.py (2 + 2 layers, d_model 32, 16 mel bins, 100
// frames): the encoder's last_hidden_state, the logits of the full decoder pass, the
// same logits step by step through a StaticCache with the cross-attention K/V computed
// once, the decoder prompt from generation_config.json (language, task, no-timestamps,
// language detection, forced_decoder_ids) and greedy generation with the suppress lists
// == transformers' generate ids for 20 tokens, from the fixture's input_features and
// from the raw WAV through ingot's own feature extractor. Tolerance 1e-4.
#include "ingot/models/whisper.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/media/whisper_features.h"
#include "ingot/models/whisper_generation.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;
using ingot::testing::values;

std::string wdir() {
  return fixture_path("whisper/whisper");
}
std::string wfile(const std::string& f) {
  return wdir() + "/" + f;
}
constexpr double kTol = 1e-4;

std::shared_ptr<WhisperForConditionalGeneration> load() {
  auto m = std::dynamic_pointer_cast<WhisperForConditionalGeneration>(from_pretrained(wdir()));
  EXPECT_NE(m, nullptr);
  return m;
}

std::vector<int64_t> ids_of(const Tensor& t) {
  std::vector<int64_t> out;
  for (double v : values(t)) out.push_back(int64_t(v));
  return out;
}

Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return Tensor::from_vector<int64_t>(ids, {1, int64_t(ids.size())});
}

// Greedy decoding as transformers' Whisper generate does it (short-form): the prompt,
// then `n` tokens, each the argmax after the suppress lists; stops at EOS.
std::vector<int64_t> greedy(WhisperForConditionalGeneration& m, const Tensor& features,
                            const WhisperGenerationConfig& g, int64_t n) {
  const CrossAttentionCache cross = m.cross_attention_cache(m.encode(features));
  auto first = [&] {
    return select(select(m.decode(ids_tensor({g.decoder_start_token_id}), cross, nullptr), 0, 0), 0,
                  -1);
  };
  const std::vector<int64_t> prompt = g.decoder_prompt(first);
  nn::StaticCache cache(*m.cache_spec(), 1, m.config().max_target_positions);
  Tensor logits = m.decode(ids_tensor(prompt), cross, &cache);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    Tensor last = contiguous(select(select(logits, 0, 0), 0, -1));
    g.suppress(last, i);
    const int64_t next = argmax(last).item<int64_t>();
    out.push_back(next);
    if (std::find(g.eos_token_ids.begin(), g.eos_token_ids.end(), next) != g.eos_token_ids.end())
      break;
    logits = m.decode(ids_tensor({next}), cross, &cache);
  }
  return out;
}

TEST(Whisper, EncoderEqualsTransformers) {
  auto m = load();
  EXPECT_EQ(m->config().num_mel_bins, 16);
  EXPECT_EQ(m->config().input_frames(), 100);
  Tensor enc = m->encode(formats::load_npy(wfile("input_features.npy")));
  ASSERT_EQ(enc.sizes(), (IntShape{1, 50, 32}));
  EXPECT_LE(max_abs_diff(enc, formats::load_npy(wfile("encoder_hidden.npy"))), kTol);
}

TEST(Whisper, DecoderLogitsEqualTransformers) {
  auto m = load();
  const Tensor expected = formats::load_npy(wfile("logits.npy"));  // [1, prompt + 19, vocab]
  const std::vector<int64_t> prompt = ids_of(formats::load_npy(wfile("decoder_input_ids.npy")));
  std::vector<int64_t> ids = prompt;
  const std::vector<int64_t> gen = ids_of(formats::load_npy(wfile("greedy.npy")));
  ids.insert(ids.end(), gen.begin(), gen.end() - 1);
  ModelInputs in;
  in.input_features = formats::load_npy(wfile("input_features.npy"));
  in.decoder_input_ids = ids_tensor(ids);
  const double full_diff = max_abs_diff(m->forward(in).logits, expected);
  EXPECT_LE(full_diff, kTol);
  std::cout << "decoder logits max |diff| vs transformers: " << full_diff << "\n";

  // Incrementally: the cross K/V once, the prompt, then one token at a time through a
  // StaticCache; every step's logits are the matching rows of the full pass.
  const CrossAttentionCache cross = m->cross_attention_cache(m->encode(in.input_features));
  ASSERT_EQ(cross.keys.size(), 2u);
  EXPECT_EQ(cross.keys[0].sizes(), (IntShape{1, 4, 50, 8}));
  nn::StaticCache cache(*m->cache_spec(), 1, 64);
  const int64_t p = int64_t(prompt.size());
  Tensor first = m->decode(ids_tensor(prompt), cross, &cache);
  EXPECT_LE(max_abs_diff(first, slice(expected, 1, 0, p)), kTol);
  for (int64_t i = p; i < int64_t(ids.size()); ++i) {
    Tensor step = m->decode(ids_tensor({ids[size_t(i)]}), cross, &cache);
    EXPECT_LE(max_abs_diff(step, slice(expected, 1, i, i + 1)), kTol) << "step " << i;
  }
  EXPECT_EQ(cache.seq_length(), int64_t(ids.size()));
}

TEST(Whisper, DecoderPromptsEqualTransformers) {
  auto m = load();
  const CrossAttentionCache cross =
      m->cross_attention_cache(m->encode(formats::load_npy(wfile("input_features.npy"))));
  int detections = 0;
  auto first = [&] {
    ++detections;
    return select(select(m->decode(ids_tensor({42}), cross, nullptr), 0, 0), 0, -1);
  };
  std::ifstream f(wfile("generation_config.json"));
  nlohmann::json base = nlohmann::json::parse(f);
  std::ifstream pf(wfile("prompts.json"));
  const nlohmann::json cases = nlohmann::json::parse(pf);
  ASSERT_GE(cases.size(), 7u);
  for (const auto& c : cases) {
    nlohmann::json j = base;
    j["language"] = c["language"];
    j["task"] = c["task"];
    j["return_timestamps"] = c["return_timestamps"];
    if (c.contains("forced_decoder_ids")) j["forced_decoder_ids"] = c["forced_decoder_ids"];
    const auto g = WhisperGenerationConfig::from_json_text(j.dump(), "case " + c.dump());
    EXPECT_EQ(g.decoder_prompt(first), c["prompt"].get<std::vector<int64_t>>()) << c.dump();
  }
  EXPECT_EQ(detections, 2);  // the two cases without a language or forced ids
  // The fixture's own file: <|de|> transcribe, no timestamps.
  const auto g = WhisperGenerationConfig::from_folder(wdir());
  EXPECT_EQ(g.decoder_prompt(), ids_of(formats::load_npy(wfile("decoder_input_ids.npy"))));
  // Errors: an unknown language, a language the model lacks, detection without the audio.
  nlohmann::json j = base;
  j["language"] = "klingon";
  EXPECT_THROW(WhisperGenerationConfig::from_json_text(j.dump(), "x").decoder_prompt(), ValueError);
  j["language"] = "japanese";  // a Whisper language, not in this lang_to_id
  try {
    WhisperGenerationConfig::from_json_text(j.dump(), "x").decoder_prompt();
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("<|ja|>"), std::string::npos) << e.what();
  }
  j["language"] = nullptr;
  EXPECT_THROW(WhisperGenerationConfig::from_json_text(j.dump(), "x").decoder_prompt(), ValueError);
}

TEST(Whisper, GreedyEqualsTransformersGenerate) {
  auto m = load();
  const auto g = WhisperGenerationConfig::from_folder(wdir());
  const std::vector<int64_t> expected = ids_of(formats::load_npy(wfile("greedy.npy")));
  ASSERT_GE(expected.size(), 16u);
  EXPECT_EQ(greedy(*m, formats::load_npy(wfile("input_features.npy")), g, int64_t(expected.size())),
            expected);
  // From the raw audio: stereo float32 at 8 kHz through ingot's feature extractor.
  const media::WhisperFeatureExtractor fe = media::WhisperFeatureExtractor::from_folder(wdir());
  const std::vector<int64_t> expected8 = ids_of(formats::load_npy(wfile("greedy_8k.npy")));
  EXPECT_EQ(greedy(*m, fe.preprocess_file(fixture_path("whisper/stereo8k.wav")), g,
                   int64_t(expected8.size())),
            expected8);
  EXPECT_EQ(greedy(*m, fe.preprocess_file(fixture_path("whisper/speech16k.wav")), g,
                   int64_t(expected.size())),
            expected);
}

TEST(Whisper, SuppressListsMatter) {
  // Without suppress_tokens the first steps would pick a suppressed id somewhere: the
  // lists change the result, so the test above checks them.
  auto m = load();
  auto g = WhisperGenerationConfig::from_folder(wdir());
  const std::vector<int64_t> with =
      greedy(*m, formats::load_npy(wfile("input_features.npy")), g, 20);
  g.suppress_tokens.clear();
  g.begin_suppress_tokens.clear();
  const std::vector<int64_t> without =
      greedy(*m, formats::load_npy(wfile("input_features.npy")), g, 20);
  EXPECT_NE(with, without);
}

TEST(Whisper, InputFeatureShapeErrorsNameTheInput) {
  auto m = load();
  try {
    m->encode(zeros({1, 16, 3000}, DType::F32));
    ADD_FAILURE();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("input_features"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[batch, 16, 100]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m->encode(zeros({1, 80, 100}, DType::F32)), ShapeError);
  ModelInputs in;
  in.input_features = formats::load_npy(wfile("input_features.npy"));
  EXPECT_THROW(m->forward(in), ValueError);  // no decoder_input_ids
}

}  // namespace
}  // namespace ingot::models
