#include "ingot/exporters/generation_capture.h"

#include "ingot/generation/generate.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

void check_cache_derives_mask_and_positions(const CapturedCall& call, const std::string& phase) {
  // A StaticCache at position `pos` serving `q` tokens shows slots [0, pos + q) and
  // gives positions pos .. pos + q - 1.
  const int64_t pos = nn::StaticCache::from_named_tensors(call.cache).seq_length();
  const int64_t q = call.input_ids.size(1);
  Tensor mask = contiguous(to(call.attention_mask, DType::I64));
  Tensor positions = contiguous(to(call.position_ids, DType::I64));
  bool derivable = mask.size(0) == 1 && positions.size(0) == 1;
  for (int64_t j = 0; derivable && j < mask.size(1); ++j)
    derivable = mask.data<int64_t>()[j] == (j < pos + q);
  for (int64_t j = 0; derivable && j < q; ++j) derivable = positions.data<int64_t>()[j] == pos + j;
  INGOT_CHECK(derivable, NotSupportedError,
              "[export_for_generation] the {} call of generate passed an attention mask or "
              "positions the cache cannot derive (a padded or batched prompt); exporting them as "
              "inputs is not supported yet",
              phase);
}

std::map<std::string, CapturedCall> decompose_for_generation(models::PretrainedModel& model,
                                                             const Tensor& prompt_ids,
                                                             const GenerationExportOptions& o,
                                                             int64_t new_tokens) {
  std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), NotSupportedError,
              "[export_for_generation] {} is not a decoder with a KV cache; generation export "
              "needs a causal LM",
              model.architecture());
  INGOT_CHECK(
      new_tokens >= 2, ValueError,
      "[decompose_for_generation] needs at least 2 new tokens (a prefill and a decode call)");
  nn::StaticCache cache(*spec, o.batch, o.max_cache_len);
  std::vector<CapturedCall> calls;
  generation::GenerationConfig config;
  config.max_new_tokens = new_tokens;
  config.cache = generation::CacheKind::Static;
  config.max_cache_len = o.max_cache_len;
  generation::GenerateOptions go;
  go.cache = &cache;
  go.forward = [&](const models::ModelInputs& in) {
    CapturedCall c;
    c.input_ids = clone(in.input_ids);
    c.attention_mask = in.attention_mask.defined() ? clone(in.attention_mask) : Tensor();
    c.position_ids = in.position_ids.defined() ? clone(in.position_ids) : Tensor();
    for (const auto& [name, t] : cache.named_tensors()) c.cache.emplace_back(name, clone(t));
    calls.push_back(std::move(c));
    return model.forward(in);
  };
  generation::generate(model, prompt_ids, config, go);
  INGOT_CHECK(calls.size() >= 2, InternalError,
              "[decompose_for_generation] generate made {} forward calls", calls.size());
  return {{"prefill", calls[0]}, {"decode", calls[1]}};
}

Tensor example_causal_mask(const CapturedCall& call) {
  const int64_t slots = call.attention_mask.size(1);
  Tensor k_pos = reshape(arange(slots, DType::I64), {1, 1, 1, slots});  // [1, 1, 1, L]
  Tensor q_pos = unsqueeze(unsqueeze(to(call.position_ids, DType::I64), 1), 3);  // [b, 1, q, 1]
  Tensor keep = unsqueeze(unsqueeze(ne(call.attention_mask, 0), 1), 1);  // [b, 1, 1, L]
  return contiguous(logical_and(le(k_pos, q_pos), keep));             // [b, 1, q, L] bool
}

Tensor example_generation_prompt(int64_t batch) {
  std::vector<int64_t> ids;
  for (int64_t b = 0; b < batch; ++b) ids.insert(ids.end(), {1, 2, 3, 4});
  return Tensor::from_vector(ids, {batch, 4});
}

}  // namespace ingot::exporters
