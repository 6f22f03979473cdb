// A graph rewrite the runtime applies to the programs it runs for generation: quantised
// linears that read the same input (an attention block's q / k / v projections, a gated
// MLP's gate and up) become one ingot::quantized_linear2 / quantized_linear3 node
// (ops/quantized_linear.cpp) with the same outputs.
//
// A decode step's small GEMVs are each one fork / join of the thread pool and one fresh
// weight stream per thread; fused, three of them are one pass over their concatenated
// rows, and the input is quantised once (int8 activations). Each output equals the
// unfused one exactly (the same kernels over the same rows). The exported program is left
// as it is (the copy shares its weights): only the runtime's Generator runs the fused copy.
#pragma once

#include "ingot/ir/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

// The rewritten copy of `program` and how many fused nodes it made (0: the copy equals
// `program`). Fused: ingot::quantized_linear nodes without bias on the same input value,
// with the same bits, group size and presence of zero points, whose weights are program
// inputs (parameters or constants, so available wherever the first of them runs), in
// groups of three (a remainder of two or four as pairs); the fused node takes the first
// one's place.
ExportedProgram fuse_sibling_linears(const ExportedProgram& program, int* fused = nullptr);

// The same rewrite for float `linear` nodes without bias on the same input value whose
// weights are program inputs of one dtype: ingot::linear2 / ingot::linear3
// (ops/linear_siblings.cpp), whose kernel streams the weights' rows in one pass where a
// linear would stream them (decode) and is each linear in turn otherwise. The pipeline
// runs it after packed_linear_weights, so f32 weights that table packs stay packed.
ExportedProgram fuse_sibling_float_linears(const ExportedProgram& program, int* fused = nullptr);

// The rewrites as the pipeline's "fuse_sibling_linears" and "fuse_sibling_float_linears"
// passes (runtime/passes/pipeline.h).
class FuseSiblingLinearsPass final : public LoadPass {
 public:
  const char* name() const override { return "fuse_sibling_linears"; }
  int run(ExportedProgram& program, const PassTarget& target) override;
};

class FuseSiblingFloatLinearsPass final : public LoadPass {
 public:
  const char* name() const override { return "fuse_sibling_float_linears"; }
  int run(ExportedProgram& program, const PassTarget& target) override;
};

}  // namespace ingot::runtime
