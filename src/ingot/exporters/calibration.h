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

class CalibrationStats {
 public:
  // The statistics of the input of the linear reading weight `name`; null when none.
  const ActivationStats* of(const std::string& name) const;
  int64_t samples = 0;
  int64_t tokens = 0;
  std::map<std::string, std::shared_ptr<ActivationStats>> by_weight;
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

// The statistics `quantizer`'s method needs, from its dataset tokenised with
// `model_folder`'s tokenizer; null when it has no dataset or its method uses none.
std::shared_ptr<const CalibrationStats> calibrate_for(models::PretrainedModel& model,
                                                      const QuantizerConfig& quantizer,
                                                      const std::string& model_folder);

}  // namespace ingot::exporters
