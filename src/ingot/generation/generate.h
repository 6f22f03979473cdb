// Eager text generation with a causal LM (transformers' `generate` for greedy search and
// sampling): one prefill forward over the prompt, then one forward per new token, with a
// growing KVCache or a StaticCache written in place.
//
// Every forward goes through a ForwardFn, so a caller can observe the real arguments of
// the prefill and decode calls (export_for_generation records them there) or replace the
// eager model by an exported program. What each call receives (ModelInputs):
//   input_ids      [batch, q] int64: the prompt, then the previous step's tokens (q = 1)
//   attention_mask [batch, key slots] int64 0/1: 1 for every real token so far, 0 for
//                  prompt padding; key slots = past + q (KVCache) or max_cache_len
//                  (StaticCache, 0 beyond the tokens so far) — always given
//   position_ids   [batch, q] int64: positions counting real tokens only (left padding),
//                  as transformers computes them — always given
//   cache          the generation's cache (the forward advances it)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ingot/generation/sampling.h"
#include "ingot/models/model.h"

namespace ingot::generation {

enum class CacheKind { Dynamic, Static };

// What to generate. Defaults follow transformers' GenerationConfig.
struct GenerationConfig {
  int64_t max_new_tokens = 20;  // >= 1
  bool do_sample = false;       // false: greedy (sampling parameters are ignored)
  double temperature = 1.0;
  int64_t top_k = 50;
  double top_p = 1.0;
  double min_p = 0.0;  // 0 = off
  // 1 = off; applies to greedy decoding too, over each row's prompt (without its left
  // padding) and new tokens, as transformers does.
  double repetition_penalty = 1.0;
  uint64_t seed = 0;  // the sampling generator's seed (Rng)
  // A row that emits one of these stops (the stop token is kept in its sequence).
  std::vector<int64_t> stop_token_ids;
  // Appended to rows that stopped while others continue; default: the first stop token.
  std::optional<int64_t> pad_token_id;
  CacheKind cache = CacheKind::Dynamic;
  // Static cache size; 0 = prompt length + max_new_tokens.
  int64_t max_cache_len = 0;
  // Keep the (warped, for sampling) logits of every step in GenerationResult::scores.
  bool output_scores = false;

  // Throws ValueError naming the first invalid field.
  void validate() const;
};

using ForwardFn = std::function<models::ModelOutputs(const models::ModelInputs&)>;
// Called for every new token of every row still running; return false to stop.
using TokenCallback = std::function<bool(int64_t row, int64_t token)>;

struct GenerateOptions {
  Tensor attention_mask;  // [batch, prompt] 0/1 for left-padded prompts; default all 1
  ForwardFn forward;      // default: the model's forward
  // A cache to use instead of one built from the config: empty, for the model and the
  // batch (the caller owns it; e.g. a runtime that allocates its cache once).
  nn::Cache* cache = nullptr;
  TokenCallback on_token;  // streaming
};

enum class StopReason { MaxNewTokens, StopToken, CacheFull, Callback };
const char* stop_reason_name(StopReason reason);

struct GenerationResult {
  Tensor sequences;  // [batch, prompt + new] int64: prompt then new tokens
  int64_t num_new_tokens = 0;
  StopReason stop_reason = StopReason::MaxNewTokens;
  std::string message;         // why it stopped, in words
  std::vector<Tensor> scores;  // per step [batch, vocab] float32 (output_scores)
  int64_t prefill_tokens = 0;  // batch * prompt
  double prefill_seconds = 0;  // first forward + its token choice
  int64_t decode_tokens = 0;   // batch * (new tokens - 1): tokens fed back one at a time
  double decode_seconds = 0;
};

// Generates up to max_new_tokens for each row of input_ids [batch, prompt] (int64).
// Errors (ValueError): empty prompt, a row that is only padding, a prompt longer than
// the static cache, a model without a KV cache. Reaching the static cache's
// max_cache_len stops with StopReason::CacheFull (a cache of L slots holds the prompt and
// all but the last new token: at most L - prompt + 1 new tokens).
GenerationResult generate(models::PretrainedModel& model, const Tensor& input_ids,
                          const GenerationConfig& config, const GenerateOptions& options = {});

// A cache of `kind` for `model` (its cache_spec()), for `batch` sequences; max_cache_len
// is required for the static cache.
std::unique_ptr<nn::Cache> make_cache(const models::PretrainedModel& model, CacheKind kind,
                                      int64_t batch, int64_t max_cache_len = 0);

}  // namespace ingot::generation
