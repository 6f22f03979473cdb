// torch.export archives (tests/fixtures/pt2) re-exported to ExecuTorch through ingot
// (issue 19): the program read from the .pt2 (both dialects, model.pt2 and
// model_aten.pt2), lowered by the ExecuTorch exporter, saved as .pte and run by
// ExecuTorch's own runtime (the reference venv, tools/executorch/run_cases.py) on every
// recorded case: the method's user outputs equal torch's within 1e-4 (f32). Mutated
// buffers are program state in a .pte (initialised at load, written in place, not method
// outputs), so only their effect on the outputs is checked here, one case per load (each
// recorded case starts from the initial buffers). Every archive and case runs in one
// Python process (run_cases.py --batch). SKIPs with the reason without the
// venv.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>

#include "et_harness.h"
#include "ingot/export/pt2/reader.h"
#include "ingot/exporters/executorch/executorch_config.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace et = testing::et;
const fs::path kDir = fs::path(INGOT_FIXTURES_DIR) / "pt2";
constexpr double kAtol = 1e-4;  // f32 ExecuTorch vs torch

// The archives ExecuTorch runs, by fixture (18 of the 24). The training-dialect decoder
// archives hold scaled_dot_product_attention, which a program read from a .pt2 keeps
// (it is never traced by ingot, so the trace-time patch does not run): it is composed of
// portable kernels in kernels_attention.cpp. nonzero_check's count is planned for its
// bound (the archive's range constraint). Left out (measured, each fails the export with
// a NotSupportedError naming the reason):
//  * both archives of mixtral_moe and qwen3_moe_small: `sort` (transformers' expert
//    ordering) has no ExecuTorch kernel mapping;
//  * symint_input: its unbacked size u0 (the SymInt input's value) has no upper bound, and
//    ExecuTorch plans memory for the largest shape.
const std::vector<std::pair<std::string, std::vector<std::string>>> kArchives = {
    {"buffer_mutation", {"model.pt2", "model_aten.pt2"}},
    {"cond", {"model.pt2", "model_aten.pt2"}},
    {"static_int_dict", {"model.pt2", "model_aten.pt2"}},
    {"loops_item", {"model.pt2", "model_aten.pt2"}},
    {"expr_sized", {"model.pt2", "model_aten.pt2"}},
    {"llama", {"model.pt2", "model_aten.pt2"}},
    {"gpt2", {"model.pt2", "model_aten.pt2"}},
    {"qwen3", {"model.pt2", "model_aten.pt2"}},
    {"nonzero_check", {"model.pt2", "model_aten.pt2"}},
};

bool has_mutations(const ExportedProgram& p) {
  for (const OutputSpec& o : p.signature.outputs)
    if (o.kind != OutputKind::UserOutput) return true;
  return false;
}

TEST(Pt2Executorch, ExecutorchEqualsTorchOnEveryFixtureArchive) {
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
  et::ScratchDir dir("pt2");
  std::vector<nlohmann::json> runs;
  std::vector<std::string> tags;
  for (const auto& [name, archives] : kArchives) {
    std::ifstream mf(kDir / name / "manifest.json");
    const nlohmann::json m = nlohmann::json::parse(mf);
    for (const std::string& archive : archives) {
      const std::string tag = name + "/" + archive;
      SCOPED_TRACE(tag);
      ExportedProgram ep = pt2::load_pt2((kDir / name / archive).string());
      // A mutated buffer is state the loaded method keeps between calls, and torch's
      // recorded cases each start from the initial buffers: such a program runs one case
      // per load (one batch run each).
      const bool one_case_per_load = has_mutations(ep);
      ExecutorchConfig config;
      auto exporter = AutoExporter::from_config(config);
      auto artifact = exporter->lower(std::move(ep), config);
      auto* pte = dynamic_cast<ExecutorchProgram*>(artifact.get());
      ASSERT_NE(pte, nullptr);
      const fs::path stem = dir.path() / (name + "_" + fs::path(archive).stem().string());
      const fs::path file = stem.string() + ".pte";
      artifact->save(file.string());
      std::optional<et::Cases> cases;
      size_t index = 0;
      for (const auto& c : m["cases"]) {
        const std::string run_tag = one_case_per_load ? tag + "#" + std::to_string(index) : tag;
        if (!cases || one_case_per_load)
          cases.emplace(stem.string() + "_cases" + std::to_string(index));
        // The method's inputs: the user inputs by position (torch's flattened inputs).
        std::vector<std::pair<std::string, Tensor>> feeds;
        size_t k = 0;
        for (const auto& n : m["inputs"]) {
          const std::string s = n.get<std::string>();
          if (!c["inputs"].contains(s)) continue;
          ASSERT_LT(k, pte->input_names.size()) << "more recorded inputs than method inputs";
          feeds.push_back(
              {pte->input_names[k++],
               formats::load_npy((kDir / name / c["inputs"][s].get<std::string>()).string())});
        }
        ASSERT_EQ(k, pte->input_names.size());
        // The method's outputs: the user outputs (torch's flattened outputs) in order.
        std::vector<std::pair<size_t, std::pair<std::string, Tensor>>> want;
        size_t u = 0;
        for (size_t j = 0; j < pte->output_names.size(); ++j) {
          if (pte->output_names[j].starts_with("output.")) continue;
          ASSERT_LT(u, c["outputs"].size());
          want.push_back(
              {j,
               {pte->output_names[j],
                formats::load_npy((kDir / name / c["outputs"][u++].get<std::string>()).string())}});
        }
        ASSERT_EQ(u, c["outputs"].size());
        cases->add(feeds, want);
        ++index;
        if (one_case_per_load) {
          runs.push_back(cases->batch_run(run_tag, file, kAtol));
          tags.push_back(run_tag);
        }
      }
      if (!one_case_per_load) {
        runs.push_back(cases->batch_run(tag, file, kAtol));
        tags.push_back(tag);
      }
    }
  }
  const nlohmann::json results = et::run_batch(dir.path(), runs);
  for (const std::string& tag : tags) {
    ASSERT_TRUE(results.contains(tag)) << tag << " did not run";
    EXPECT_TRUE(results[tag].value("ok", false)) << tag << ": " << results[tag].dump();
    std::printf("pt2 -> executorch %s: worst %s\n", tag.c_str(),
                results[tag].value("worst", nlohmann::json()).dump().c_str());
  }
  EXPECT_EQ(results.size(), tags.size());
}

}  // namespace
}  // namespace ingot::exporters
