// Quantizer: how one weight matrix is rounded onto its integer grid during export (seed
// 003: "every export config takes a quantizer"), and the registry of quantisers by name
// (QuantizerConfig::method). The quantize stage (quantize.h) decides which linears are
// quantised and with how many bits; the quantiser decides the grid: each group's scale
// and zero point and each weight's integer value.
//
//   class MyQuantizer final : public Quantizer { ... };
//   INGOT_REGISTER_QUANTIZER(my_quantizer, "mine",
//                            [](const QuantizerConfig& c) { return std::make_unique<MyQuantizer>(c); });
//
// Registered here: "rtn" (quantizers/rtn.cpp), "scale-search" (quantizers/scale_search.cpp),
// "gptq" (quantizers/gptq.cpp). docs/quantization.md has a worked example.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ingot/exporters/quantizer_config.h"

namespace ingot::exporters {

struct ActivationStats;  // calibration.h

// Where a quantiser runs: on the traced program, before any backend lowering (every
// format), or on a backend's converted model (the formats it names).
enum class QuantizerStage { TracedProgram, ConvertedModel };

// What a quantiser needs from calibration: nothing, the inputs' per-channel mean squares
// (the importance of each input channel, llama.cpp's imatrix), or their whole second
// moment X^T X / tokens (the Hessian of the layer's squared output error).
enum class CalibrationNeed { None, Importance, Hessian };

// One weight to quantise: f32 [n, k] row-major (n outputs, k inputs), packed with `bits`
// (8 or 4) in groups of `group` consecutive inputs (bits 8: group == k).
struct WeightToQuantize {
  std::string name;  // the parameter's name, for errors and reports
  const float* data = nullptr;
  int64_t n = 0, k = 0;
  int bits = 4;
  int64_t group = 32;
  bool zero_point = false;
  // The calibration statistics of this linear's input; null when there is no dataset
  // (a quantiser that needs them then falls back to its uncalibrated form and says so).
  const ActivationStats* stats = nullptr;
};

// A weight on its grid, unpacked: w[r, c] ≈ (values[r, c] - zero[r, g]) * scales[r, g]
// with g = c / group; values in [0, 2^bits); zeros empty when symmetric (zero 2^(bits-1)).
struct QuantizedWeight {
  std::vector<uint8_t> values;  // [n, k]
  std::vector<float> scales;    // [n, k / group]
  std::vector<uint8_t> zeros;   // [n, k / group] or empty
};

class Quantizer {
 public:
  virtual ~Quantizer() = default;
  virtual std::string name() const = 0;
  virtual QuantizerStage stage() const { return QuantizerStage::TracedProgram; }
  // The export formats it can quantise for; empty: every format.
  virtual std::vector<std::string> formats() const { return {}; }
  virtual CalibrationNeed calibration() const { return CalibrationNeed::None; }
  virtual QuantizedWeight quantize(const WeightToQuantize& w) const = 0;
};

using QuantizerFactory = std::function<std::unique_ptr<Quantizer>(const QuantizerConfig&)>;

// Registers `factory` under `name`; InternalError when the name is taken.
bool register_quantizer(const std::string& name, QuantizerFactory factory);
std::vector<std::string> registered_quantizers();
// The quantiser config.method names, for exporting to `format`. ValueError naming the
// method and the registered ones when it is unknown; NotSupportedError naming the method
// and the format when the quantiser does not support the format.
std::unique_ptr<Quantizer> make_quantizer(const QuantizerConfig& config, const std::string& format);

}  // namespace ingot::exporters

// Registers a quantiser at namespace scope of its file.
#define INGOT_REGISTER_QUANTIZER(id, name, factory)                    \
  [[maybe_unused]] static const bool ingot_quantizer_registered_##id = \
      ::ingot::exporters::register_quantizer(name, factory)
