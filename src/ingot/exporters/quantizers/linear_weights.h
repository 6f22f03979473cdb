// The parameter a `linear` node multiplies by, as the quantize stage and calibration see
// it: the weight input itself ([out, in]), or the [in, out] parameter behind
// transformers' Conv1D (linear(x, transpose(W, 0, 1))), packed as [out, in].
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ingot/ir/program.h"

namespace ingot::exporters::quant {

struct LinearWeight {
  ir::ValueId value = -1;  // the graph input holding the weight
  bool transposed = false;  // stored [in, out] (Conv1D)
  std::string target;       // the parameter's state name; "" when not a parameter
};

class LinearWeights {
 public:
  explicit LinearWeights(const ExportedProgram& program);
  // The weight of `linear` (a top-level "linear" node).
  LinearWeight of(const ir::Node& linear) const;
  // The signature index of graph input `v`; nullopt for a computed value.
  std::optional<size_t> input_index(ir::ValueId v) const;

 private:
  const ExportedProgram& program_;
  std::map<ir::ValueId, size_t> spec_of_;
  std::map<ir::ValueId, ir::ValueId> transposed_of_;  // transpose output -> its 2-D input
};

}  // namespace ingot::exporters::quant
