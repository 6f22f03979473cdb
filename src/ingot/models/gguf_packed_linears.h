// A GGUF's Q4_0 / Q8_0 matrices loaded into a model as packed layers.
//
// The layers that may take packed weights:
//  - the model's nn::Linear layers whose weight is not tied (neither side of
//    tied_weights()), Q4_0 or Q8_0;
//  - a DecoderLM's embedding table (model.embed_tokens), Q8_0 only: its rows are gathered
//    by ingot::quantized_embedding (int8 groups) and, when the LM head is tied to it,
//    multiplied by quantized_linear (DecoderLM::logits). A Q4_0 table stays float (no int4
//    row gather is written).
// Each of them whose GGUF tensor is 2-D Q4_0 / Q8_0 (formats/gguf_packed.h's table) is
// switched to its packed form (use_packed_weight) before the weights are loaded, so the
// model's forward, and every program traced from it, runs the quantised ops on the file's
// blocks.
#pragma once

#include <map>
#include <string>

#include "ingot/models/gguf_weights.h"
#include "ingot/models/model.h"

namespace ingot::models {

// `file`'s tensors for `model` (built from the file's config, weights not loaded yet), with
// packable layers switched to packed form when `keep_packed`; everything else as
// gguf_state_dict. The result's `packed` names the switched layers.
GgufWeights gguf_model_weights(PretrainedModel& model, const formats::GgufFile& file,
                               const GgufArchitecture& arch, bool keep_packed);

}  // namespace ingot::models
