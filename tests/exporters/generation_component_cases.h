// The inputs every backend judge runs the generation components of the issue-18 fixtures
// on (LLaVA, Qwen2-VL, T5, Whisper: tools/reference/make_*_fixtures.py), by component
// and user-input name, so ONNX Runtime and OpenVINO are judged on the same cases. Each
// case holds every user input of the component's program, the static cache included
// (an empty cache: zeros, cache_position 0).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/formats/npy.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/model.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::testing {

// component -> cases -> user input name -> value
using ComponentCases = std::map<std::string, std::vector<std::map<std::string, Tensor>>>;

// The cache tensors of an empty StaticCache of the model's decode component (batch 1).
inline std::map<std::string, Tensor> empty_cache_inputs(const models::PretrainedModel& model,
                                                        int64_t max_cache_len) {
  std::map<std::string, Tensor> c;
  nn::StaticCache cache(*model.cache_spec(), 1, max_cache_len);
  for (const auto& [name, t] : cache.named_tensors()) c.emplace(name, contiguous(clone(t)));
  return c;
}

// LLaVA: image_encoder at 1 and 3 images, multi_modal_projector at 1 and 3, language_model
// over the fixture's merged embeddings with an empty cache, lm_head at 27 and 1 tokens,
// decode over the prompt ids.
inline ComponentCases llava_component_cases(const models::PretrainedModel& model,
                                            const std::string& folder, int64_t max_cache_len) {
  const Tensor pv = formats::load_npy(folder + "/pixel_values.npy");
  const Tensor features = formats::load_npy(folder + "/image_features.npy");
  const Tensor embeds = formats::load_npy(folder + "/inputs_embeds.npy");  // [1, 27, 48]
  const Tensor hidden = formats::load_npy(folder + "/last_hidden_state.npy");
  ComponentCases cases = {
      {"image_encoder", {{{"pixel_values", pv}}, {{"pixel_values", cat({pv, pv, pv}, 0)}}}},
      {"multi_modal_projector",
       {{{"image_features", features}},
        {{"image_features", cat({features, features, features}, 0)}}}},
      {"lm_head", {{{"hidden_states", hidden}}, {{"hidden_states", slice(hidden, 1, 26, 27)}}}},
  };
  auto lm = empty_cache_inputs(model, max_cache_len);
  lm.emplace("inputs_embeds", embeds);
  cases["language_model"] = {lm};
  auto decode = empty_cache_inputs(model, max_cache_len);
  decode.emplace("input_ids", formats::load_npy(folder + "/input_ids.npy"));
  cases["decode"] = {decode};
  return cases;
}

// T5: the encoder at two source lengths (15 and 40), cross_kv at two (15 and 3), decode
// over the fixture's cross K/V and an empty cache (the decoder prompt block) and at a
// shorter source with one token.
inline ComponentCases t5_component_cases(const models::PretrainedModel& model,
                                         const std::string& folder, int64_t max_cache_len) {
  const Tensor ids = formats::load_npy(folder + "/input_ids.npy");  // [1, 15]
  const Tensor states = formats::load_npy(folder + "/encoder_hidden_states.npy");
  const Tensor keys = formats::load_npy(folder + "/cross_key.npy");  // [layers, 1, h, 15, d]
  const Tensor values = formats::load_npy(folder + "/cross_value.npy");
  const Tensor decoder_ids = formats::load_npy(folder + "/decoder_input_ids.npy");
  std::vector<int64_t> long_ids;
  for (int64_t i = 0; i < 40; ++i) long_ids.push_back(3 + (i * 7) % 39);
  auto decode_case = [&](int64_t source, int64_t tokens) {
    auto c = empty_cache_inputs(model, max_cache_len);
    for (int64_t l = 0; l < keys.size(0); ++l) {
      c.emplace("cross_key_cache." + std::to_string(l),
                contiguous(slice(select(keys, 0, l), 2, 0, source)));
      c.emplace("cross_value_cache." + std::to_string(l),
                contiguous(slice(select(values, 0, l), 2, 0, source)));
    }
    c.emplace("input_ids", contiguous(slice(decoder_ids, 1, 0, tokens)));
    return c;
  };
  return {
      {"encoder", {{{"input_ids", ids}}, {{"input_ids", Tensor::from_vector(long_ids, {1, 40})}}}},
      {"cross_kv",
       {{{"encoder_hidden_states", states}},
        {{"encoder_hidden_states", contiguous(slice(states, 1, 0, 3))}}}},
      {"decode", {decode_case(15, 4), decode_case(5, 1)}},
  };
}

// Qwen2-VL: the patch image encoder (2-D rotary, per-image attention mask, merger) at one
// and two images, the M-RoPE language model, lm_head and the decode step with rope_deltas.
inline ComponentCases qwen2_vl_component_cases(const models::PretrainedModel& model,
                                               const std::string& folder, int64_t max_cache_len) {
  auto encoder_inputs = [&](const std::string& suffix) {
    const Tensor pv = formats::load_npy(folder + "/pixel_values" + suffix + ".npy");
    const models::Qwen2VisionInputs side = models::qwen2_vl_vision_inputs(
        formats::load_npy(folder + "/image_grid_thw" + suffix + ".npy"), 2);
    const int64_t tokens = side.vision_segment_ids.size(0);
    return std::map<std::string, Tensor>{
        {"pixel_values", contiguous(reshape(pv, {SymInt(tokens), SymInt(4), SymInt(pv.size(1))}))},
        {"vision_position_ids", side.vision_position_ids},
        {"vision_segment_ids", side.vision_segment_ids}};
  };
  const Tensor hidden = formats::load_npy(folder + "/last_hidden_state.npy");
  ComponentCases cases = {
      {"image_encoder", {encoder_inputs(""), encoder_inputs("_two")}},
      {"lm_head", {{{"hidden_states", hidden}}, {{"hidden_states", slice(hidden, 1, 42, 43)}}}},
  };
  auto lm = empty_cache_inputs(model, max_cache_len);
  lm.emplace("inputs_embeds", formats::load_npy(folder + "/inputs_embeds.npy"));
  lm.emplace("position_ids", formats::load_npy(folder + "/position_ids.npy"));
  cases["language_model"] = {lm};
  auto decode = empty_cache_inputs(model, max_cache_len);
  decode.emplace("input_ids", formats::load_npy(folder + "/input_ids.npy"));
  decode.emplace("rope_deltas", formats::load_npy(folder + "/rope_deltas.npy"));
  cases["decode"] = {decode};
  return cases;
}

// Whisper: the encoder on two log-mel inputs, cross_kv, and decode over the cross K/V
// with an empty cache (the 4-token decoder prompt) and one token.
inline ComponentCases whisper_component_cases(models::EncoderDecoderModel& whisper,
                                              const std::string& folder, int64_t max_cache_len) {
  const Tensor features = formats::load_npy(folder + "/input_features.npy");  // [1, 16, 100]
  const Tensor features8 = formats::load_npy(folder + "/input_features_8k.npy");
  const Tensor states = formats::load_npy(folder + "/encoder_hidden.npy");  // [1, 50, 32]
  const std::map<std::string, Tensor> cross = whisper.cross_attention_cache(states).named();
  const Tensor prompt = formats::load_npy(folder + "/decoder_input_ids.npy");  // [1, 4]
  auto decode_case = [&](const Tensor& ids) {
    auto c = empty_cache_inputs(whisper, max_cache_len);
    for (const auto& [name, t] : cross) c.emplace(name, contiguous(t));
    c.emplace("input_ids", ids);
    return c;
  };
  return {
      {"encoder", {{{"input_features", features}}, {{"input_features", features8}}}},
      {"cross_kv", {{{"encoder_hidden_states", states}}}},
      {"decode", {decode_case(prompt), decode_case(contiguous(slice(prompt, 1, 0, 1)))}},
  };
}

}  // namespace ingot::testing
