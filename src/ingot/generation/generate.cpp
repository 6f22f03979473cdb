#include "ingot/generation/generate.h"

#include <algorithm>
#include <chrono>

#include "ingot/ops/functional.h"

namespace ingot::generation {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The host-side state of a generation: every row's tokens, which of its fed tokens are
// real (prompt padding is not), and the masks / positions the next forward receives.
class Rows {
 public:
  Rows(const Tensor& input_ids, const Tensor& attention_mask) {
    Tensor ids = contiguous(input_ids);
    batch_ = ids.size(0);
    prompt_ = ids.size(1);
    const int64_t* id = ids.data<int64_t>();
    Tensor mask = attention_mask.defined() ? contiguous(to(attention_mask, DType::I64)) : Tensor();
    const int64_t* m = mask.defined() ? mask.data<int64_t>() : nullptr;
    tokens_.resize(size_t(batch_));
    real_.resize(size_t(batch_));
    for (int64_t r = 0; r < batch_; ++r) {
      int64_t real = 0;
      for (int64_t j = 0; j < prompt_; ++j) {
        tokens_[r].push_back(id[r * prompt_ + j]);
        const int64_t keep = m ? (m[r * prompt_ + j] != 0) : 1;
        real_[r].push_back(keep);
        real += keep;
      }
      INGOT_CHECK(real > 0, ValueError,
                  "[generate] row {} of the prompt is only padding (its attention_mask is all "
                  "0): every row needs at least one token",
                  r);
    }
  }

  int64_t batch() const { return batch_; }
  int64_t prompt() const { return prompt_; }
  int64_t fed() const { return int64_t(real_[0].size()); }

  // [batch, slots] 0/1 over the tokens fed so far (including this step's), 0 beyond.
  Tensor attention_mask(int64_t slots) const {
    std::vector<int64_t> out(size_t(batch_ * slots), 0);
    for (int64_t r = 0; r < batch_; ++r) {
      std::copy(real_[r].begin(), real_[r].end(), out.begin() + r * slots);
    }
    return Tensor::from_vector<int64_t>(out, {batch_, slots});
  }

  // [batch, q] positions of the last q fed tokens: real tokens before them, counted per
  // row (transformers: cumsum(mask) - 1, and 1 at padding).
  Tensor position_ids(int64_t q) const {
    std::vector<int64_t> out;
    for (int64_t r = 0; r < batch_; ++r) {
      int64_t count = 0;
      const int64_t n = int64_t(real_[r].size());
      for (int64_t j = 0; j < n; ++j) {
        count += real_[r][j];
        if (j >= n - q) out.push_back(real_[r][j] ? count - 1 : 1);
      }
    }
    return Tensor::from_vector<int64_t>(out, {batch_, q});
  }

  // Appends one token per row (a real token: mask 1).
  void append(const std::vector<int64_t>& next) {
    for (int64_t r = 0; r < batch_; ++r) {
      tokens_[r].push_back(next[r]);
      real_[r].push_back(1);
    }
  }

  // Row r's tokens from its first real one (what the repetition penalty looks at).
  std::span<const int64_t> seen(int64_t r) const {
    const auto first = std::find(real_[r].begin(), real_[r].end(), 1) - real_[r].begin();
    return std::span<const int64_t>(tokens_[r]).subspan(size_t(first));
  }

  Tensor sequences() const {
    std::vector<int64_t> flat;
    for (const auto& row : tokens_) flat.insert(flat.end(), row.begin(), row.end());
    return Tensor::from_vector<int64_t>(flat, {batch_, int64_t(tokens_[0].size())});
  }

 private:
  int64_t batch_ = 0, prompt_ = 0;
  std::vector<std::vector<int64_t>> tokens_;
  std::vector<std::vector<int64_t>> real_;  // 1 = a real token, 0 = prompt padding
};

void check_prompt(const Tensor& input_ids, const Tensor& attention_mask) {
  INGOT_CHECK(input_ids.defined() && input_ids.dim() == 2, ShapeError,
              "[generate] input_ids must be [batch, prompt], got {}",
              input_ids.defined() ? input_ids.shape_string() : "nothing");
  INGOT_CHECK(input_ids.dtype() == DType::I64, DTypeError,
              "[generate] input_ids must be int64, got {}", input_ids.dtype());
  INGOT_CHECK(input_ids.size(0) > 0 && input_ids.size(1) > 0, ValueError,
              "[generate] the prompt is empty (input_ids {}): give at least one token per row "
              "(for example the tokenizer's BOS token)",
              input_ids.shape_string());
  if (attention_mask.defined()) {
    INGOT_CHECK(attention_mask.dim() == 2 && attention_mask.size(0) == input_ids.size(0) &&
                    attention_mask.size(1) == input_ids.size(1),
                ShapeError, "[generate] attention_mask must match input_ids {}, got {}",
                input_ids.shape_string(), attention_mask.shape_string());
  }
}

}  // namespace

void GenerationConfig::validate() const {
  INGOT_CHECK(max_new_tokens >= 1, ValueError, "[generate] max_new_tokens must be >= 1, got {}",
              max_new_tokens);
  INGOT_CHECK(max_cache_len >= 0, ValueError,
              "[generate] max_cache_len must be >= 0 (0 = prompt + max_new_tokens), got {}",
              max_cache_len);
  for (int64_t t : stop_token_ids) {
    INGOT_CHECK(t >= 0, ValueError, "[generate] stop token ids must be >= 0, got {}", t);
  }
  if (do_sample) {
    INGOT_CHECK(temperature > 0 && std::isfinite(temperature), ValueError,
                "[generate] temperature must be a positive number when sampling, got {} (use "
                "do_sample = false for greedy decoding)",
                temperature);
    INGOT_CHECK(top_k >= 0, ValueError, "[generate] top_k must be >= 0 (0 = off), got {}", top_k);
    INGOT_CHECK(top_p > 0 && top_p <= 1, ValueError, "[generate] top_p must be in (0, 1], got {}",
                top_p);
    INGOT_CHECK(min_p >= 0 && min_p <= 1, ValueError,
                "[generate] min_p must be in [0, 1] (0 = off), got {}", min_p);
  }
  INGOT_CHECK(repetition_penalty > 0 && std::isfinite(repetition_penalty), ValueError,
              "[generate] repetition_penalty must be a positive number (1 = off), got {}",
              repetition_penalty);
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::MaxNewTokens:
      return "max_new_tokens";
    case StopReason::StopToken:
      return "stop_token";
    case StopReason::CacheFull:
      return "cache_full";
    case StopReason::Callback:
      return "callback";
  }
  return "?";
}

std::unique_ptr<nn::Cache> make_cache(const models::PretrainedModel& model, CacheKind kind,
                                      int64_t batch, int64_t max_cache_len) {
  const std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), ValueError,
              "[generate] {} has no KV cache: generation needs a causal LM", model.architecture());
  if (kind == CacheKind::Dynamic) return std::make_unique<nn::KVCache>();
  INGOT_CHECK(max_cache_len > 0, ValueError,
              "[generate] a static cache needs max_cache_len > 0, got {}", max_cache_len);
  return std::make_unique<nn::StaticCache>(*spec, batch, max_cache_len);
}

GenerationResult generate(models::PretrainedModel& model, const Tensor& input_ids,
                          const GenerationConfig& config, const GenerateOptions& options) {
  config.validate();
  check_prompt(input_ids, options.attention_mask);
  Rows rows(input_ids, options.attention_mask);
  const int64_t batch = rows.batch(), prompt = rows.prompt();

  std::unique_ptr<nn::Cache> owned;
  nn::Cache* cache = options.cache;
  if (cache == nullptr) {
    const int64_t len =
        config.max_cache_len > 0 ? config.max_cache_len : prompt + config.max_new_tokens;
    owned = make_cache(model, config.cache, batch, config.cache == CacheKind::Static ? len : 0);
    cache = owned.get();
  } else {
    INGOT_CHECK(cache->seq_length() == 0, ValueError,
                "[generate] the given cache already holds {} tokens; reset() it first",
                cache->seq_length());
  }
  const std::optional<int64_t> capacity = cache->max_cache_len();
  INGOT_CHECK(!capacity || prompt <= *capacity, ValueError,
              "[generate] the prompt has {} tokens but the static cache holds max_cache_len {}: "
              "raise max_cache_len or shorten the prompt",
              prompt, *capacity);

  const ForwardFn forward =
      options.forward ? options.forward
                      : [&model](const models::ModelInputs& in) { return model.forward(in); };
  const SamplingParams params{config.temperature, config.top_k, config.top_p, config.min_p,
                              config.repetition_penalty};
  const int64_t pad = config.pad_token_id.value_or(
      config.stop_token_ids.empty() ? 0 : config.stop_token_ids.front());
  Rng rng(config.seed);
  std::vector<bool> finished(size_t(batch), false);
  GenerationResult result;
  result.prefill_tokens = batch * prompt;

  Tensor step_ids = input_ids;  // [batch, q]
  for (;;) {
    const auto t0 = Clock::now();
    const int64_t q = step_ids.size(1);
    models::ModelInputs in;
    in.input_ids = step_ids;
    in.attention_mask = rows.attention_mask(capacity ? *capacity : rows.fed());
    in.position_ids = rows.position_ids(q);
    in.cache = cache;
    Tensor logits = forward(in).logits;  // [batch, q, vocab]
    INGOT_CHECK(logits.defined() && logits.dim() == 3, ShapeError,
                "[generate] the forward must return logits [batch, q, vocab], got {}",
                logits.defined() ? logits.shape_string() : "nothing");
    Tensor last = clone(to(select(logits, 1, -1), DType::F32));  // [batch, vocab], own copy
    const int64_t vocab = last.size(1);
    float* rows_logits = last.data<float>();
    for (int64_t r = 0; r < batch; ++r) {  // every row, as transformers' scores show
      process(std::span<float>(rows_logits + r * vocab, size_t(vocab)), rows.seen(r), params,
              config.do_sample);
    }

    std::vector<int64_t> next(size_t(batch), pad);
    bool keep_going = true;
    for (int64_t r = 0; r < batch; ++r) {
      if (finished[r]) continue;
      std::span<const float> row(rows_logits + r * vocab, size_t(vocab));
      next[r] = config.do_sample ? sample(row, rng) : argmax(row);
      if (std::find(config.stop_token_ids.begin(), config.stop_token_ids.end(), next[r]) !=
          config.stop_token_ids.end()) {
        finished[r] = true;
      }
      if (options.on_token && !options.on_token(r, next[r])) keep_going = false;
    }
    if (config.output_scores) result.scores.push_back(last);
    rows.append(next);
    ++result.num_new_tokens;
    (result.num_new_tokens == 1 ? result.prefill_seconds : result.decode_seconds) +=
        seconds_since(t0);

    const int64_t cached = prompt + result.num_new_tokens - 1;  // the new token is not fed yet
    if (std::all_of(finished.begin(), finished.end(), [](bool f) { return f; })) {
      result.stop_reason = StopReason::StopToken;
      result.message = "every row emitted a stop token";
      break;
    }
    if (!keep_going) {
      result.stop_reason = StopReason::Callback;
      result.message = "the token callback asked to stop";
      break;
    }
    if (result.num_new_tokens >= config.max_new_tokens) {
      result.stop_reason = StopReason::MaxNewTokens;
      result.message = fmt::format("generated max_new_tokens = {}", config.max_new_tokens);
      break;
    }
    if (capacity && cached + 1 > *capacity) {
      result.stop_reason = StopReason::CacheFull;
      result.message = fmt::format(
          "the static cache is full: max_cache_len {} holds the prompt ({} tokens) and {} "
          "generated tokens; stopped after {} new tokens (raise max_cache_len for more)",
          *capacity, prompt, cached - prompt, result.num_new_tokens);
      break;
    }
    step_ids = Tensor::from_vector<int64_t>(next, {batch, 1});
  }
  result.decode_tokens = batch * (result.num_new_tokens - 1);
  result.sequences = rows.sequences();
  return result;
}

}  // namespace ingot::generation
