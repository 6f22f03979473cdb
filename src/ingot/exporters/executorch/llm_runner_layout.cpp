#include "ingot/exporters/executorch/llm_runner_layout.h"

#include <set>

#include "ingot/core/error.h"

namespace ingot::exporters::executorch {

std::unique_ptr<ExecutorchProgram> llm_runner_program(const ExportedProgram& decode,
                                                      const nn::NamedTensors& empty_cache,
                                                      const LlmRunnerMetadata& meta) {
  ExportedProgram p = decode;
  p.graph = std::make_shared<ir::Graph>(*decode.graph);  // rewritten below
  std::map<std::string, Tensor> cache(empty_cache.begin(), empty_cache.end());

  // The cache: user inputs -> buffers (initial value: the empty cache), their mutations ->
  // buffer mutations (program state, written back in place at the end of each call).
  size_t tokens_at = p.signature.inputs.size();
  for (size_t i = 0; i < p.signature.inputs.size(); ++i) {
    InputSpec& in = p.signature.inputs[i];
    if (in.kind != InputKind::UserInput) continue;
    if (auto it = cache.find(in.target); it != cache.end()) {
      in.kind = InputKind::Buffer;
      p.state[in.target] = it->second;
    } else if (tokens_at == p.signature.inputs.size()) {
      tokens_at = i;
    }
  }
  INGOT_CHECK(tokens_at < p.signature.inputs.size(), ValueError,
              "[executorch] the decode program has no token input");
  for (OutputSpec& o : p.signature.outputs)
    if (o.kind == OutputKind::UserInputMutation && cache.contains(o.target))
      o.kind = OutputKind::BufferMutation;

  // input_pos [1] (int64) after the tokens: the runner's start position, unused.
  const ir::ValueId pos = p.graph->add_tensor_value("input_pos", DType::I64, {sym::integer(1)});
  p.graph->inputs.insert(p.graph->inputs.begin() + std::ptrdiff_t(tokens_at + 1), pos);
  p.signature.inputs.insert(p.signature.inputs.begin() + std::ptrdiff_t(tokens_at + 1),
                            InputSpec{InputKind::UserInput, "input_pos", "input_pos"});

  auto a = std::make_unique<ExecutorchProgram>();
  const EmitSummary s = emit_method(p, EmitOptions{}, a->pte);
  IntListValue eos;
  emit_constant_method("get_max_seq_len", IntValue{meta.max_seq_len}, a->pte);
  emit_constant_method("get_max_context_len", IntValue{meta.max_seq_len}, a->pte);
  emit_constant_method("get_vocab_size", IntValue{meta.vocab_size}, a->pte);
  emit_constant_method("get_bos_id", IntValue{meta.bos_id}, a->pte);
  emit_constant_method("use_kv_cache", BoolValue{true}, a->pte);
  emit_constant_method("enable_dynamic_shape", BoolValue{true}, a->pte);
  // get_eos_ids returns one Int per eos id.
  ExecutionPlan eos_plan;
  eos_plan.name = "get_eos_ids";
  for (int64_t id : meta.eos_ids) eos_plan.outputs.push_back(eos_plan.add(IntValue{id}));
  a->pte.plans.push_back(std::move(eos_plan));
  a->input_names = s.input_names;
  a->output_names = s.output_names;
  a->planned_bytes = s.planned_bytes;
  a->planned_bytes_without_reuse = s.unplanned_bytes_if_no_reuse;
  a->program = std::move(p);
  a->notes.push_back("executorch: LLM-runner layout (cache as program state, metadata methods)");
  return a;
}

}  // namespace ingot::exporters::executorch
