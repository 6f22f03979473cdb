// Exporting the fixture checkpoints: weights are lifted as (mapped, uncopied) parameters
// and the program matches the eager model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../decoder_fixtures.h"
#include "../models/fixture_path.h"
#include "export_test_util.h"
#include "ingot/export/export.h"
#include "ingot/export/serialize.h"
#include "ingot/formats/npy.h"
#include "ingot/models/model.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

class ModelExport : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelExport, StaticShapesMatchEagerWithMappedWeights) {
  const std::string folder = testing::fixture_path(std::string("models/") + GetParam());
  auto model = models::from_pretrained(folder);
  Tensor ids = formats::load_npy(folder + "/input_ids.npy");
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
  // Every parameter is lifted, and the program's state is the model's own storage
  // (mapped from the checkpoint where its dtype is the compute dtype): never copied.
  std::map<std::string, Tensor> eager_state = model->state_dict();
  size_t params = 0;
  for (const InputSpec& in : ep.signature.inputs) {
    if (in.kind != InputKind::Parameter) continue;
    ++params;
    EXPECT_EQ(ep.state.at(in.target).storage(), eager_state.at(in.target).storage()) << in.target;
  }
  EXPECT_EQ(params, model->named_parameters().size());
  testing::expect_near_tensors(ingot::runtime::ProgramModule{ep}(ids).at(0), eager, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ModelExport,
                         ::testing::ValuesIn(ingot::testing::model_fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// Dynamic batch and sequence: one program, saved and loaded, run at three shapes, equal
// to eager.
TEST_P(ModelExport, DynamicBatchAndSequenceMatchEagerAtThreeShapes) {
  const std::string folder = testing::fixture_path(std::string("models/") + GetParam());
  auto model = models::from_pretrained(folder);
  auto forward = [&](const Tensor& input_ids) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    models::ModelOutputs out = model->forward(in);
    return out.logits.defined() ? out.logits : out.last_hidden_state;
  };
  ExportOptions o;
  o.input_names = {"input_ids"};
  o.dynamic_shapes = DynamicShapes::tuple(
      {DynamicShapes::tensor({{0, Dim("batch", 1, 16)}, {1, Dim("seq", 1, 64)}})});
  Tensor example = to(mul(testing::rand_tensor({2, 7}, 3), Scalar(0)), DType::I64);
  ExportedProgram exported = export_(model.get(), forward, std::tuple{example}, o);
  // Through the archive: save, load (weights mapped from the file), run.
  const std::string path =
      (std::filesystem::temp_directory_path() / (std::string("ingot_model_export_") + GetParam() +
                                                 "_" + std::to_string(::getpid()) + ".ingot"))
          .string();
  save(exported, path);
  ExportedProgram ep = load(path);
  std::filesystem::remove(path);  // the mapping keeps the data alive
  EXPECT_EQ(ep.print(), exported.print());
  for (const auto& [name, t] : ep.state) EXPECT_TRUE(t.storage()->is_mapped()) << name;
  auto mod = ingot::runtime::ProgramModule(ep);
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 17}}) {
    Tensor ids =
        to(abs(mul(testing::rand_tensor({b, s}, uint32_t(b * 100 + s)), Scalar(20))), DType::I64);
    testing::expect_near_tensors(mod(ids).at(0), forward(ids), 1e-5);
  }
}

}  // namespace
}  // namespace ingot
