// The pipeline's last pass: every weight too small for a huge page of its own moved, with
// the program's other small weights, into one huge-page mapping (core/huge_page_arena.h).
//
// huge_page_weights puts each large weight on huge pages, but a storage under
// kHugePageBytes can only go to the heap (4 KiB pages), and the later passes make new
// ones there too (packed panels, fused sibling weights). A decode step streams all of
// them. On SmolLM2-135M-Instruct in bf16 that is every weight but the embedding table:
// q / o 576 x 576, k / v 192 x 576, gate / up / down 1536 x 576 (1.77 MB each), 212 MB in
// all. Measured there (AMD EPYC Zen 4, 2 threads, interleaved A/B with the pass disabled,
// four runs in both process orders): bf16 decode 1.12-1.27x; f32 (whose MLP panels are
// large) no effect the VM's spread resolves (0.87-1.15); prefill unchanged; peak RSS of
// `ingot generate` unchanged.
//
// Which tensors: state and constants whose storage is smaller than kHugePageBytes and not
// on huge pages yet, except buffers the program mutates (their storage may be the
// caller's, and a write must reach it). Tensors viewing one storage share one copy, also
// across the programs passed to one object (a decode and a prefill program). Values and
// geometry (sizes, strides, offsets) are unchanged, so results are bit-equal.
//
// Memory: a moved storage is held until the pass object goes (the pipeline, when the
// Generator is built), then freed where nothing else holds it (the runtime's own copies
// of a mapped file's weights, the packed and fused weights). A caller that keeps small
// weights in heap memory of its own (an in-memory model whose weights were converted on
// load) keeps its copy: those bytes are held twice (at most the small weights' bytes).
// INGOT_HUGE_PAGES=0 turns the pass off with the other huge-page advice.
#pragma once

#include <map>
#include <memory>

#include "ingot/ir/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

class SmallWeightsArena {
 public:
  // `program` with its small weights (above) re-pointed into one huge-page mapping made
  // for those not moved by an earlier call.
  ExportedProgram apply(const ExportedProgram& program);
  // Storages moved so far, and their bytes.
  int moved() const { return int(copies_.size()); }
  int64_t moved_bytes() const { return moved_bytes_; }

 private:
  struct Move {
    std::shared_ptr<Storage> source;  // held, so no later storage reuses its address
    std::shared_ptr<Storage> copy;
  };
  std::map<const Storage*, Move> copies_;
  int64_t moved_bytes_ = 0;
};

// The move as the pipeline's "small_weights_arena" pass (runtime/passes/pipeline.h);
// reports the storages newly moved.
class SmallWeightsArenaPass final : public LoadPass {
 public:
  const char* name() const override { return "small_weights_arena"; }
  int run(ExportedProgram& program, const PassTarget& target) override;

 private:
  SmallWeightsArena arena_;
};

}  // namespace ingot::runtime
