// The runtime: reinplacing of buffer writes (a static-cache-like update runs in place,
// no copy), memory reuse across runs (no allocation in steady state).
#include <gtest/gtest.h>

#include "../export/export_test_util.h"
#include "ingot/export/export.h"
#include "ingot/nn/module.h"
#include "ingot/runtime/executor/interpreter.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot {
namespace {

using testing::expect_near_tensors;
using testing::rand_tensor;

// Writes new rows at `pos` into a fixed buffer and attends to the whole buffer.
struct CacheWriter : nn::Module {
  Tensor* cache;
  CacheWriter() : Module("CacheWriter") { cache = register_buffer("cache", zeros({2, 8, 4})); }
  Tensor forward(const Tensor& x, const Tensor& pos) {
    index_copy_(*cache, 1, pos, x);           // cache[:, pos] = x
    return sum(mul(*cache, Scalar(2)), {1});  // [2, 4]
  }
};

TEST(Runtime, BufferWriteRunsInPlaceWithoutAllocationsInSteadyState) {
  CacheWriter m;
  Tensor x = rand_tensor({2, 1, 4}, 1);
  Tensor pos = Tensor::from_vector<int64_t>({0}, {1});
  ExportedProgram ep = export_(m, std::tuple{x, pos});
  auto mod = ingot::runtime::ProgramModule(ep);
  EXPECT_EQ(mod.num_inplace_writes(), 1u);  // index_copy runs as index_copy_ on the buffer
  const void* cache_data = mod.buffer("cache").raw_data();
  // Reference: the same writes applied eagerly to a copy of the buffer.
  Tensor expected_cache = zeros({2, 8, 4});
  for (int64_t step = 0; step < 8; ++step) {
    Tensor xs = rand_tensor({2, 1, 4}, uint32_t(10 + step));
    Tensor p = Tensor::from_vector<int64_t>({step}, {1});
    const int64_t bytes_before = Storage::allocated_bytes_total();
    Tensor out = mod(xs, p).at(0);
    if (step >= 2) {
      // Warm: intermediates come from the pool and the cache (256 bytes) is written where
      // it is. What remains is the 0-d tensor a kernel makes for a Scalar operand.
      EXPECT_LE(Storage::allocated_bytes_total() - bytes_before, 16) << "step " << step;
    }
    index_copy_(expected_cache, 1, p, xs);
    expect_near_tensors(out, sum(mul(expected_cache, Scalar(2)), {1}), 1e-5);
  }
  EXPECT_EQ(mod.buffer("cache").raw_data(), cache_data);
  expect_near_tensors(mod.buffer("cache"), expected_cache);
}

TEST(Runtime, CompileMarksOnlySafeWritesInPlace) {
  CacheWriter m;
  ExportedProgram ep =
      export_(m, std::tuple{rand_tensor({2, 1, 4}, 1), Tensor::from_vector<int64_t>({0}, {1})});
  // Without permission to write the buffer, nothing runs in place.
  EXPECT_EQ(runtime::num_reinplaced(*runtime::compile(*ep.graph)), 0u);
  std::map<ir::ValueId, ir::ValueId> writable{{ep.graph->inputs.at(0), ep.graph->outputs.at(0)}};
  EXPECT_EQ(runtime::num_reinplaced(*runtime::compile(*ep.graph, writable)), 1u);
}

// The old value of the buffer is still read after the write: the write must copy.
struct ReadsOldValue : nn::Module {
  Tensor* cache;
  ReadsOldValue() : Module("ReadsOldValue") { cache = register_buffer("cache", ones({4})); }
  Tensor forward(const Tensor& x) {
    Tensor before = mul(*cache, Scalar(1));
    Tensor old_sum = sum(*cache);  // graph: reads the input value
    copy_(*cache, x);
    return add(add(before, old_sum), *cache);
  }
};

TEST(Runtime, WriteIsNotInPlacedWhenTheOldValueIsReadLater) {
  ReadsOldValue m;
  Tensor x = rand_tensor({4}, 1);
  ExportedProgram ep = export_(m, std::tuple{x});
  auto mod = ingot::runtime::ProgramModule(ep);
  expect_near_tensors(mod(x).at(0), add(add(ones({4}), full({}, 4.0)), x), 1e-6);
  expect_near_tensors(mod.buffer("cache"), x);
}

}  // namespace
}  // namespace ingot
