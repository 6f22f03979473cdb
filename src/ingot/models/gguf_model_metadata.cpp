#include "ingot/models/gguf_model_metadata.h"

#include <cmath>
#include <filesystem>
#include <numbers>

#include "ingot/core/error.h"
#include "ingot/formats/gguf_writer.h"
#include "ingot/models/config.h"

namespace ingot::models {
namespace {

using formats::gguf_f32;
using formats::gguf_string;
using formats::gguf_u32;

// llama3 rope (Meta's frequency-dependent scaling) as llama.cpp applies it: a factor per
// frequency its rope divides the frequency by. Long wavelengths (beyond
// original / low_freq_factor) are divided by `factor`, short ones (below original /
// high_freq_factor) kept, those between blended smoothly.
std::vector<float> llama3_rope_factors(const nn::RopeConfig& r, int64_t head_dim,
                                       const std::string& origin) {
  INGOT_CHECK(r.original_max_position_embeddings.has_value(), NotSupportedError,
              "[gguf] {}: llama3 rope parameters without original_max_position_embeddings",
              origin);
  const double old_ctx = double(*r.original_max_position_embeddings);
  const double low_wavelen = old_ctx / r.low_freq_factor;
  const double high_wavelen = old_ctx / r.high_freq_factor;
  std::vector<float> out;
  for (int64_t i = 0; i < head_dim; i += 2) {
    const double freq = 1.0 / std::pow(r.theta, double(i) / double(head_dim));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double f = 1.0;
    if (wavelen > low_wavelen) {
      f = r.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth =
          (old_ctx / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
      f = 1.0 / ((1.0 - smooth) / r.factor + smooth);
    }
    out.push_back(float(f));
  }
  return out;
}

}  // namespace

GgufModelMetadata gguf_model_metadata(const std::string& folder) {
  const ConfigReader c = ConfigReader::from_file(folder + "/config.json");
  const std::string origin = "'" + c.origin() + "'";
  GgufModelMetadata out;
  out.arch = gguf_architecture_for_writing(c.architecture());
  const std::string a = out.arch.gguf_name + ".";
  auto set = [&](const std::string& key, formats::GgufValue v) {
    out.metadata.emplace_back(key, std::move(v));
  };
  std::string name = std::filesystem::path(folder).filename().string();
  if (name.empty()) name = std::filesystem::path(folder).parent_path().filename().string();
  set("general.architecture", gguf_string(out.arch.gguf_name));
  set("general.name", gguf_string(name));
  set("general.alignment", gguf_u32(32));

  const int64_t hidden = c.get_int("hidden_size");
  out.n_head = c.get_int("num_attention_heads");
  out.n_kv_head = c.get_int("num_key_value_heads", out.n_head);
  const int64_t head_dim = c.get_int("head_dim", hidden / out.n_head);
  out.tied = c.get_bool("tie_word_embeddings", false);
  set(a + "block_count", gguf_u32(uint32_t(c.get_int("num_hidden_layers"))));
  set(a + "context_length", gguf_u32(uint32_t(c.get_int("max_position_embeddings"))));
  set(a + "embedding_length", gguf_u32(uint32_t(hidden)));
  set(a + "feed_forward_length", gguf_u32(uint32_t(c.get_int("intermediate_size"))));
  set(a + "vocab_size", gguf_u32(uint32_t(c.get_int("vocab_size"))));
  set(a + "attention.head_count", gguf_u32(uint32_t(out.n_head)));
  set(a + "attention.head_count_kv", gguf_u32(uint32_t(out.n_kv_head)));
  set(a + "attention.key_length", gguf_u32(uint32_t(head_dim)));
  set(a + "attention.value_length", gguf_u32(uint32_t(head_dim)));
  set(a + "rope.dimension_count", gguf_u32(uint32_t(head_dim)));
  set(a + "attention.layer_norm_rms_epsilon", gguf_f32(float(c.get_double("rms_norm_eps"))));

  const nn::RopeConfig r = c.rope();
  INGOT_CHECK(r.partial_rotary_factor == 1.0, NotSupportedError,
              "[gguf] {}: partial_rotary_factor {} is not written to a GGUF by ingot", origin,
              r.partial_rotary_factor);
  set(a + "rope.freq_base", gguf_f32(float(r.theta)));
  if (r.type == "linear" || r.type == "yarn") {
    set(a + "rope.scaling.type", gguf_string(r.type));
    set(a + "rope.scaling.factor", gguf_f32(float(r.factor)));
    if (r.original_max_position_embeddings)
      set(a + "rope.scaling.original_context_length",
          gguf_u32(uint32_t(*r.original_max_position_embeddings)));
    if (r.type == "yarn" && r.attention_factor)
      set(a + "rope.scaling.attn_factor", gguf_f32(float(*r.attention_factor)));
  } else if (r.type == "llama3") {
    out.rope_freqs = llama3_rope_factors(r, head_dim, origin);
  } else {
    INGOT_CHECK(r.type == "default", NotSupportedError,
                "[gguf] {}: rope type '{}' (rope_parameters) is not written to a GGUF by ingot "
                "(written: default, linear, yarn, llama3)",
                origin, r.type);
  }

  // Sliding-window attention: llama.cpp's llama / qwen2 / qwen3 graphs attend to every
  // position, so a model that windows some layers would run differently.
  for (const std::string& t : c.get_string_list("layer_types")) {
    INGOT_CHECK(t != "sliding_attention", NotSupportedError,
                "[gguf] {}: layer_types has sliding_attention layers, which llama.cpp's '{}' "
                "graph does not window",
                origin, out.arch.gguf_name);
  }
  INGOT_CHECK(!c.get_bool("use_sliding_window", false), NotSupportedError,
              "[gguf] {}: use_sliding_window is true, which llama.cpp's '{}' graph does not "
              "window",
              origin, out.arch.gguf_name);
  if (c.architecture() == "MistralForCausalLM" && c.has("sliding_window")) {
    INGOT_CHECK(c.get_int("sliding_window") >= c.get_int("max_position_embeddings"),
                NotSupportedError,
                "[gguf] {}: sliding_window {} is shorter than max_position_embeddings {}; "
                "llama.cpp runs Mistral as 'llama', without a window",
                origin, c.get_int("sliding_window"), c.get_int("max_position_embeddings"));
  }
  return out;
}

}  // namespace ingot::models
