#include "ingot/exporters/executorch/llm_runner_layout.h"

#include <set>

#include "ingot/core/error.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/skips.h"
#include "ingot/models/generation_config.h"

namespace ingot::exporters::executorch {

namespace {

// Replaces every read of the cache_position input (a 0-d int64) by input_pos[0].
void use_input_pos_as_cache_position(ExportedProgram& p, ir::ValueId input_pos) {
  ir::Graph& g = *p.graph;
  ir::ValueId old = -1;
  for (size_t i = 0; i < p.signature.inputs.size(); ++i)
    if (p.signature.inputs[i].target == "cache_position") old = g.inputs[i];
  INGOT_CHECK(old >= 0, ValueError,
              "[executorch] the decode program has no cache_position input for input_pos to "
              "drive (a StaticCache's position)");
  const ir::ValueInfo& info = g.value(old);
  INGOT_CHECK(info.is_tensor() && info.dtype == DType::I64 && info.sizes.empty(), ValueError,
              "[executorch] the decode program's cache_position is {}, not a 0-d int64",
              ir::meta_str(info));
  ir::Node first;
  first.target = "select.int";  // input_pos[0]: [1] -> []
  first.args = {ir::TensorRef{input_pos}, sym::integer(0), sym::integer(0)};
  first.outputs = {g.add_tensor_value("start_position", DType::I64, {})};
  const ir::ValueId start = first.outputs[0];
  for (ir::Node& n : g.mutable_nodes()) {
    for (ir::Argument& a : n.args) {
      if (auto* t = std::get_if<ir::TensorRef>(&a); t && t->id == old) t->id = start;
      if (auto* l = std::get_if<ir::OptionalValueList>(&a))
        for (auto& x : *l)
          if (x && *x == old) x = start;
    }
  }
  for (ir::ValueId& o : g.outputs)
    if (o == old) o = start;
  auto& nodes = g.mutable_nodes();
  nodes.insert(nodes.begin(), std::move(first));
}

}  // namespace

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

  // input_pos [1] (int64) after the tokens: the position of the first new token. It takes
  // the place of the cache's own position everywhere the step reads it (the new tokens'
  // positions, rotary, the causal mask, the slots index_copy writes), so a runner may
  // start anywhere: restart at 0, or rewrite the last token. The cache_position state is
  // still advanced (input_pos + tokens) but nothing reads it.
  const ir::ValueId pos = p.graph->add_tensor_value("input_pos", DType::I64, {sym::integer(1)});
  p.graph->inputs.insert(p.graph->inputs.begin() + std::ptrdiff_t(tokens_at + 1), pos);
  p.signature.inputs.insert(p.signature.inputs.begin() + std::ptrdiff_t(tokens_at + 1),
                            InputSpec{InputKind::UserInput, "input_pos", "input_pos"});
  use_input_pos_as_cache_position(p, pos);

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
  // forward(tokens, input_pos): input_pos is the cache position the step starts at.
  a->step_layout = step_layout_of(
      a->program, {generation::InputRole::kInputIds, generation::InputRole::kCachePosition});
  a->notes.push_back("executorch: LLM-runner layout (cache as program state, metadata methods)");
  return a;
}

std::unique_ptr<ExecutorchProgram> export_llm_runner(models::PretrainedModel& model,
                                                     const std::string& model_folder,
                                                     const NativeExportConfig& config,
                                                     GenerationExportOptions g) {
  const models::GenerationConfig gc = models::GenerationConfig::from_folder(model_folder);
  INGOT_CHECK(gc.eos_token_ids && !gc.eos_token_ids->empty(), ValueError,
              "[executorch] the LLM-runner layout needs the eos token ids (get_eos_ids), and "
              "{} sets none in generation_config.json or config.json: add eos_token_id there",
              model_folder);
  g.multi_token_decode = true;  // the runner prefills and decodes with one method
  g.mask_and_position_inputs = false;
  check_not_skipped(model.architecture(), "executorch", "generation");
  // export_captured: the decoder's components alone (export_for_generation would add
  // this runner again).
  auto parts = ExecutorchExporter().export_captured(
      model, decompose_for_generation(model, example_generation_prompt(g.batch), g), config, g);
  const ExportedProgram& decode = parts.at("decode")->program;
  LlmRunnerMetadata meta;
  meta.max_seq_len = g.max_cache_len;
  size_t user = 0;  // the logits: the one user output
  while (user < decode.signature.outputs.size() &&
         decode.signature.outputs[user].kind != OutputKind::UserOutput)
    ++user;
  INGOT_CHECK(user < decode.signature.outputs.size(), ValueError,
              "[executorch] the decode program has no logits output");
  const auto& logits = decode.graph->value(decode.graph->outputs.at(user)).sizes;
  INGOT_CHECK(!logits.empty() && logits.back().is_constant(), ValueError,
              "[executorch] the decode program's logits have no static vocab size");
  meta.vocab_size = logits.back().value();
  meta.bos_id = gc.bos_token_id.value_or(gc.eos_token_ids->front());
  meta.eos_ids = *gc.eos_token_ids;
  nn::StaticCache empty(*model.cache_spec(), g.batch, g.max_cache_len);
  auto out = llm_runner_program(decode, empty.named_tensors(), meta);
  for (const std::string& n : parts.at("decode")->notes) out->notes.push_back(n);
  return out;
}

}  // namespace ingot::exporters::executorch
