// The generation components of vision-language and encoder-decoder models (issue 18)
// exported to ExecuTorch by the one export_for_generation, judged by ExecuTorch's own
// runtime (the reference venv): every component's outputs, the written cache included,
// equal ingot's runtime on the program it was lowered from within 1e-4 (f32), on the
// inputs ONNX Runtime and OpenVINO get (generation_component_cases.h):
//  * LLaVA: image_encoder (CLIP: patch conv, class token, quick-gelu) at 1 and 3 images,
//    multi_modal_projector, language_model over the fixture's merged embeddings, lm_head,
//    decode (seed 003's layout: input_ids, attention_mask, position_ids, cache);
//  * Qwen2-VL: the patch image encoder (2-D rotary, per-image mask, merger) at 1 and 2
//    images, the M-RoPE language model, lm_head, decode;
//  * T5 (t5, t5_gated): encoder (relative position buckets) at two source lengths,
//    cross_kv, decode over the cross K/V and an empty cache;
//  * Whisper: encoder (conv front end) on two inputs, cross_kv, decode.
// Every program and case runs in one Python process (run_cases.py --batch). Without the
// venv the test prints SKIP with the reason.
#include <gtest/gtest.h>

#include <set>

#include "../models/fixture_path.h"
#include "et_harness.h"
#include "generation_component_cases.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/formats/npy.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace et = testing::et;

constexpr double kAtol = 1e-4;  // f32 ExecuTorch vs ingot

#define SKIP_WITHOUT_VENV() \
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason()

using Artifacts = GenerationExport;
using testing::ComponentCases;

ExecutorchProgram& pte_of(ExportArtifact& a) {
  return dynamic_cast<ExecutorchProgram&>(a);
}

// The ExecuTorch runs of every model, collected for one run_cases.py --batch.
struct Batch {
  std::vector<nlohmann::json> runs;
  std::vector<std::string> tags;
};

// Saves each component of `cases` as <dir>/<name>.pte, runs ingot's runtime on each case
// and adds the component's run (tag "<model>/<name>") to `batch`: ExecuTorch's method
// outputs (the user outputs and the mutated inputs, output.<name>) by position == ingot's
// outputs and the inputs it updated in place.
void prepare_components(const std::string& model, Artifacts& components,
                        const ComponentCases& cases, const fs::path& root, Batch& batch,
                        const std::string& backend) {
  for (const auto& [name, inputs] : cases) {
    SCOPED_TRACE(model + "/" + name);
    ASSERT_TRUE(components.contains(name)) << "no component " << name;
    ExecutorchProgram& p = pte_of(*components.at(name));
    const fs::path dir = root / model;
    fs::create_directories(dir);
    const fs::path file = dir / (name + ".pte");
    p.save(file.string());
    runtime::ProgramModule mod(p.program);
    et::Cases c(dir / ("cases_" + name));
    for (const auto& in : inputs) {
      std::vector<std::pair<std::string, Tensor>> feeds;  // the method's inputs by position
      std::map<std::string, Tensor> ingot_inputs;         // updated in place by ingot
      std::vector<Tensor> user;
      for (const std::string& n : p.input_names) {
        ASSERT_TRUE(in.contains(n)) << name << ": the case has no input " << n;
        feeds.push_back({n, contiguous(clone(in.at(n)))});
        Tensor t = contiguous(clone(in.at(n)));
        ingot_inputs[n] = t;
        user.push_back(t);
      }
      std::vector<Tensor> outs = mod.run(user);
      std::vector<std::pair<size_t, std::pair<std::string, Tensor>>> want;
      size_t k = 0;
      for (size_t j = 0; j < p.output_names.size(); ++j) {
        const std::string& o = p.output_names[j];
        if (o.starts_with("output.") && ingot_inputs.contains(o.substr(7)))
          want.push_back({j, {o, contiguous(ingot_inputs.at(o.substr(7)))}});
        else
          want.push_back({j, {o, contiguous(outs.at(k++))}});
      }
      EXPECT_EQ(k, outs.size()) << name << ": ingot's user outputs and the method's differ";
      c.add(feeds, want);
    }
    const std::string tag = model + "/" + name + (backend == "portable" ? "" : "/" + backend);
    if (backend == "xnnpack") {
      size_t delegates = 0;
      for (const auto& ins : p.pte.plans.at(0).instructions)
        delegates += ins.kind == executorch::Instruction::Kind::Delegate;
      std::cout << tag << ": " << delegates << " XNNPACK delegate calls\n";
    }
    batch.runs.push_back(c.batch_run(tag, file, kAtol));
    batch.tags.push_back(tag);
  }
}

GenerationExportOptions cache_len(int64_t n) {
  GenerationExportOptions g;
  g.max_cache_len = n;
  return g;
}

// Seed 003's decode inputs over an empty cache of `len` slots: `ids` [1, n], the causal
// mask [1, 1, n, len] (query i sees slots 0..i), positions [1, n] (0..n-1, plus `shift`).
std::map<std::string, Tensor> seed_decode_case(const models::PretrainedModel& model,
                                               const Tensor& ids, int64_t len, int64_t shift = 0) {
  std::map<std::string, Tensor> c = testing::empty_cache_inputs(model, len);
  const int64_t n = ids.size(1);
  std::vector<uint8_t> mask(static_cast<size_t>(n * len));
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    pos[size_t(i)] = i + shift;
    for (int64_t j = 0; j < len; ++j) mask[size_t(i * len + j)] = j <= i;
  }
  c.emplace("input_ids", contiguous(ids));
  c.emplace("attention_mask",
            to(Tensor::from_vector(std::vector<int64_t>(mask.begin(), mask.end()), {1, 1, n, len}),
               DType::Bool));
  c.emplace("position_ids", Tensor::from_vector(pos, {1, n}));
  return c;
}

// The components of the model in `folder` exported to ExecuTorch (`count` of them) and
// judged on the ONNX / OpenVINO tests' cases (generation_component_cases.h); a VLM's
// decode takes seed 003's ExecuTorch layout (ids, mask, positions, cache; Qwen2-VL's
// rope delta added to the positions) instead of the native one.
void prepare_model(const std::string& name, const std::string& folder, int64_t len, size_t count,
                   const fs::path& root, Batch& batch,
                   const std::string& backend = "portable") {
  auto model = models::from_pretrained(folder);
  ExecutorchConfig config;
  config.backend = backend;
  auto components = ExecutorchExporter().export_for_generation(*model, config, cache_len(len));
  ASSERT_EQ(components.size(), count) << name;
  ComponentCases cases;
  const Tensor ids = name == "llava" || name == "qwen2_vl"
                         ? formats::load_npy(folder + "/input_ids.npy")
                         : Tensor();
  if (name == "llava") {
    cases = testing::llava_component_cases(*model, folder, len);
    cases["decode"] = {seed_decode_case(*model, ids, len)};
  } else if (name == "qwen2_vl") {
    cases = testing::qwen2_vl_component_cases(*model, folder, len);
    const int64_t delta = formats::load_npy(folder + "/rope_deltas.npy").data<int64_t>()[0];
    cases["decode"] = {seed_decode_case(*model, ids, len, delta)};
  } else if (name == "whisper") {
    auto* whisper = dynamic_cast<models::EncoderDecoderModel*>(model.get());
    ASSERT_NE(whisper, nullptr);
    cases = testing::whisper_component_cases(*whisper, folder, len);
  } else {
    cases = testing::t5_component_cases(*model, folder, len);
  }
  prepare_components(name, components, cases, (root / backend), batch, backend);
}

TEST(ExecutorchComponents, VisionLanguageAndEncoderDecoderComponentsInExecutorchEqualIngot) {
  SKIP_WITHOUT_VENV();
  et::ScratchDir dir("components");
  Batch batch;
  prepare_model("llava", testing::fixture_path("vlm/llava"), 64, 5, dir.path(), batch);
  prepare_model("qwen2_vl", testing::fixture_path("vlm/qwen2_vl"), 160, 4, dir.path(), batch);
  for (const char* t5 : {"t5", "t5_gated"})
    prepare_model(t5, testing::fixture_path(std::string("encdec/") + t5), 32, 3, dir.path(), batch);
  prepare_model("whisper", testing::fixture_path("whisper/whisper"), 32, 3, dir.path(), batch);
  ASSERT_FALSE(batch.runs.empty());
  const nlohmann::json results = et::run_batch(dir.path(), batch.runs);
  for (const std::string& tag : batch.tags) {
    ASSERT_TRUE(results.contains(tag)) << tag << " did not run";
    EXPECT_TRUE(results[tag].value("ok", false)) << tag << ": " << results[tag].dump();
  }
  EXPECT_EQ(results.size(), batch.tags.size());
}

// The same components and cases with backend="xnnpack" (linear / matmul partitions with
// the elementwise ops between them in XNNPACK delegates, the rest portable).
TEST(ExecutorchComponents, ComponentsOnXnnpackEqualIngot) {
  SKIP_WITHOUT_VENV();
  et::ScratchDir dir("components_xnnpack");
  Batch batch;
  prepare_model("llava", testing::fixture_path("vlm/llava"), 64, 5, dir.path(), batch, "xnnpack");
  prepare_model("qwen2_vl", testing::fixture_path("vlm/qwen2_vl"), 160, 4, dir.path(), batch,
                "xnnpack");
  for (const char* t5 : {"t5", "t5_gated"})
    prepare_model(t5, testing::fixture_path(std::string("encdec/") + t5), 32, 3, dir.path(), batch,
                  "xnnpack");
  prepare_model("whisper", testing::fixture_path("whisper/whisper"), 32, 3, dir.path(), batch,
                "xnnpack");
  ASSERT_FALSE(batch.runs.empty());
  const nlohmann::json results = et::run_batch(dir.path(), batch.runs);
  for (const std::string& tag : batch.tags) {
    ASSERT_TRUE(results.contains(tag)) << tag << " did not run";
    EXPECT_TRUE(results[tag].value("ok", false)) << tag << ": " << results[tag].dump();
  }
  EXPECT_EQ(results.size(), batch.tags.size());
}

}  // namespace
}  // namespace ingot::exporters
