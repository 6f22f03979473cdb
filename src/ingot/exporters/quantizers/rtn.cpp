// "rtn": round to nearest on each group's range (ops/cpu/quantize_pack.h's rule), no
// calibration. llama.cpp's Q8_0 / Q4_0 without an importance matrix are this scheme.
#include "ingot/exporters/quantizer.h"
#include "ingot/exporters/quantizers/group_grid.h"

namespace ingot::exporters {

namespace {

class RoundToNearest final : public Quantizer {
 public:
  std::string name() const override { return "rtn"; }
  QuantizedWeight quantize(const WeightToQuantize& w) const override {
    return quant::quantize_groups(w, [&w](const float* values, int64_t) {
      return quant::range_grid(values, w.group, w.bits, w.zero_point);
    });
  }
};

}  // namespace

INGOT_REGISTER_QUANTIZER(rtn, "rtn",
                         [](const QuantizerConfig&) { return std::make_unique<RoundToNearest>(); });

}  // namespace ingot::exporters
