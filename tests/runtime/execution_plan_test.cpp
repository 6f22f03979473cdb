// Execution plans (runtime/execution_plan.h): on the decoder fixtures the planned path
// gives bit-identical logits and caches to the interpreter, a new input shape makes a
// new plan (not a wrong answer), a held output is never overwritten, and decode steps
// after warm-up allocate no storage at all.
#include "ingot/runtime/execution_plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "../models/fixture_path.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

using exporters::GenerationExportOptions;

runtime::GenerationPackage export_for_generation(models::PretrainedModel& model,
                                                 const GenerationExportOptions& o) {
  return (exporters::NativeExporter().export_for_generation(model, exporters::NativeExportConfig(),
                                                            o))
      .package();
}

// Same dtype, sizes and bytes.
::testing::AssertionResult bit_identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes())
    return ::testing::AssertionFailure() << a.shape_string() << " vs " << b.shape_string();
  Tensor ca = contiguous(a), cb = contiguous(b);
  if (std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) != 0)
    return ::testing::AssertionFailure() << "bytes differ";
  return ::testing::AssertionSuccess();
}

Tensor ids(std::vector<int64_t> v) {
  const int64_t n = int64_t(v.size());
  return Tensor::from_vector(v, {1, n});
}

class ExecutionPlanTest : public ::testing::TestWithParam<const char*> {};

// The merged multi-token decode graph (dynamic sequence length): a 3-token prompt,
// decode steps, 2-token chunks (a new shape, then its plan replayed) through planned and
// unplanned modules.
TEST_P(ExecutionPlanTest, PlannedRunsAreBitIdenticalToTheInterpreter) {
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  GenerationExportOptions o;
  o.max_cache_len = 16;
  o.multi_token_decode = true;
  const ExportedProgram decode = export_for_generation(*model, o).at("decode");
  runtime::ProgramModule planned(decode), reference(decode);
  reference.set_planning(false);
  ASSERT_TRUE(planned.plannable()) << GetParam() << ": " << planned.unplannable_reason();
  nn::StaticCache cache_p(*model->cache_spec(), 1, 16), cache_r(*model->cache_spec(), 1, 16);

  std::vector<Tensor> chunks{ids({5, 6, 7})};
  for (int64_t t = 0; t < 6; ++t) chunks.push_back(ids({11 + 3 * t}));
  chunks.push_back(ids({2, 9}));  // a shape not seen before
  chunks.push_back(ids({4}));     // back to the decode plan
  chunks.push_back(ids({8, 1}));  // the [1, 2] plan again: multi-token steps replayed
  chunks.push_back(ids({6}));
  for (size_t step = 0; step < chunks.size(); ++step) {
    // A fresh ids tensor for the planned module each step: ids are rebound, not bound.
    Tensor mine = clone(chunks[step]);
    Tensor got = planned(mine, cache_p).at(0);
    Tensor want = reference(chunks[step], cache_r).at(0);
    EXPECT_TRUE(bit_identical(got, want)) << GetParam() << " step " << step;
    got = Tensor();  // release the plan's output so the next step may reuse it
  }
  for (size_t l = 0; l < cache_p.num_layers(); ++l) {
    EXPECT_TRUE(bit_identical(cache_p.keys(l), cache_r.keys(l))) << "key cache " << l;
    EXPECT_TRUE(bit_identical(cache_p.values(l), cache_r.values(l))) << "value cache " << l;
  }
  // Shapes [1, 3], [1, 1], [1, 2]: three plans; all but the three first calls of a shape
  // ran the plan's kernels only.
  EXPECT_EQ(planned.num_plans(), 3u);
  EXPECT_EQ(planned.num_planned_runs(), int64_t(chunks.size()) - 3);
  EXPECT_EQ(reference.num_planned_runs(), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ExecutionPlanTest,
                         ::testing::Values("llama", "llama_llama3_rope_tied_bf16",
                                           "mistral_sliding_window", "qwen2_yarn_rope", "qwen3",
                                           "qwen3_dynamic_rope_f16", "gpt2"));

// A caller that keeps a planned output keeps its values: the next call takes the
// interpreter instead of overwriting it.
TEST(ExecutionPlan, HeldOutputsAreNotOverwritten) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode = export_for_generation(*model, o).at("decode");
  runtime::ProgramModule mod(decode);
  nn::StaticCache cache(*model->cache_spec(), 1, 16);
  Tensor token = ids({3});
  mod(token, cache);
  Tensor first = mod(token, cache).at(0);  // planned
  ASSERT_EQ(mod.num_planned_runs(), 1);
  Tensor copy = clone(first);
  Tensor second = mod(token, cache).at(0);  // `first` still held: interpreter
  EXPECT_EQ(mod.num_planned_runs(), 1);
  EXPECT_TRUE(bit_identical(first, copy));
  EXPECT_FALSE(bit_identical(first, second));  // a later position gives other logits
  Tensor view = select(second, 1, 0);          // a view also keeps it
  second = Tensor();
  mod(token, cache);
  EXPECT_EQ(mod.num_planned_runs(), 1);
}

// DESIGN decision 12: after warm-up a decode step allocates no storage (counted by the
// core allocator), through the Generator as `ingot generate` runs it.
TEST(ExecutionPlan, DecodeStepsAllocateNoStorageAfterWarmUp) {
  for (const char* name : {"llama", "qwen3", "gpt2"}) {
    auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + name));
    GenerationExportOptions o;
    o.max_cache_len = 64;
    runtime::Generator gen(export_for_generation(*model, o));
    std::vector<int64_t> allocations, bytes;
    int64_t last_count = Storage::allocation_count(), last_bytes = Storage::allocated_bytes_total();
    runtime::GenerateOptions go;
    go.max_new_tokens = 24;
    go.on_token = [&](int64_t) {
      allocations.push_back(Storage::allocation_count() - last_count);
      bytes.push_back(Storage::allocated_bytes_total() - last_bytes);
      last_count = Storage::allocation_count();
      last_bytes = Storage::allocated_bytes_total();
    };
    gen.generate({5, 6, 7}, go);
    ASSERT_EQ(allocations.size(), 24u);
    // Token 0 comes from prefill, token 1 from the step that builds the decode plan.
    for (size_t i = 2; i < allocations.size(); ++i) {
      EXPECT_EQ(allocations[i], 0)
          << name << " step " << i << " allocated " << bytes[i] << " bytes";
    }
    EXPECT_EQ(gen.decode_planned_runs(), 22) << name << ": the decode steps ran the plan";
  }
}

}  // namespace
}  // namespace ingot
