// Exporting Hugging Face models (models::PretrainedModel) with their named inputs and
// outputs, without the exporter framework's stages (Exporter::export_ runs those): the program's
// inputs are `input_ids`, `attention_mask`, ... and its outputs `logits` (causal LMs) or
// `last_hidden_state` / `pooler_output` (encoders), as transformers' exporters name them.
#pragma once

#include <optional>

#include "ingot/export/export.h"
#include "ingot/models/model.h"

// ModelInputs as a pytree: its tensor fields by HF name; an absent (undefined) field is a
// static None leaf. The cache and flags are not inputs of an exported forward.
template <>
struct ingot::Pytree<ingot::models::ModelInputs> {
  static TreeSpec flatten(const models::ModelInputs& in, Flattener& f);
  static models::ModelInputs unflatten(const TreeSpec& spec, Unflattener& u);
};

namespace ingot::exporters {

struct PretrainedExportOptions {
  // Dims batch (dim 0) and seq (dim 1) of every input are dynamic: Dim("batch", 1,
  // max_batch) and Dim("seq", 1, max_seq).
  bool dynamic = false;
  int64_t max_batch = 1024;
  int64_t max_seq = 4096;
  // Replaces the default spec (a dict by input name, see DynamicShapes::from_json).
  std::optional<DynamicShapes> dynamic_shapes;
  int64_t example_batch = 2, example_seq = 8;
};

// Example inputs the model accepts: input_ids (token ids 0, 1, 2, ... modulo 100),
// attention_mask of ones, token_type_ids of zeros for models that take them.
models::ModelInputs example_model_inputs(const models::PretrainedModel& model, int64_t batch,
                                         int64_t seq);

// Traces model.forward on example inputs into a program with named inputs and outputs.
ExportedProgram export_pretrained(models::PretrainedModel& model,
                                  const PretrainedExportOptions& options = {});

}  // namespace ingot::exporters
