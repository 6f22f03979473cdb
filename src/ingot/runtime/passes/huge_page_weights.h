// The weights a Generator runs on, moved into huge-page memory once, and held once.
//
// A decode step reads every weight once, so weight streaming speed is decode speed.
// Weights viewed from a mapped file (an .ingot archive, a safetensors checkpoint) live in
// the kernel's page cache and are mapped with 4 KiB pages unless the file happens to be
// cached in 2 MiB folios (it often is not: it depends on how the file was written and
// read before). Streaming from 4 KiB pages is slower (core/huge_pages.h), so the
// runtime copies each large mapped weight into huge-page memory when it builds a
// Generator. Small ones (norm weights) are copied too, to the heap: a file cached in
// 2 MiB folios maps a whole folio into the process when one of its bytes is read, so
// 56 norm weights left mapped made 112 MiB of a Qwen3-0.6B checkpoint resident again.
// Exported programs and their files are untouched; memory stays at one copy of the
// weights (the mapped pages are released as they are copied).
//
// One copy also when components come from different files: a generation directory's
// prefill.ingot and decode.ingot each store the model's weights, so their mapped tensors
// are distinct storages. A mapped tensor whose name another program passed to this
// object already has, with the same bytes, shares that one's memory instead of getting
// its own (compared byte by byte; names alone never merge anything, so two tensors of
// one program are never merged). This holds with INGOT_HUGE_PAGES=0 too, where the first
// mapped storage is the one kept.
//
// A caller that keeps its own copy of the programs (and runs them too) applies a
// HugePageWeights to them first: the Generator then finds nothing left to copy and both
// share one set of weights. INGOT_HUGE_PAGES=0 keeps the mapped weights as they are.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ingot/export/program.h"
#include "ingot/runtime/passes/pass.h"

namespace ingot::runtime {

class HugePageWeights {
 public:
  // `program` with every state and constant tensor that views a mapped file re-pointed
  // at a copy of its storage (on huge pages from kHugePageBytes). Tensors sharing a
  // storage share its copy, across all programs passed to this object (a decode and a
  // prefill program of one model end up on the same copies), and so do equal-named
  // tensors of different programs with equal bytes (see above).
  ExportedProgram apply(const ExportedProgram& program);
  // Bytes copied so far.
  int64_t copied_bytes() const { return copied_bytes_; }
  // Bytes of mapped storages that matched an earlier program's same-named tensor and
  // share its memory instead of a copy of their own.
  int64_t shared_bytes() const { return shared_bytes_; }

 private:
  // `key`: "state NAME" or "constant NAME".
  Tensor moved(const std::string& key, const Tensor& t);
  // The memory a mapped storage is replaced with: by source storage, and by tensor name
  // (the first storage seen under that key).
  std::map<const Storage*, std::shared_ptr<Storage>> copies_;
  std::map<std::string, std::shared_ptr<Storage>> by_name_;
  int64_t copied_bytes_ = 0;
  int64_t shared_bytes_ = 0;
};

// The move as the pipeline's "huge_page_weights" pass (runtime/passes/pipeline.h): one
// copy across the components it sees; reports the tensors re-pointed.
class HugePageWeightsPass final : public LoadPass {
 public:
  const char* name() const override { return "huge_page_weights"; }
  int run(ExportedProgram& program, const PassTarget& target) override;

 private:
  HugePageWeights weights_;
};

}  // namespace ingot::runtime
