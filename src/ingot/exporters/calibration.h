// Calibration: the statistics of each linear layer's input over a calibration set, which
// the calibrated quantisers (quantizer.h) weigh their rounding by.
//
//   CalibrationSet set = read_calibration_set("calib.txt", folder, 128, 256);
//   auto stats = calibrate(model, set, CalibrationNeed::Hessian);
//   stats->of("model.layers.0.self_attn.q_proj.weight")   // its input's statistics
//
// The model's forward over input_ids is traced once (the native exporter, the token count
// symbolic) and rewritten so that the input of every linear whose weight is a parameter is
// a graph output; the program runs on the native runtime sample by sample and each
// output is folded into running sums, then dropped (memory: the sums, not the samples).
// Linears that read the same activation (q/k/v, gate/up) share one ActivationStats.
// Components the forward does not reach (an image encoder) have no statistics; their
// weights fall back to the quantiser's uncalibrated form (the report says which).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/exporters/quantizer.h"
#include "ingot/models/model.h"

namespace ingot::exporters {

// The statistics of one activation x [tokens, k] feeding linears.
struct ActivationStats {
  int64_t k = 0;
  int64_t tokens = 0;
  std::vector<float> mean_square;  // [k]: mean over tokens of x_c^2 (llama.cpp's imatrix)
  std::vector<float> hessian;      // [k, k]: mean of x^T x (empty unless Hessian was asked)
};

// A weight already on its grid: what sequential calibration (GPTQ) quantised while it ran,
// in the packed layout of the quantize stage (quantize.h).
struct PackedWeight {
  int bits = 4;
  int64_t group = 32;
  Tensor qweight, scales, zeros;  // zeros undefined when symmetric
};

class CalibrationStats {
 public:
  // The statistics of the input of the linear reading weight `name`; null when none.
  const ActivationStats* of(const std::string& name) const;
  // The grid sequential calibration chose for weight `name`; null when none.
  const PackedWeight* packed_of(const std::string& name) const;
  int64_t samples = 0;
  int64_t tokens = 0;
  std::map<std::string, std::shared_ptr<ActivationStats>> by_weight;
  std::map<std::string, PackedWeight> packed;
};

// Token sequences to calibrate on (each at most seq_len tokens, at least 2).
struct CalibrationSet {
  std::string source;  // the file they came from, for messages
  std::vector<std::vector<int64_t>> samples;
};

// Reads `path`: a text file (tokenised whole, cut into seq_len-token samples), JSONL of
// {"text": ...} (one sample per line, truncated to seq_len) or JSONL of {"messages":
// [{"role": ..., "content": ...}, ...]} rendered with `model_folder`'s chat template.
// Tokenised with `model_folder`'s tokenizer. At most num_samples samples; a warning on
// stderr when fewer than num_samples (or fewer than 32) could be made. ValueError naming
// the file for an unreadable or empty file, a line that is not JSON with "text" or
// "messages", or a folder without a tokenizer.
CalibrationSet read_calibration_set(const std::string& path, const std::string& model_folder,
                                    int64_t num_samples, int64_t seq_len);

// Runs `model`'s forward over every sample and returns its linears' input statistics.
// `need` Hessian collects x^T x too (k^2 floats per distinct activation).
std::shared_ptr<const CalibrationStats> calibrate(models::PretrainedModel& model,
                                                  const CalibrationSet& set, CalibrationNeed need);

// The Hessians GPTQ's calibration holds at once: SmolLM2-135M's all fit (400 MB, one
// chunk); a 0.6B model's take several chunks. One layer per chunk (fully sequential GPTQ)
// measured barely better on SmolLM2 (int4 act_order perplexity 46.69 vs 46.82, f32 45.05)
// at 5x the calibration time, so chunks are as large as memory allows.
constexpr int64_t kGptqHessianBudget = int64_t(512) << 20;

// Sequential calibration for quantisers that need the Hessian (GPTQ), in bounded memory:
// the layers in chunks whose Hessians fit `hessian_budget_bytes`, in order. Each chunk's
// statistics are collected with every earlier chunk already quantised (the forward runs
// their dequantised weights, so later layers see the rounding error they will get), then
// the chunk is quantised by `quantizer` (the quantize stage's own decisions; its grids kept
// in CalibrationStats::packed) and its Hessians are dropped. Weights outside the layer
// stack (the lm_head) go last. The forward of a chunk stops at its last layer.
std::shared_ptr<const CalibrationStats> calibrate_sequential(models::PretrainedModel& model,
                                                             const CalibrationSet& set,
                                                             const QuantizerConfig& quantizer,
                                                             int64_t hessian_budget_bytes);

// The statistics `quantizer`'s method needs, from its dataset tokenised with
// `model_folder`'s tokenizer; null when it has no dataset or its method uses none.
std::shared_ptr<const CalibrationStats> calibrate_for(models::PretrainedModel& model,
                                                      const QuantizerConfig& quantizer,
                                                      const std::string& model_folder);

}  // namespace ingot::exporters
