#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingot::nn {

// Rotary position embedding parameters, as a Hugging Face config gives them
// (`rope_parameters` in transformers 5, or the older `rope_theta` + `rope_scaling`;
// models::ConfigReader::rope() reads both).
struct RopeConfig {
  std::string type = "default";  // default | linear | dynamic | llama3 | yarn | longrope
  double theta = 10000.0;
  double factor = 1.0;
  double partial_rotary_factor = 1.0;
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::optional<int64_t> original_max_position_embeddings;
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  std::optional<double> attention_factor;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  bool truncate = true;
  // longrope (Phi-3; "su" in older configs): per-frequency divisors [rotary_dim / 2],
  // the long set once a forward's positions reach original_max_position_embeddings.
  std::vector<double> short_factor, long_factor;
  // The model's max_position_embeddings when the rope parameters lack `factor`.
  std::optional<double> factor_given;
};

}  // namespace ingot::nn
