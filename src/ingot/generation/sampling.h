// Choosing the next token from one row of logits: greedy argmax, or sampling after
// transformers' warpers (temperature, then top-k, then top-p), with ingot's own
// deterministic random generator (the same seed gives the same tokens on every machine).
#pragma once

#include <cstdint>
#include <span>

#include "ingot/core/tensor.h"

namespace ingot::generation {

// xoshiro256** seeded through splitmix64: a small, fast generator whose output is fixed
// by the algorithm (std:: distributions are not portable, so uniform() is ours too).
class Rng {
 public:
  explicit Rng(uint64_t seed = 0);
  uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();

 private:
  uint64_t s_[4];
};

struct SamplingParams {
  double temperature = 1.0;  // > 0; logits are divided by it
  int64_t top_k = 50;        // keep tokens scoring at least the k-th best (ties kept); 0 = off
  double top_p = 1.0;        // keep the smallest top set whose probability reaches top_p; 1 = off
};

// In place on one row of logits, as transformers' warpers do: removed tokens become -inf.
void apply_temperature(std::span<float> logits, double temperature);
// transformers' TopKLogitsWarper: k is clamped to [1, vocab].
void top_k_filter(std::span<float> logits, int64_t k);
// transformers' TopPLogitsWarper: sorted ascending, a token is removed when the
// probability of it and every less likely token is <= 1 - top_p; the best always stays.
void top_p_filter(std::span<float> logits, double top_p);
// temperature, top-k, top-p in that order (each skipped when off).
void warp(std::span<float> logits, const SamplingParams& params);

// Index of the first maximum (torch.argmax).
int64_t argmax(std::span<const float> logits);
// A draw from softmax(logits) (-inf = probability 0) with one uniform() of `rng`.
int64_t sample(std::span<const float> logits, Rng& rng);

// warp() on every row of a [rows, vocab] float32 tensor (a copy); for tests and callers
// that want transformers' processed scores.
Tensor warp_logits(const Tensor& logits, const SamplingParams& params);

}  // namespace ingot::generation
