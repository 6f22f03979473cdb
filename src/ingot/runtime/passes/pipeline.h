// The load-time pass pipeline: every rewrite the runtime applies to the programs it runs
// for generation, in one ordered list (pipeline.cpp), run over every component of a
// generation package with one RuntimeOptions, and a report of what each pass did to each
// component (`ingot generate --verbose` prints it).
//
//   huge_page_weights      large mapped weights copied once into huge-page memory
//   last_position_logits   a prefill's LM head over the last position only
//   fuse_sibling_linears   quantised linears on one input computed in one pass
//   fuse_silu_mul          the gated MLP's mul(silu(gate), up) as one op
//   int8_embedding_tables  f32 embedding tables read from the lm_head's int8 rows
//   bf16_embedding_tables  f32 embedding tables held in bf16 where that is exact
//   packed_linear_weights  f32 linear weights held as the GEMM's panels
//   fuse_sibling_float_linears  float linears on one input computed in one pass
//   small_weights_arena    weights under 2 MiB gathered into one huge-page mapping
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

// The pass names, in the order the pipeline runs them.
const std::vector<std::string>& load_pass_names();

struct PassRecord {
  std::string component;
  std::string pass;
  int changes = 0;  // what the pass reports: nodes fused, tensors moved or packed, ...
};

struct PassReport {
  std::vector<PassRecord> records;  // in the order they ran
  std::vector<std::string> disabled;

  // Changes `pass` made to `component` (0 when it did not run there).
  int changes(const std::string& component, const std::string& pass) const;
  // One line per component: "decode: fuse_silu_mul 28, packed_linear_weights 196, ...".
  std::string str() const;
};

class PassPipeline {
 public:
  explicit PassPipeline(const RuntimeOptions& options = {});
  // The rewritten copy of `program`; passes share state across the targets of one
  // pipeline (components of one package).
  ExportedProgram run(const ExportedProgram& program, const PassTarget& target);
  const PassReport& report() const { return report_; }

 private:
  std::vector<std::unique_ptr<LoadPass>> passes_;
  PassReport report_;
};

}  // namespace ingot::runtime
