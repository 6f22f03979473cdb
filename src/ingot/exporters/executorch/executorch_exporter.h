// The ExecuTorch exporter (transformers.exporters' ExecutorchExporter, natively): the
// shared tracing stages (with this backend's op patches, executorch_patches.cpp), then
// decomposition to core ops, emission through the kernel table, memory planning and the
// `.pte` writer (stages listed in docs/exporters.md and marked in executorch_exporter.cpp).
// No Python and no torch at export time; ExecuTorch's own runtime judges the result
// (tools/executorch/*.py).
//
//   ExecutorchExporter exporter;
//   ExecutorchConfig config;  config.dynamic = true;  config.max_seq = 64;
//   auto pte = exporter.export_(*model, inputs, config);
//   pte->save("model.pte");
//
// The method "forward" takes the user inputs in signature order (a mutated user input,
// e.g. the decode layout's cache, included) and returns the user outputs and the mutated
// user inputs in signature order (ExecutorchProgram::output_names). Mutated buffers are
// program state (planned, initialised at load, written back in place).
#pragma once

#include "ingot/exporters/executorch/executorch_config.h"
#include "ingot/exporters/executorch/pte_program.h"
#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

class ExecutorchProgram final : public ExportArtifact {
 public:
  std::string format() const override { return "executorch"; }
  std::string file_extension() const override { return ".pte"; }
  // Writes the .pte atomically (temp file + rename): a failed save leaves no file.
  void save(const std::string& path) const override;

  executorch::Program pte;
  std::vector<std::string> input_names, output_names;  // of "forward"
  int64_t planned_bytes = 0;                           // the memory plan's arena
  int64_t planned_bytes_without_reuse = 0;             // sum of the planned tensors
};

class ExecutorchExporter final : public Exporter {
 public:
  std::string backend() const override { return "executorch"; }
  // Seed 003's decode layout: [input_ids, attention_mask, position_ids, cache...].
  bool generation_takes_mask_and_positions() const override { return true; }

 protected:
  // With options.model_folder (its generation config gives the bos / eos ids): a text
  // decoder also gets llm_runner.pte, the LLM-runner layout TextLLMRunner loads
  // (executorch::export_llm_runner). An encoder-decoder's decode needs the cross K/V and a
  // vision-language model's prompt the image embeddings, so theirs hold the components
  // only (docs/executorch.md).
  void add_generation_components(models::PretrainedModel& model, const ComponentConfigs& configs,
                                 const GenerationExportOptions& g, GenerationExport& out) override;
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
