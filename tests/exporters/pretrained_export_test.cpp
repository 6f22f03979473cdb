// export_pretrained: HF models with named inputs (input_ids, attention_mask, ...) and
// outputs (logits / last_hidden_state).
#include <gtest/gtest.h>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

class PretrainedExport : public ::testing::TestWithParam<const char*> {};

TEST_P(PretrainedExport, NamedInputsAndOutputsWithDynamicDims) {
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  PretrainedExportOptions o;
  o.dynamic = true;
  o.max_seq = 64;
  ExportedProgram ep = export_pretrained(*model, o);
  const std::string p = ep.print();
  EXPECT_TRUE(testing::contains(p, "input_ids: i64[batch, seq]")) << p;
  EXPECT_TRUE(testing::contains(p, "attention_mask: i64[batch, seq]")) << p;
  const bool is_lm = model->architecture() != "BertModel";
  EXPECT_TRUE(
      testing::contains(p, is_lm ? "logits: USER_OUTPUT" : "last_hidden_state: USER_OUTPUT"))
      << p;
  // Padding in the second row: the program agrees with eager.
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 3}, {2, 9}, {3, 20}}) {
    models::ModelInputs in = example_model_inputs(*model, b, s);
    if (b > 1) {
      std::vector<int64_t> mask(size_t(b * s), 1);
      mask[size_t(s)] = 0;  // row 1 starts with a padded position
      in.attention_mask = Tensor::from_vector(mask, {b, s});
    }
    auto out = ingot::runtime::ProgramModule{ep}(in);
    models::ModelOutputs eager = model->forward(in);
    testing::expect_near_tensors(out.at(0), is_lm ? eager.logits : eager.last_hidden_state, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PretrainedExport,
                         ::testing::Values("llama", "mistral_sliding_window", "qwen2_linear_rope",
                                           "qwen3", "gpt2", "bert", "gemma2", "gemma3",
                                           "phi3_longrope", "gpt_neox", "stablelm", "smollm3"));

}  // namespace
}  // namespace ingot::exporters
