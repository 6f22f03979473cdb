#include "ingot/models/encdec/encoder_decoder.h"

#include <fmt/format.h>

#include "ingot/models/generation_config.h"

namespace ingot::models {

std::map<std::string, Tensor> CrossAttentionCache::named() const {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    out.emplace(fmt::format("cross_key_cache.{}", i), keys[i]);
    out.emplace(fmt::format("cross_value_cache.{}", i), values.at(i));
  }
  return out;
}

CrossAttentionCache CrossAttentionCache::from_named(const std::map<std::string, Tensor>& tensors) {
  CrossAttentionCache c;
  const size_t layers = tensors.size() / 2;
  for (size_t i = 0; i < layers; ++i) {
    for (const char* kind : {"key", "value"}) {
      const std::string name = fmt::format("cross_{}_cache.{}", kind, i);
      auto it = tensors.find(name);
      INGOT_CHECK(it != tensors.end(), ValueError,
                  "[CrossAttentionCache] '{}' is missing ({} tensors given: cross_key_cache.N and "
                  "cross_value_cache.N for every decoder layer N)",
                  name, tensors.size());
      (kind[0] == 'k' ? c.keys : c.values).push_back(it->second);
    }
  }
  INGOT_CHECK(tensors.size() == 2 * layers, ValueError,
              "[CrossAttentionCache] {} tensors given; expected a key and a value per layer",
              tensors.size());
  return c;
}

std::vector<int64_t> EncoderDecoderModel::decoder_prompt(const std::string& model_folder) const {
  // generation_config.json (or config.json without one), as transformers' generate.
  GenerationConfig g = GenerationConfig::from_folder(model_folder);
  return {g.decoder_start_token_id.value_or(decoder_start_token_id())};
}

}  // namespace ingot::models
