// ExecuTorch's LLM-runner layout (what executorch.extension.llm.runner's TextLLMRunner
// loads): `forward(tokens [1, n], input_pos [1])` with the KV cache inside the program as
// mutable state, plus constant metadata methods (get_max_seq_len, get_max_context_len,
// get_vocab_size, get_bos_id, get_eos_ids, use_kv_cache, enable_dynamic_shape).
//
// It is made from the framework's multi-token decode component (export_for_generation):
// the cache user inputs become buffers initialised to an empty cache and their mutations
// buffer mutations. input_pos drives the step: the new tokens sit at input_pos[0] ..
// input_pos[0] + n - 1 (rotary, causal mask, the cache slots written), in place of the
// cache's own cache_position, so a runner may restart at 0 or rewrite a position.
#pragma once

#include <memory>
#include <vector>

#include "ingot/exporters/executorch/emitter.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/nn/cache.h"

namespace ingot::exporters::executorch {

struct LlmRunnerMetadata {
  int64_t max_seq_len = 0;  // the cache length
  int64_t vocab_size = 0;
  int64_t bos_id = 0;
  std::vector<int64_t> eos_ids;
};

// `decode`: a multi-token decode program (inputs input_ids + the cache tensors of
// `empty_cache`, by name). Emits forward and the metadata methods.
std::unique_ptr<ExecutorchProgram> llm_runner_program(const ExportedProgram& decode,
                                                      const nn::NamedTensors& empty_cache,
                                                      const LlmRunnerMetadata& meta);

// The LLM-runner program of `model` (what `ingot export --format executorch --task
// generation` writes as llm_runner.pte next to tokenizer.json): the framework's
// export_for_generation with multi_token_decode and the cache-derived mask and positions
// (options' other fields kept: max_cache_len is the runner's max_seq_len), then
// llm_runner_program. bos / eos ids from `model_folder`'s generation config (ValueError
// naming the folder when it sets no eos id); the vocab size from the logits.
std::unique_ptr<ExecutorchProgram> export_llm_runner(models::PretrainedModel& model,
                                                     const std::string& model_folder,
                                                     const NativeExportConfig& config,
                                                     GenerationExportOptions options);

}  // namespace ingot::exporters::executorch
