// A graph rewrite the runtime applies to the programs it runs for generation: the LM head
// for the last position only.
//
// A prefill over T prompt tokens needs the logits of the last position alone (the next
// token), but the exported program computes logits [B, T, vocab]: for Qwen3-0.6B at
// T = 128 that is 40 GFLOP of a 150 GFLOP prefill. The rewrite slices the LM head's input
// to its last position, so the program's first user output becomes [B, 1, vocab], equal to
// the last row of the original. The exported program itself is left as it is (the copy
// shares its weights); only a caller that wants the last row (Generator) runs the copy.
#pragma once

#include <optional>

#include "ingot/export/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

// The rewritten copy of `program`, or nullopt when its first user output is not made by a
// `linear` over a [B, T, H] input whose T may exceed 1 (nothing to save), or when that
// output has other uses inside the graph.
std::optional<ExportedProgram> last_position_logits(const ExportedProgram& program);

// The rewrite as the pipeline's "last_position_logits" pass (runtime/passes/pipeline.h):
// applied to prefill targets only; 1 when it rewrote the program.
class LastPositionLogitsPass final : public LoadPass {
 public:
  const char* name() const override { return "last_position_logits"; }
  int run(ExportedProgram& program, const PassTarget& target) override;
};

}  // namespace ingot::runtime
