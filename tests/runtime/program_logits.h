// Test helper shared by the runtime rewrite tests: a generation program's logits.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/models/model.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::testing {

// The logits of `program` for `ids` (as f32), over a fresh cache of 32 slots.
inline std::vector<float> program_logits(const ExportedProgram& program,
                                         const models::PretrainedModel& model,
                                         const std::vector<int64_t>& ids) {
  runtime::ProgramModule mod(program);
  nn::StaticCache cache(*model.cache_spec(), 1, 32);
  std::vector<Tensor> outs = mod(Tensor::from_vector(ids, {1, int64_t(ids.size())}), cache);
  Tensor l = contiguous(to(outs.at(0), DType::F32));
  return {l.data<float>(), l.data<float>() + l.numel()};
}

}  // namespace ingot::testing
