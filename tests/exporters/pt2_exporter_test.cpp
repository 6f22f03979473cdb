// The torch.export backend (exporters/pt2/): a registered exporter like the others,
// whose artifact saves a .pt2 archive that reads back to the same program.
#include "ingot/exporters/pt2/pt2_exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "../runtime/pt2_torch_check.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;

TEST(Pt2Exporter, RegisteredWithItsConfigFormat) {
  const std::vector<std::string> formats = registered_formats();
  EXPECT_NE(std::find(formats.begin(), formats.end(), "pt2"), formats.end());
  EXPECT_EQ(AutoExporter::from_format("pt2")->backend(), "pt2");
  auto config = AutoExportConfig::from_json(R"({"export_format": "pt2", "dynamic": true})");
  EXPECT_EQ(config->export_format(), "pt2");
  EXPECT_TRUE(config->dynamic);
  EXPECT_EQ(AutoExportConfig::from_json(config->to_json())->to_json(), config->to_json());
  EXPECT_THROW(AutoExportConfig::from_json(R"({"export_format": "pt2", "opset": 18})"), ValueError);
}

TEST(Pt2Exporter, ArtifactSavesAnArchiveThatReadsBackToTheSameProgram) {
  auto model = models::from_pretrained(testing::fixture_path("models/gpt2"));
  Pt2Config config;
  config.dynamic = true;
  std::unique_ptr<ExportArtifact> a = AutoExporter::from_config(config)->export_(*model, config);
  EXPECT_EQ(a->format(), "pt2");
  EXPECT_EQ(a->component_file("decode"), "decode.pt2");
  const fs::path path = fs::temp_directory_path() / ("ingot_pt2_" + std::to_string(::getpid()));
  a->save(path.string());
  const ExportedProgram back = pt2::load_pt2(path.string());
  fs::remove(path);
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{3, 17, 42, 5, 9, 1}, {2, 3});
  const Tensor mask = Tensor::from_vector(std::vector<int64_t>(6, 1), {2, 3});
  const auto want = runtime::ProgramModule(a->program).run({ids, mask});
  const auto got = runtime::ProgramModule(back).run({ids, mask});
  testing::expect_close(got.at(0), testing::values(want.at(0)), 1e-5, 0, "pt2 round trip");
}

}  // namespace
}  // namespace ingot::exporters

namespace ingot::exporters {
namespace {

// The archive takes the inputs transformers' own export does (input_ids, attention_mask):
// position_ids and token_type_ids are computed in the graph (arange, zeros), so torch's
// module(input_ids=..., attention_mask=...) matches the archive's keyword arguments.
// The "inputs" key brings them back as keyword arguments.
TEST(Pt2Exporter, TakesOnlyInputIdsAndAttentionMaskByDefault) {
  for (const char* name : {"models/gpt2", "models/bert"}) {
    auto model = models::from_pretrained(testing::fixture_path(name));
    Pt2Config config;
    config.dynamic = true;
    std::unique_ptr<ExportArtifact> a = AutoExporter::from_config(config)->export_(*model, config);
    const fs::path path =
        fs::temp_directory_path() / ("ingot_pt2_in_" + std::to_string(::getpid()));
    a->save(path.string());
    const ExportedProgram back = pt2::load_pt2(path.string());
    fs::remove(path);
    // Read back, torch's keyword arguments are the program's named top-level inputs.
    EXPECT_EQ(back.input_names, (std::vector<std::string>{"input_ids", "attention_mask"})) << name;
    // token_type_ids left out equals token_type_ids of zeros given.
    const Tensor ids = Tensor::from_vector(std::vector<int64_t>{3, 17, 42, 5, 9, 1}, {2, 3});
    const Tensor mask = Tensor::from_vector(std::vector<int64_t>{1, 1, 1, 0, 1, 1}, {2, 3});
    models::ModelInputs in;
    in.input_ids = ids;
    in.attention_mask = mask;
    if (std::string(name) == "models/bert") in.token_type_ids = zeros({2, 3}, DType::I64);
    // The export keeps a decoder's logits only (Exporter::export_), else every output.
    const auto named = model->forward(in).named();
    const Tensor want = named.contains("logits") ? named.at("logits") : named.begin()->second;
    const auto got = runtime::ProgramModule(back).run({ids, mask});
    testing::expect_close(got.at(0), testing::values(want), 1e-5, 1e-5, name);
  }
  auto config = AutoExportConfig::from_json(
      R"({"export_format": "pt2", "inputs": ["input_ids", "attention_mask", "token_type_ids"]})");
  EXPECT_EQ(static_cast<Pt2Config&>(*config).inputs.size(), 3u);
  EXPECT_EQ(AutoExportConfig::from_json(config->to_json())->to_json(), config->to_json());
  auto bert = models::from_pretrained(testing::fixture_path("models/bert"));
  std::unique_ptr<ExportArtifact> a = AutoExporter::from_config(*config)->export_(*bert, *config);
  const fs::path path = fs::temp_directory_path() / ("ingot_pt2_tt_" + std::to_string(::getpid()));
  a->save(path.string());
  const ExportedProgram back = pt2::load_pt2(path.string());
  fs::remove(path);
  EXPECT_EQ(back.input_names,
            (std::vector<std::string>{"input_ids", "attention_mask", "token_type_ids"}));
  try {
    AutoExportConfig::from_json(R"({"export_format": "pt2", "inputs": ["input_ids", "pixels"]})");
    FAIL() << "an unknown input was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'inputs' names 'pixels'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::exporters

namespace ingot::exporters {
namespace {

// In torch: the BERT archive (token_type_ids left out) loads with torch.export.load and
// its module(input_ids=..., attention_mask=...) gives ingot's outputs (within 1e-5).
TEST(Pt2ExporterTorch, BertArchiveIsCalledWithInputIdsAndAttentionMask) {
  if (!testing::pt2::have_torch())
    GTEST_SKIP() << "no reference venv with torch at " << testing::pt2::ref_python()
                 << " (tools/reference/setup-venv)";
  auto model = models::from_pretrained(testing::fixture_path("models/bert"));
  Pt2Config config;
  config.dynamic = true;
  std::unique_ptr<ExportArtifact> a = AutoExporter::from_config(config)->export_(*model, config);
  testing::pt2::Scratch dir("bert_kwargs");
  const fs::path archive = dir.path() / "bert.pt2";
  a->save(archive.string());
  const fs::path c = dir.path() / "case";
  fs::create_directories(c / "in");
  fs::create_directories(c / "want");
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{3, 17, 42, 5, 9, 1}, {2, 3});
  const Tensor mask = Tensor::from_vector(std::vector<int64_t>{1, 1, 1, 1, 1, 0}, {2, 3});
  formats::save_npy((c / "in" / "kw_input_ids.npy").string(), ids);
  formats::save_npy((c / "in" / "kw_attention_mask.npy").string(), mask);
  const auto want = runtime::ProgramModule(a->program).run({ids, mask});
  for (size_t j = 0; j < want.size(); ++j)
    formats::save_npy((c / "want" / (std::to_string(j) + ".npy")).string(), want[j]);
  const testing::pt2::ToolRun r = testing::pt2::check_pt2({{archive, c}}, 1e-5);
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_TRUE(r.summary.value("ok", false)) << r.log;
}

}  // namespace
}  // namespace ingot::exporters
