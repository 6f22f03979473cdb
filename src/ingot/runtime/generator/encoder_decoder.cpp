// runtime::Generator's encoder-decoder path (the manifest's encoder-decoder pipeline):
// the encoder and cross_kv run once per input, then the decode loop from the decoder
// prompt reuses their K/V every step (docs/generation.md).
#include <utility>

#include "ingot/ops/functional.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::runtime {

void Generator::set_encoder_decoder(const generation::EncoderDecoderPipeline& p) {
  for (const char* name : {"encoder", "cross_kv"}) {
    INGOT_CHECK(manifest_.has_component(name), ValueError,
                "[Generator] an encoder-decoder generator needs a '{}' component (export with "
                "exporters::Exporter::export_for_generation)",
                name);
  }
  INGOT_CHECK(cross_inputs_ > 0, ValueError,
              "[Generator] the decode component takes no cross-attention inputs "
              "(cross_key_cache.N, cross_value_cache.N): it is not an encoder-decoder's decode");
  encoder_input_ = p.encoder_input;
  set_decoder_prompt(p.decoder_prompt);
}

void Generator::set_decoder_prompt(std::vector<int64_t> decoder_prompt) {
  INGOT_CHECK(is_encoder_decoder(), ValueError,
              "[Generator] a decoder prompt was given but these components are not an "
              "encoder-decoder model's");
  INGOT_CHECK(!decoder_prompt.empty(), ValueError,
              "[Generator] the decoder prompt is empty; it starts with decoder_start_token_id");
  decoder_prompt_ = std::move(decoder_prompt);
}

std::vector<int64_t> Generator::generate_from_encoder_input(const Tensor& encoder_input,
                                                            const GenerateOptions& o,
                                                            GenerationStats* stats) {
  INGOT_CHECK(is_encoder_decoder(), ValueError,
              "[Generator] an encoder input was given but these components are not an "
              "encoder-decoder model's (the manifest has no encoder-decoder pipeline)");
  INGOT_CHECK(encoder_input.defined(), ValueError, "[Generator] the encoder input '{}' is missing",
              encoder_input_);
  // The encoder and the cross-attention projections run once per input; every decode
  // step reuses the cross K/V.
  Tensor states = encoder_->run({encoder_input}).at(0);  // [1, source, d_model]
  std::vector<Tensor> kv = cross_kv_->run({states});
  // decode's cross-attention input X is cross_kv's output X (the pipeline's wiring).
  cross_.clear();
  for (size_t i = 0; i < kv.size() && i < cross_kv_outputs_.size(); ++i)
    cross_.emplace(cross_kv_outputs_[i], kv[i]);
  for (const generation::StepInput& in : decode_layout_.inputs) {
    if (in.role != generation::InputRole::kCrossKey &&
        in.role != generation::InputRole::kCrossValue)
      continue;
    INGOT_CHECK(cross_.contains(in.name), ValueError,
                "[Generator] the cross_kv component does not output '{}', which decode takes",
                in.name);
  }
  last_prompt_ = decoder_prompt_;
  if (prompt_builder_) {
    auto first_logits = [&] {
      reset_cache();
      step_ids_.data<int64_t>()[0] = decoder_prompt_.at(0);
      Tensor logits = run(*decode_, step_ids_);  // [1, 1, vocab]
      return contiguous(select(select(logits, 0, 0), 0, -1));
    };
    last_prompt_ = prompt_builder_(first_logits);
  }
  return generate(last_prompt_, o, stats);
}

}  // namespace ingot::runtime
