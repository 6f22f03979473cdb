// Exporting the fixture checkpoints: weights are lifted as (mapped, uncopied) parameters
// and the program matches the eager model.
#include <gtest/gtest.h>

#include "../models/fixture_path.h"
#include "export_test_util.h"
#include "ingot/export/export.h"
#include "ingot/models/model.h"
#include "ingot/models/npy.h"

namespace ingot {
namespace {

class ModelExport : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelExport, StaticShapesMatchEagerWithMappedWeights) {
  const std::string folder = testing::fixture_path(std::string("models/") + GetParam());
  auto model = models::from_pretrained(folder);
  Tensor ids = models::load_npy(folder + "/input_ids.npy");
  auto forward = [&](const Tensor& input_ids) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    models::ModelOutputs out = model->forward(in);
    return out.logits.defined() ? out.logits : out.last_hidden_state;
  };
  Tensor eager = forward(ids);
  ExportOptions o;
  o.input_names = {"input_ids"};
  ExportedProgram ep = export_(model.get(), forward, std::tuple{ids}, o);
  // Every parameter is lifted, and the program's state is the model's own storage.
  // (Computed buffers such as rotary inv_freq are owned memory.)
  size_t params = 0;
  for (const InputSpec& in : ep.signature.inputs) {
    if (in.kind != InputKind::Parameter) continue;
    ++params;
    EXPECT_TRUE(ep.state.at(in.target).storage()->is_mapped()) << in.target;
  }
  EXPECT_EQ(params, model->named_parameters().size());
  testing::expect_near_tensors(ep.module()(ids).at(0), eager, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelExport,
                         ::testing::Values("llama", "mistral_sliding_window", "qwen2_linear_rope",
                                           "qwen3", "gpt2", "bert"));

}  // namespace
}  // namespace ingot
