// "scale-search": each group's scale (and zero point) searched among clipped ranges,
// each refitted by least squares, to minimise the group's reconstruction error weighted
// by the importance of its input channels: the calibration inputs' mean squares (what
// llama.cpp's importance matrix holds), or uniform without a dataset.
#include <cmath>
#include <vector>

#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantizer.h"
#include "ingot/exporters/quantizers/group_grid.h"

namespace ingot::exporters {

namespace {

class ScaleSearch final : public Quantizer {
 public:
  std::string name() const override { return "scale-search"; }
  CalibrationNeed calibration() const override { return CalibrationNeed::Importance; }
  QuantizedWeight quantize(const WeightToQuantize& w) const override {
    const std::vector<float> importance = channel_importance(w);
    return quant::quantize_groups(w, [&w, &importance](const float* values, int64_t c0) {
      // Within the group, larger weights count more: importance * sqrt(sigma^2 + w^2),
      // sigma^2 the group's mean square (llama.cpp's k-quant weighting).
      std::vector<float> local(static_cast<size_t>(w.group));
      double sigma2 = 0.0;
      for (int64_t i = 0; i < w.group; ++i) sigma2 += double(values[i]) * values[i];
      sigma2 = 2.0 * sigma2 / double(w.group);
      for (int64_t i = 0; i < w.group; ++i)
        local[size_t(i)] = (importance.empty() ? 1.0f : importance[size_t(c0 + i)]) *
                           float(std::sqrt(sigma2 + double(values[i]) * values[i]));
      return quant::searched_grid(values, local.data(), w.group, w.bits, w.zero_point);
    });
  }

  // [k]: the mean squares of the input channels plus 1% of their mean, so that a channel
  // calibration never saw still counts a little; empty without statistics.
  static std::vector<float> channel_importance(const WeightToQuantize& w) {
    if (!w.stats) return {};
    std::vector<float> imp = w.stats->mean_square;
    double mean = 0.0;
    for (float v : imp) mean += v;
    mean /= double(imp.size());
    for (float& v : imp) v += float(0.01 * mean);
    return imp;
  }
};

}  // namespace

INGOT_REGISTER_QUANTIZER(scale_search, "scale-search",
                         [](const QuantizerConfig&) { return std::make_unique<ScaleSearch>(); });

}  // namespace ingot::exporters
