// The committed decoder checkpoints (tests/fixtures/models/<name>, with greedy runs in
// tests/fixtures/generation/<name>), so every test that runs "each decoder" runs the
// same list. The first eight come from tools/reference/make_model_fixtures.py, the rest
// from make_architecture_fixtures.py.
#pragma once

#include <string>
#include <vector>

namespace ingot::testing {

inline const std::vector<std::string>& decoder_fixtures() {
  static const std::vector<std::string> names = {
      "llama", "llama_llama3_rope_tied_bf16", "mistral_sliding_window", "qwen2_linear_rope",
      "qwen2_yarn_rope", "qwen3", "qwen3_dynamic_rope_f16", "gpt2",
      // make_architecture_fixtures.py
      "gemma", "gemma2", "gemma3", "qwen2_sliding_window", "qwen3_sliding_window",
      "phi3_longrope", "phi3_longrope_short", "olmo2", "granite", "gpt_neox", "stablelm",
      "stablelm_parallel_residual", "smollm3", "mixtral", "qwen3_moe"};
  return names;
}

// The decoders plus the encoder (BERT).
inline std::vector<std::string> model_fixtures() {
  std::vector<std::string> names = decoder_fixtures();
  names.push_back("bert");
  return names;
}

}  // namespace ingot::testing
