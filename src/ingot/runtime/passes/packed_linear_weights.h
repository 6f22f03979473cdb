// A rewrite the runtime applies to the programs it runs for generation: float32 `linear`
// weights held as the GEMM kernels' panels (ops/cpu/gemm.h PanelWeight), each such
// linear becoming ingot::packed_linear (ops/packed_linear.cpp) on them.
//
// The blocked GEMM packs its B operand, here the weight, into k-major panels on every
// call: 15% of a 128-row prefill product (perf), a 12 MB rearrangement for each gate /
// up projection. Packed once at load, the prefill product reads the panels in place and
// a decode GEMV reads each thread's range of panels as one sequential stream. Results
// equal `linear`'s up to rounding (the sums over k run in another order). A weight that
// something other than a linear's weight argument reads (an lm_head tied to the
// embedding table) is left alone, and every weight is when the active GEMM kernels have
// no packed path (packed_linear_width() == 0; the AVX2 and AVX-512 tables have one). Like the
// Generator's other rewrites, only the copies the runtime runs change; the exported
// programs keep `linear` and their weights (an original is freed once nothing holds it).
// Until then both are in memory: packing stops short of the memory available (a model
// that fills it keeps its remaining linears as they are, each packed per call).
// RuntimeOptions turn the pass off (INGOT_PACKED_WEIGHTS=0 in the environment, for A/B
// benchmarks; runtime/passes/runtime_options.h).
#pragma once

#include <map>
#include <optional>
#include <tuple>

#include "ingot/ir/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

class PackedLinearWeights {
 public:
  // Weights smaller than `min_elements` stay as they are (not worth the copy).
  static constexpr int64_t kMinElements = int64_t(1) << 16;
  // `budget_bytes`: what the packed copies may take (default: see budget_bytes_).
  explicit PackedLinearWeights(int64_t min_elements = kMinElements,
                               std::optional<int64_t> budget_bytes = std::nullopt);

  // The rewritten copy of `program`; equal to it when no weight qualifies. A weight
  // (storage, offset, shape) is packed once across every program passed to this object
  // (a decode and a prefill program of one model share their panels).
  ExportedProgram apply(const ExportedProgram& program);
  // Weights packed so far.
  int packed() const { return int(panels_.size()); }

 private:
  int64_t min_elements_;
  // Bytes the packed copies may still take: the memory available when this object was
  // made less a margin (max(1 GiB, 10%)); weights past it are left unpacked.
  int64_t budget_bytes_ = 0;
  std::map<std::tuple<const Storage*, int64_t, int64_t, int64_t>, Tensor> panels_;
};

// The rewrite as the pipeline's "packed_linear_weights" pass (runtime/passes/pipeline.h):
// panels shared across the components it sees; reports the weights newly packed.
class PackedLinearWeightsPass final : public LoadPass {
 public:
  const char* name() const override { return "packed_linear_weights"; }
  int run(ExportedProgram& program, const PassTarget& target) override;

 private:
  PackedLinearWeights panels_;
};

}  // namespace ingot::runtime
