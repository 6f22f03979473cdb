// OpenVINO as the judge of the multimodal and encoder-decoder generation components
// (issue 18): LLaVA, Qwen2-VL, T5 (t5, t5_gated) and Whisper exported by the one
// export_for_generation with the OpenVINO exporter; every component, saved as IR and run
// by OpenVINO's CPU plugin (f32 inference) on the same cases as the ONNX Runtime judge
// (generation_component_cases.h), equals ingot's runtime on the program it was lowered
// from within 1e-4. Each model twice:
//  * stateful (the default, what `ingot export --task generation --format openvino`
//    writes): the static cache is a set of variables starting empty; the variables after
//    the call (query_state) equal ingot's updated cache; a decode component in OpenVINO
//    GenAI's layout is also fed attention_mask, position_ids and beam_idx;
//  * stateful = false: the cache tensors are input.<name> / output.<name> pairs (how one
//    component's cache is handed to another, e.g. language_model -> decode), every
//    output.<name> compared too.
// Needs the venv of tools/openvino/setup-venv; without it every test is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "../models/fixture_path.h"
#include "generation_component_cases.h"
#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "ov_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ovt = testing::ov;
using testing::ComponentCases;

constexpr double kAtol = 1e-4;  // f32 OpenVINO vs ingot

#define SKIP_WITHOUT_VENV() \
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason()

using Artifacts = GenerationExport;

// One case of a component: OpenVINO's feeds (by Parameter name) and the values OpenVINO
// must give (outputs by Result name; variables as state.<id>), from ingot's runtime.
struct OvCase {
  std::map<std::string, Tensor> feeds, want;
};

OvCase ingot_case(const OpenVINOModel& p, runtime::ProgramModule& mod,
                  const std::map<std::string, Tensor>& case_inputs) {
  const GraphSignature& sig = p.program.signature;
  const std::set<std::string> variables(p.variables.begin(), p.variables.end());
  std::set<std::string> mutated;
  for (const OutputSpec& o : sig.outputs) {
    if (o.kind == OutputKind::UserInputMutation) mutated.insert(o.target);
  }
  OvCase c;
  std::map<std::string, Tensor> inputs;  // private copies: ingot updates the cache in place
  std::vector<Tensor> user;
  for (const InputSpec& in : sig.inputs) {
    if (in.kind != InputKind::UserInput) continue;
    const Tensor t = contiguous(clone(case_inputs.at(in.target)));
    inputs.emplace(in.target, t);
    user.push_back(t);
    if (variables.contains(in.target)) {
      // A variable starts at zeros (a user input's initial value): only an empty cache
      // can be the case's value.
      EXPECT_EQ(amax(abs(to(t, DType::F32))).item<float>(), 0.0f)
          << in.target << " is a variable of the stateful model, which starts at zeros";
      continue;
    }
    c.feeds[mutated.contains(in.target) ? "input." + in.target : in.target] = contiguous(clone(t));
  }
  // OpenVINO GenAI's decode layout: an unpadded prompt at positions 0..tokens-1 of an
  // empty cache, one beam (the graph reads only beam_idx).
  const auto& names = p.input_names;
  if (std::find(names.begin(), names.end(), "beam_idx") != names.end()) {
    const int64_t tokens = inputs.at("input_ids").size(1);
    std::vector<int64_t> positions;
    for (int64_t i = 0; i < tokens; ++i) positions.push_back(i);
    c.feeds["attention_mask"] = ones({1, tokens}, DType::I64);
    c.feeds["position_ids"] = Tensor::from_vector(positions, {1, tokens});
    c.feeds["beam_idx"] = Tensor::from_vector(std::vector<int32_t>{0}, {1});
  }
  std::vector<Tensor> outs = mod.run(user);
  const std::vector<std::string> out_names = openvino::openvino_output_names(p.program);
  size_t k = 0;
  for (size_t j = 0; j < sig.outputs.size(); ++j) {
    const OutputSpec& o = sig.outputs[j];
    if (o.kind == OutputKind::UserOutput) {
      c.want[out_names.at(j)] = contiguous(outs.at(k++));
    } else if (variables.contains(o.target)) {
      // cpu_i64_variables_as_i32 (cpu_ir_fixes.cpp) holds an i64 variable as i32, and the
      // CPU plugin's query_state() reads a 0-d variable back as [1] (openvino 2026.4, also
      // for a model built with OpenVINO's own API): the cache position is compared so.
      Tensor v = inputs.at(o.target);
      if (v.dtype() == DType::I64) v = to(v, DType::I32);
      if (v.dim() == 0) v = reshape(v, {SymInt(1)});
      c.want["state." + o.target] = contiguous(v);
    } else {
      c.want[out_names.at(j)] = contiguous(inputs.at(o.target));
    }
  }
  return c;
}

// Saves every component with cases as IR and runs its cases in OpenVINO (one read +
// compile per component) against ingot's runtime on the same program (kAtol).
void expect_components_in_openvino_equal_ingot(Artifacts& components, const ComponentCases& cases,
                                               const fs::path& dir) {
  for (const auto& [name, inputs] : cases) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(components.contains(name)) << "no component " << name;
    auto& p = dynamic_cast<OpenVINOModel&>(*components.at(name));
    const fs::path file = dir / (name + ".xml");
    p.save(file.string());
    runtime::ProgramModule mod(p.program);
    ovt::Cases c(dir / ("cases_" + name));
    for (const auto& in : inputs) {
      OvCase one = ingot_case(p, mod, in);
      c.add(one.feeds, one.want);
    }
    nlohmann::json summary = c.run(file, kAtol);
    EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
    std::printf("  %s: max|diff| %s\n", name.c_str(),
                summary.value("worst", nlohmann::json()).dump().c_str());
  }
}

// Exports `folder`'s model for generation twice (stateful and not) and judges every
// component on the cases `make_cases` builds.
void judge_fixture(const std::string& fixture, const std::string& scratch, int64_t max_cache_len,
                   size_t n_components,
                   const std::function<ComponentCases(models::PretrainedModel&, const std::string&,
                                                      int64_t)>& make_cases) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path(fixture);
  auto model = models::from_pretrained(folder);
  GenerationExportOptions g;
  g.max_cache_len = max_cache_len;
  const ComponentCases cases = make_cases(*model, folder, max_cache_len);
  for (bool stateful : {true, false}) {
    SCOPED_TRACE(stateful ? "stateful" : "stateful = false");
    OpenVINOConfig config;
    config.stateful = stateful;
    Artifacts components = OpenVINOExporter().export_for_generation(*model, config, g);
    ASSERT_EQ(components.size(), n_components);
    ovt::ScratchDir dir(scratch + (stateful ? "_stateful" : "_pairs"));
    expect_components_in_openvino_equal_ingot(components, cases, dir.path());
  }
}

// LLaVA: image_encoder (CLIP: patch conv, class token, quick-gelu) at 1 and 3 images,
// multi_modal_projector, language_model over merged embeddings, lm_head, decode.
TEST(OpenVINOVisionLanguage, LlavaComponentsInOpenVINOEqualIngot) {
  judge_fixture("vlm/llava", "llava", 64, 5, testing::llava_component_cases);
}

// Qwen2-VL: the patch encoder (2-D rotary, per-image mask, merger) at 1 and 2 images, the
// M-RoPE language model, lm_head, decode with rope_deltas.
TEST(OpenVINOVisionLanguage, Qwen2VLComponentsInOpenVINOEqualIngot) {
  judge_fixture("vlm/qwen2_vl", "qwen2_vl", 160, 4, testing::qwen2_vl_component_cases);
}

// T5 (relative position buckets, cross-attention): encoder, cross_kv, decode.
class OpenVINOEncoderDecoder : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenVINOEncoderDecoder, T5ComponentsInOpenVINOEqualIngot) {
  judge_fixture("encdec/" + GetParam(), "encdec_" + GetParam(), 32, 3, testing::t5_component_cases);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpenVINOEncoderDecoder, ::testing::Values("t5", "t5_gated"));

// Whisper: the conv front end + encoder on two log-mel inputs, cross_kv, decode.
TEST(OpenVINOWhisper, ComponentsInOpenVINOEqualIngot) {
  judge_fixture("whisper/whisper", "whisper", 32, 3,
                [](models::PretrainedModel& m, const std::string& folder, int64_t len) {
                  return testing::whisper_component_cases(
                      dynamic_cast<models::EncoderDecoderModel&>(m), folder, len);
                });
}

}  // namespace
}  // namespace ingot::exporters
