// genai_config.json: the file ONNX Runtime GenAI (`onnxruntime_genai.Model(dir)`) reads to
// drive a decoder ONNX model, written for a decode component in the growing past/present
// cache layout (CacheLayout::kPastPresent; names in past_present_names.h).
//
//   model.type                 the GenAI model type (= config.json's model_type, for the
//                              decoder-only types GenAI knows; others are refused)
//   model.decoder.filename     the decode component's file (decode.onnx)
//   model.decoder.inputs       input_ids, attention_mask, position_ids,
//                              past_key_values.%d.key / .value
//   model.decoder.outputs      logits, present.%d.key / .value
//   model.decoder.*            head_size, hidden_size, num_attention_heads,
//                              num_key_value_heads, num_hidden_layers (the model's cache
//                              spec for the kv geometry, config.json for the rest)
//   model.context_length       the export's bound on past + tokens (max_cache_len)
//   model.bos/eos/pad_token_id from generation_config.json, completed from config.json as
//                              transformers does (pad: the first eos when unset)
//   search                     greedy/sampling defaults from generation_config.json,
//                              past_present_share_buffer false, max_length = context_length
#pragma once

#include <string>

#include "ingot/models/model.h"

namespace ingot::exporters::onnx {

struct GenaiConfigOptions {
  std::string model_folder;  // config.json (+ generation_config.json)
  std::string decoder_file;  // the decode component's file name, relative to the directory
  int64_t context_length = 0;
};

// The genai_config.json text for `model`. ValueError naming config.json when a key it
// needs is missing, NotSupportedError naming the model_type when GenAI has no such type.
std::string genai_config_json(const models::PretrainedModel& model, const GenaiConfigOptions& o);

}  // namespace ingot::exporters::onnx
