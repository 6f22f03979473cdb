#include "ingot/generation/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/ops/functional.h"

namespace ingot::generation {
namespace {

constexpr float kRemoved = -std::numeric_limits<float>::infinity();

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// softmax(logits) in double; -inf entries get 0.
std::vector<double> probabilities(std::span<const float> logits) {
  const float top = *std::max_element(logits.begin(), logits.end());
  INGOT_CHECK(std::isfinite(top), ValueError,
              "[generate] every logit is -inf, NaN or +inf (max {}): nothing to sample", top);
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    p[i] = logits[i] == kRemoved ? 0.0 : std::exp(double(logits[i]) - double(top));
    sum += p[i];
  }
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& s : s_) s = splitmix64(state);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  return double(next() >> 11) * 0x1.0p-53;
}

void apply_temperature(std::span<float> logits, double temperature) {
  INGOT_CHECK(temperature > 0 && std::isfinite(temperature), ValueError,
              "[generate] temperature must be a positive number, got {}", temperature);
  if (temperature == 1.0) return;
  const float t = float(temperature);  // float32 division, as torch does on float logits
  for (float& x : logits) x = x / t;
}

void top_k_filter(std::span<float> logits, int64_t k) {
  INGOT_CHECK(k >= 0, ValueError, "[generate] top_k must be >= 0 (0 = off), got {}", k);
  const size_t keep = size_t(std::clamp<int64_t>(k, 1, int64_t(logits.size())));
  if (k == 0 || keep >= logits.size()) return;
  std::vector<float> sorted(logits.begin(), logits.end());
  std::nth_element(sorted.begin(), sorted.begin() + ptrdiff_t(keep - 1), sorted.end(),
                   std::greater<float>());
  const float kth = sorted[keep - 1];
  for (float& x : logits) {
    if (x < kth) x = kRemoved;
  }
}

void top_p_filter(std::span<float> logits, double top_p) {
  INGOT_CHECK(top_p > 0 && top_p <= 1, ValueError, "[generate] top_p must be in (0, 1], got {}",
              top_p);
  if (top_p >= 1.0) return;
  const std::vector<double> p = probabilities(logits);
  std::vector<size_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return logits[a] < logits[b]; });  // ascending
  double cumulative = 0;
  for (size_t r = 0; r + 1 < order.size(); ++r) {  // the most likely token always stays
    cumulative += p[order[r]];
    if (cumulative > 1.0 - top_p) break;
    logits[order[r]] = kRemoved;
  }
}

void min_p_filter(std::span<float> logits, double min_p) {
  INGOT_CHECK(min_p >= 0 && min_p <= 1, ValueError,
              "[generate] min_p must be in [0, 1] (0 = off), got {}", min_p);
  if (min_p == 0) return;
  const std::vector<double> p = probabilities(logits);
  const double threshold = min_p * *std::max_element(p.begin(), p.end());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (p[i] < threshold) logits[i] = kRemoved;  // never the best: min_p <= 1
  }
}

void warp(std::span<float> logits, const SamplingParams& params) {
  apply_temperature(logits, params.temperature);
  top_k_filter(logits, params.top_k);
  top_p_filter(logits, params.top_p);
  min_p_filter(logits, params.min_p);
}

void apply_repetition_penalty(std::span<float> logits, std::span<const int64_t> seen,
                              double penalty) {
  INGOT_CHECK(penalty > 0 && std::isfinite(penalty), ValueError,
              "[generate] repetition_penalty must be a positive number (1 = off), got {}", penalty);
  if (penalty == 1.0) return;
  const float f = float(penalty);  // float32 arithmetic, as torch does on float logits
  std::vector<bool> done(logits.size(), false);
  for (int64_t id : seen) {
    if (id < 0 || id >= int64_t(logits.size()) || done[size_t(id)]) continue;
    done[size_t(id)] = true;
    float& x = logits[size_t(id)];
    x = x < 0 ? x * f : x / f;
  }
}

void process(std::span<float> logits, std::span<const int64_t> seen, const SamplingParams& params,
             bool do_sample) {
  apply_repetition_penalty(logits, seen, params.repetition_penalty);
  if (do_sample) warp(logits, params);
}

int64_t next_token(std::span<float> logits, std::span<const int64_t> seen,
                   const SamplingParams& params, bool do_sample, Rng& rng) {
  process(logits, seen, params, do_sample);
  return do_sample ? sample(logits, rng) : argmax(logits);
}

int64_t argmax(std::span<const float> logits) {
  INGOT_CHECK(!logits.empty(), ValueError, "[generate] empty logits row");
  return int64_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

int64_t sample(std::span<const float> logits, Rng& rng) {
  const std::vector<double> p = probabilities(logits);
  const double u = rng.uniform();
  double cumulative = 0;
  int64_t last_possible = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0) continue;
    last_possible = int64_t(i);
    cumulative += p[i];
    if (u < cumulative) return int64_t(i);
  }
  return last_possible;  // u within rounding of 1
}

Tensor warp_logits(const Tensor& logits, const SamplingParams& params) {
  INGOT_CHECK(logits.dim() == 2, ShapeError, "[warp_logits] logits must be [rows, vocab], got {}",
              logits.shape_string());
  Tensor out = clone(to(logits, DType::F32));  // contiguous float32 copy
  const int64_t rows = out.size(0), vocab = out.size(1);
  float* data = out.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    warp(std::span<float>(data + r * vocab, size_t(vocab)), params);
  return out;
}

}  // namespace ingot::generation
