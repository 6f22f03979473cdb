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

#include <string>
#include <vector>

#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantizer_config.h"
#include "ingot/ir/program.h"

namespace ingot::exporters {

// ValueError naming the rule when a `rules` pattern matches none of `model`'s parameters.
void check_quantizer_rules(models::PretrainedModel& model, const QuantizerConfig& config);

// Rewrites `program` in place for export format `format`; returns the report lines.
// ValueError for an invalid config (validate()), NotSupportedError for a method that does
// not support `format`. `calibration` may be null (then calibrated methods run their
// uncalibrated form, and the report says so).
std::vector<std::string> quantize_program(ExportedProgram& program, const QuantizerConfig& config,
                                          const std::string& format = "native",
                                          const CalibrationStats* calibration = nullptr);

}  // namespace ingot::exporters
