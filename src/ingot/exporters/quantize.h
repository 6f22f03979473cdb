// The quantize stage (seed 004's stages; docs/exporters.md): weight-only quantisation of
// the traced program, shared by every backend, run after the node fixes when the config's
// `quantizer` has a scheme. Which weights and how many bits is decided here (the scheme,
// the lm_head rule, `rules` and `preset`); each weight's grid by the registered quantiser
// config.method names (quantizer.h), with the calibration statistics when given.
//
// Every `linear` node of the top-level graph whose weight is a float parameter becomes
// `ingot::quantized_linear` reading three new parameters (`<name>.qweight` uint8,
// `<name>.scales` f32 and, with zero points, `<name>.qzeros` uint8; <name> is the weight's
// name without ".weight"); a float weight no node reads any more leaves the program. Its
// report (the artifact's notes) says how many linears were quantised and names each one
// kept in float and why: excluded by a pattern, the lm_head (int8: unless `lm_head`;
// int4: only with `keep_lm_head_float`, else it is packed as int8 per channel), an
// in_features the group size does not divide, a weight that is not a parameter (computed,
// or sliced from an expert stack), a linear inside a control-flow branch, and matrix
// products (matmul, mm, bmm, addmm such as GPT-2's Conv1D, moe_experts) the scheme does not
// rewrite.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantizer_config.h"
#include "ingot/ir/program.h"

namespace ingot::exporters {

// What the quantize stage did to one weight: the artifact's quantization report.
struct WeightReport {
  std::string name;        // the float parameter ("model.layers.0.mlp.down_proj.weight")
  int bits = 0;            // 8 or 4; 0: kept float
  int64_t group = 0;       // weights per scale (bits 8: in_features)
  bool zero_point = false;
  std::string method;      // the quantiser that rounded it; "" when kept float
  std::string why;         // why these bits, or why float
};

struct QuantizeResult {
  std::vector<std::string> notes;    // the one-screen summary
  std::vector<WeightReport> weights;  // every float matrix a linear reads, in graph order
};

// {"weights": [{"name", "bits", "group", "zero_point", "method", "why"}, ...]} per
// component, written as quantization.json in a generation directory (GenerationExport::save)
// and beside a single artifact (`ingot export`).
void write_quantization_report(const std::string& path,
                               const std::map<std::string, std::vector<WeightReport>>& components);

// ValueError naming the rule when a `rules` pattern matches none of `model`'s parameters.
void check_quantizer_rules(models::PretrainedModel& model, const QuantizerConfig& config);

// Rewrites `program` in place for export format `format`; returns the report. A GGUF
// file type scheme (q4_k_m, ...) rewrites nothing (the GGUF writer quantises) and is a
// NotSupportedError for a format other than "gguf".
// ValueError for an invalid config (validate()), NotSupportedError for a method that does
// not support `format`. `calibration` may be null (then calibrated methods run their
// uncalibrated form, and the report says so); weights it holds already packed (sequential
// calibration) are used as they are. `only`: quantise just these weights (the others stay
// float, unreported), for sequential calibration's chunks.
QuantizeResult quantize_program(ExportedProgram& program, const QuantizerConfig& config,
                                const std::string& format = "native",
                                const CalibrationStats* calibration = nullptr,
                                const std::set<std::string>* only = nullptr);

}  // namespace ingot::exporters
