// The GGUF backend: a model's weights, config and tokenizer as one GGUF v3 file that
// llama.cpp loads and runs (llama.cpp builds the graph itself, so only the program's
// parameters are written). The shared stages run as for every backend, so the quantize
// stage packs the weights (--quantize int8|int4, any --method) and the file stores ingot's
// own integer levels (gguf_tensors.h). `export_format: "gguf"`; keys beyond the native
// ones: "outtype" (f32 | f16 | bf16: float matrices; default f16, llama.cpp's converter's
// default), "model_folder" (config.json and the tokenizer; the CLI sets it) and
// "kquant_search" (refined | llamacpp, for the llama.cpp file types).
//
//   ingot export FOLDER --format gguf [--outtype f32] [--quantize int4] -o model.gguf
//
//   ingot export FOLDER --format gguf --quantize q4_k_m [--dataset calib.txt] -o model.gguf
//
// A llama.cpp file type as the quantizer scheme (q4_k_m, q4_k_s, q6_k, q8_0) leaves the
// weights float through the stages; the artifact quantises them into llama.cpp's blocks
// while writing (gguf_file_types.h), with the calibration's importance when a dataset is
// given. --task generation is refused: llama.cpp needs no generation components.
#pragma once

#include <memory>
#include <string>

#include "ingot/exporters/exporter.h"

namespace ingot::exporters {

struct GgufConfig : NativeExportConfig {
  std::string export_format() const override { return "gguf"; }
  std::unique_ptr<NativeExportConfig> clone() const override {
    return std::make_unique<GgufConfig>(*this);
  }
  std::string to_json() const override;

  std::string outtype = "f16";
  std::string model_folder;
  // The k-quant grids of a llama.cpp file type: "refined" (llama.cpp's search, then ingot's
  // per-super-block refinement, formats/ggml_refine.h) or "llamacpp" (llama.cpp's search
  // alone, the bytes llama-quantize writes from the same weights and importance).
  std::string kquant_search = "refined";
};

class GgufArtifact final : public ExportArtifact {
 public:
  std::string format() const override { return "gguf"; }
  std::string file_extension() const override { return ".gguf"; }
  // Builds the file from the program's state and the quantization report, then writes it
  // (to a temporary file renamed into place).
  void save(const std::string& path) const override { (void)write(path); }
  // save(), returning what the writer noted (weights written in another type than their
  // scheme's).
  std::vector<std::string> write(const std::string& path) const;

  GgufConfig config;
  // With a llama.cpp file type (quantizer.scheme q4_k_m, ...) and a dataset: the
  // calibration statistics whose per-channel importance weighs the k-quant search.
  std::shared_ptr<const CalibrationStats> calibration;
};

class GgufExporter final : public Exporter {
 public:
  std::string backend() const override { return "gguf"; }

 protected:
  void adjust_generation_options(const ComponentConfigs&, GenerationExportOptions&) const override;
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig& config) override;
};

}  // namespace ingot::exporters
