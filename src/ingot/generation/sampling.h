// Choosing the next token from one row of logits as transformers' generate does: the
// logits processors that apply to greedy decoding too (repetition penalty), then, when
// sampling, the warpers (temperature, top-k, top-p, min-p, in that order) and a draw from
// ingot's own deterministic random generator (the same seed gives the same tokens on
// every machine); else the argmax.
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
  double min_p = 0.0;        // keep tokens with probability >= min_p * the best's; 0 = off
  // > 0: the logits of every token seen so far (prompt + generated) are divided by it
  // (multiplied when negative); 1 = off. Applies to greedy decoding too.
  double repetition_penalty = 1.0;
};

// In place on one row of logits, as transformers' warpers do: removed tokens become -inf.
void apply_temperature(std::span<float> logits, double temperature);
// transformers' TopKLogitsWarper: k is clamped to [1, vocab].
void top_k_filter(std::span<float> logits, int64_t k);
// transformers' TopPLogitsWarper: sorted ascending, a token is removed when the
// probability of it and every less likely token is <= 1 - top_p; the best always stays.
void top_p_filter(std::span<float> logits, double top_p);
// transformers' MinPLogitsWarper (min_tokens_to_keep 1): a token is removed when its
// probability is below min_p times the best token's; min_p in [0, 1].
void min_p_filter(std::span<float> logits, double min_p);
// temperature, top-k, top-p, min-p in that order (each skipped when off): the warpers,
// for sampling only.
void warp(std::span<float> logits, const SamplingParams& params);

// transformers' RepetitionPenaltyLogitsProcessor: the logit of every distinct id of
// `seen` is multiplied by `penalty` when negative, else divided by it. Ids outside
// [0, logits.size()) are ignored (transformers drops ids beyond the vocabulary); penalty
// must be > 0.
void apply_repetition_penalty(std::span<float> logits, std::span<const int64_t> seen,
                              double penalty);
// All of transformers' processing of one row for the next token after `seen` (the ids so
// far, without left padding): the repetition penalty, then warp() when `do_sample`.
void process(std::span<float> logits, std::span<const int64_t> seen, const SamplingParams& params,
             bool do_sample);
// process() then sample() (do_sample) or argmax(): the next token after `seen`.
int64_t next_token(std::span<float> logits, std::span<const int64_t> seen,
                   const SamplingParams& params, bool do_sample, Rng& rng);

// Index of the first maximum (torch.argmax).
int64_t argmax(std::span<const float> logits);
// A draw from softmax(logits) (-inf = probability 0) with one uniform() of `rng`.
int64_t sample(std::span<const float> logits, Rng& rng);

// warp() on every row of a [rows, vocab] float32 tensor (a copy); for tests and callers
// that want transformers' processed scores.
Tensor warp_logits(const Tensor& logits, const SamplingParams& params);

}  // namespace ingot::generation
