// A graph rewrite the runtime applies to the programs it runs for generation: the gated
// MLP's mul(silu(gate), up) becomes one ingot::silu_mul(gate, up) (ops/silu_mul.cpp).
//
// Unfused, the [tokens, intermediate] activation is written by silu, read back by mul and
// written again; fused it is read once and written once, and the SiLU runs on the
// vectorised exp. The exported program is left as it is (the copy shares its weights):
// only the runtime's Generator runs the fused copy. Equal to the unfused program up to
// float rounding (the fused op rounds a 16-bit result once instead of twice).
#pragma once

#include "ingot/export/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

// The rewritten copy of `program` (every silu whose only use is a mul.Tensor with an
// operand of the same shape and dtype), and how many pairs it fused; the copy equals
// `program` when it fused none.
ExportedProgram fuse_silu_mul(const ExportedProgram& program, int* fused = nullptr);

// The rewrite as the pipeline's "fuse_silu_mul" pass (runtime/passes/pipeline.h).
class FuseSiluMulPass final : public LoadPass {
 public:
  const char* name() const override { return "fuse_silu_mul"; }
  int run(ExportedProgram& program, const PassTarget& target) override;
};

}  // namespace ingot::runtime
