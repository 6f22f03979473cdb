#include "ingot/exporters/executorch/executorch_exporter.h"

#include <fmt/format.h>

#include "ingot/export/passes.h"
#include "ingot/exporters/executorch/emitter.h"
#include "ingot/exporters/executorch/llm_runner_layout.h"
#include "ingot/exporters/executorch/pte_writer.h"
#include "ingot/exporters/fixes.h"

namespace ingot::exporters {

void ExecutorchProgram::save(const std::string& path) const {
  executorch::write_pte(pte, path);
}

std::unique_ptr<ExportArtifact> ExecutorchExporter::finish(ExportedProgram program,
                                                           std::vector<std::string> notes,
                                                           const NativeExportConfig& config) {
  ExecutorchConfig defaults;
  static_cast<NativeExportConfig&>(defaults) = config;
  const auto* given = dynamic_cast<const ExecutorchConfig*>(&config);
  const ExecutorchConfig& c = given ? *given : defaults;

  // ── Stage 7: backend preparation: the delegate and quantizer this config asks for ──
  INGOT_CHECK(c.backend == "portable" || c.backend == "xnnpack", ValueError,
              "[executorch] backend \"{}\" is unknown: use \"portable\" (every node a portable "
              "kernel) or \"xnnpack\" (linear / matmul / conv partitions in XNNPACK delegates)",
              c.backend);
  // The quantizer ran as the shared quantize stage: its quantized_linear nodes have no
  // portable kernel, so decomposition below turns them into dequantise + linear (the
  // weights are stored packed in the .pte; compute is float).

  // ── Stage 8: decomposition to core ops; node fixes again on what it introduced ──
  decompose_to_core(program);
  for (std::string& n : apply_node_fixes(backend(), program)) notes.push_back(std::move(n));
  eliminate_dead_code(program);

  // ── Stage 9: emission: kernel table (kernels_*.cpp), symbolic sizes as prim ops ──
  // ── Stage 10: memory planning (memory_planner.h): offsets by lifetime ──
  executorch::EmitOptions eo;
  eo.alloc_graph_input = c.alloc_graph_input;
  eo.alloc_graph_output = c.alloc_graph_output;
  eo.alloc_mutable_buffers = c.alloc_mutable_buffers;
  eo.backend = c.backend;
  auto a = std::make_unique<ExecutorchProgram>();
  const executorch::EmitSummary s = executorch::emit_method(program, eo, a->pte);
  size_t asserts = 0;
  for (const ir::Node& n : program.graph->nodes()) asserts += n.target == "assert";
  if (asserts)
    notes.push_back(fmt::format(
        "executorch: {} runtime assert(s) not emitted (the .pte checks only the shape bounds)",
        asserts));
  if (c.backend == "xnnpack")
    notes.push_back(fmt::format("executorch: {} XNNPACK delegate call(s)",
                                a->pte.plans.back().delegates.size()));
  notes.push_back(fmt::format("executorch: memory plan {} bytes for {} tensors ({} without reuse)",
                              s.planned_bytes, s.planned_tensors, s.unplanned_bytes_if_no_reuse));

  // ── Stage 11: the .pte (written by save(): flatbuffer, extended header, segments) ──
  a->input_names = s.input_names;
  a->output_names = s.output_names;
  a->planned_bytes = s.planned_bytes;
  a->planned_bytes_without_reuse = s.unplanned_bytes_if_no_reuse;
  a->program = std::move(program);
  a->notes = std::move(notes);
  return a;
}

void ExecutorchExporter::add_generation_components(models::PretrainedModel& model,
                                                   const ComponentConfigs& configs,
                                                   const GenerationExportOptions& g,
                                                   GenerationExport& out) {
  if (g.model_folder.empty() || out.manifest.encoder_decoder || out.manifest.vision_language)
    return;
  out.add("llm_runner",
          executorch::export_llm_runner(model, g.model_folder, configs.at("decode"), g));
}

namespace {
const bool kRegistered = [] {
  register_exporter("executorch", [] { return std::make_unique<ExecutorchExporter>(); });
  return true;
}();
}  // namespace

}  // namespace ingot::exporters
