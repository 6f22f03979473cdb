// The LM-head-for-the-last-position rewrite (runtime/passes/last_position_logits.h): on decoder
// fixtures the rewritten program's logits [1, 1, vocab] equal the last row of the exported
// program's [1, T, vocab] (prompts of 1, 2 and 5 tokens) and both write the same cache;
// the exported program is left unchanged.
#include "ingot/runtime/passes/last_position_logits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "models/fixture_path.h"

namespace ingot {
namespace {

void check_rewrite(const char* fixture, const exporters::NativeExportConfig& config) {
  SCOPED_TRACE(fixture);
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + fixture));
  exporters::GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode =
      (exporters::NativeExporter().export_for_generation(*model, config, o)).package().at("decode");
  const std::string before = decode.print();
  std::optional<ExportedProgram> last = runtime::last_position_logits(decode);
  ASSERT_TRUE(last.has_value()) << fixture << ": the LM head was not found";
  EXPECT_EQ(decode.print(), before) << "the exported program changed";

  runtime::ProgramModule full(decode), rewritten(*last);
  nn::StaticCache cache_full(*model->cache_spec(), 1, 16), cache_last(*model->cache_spec(), 1, 16);
  for (int64_t tokens : {5, 1, 2}) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < tokens; ++i) v.push_back(3 + 5 * i);
    const Tensor ids = Tensor::from_vector(v, {1, tokens});
    const Tensor a = to(full(ids, cache_full).at(0), DType::F32);
    const Tensor b = to(rewritten(ids, cache_last).at(0), DType::F32);
    ASSERT_EQ(b.dim(), 3);
    ASSERT_EQ(b.size(1), 1) << "rewritten logits keep one position";
    ASSERT_EQ(b.size(2), a.size(2));
    const Tensor row = contiguous(select(select(a, 0, 0), 0, tokens - 1));
    const Tensor got = contiguous(select(select(b, 0, 0), 0, 0));
    // One row of a GEMM against the same row through the GEMV route: the sums differ in
    // order only (f32 accumulation), so 1e-4 of the logits' scale; bf16 outputs are
    // rounded after that, so one bf16 step (2^-8) of the scale.
    float scale = 0;
    for (int64_t j = 0; j < row.numel(); ++j)
      scale = std::max(scale, std::abs(row.data<float>()[j]));
    const float tol =
        (decode.graph->value(decode.graph->outputs[0]).dtype == DType::F32 ? 1e-4f : 8e-3f) *
        std::max(scale, 1.0f);
    for (int64_t j = 0; j < row.numel(); ++j) {
      ASSERT_NEAR(got.data<float>()[j], row.data<float>()[j], tol)
          << fixture << " tokens " << tokens << " vocab index " << j;
    }
  }
  // The cache writes are the same computation in both programs: byte-identical.
  const auto named_full = cache_full.named_tensors(), named_last = cache_last.named_tensors();
  ASSERT_EQ(named_full.size(), named_last.size());
  for (size_t i = 0; i < named_full.size(); ++i) {
    const Tensor x = contiguous(named_full[i].second), y = contiguous(named_last[i].second);
    ASSERT_EQ(x.nbytes(), y.nbytes());
    EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()), 0) << named_full[i].first;
  }
}

class LastPositionLogitsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LastPositionLogitsTest, EqualsTheLastRowOfTheFullLogits) {
  check_rewrite(GetParam(), exporters::NativeExportConfig());
}

// A quantised lm_head (ingot::quantized_linear, the export quantizer with lm_head set) is
// rewritten too, so a quantised prefill computes one row of logits, not T.
TEST(LastPositionLogits, QuantisedLmHead) {
  for (const char* scheme : {"int8", "int4"}) {
    exporters::NativeExportConfig c;
    c.quantizer.scheme = scheme;
    c.quantizer.lm_head = true;
    check_rewrite("qwen3", c);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LastPositionLogitsTest,
                         ::testing::Values("llama", "llama_llama3_rope_tied_bf16", "qwen3",
                                           "mistral_sliding_window", "gpt2"));

}  // namespace
}  // namespace ingot
