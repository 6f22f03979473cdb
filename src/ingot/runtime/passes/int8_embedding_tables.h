// A rewrite the runtime applies to the programs it runs for generation: an f32 embedding
// table whose rows the export quantizer also packed as int8 (the lm_head tied to it: int4
// and int8 exports pack it int8 per output channel by default) is read from those int8
// rows, and the f32 table leaves the program.
//
//   embedding(W, ids)  ->  ingot::quantized_embedding(W.qweight, W.scales, ids)
//
// One copy of the table serves both uses, as in llama.cpp's quantised files (token_embd
// stored once, in Q8_0 / Q6_K): SmolLM2-135M's int4 program drops 113 MB of its 208. The
// looked-up rows carry the int8 rounding the logits already see (at most half a step of
// the row's scale per value). Applied where the packed rows are int8 with one scale per
// row and no zero points, the table is f32 and nothing but `embedding` reads it; other
// tables stay. Only the copies the runtime runs change; the exported programs keep their
// weights.
#pragma once

#include "ingot/ir/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

// Rewrites `program` in place; returns the number of lookups rewritten (0: unchanged).
int read_embeddings_from_int8_rows(ExportedProgram& program);

// The rewrite as the pipeline's "int8_embedding_tables" pass (runtime/passes/pipeline.h).
class Int8EmbeddingTablesPass final : public LoadPass {
 public:
  const char* name() const override { return "int8_embedding_tables"; }
  int run(ExportedProgram& program, const PassTarget&) override {
    return read_embeddings_from_int8_rows(program);
  }
};

}  // namespace ingot::runtime
