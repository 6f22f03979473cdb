// A rewrite the runtime applies to the programs it runs for generation: float32 embedding
// tables whose every value is exact in bfloat16 are held in bfloat16.
//
// A model run in float32 from a bf16 checkpoint (Qwen3, Llama: the int8 / int4 exports
// the side-by-side benchmark runs) carries its [vocab, hidden] table in f32, 622 MB for
// Qwen3-0.6B, of which a decode step reads one row. Held in bf16 (each value's low 16 bits
// are zero, so nothing is rounded), `embedding` gathers bf16 rows and a `_to_copy` turns
// them back into the same f32 values: the program computes exactly what it did, on half
// the table's memory. A table something other than `embedding` reads (an f32 lm_head tied
// to it) is left alone, and so is one with a value bf16 cannot hold. Like the Generator's
// other rewrites, only the copies the runtime runs change; the exported programs and their
// weights are untouched (the f32 table is freed once nothing else holds it).
#pragma once

#include <algorithm>
#include <map>

#include "ingot/export/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

class Bf16EmbeddingTables {
 public:
  // Tables smaller than `min_elements` stay f32 (not worth a node per lookup).
  static constexpr int64_t kMinElements = int64_t(1) << 20;
  explicit Bf16EmbeddingTables(int64_t min_elements = kMinElements) : min_elements_(min_elements) {}

  // The rewritten copy of `program`; equal to it when no table qualifies. Tables sharing a
  // storage share one bf16 copy, across every program passed to this object (a decode
  // and a prefill program of one model end up on the same table).
  ExportedProgram apply(const ExportedProgram& program);
  // Tables converted so far (each counted once).
  int converted() const {
    return int(std::count_if(copies_.begin(), copies_.end(),
                             [](const auto& c) { return c.second.defined(); }));
  }

 private:
  int64_t min_elements_;
  // f32 table storage -> its bf16 copy (undefined: not every value is a bf16 value).
  std::map<const Storage*, Tensor> copies_;
};

// The rewrite as the pipeline's "bf16_embedding_tables" pass (runtime/passes/pipeline.h):
// tables shared across the components it sees; reports the tables newly converted.
class Bf16EmbeddingTablesPass final : public LoadPass {
 public:
  const char* name() const override { return "bf16_embedding_tables"; }
  int run(ExportedProgram& program, const PassTarget& target) override;

 private:
  Bf16EmbeddingTables tables_;
};

}  // namespace ingot::runtime
