// The generation components of vision-language and encoder-decoder models (issue 18)
// exported to ExecuTorch by the one export_for_generation, judged by ExecuTorch's own
// runtime (the reference venv): every component's outputs, the written cache included,
// equal ingot's runtime on the program it was lowered from within 1e-4 (f32), on the
// inputs tests/exporters/onnx_export_conformance_test.cpp gives ONNX Runtime:
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
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/npy.h"
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

using Artifacts = std::map<std::string, std::unique_ptr<ExportArtifact>>;
// Each component's cases: its user inputs by name.
using ComponentCases = std::map<std::string, std::vector<std::map<std::string, Tensor>>>;

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
                        const ComponentCases& cases, const fs::path& root, Batch& batch) {
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
    batch.runs.push_back(c.batch_run(model + "/" + name, file, kAtol));
    batch.tags.push_back(model + "/" + name);
  }
}

GenerationExportOptions cache_len(int64_t n) {
  GenerationExportOptions g;
  g.max_cache_len = n;
  return g;
}

std::map<std::string, Tensor> empty_cache(const models::PretrainedModel& model, int64_t len) {
  std::map<std::string, Tensor> c;
  nn::StaticCache cache(*model.cache_spec(), 1, len);
  for (const auto& [name, t] : cache.named_tensors()) c.emplace(name, contiguous(clone(t)));
  return c;
}

// Seed 003's decode inputs over an empty cache of `len` slots: `ids` [1, n], the causal
// mask [1, 1, n, len] (query i sees slots 0..i), positions [1, n] (0..n-1, plus `shift`).
std::map<std::string, Tensor> seed_decode_case(const models::PretrainedModel& model,
                                               const Tensor& ids, int64_t len, int64_t shift = 0) {
  std::map<std::string, Tensor> c = empty_cache(model, len);
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

// LLaVA: image_encoder at 1 and 3 images, multi_modal_projector, language_model over the
// fixture's merged embeddings with an empty cache, lm_head at 27 and 1 tokens, decode.
void prepare_llava(const fs::path& root, Batch& batch) {
  const std::string folder = testing::fixture_path("vlm/llava");
  auto model = models::from_pretrained(folder);
  const GenerationExportOptions g = cache_len(64);
  auto components = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  ASSERT_EQ(components.size(), 5u);
  const Tensor pv = models::load_npy(folder + "/pixel_values.npy");
  const Tensor features = models::load_npy(folder + "/image_features.npy");
  const Tensor embeds = models::load_npy(folder + "/inputs_embeds.npy");  // [1, 27, 48]
  const Tensor hidden = models::load_npy(folder + "/last_hidden_state.npy");
  ComponentCases cases = {
      {"image_encoder", {{{"pixel_values", pv}}, {{"pixel_values", cat({pv, pv, pv}, 0)}}}},
      {"multi_modal_projector",
       {{{"image_features", features}},
        {{"image_features", cat({features, features, features}, 0)}}}},
      {"lm_head",
       {{{"hidden_states", hidden}}, {{"hidden_states", contiguous(slice(hidden, 1, 26, 27))}}}},
  };
  auto lm = empty_cache(*model, g.max_cache_len);
  lm.emplace("inputs_embeds", embeds);
  cases["language_model"] = {lm};
  cases["decode"] = {
      seed_decode_case(*model, models::load_npy(folder + "/input_ids.npy"), g.max_cache_len)};
  prepare_components("llava", components, cases, root, batch);
}

// Qwen2-VL: the patch encoder at one and two images, the M-RoPE language model, lm_head,
// decode (its position_ids carry rope_deltas in seed 003's layout).
void prepare_qwen2_vl(const fs::path& root, Batch& batch) {
  const std::string folder = testing::fixture_path("vlm/qwen2_vl");
  auto model = models::from_pretrained(folder);
  const GenerationExportOptions g = cache_len(160);
  auto components = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  ASSERT_EQ(components.size(), 4u);
  auto encoder_inputs = [&](const std::string& suffix) {
    const Tensor pv = models::load_npy(folder + "/pixel_values" + suffix + ".npy");
    const models::Qwen2VisionInputs side = models::qwen2_vl_vision_inputs(
        models::load_npy(folder + "/image_grid_thw" + suffix + ".npy"), 2);
    const int64_t tokens = side.vision_segment_ids.size(0);
    return std::map<std::string, Tensor>{
        {"pixel_values", contiguous(reshape(pv, {SymInt(tokens), SymInt(4), SymInt(pv.size(1))}))},
        {"vision_position_ids", side.vision_position_ids},
        {"vision_segment_ids", side.vision_segment_ids}};
  };
  const Tensor hidden = models::load_npy(folder + "/last_hidden_state.npy");
  ComponentCases cases = {
      {"image_encoder", {encoder_inputs(""), encoder_inputs("_two")}},
      {"lm_head",
       {{{"hidden_states", hidden}}, {{"hidden_states", contiguous(slice(hidden, 1, 42, 43))}}}},
  };
  auto lm = empty_cache(*model, g.max_cache_len);
  lm.emplace("inputs_embeds", models::load_npy(folder + "/inputs_embeds.npy"));
  lm.emplace("position_ids", models::load_npy(folder + "/position_ids.npy"));
  cases["language_model"] = {lm};
  const int64_t delta = models::load_npy(folder + "/rope_deltas.npy").data<int64_t>()[0];
  cases["decode"] = {seed_decode_case(*model, models::load_npy(folder + "/input_ids.npy"),
                                      g.max_cache_len, delta)};
  prepare_components("qwen2_vl", components, cases, root, batch);
}

// Encoder-decoder decode inputs: the first `tokens` decoder ids over the cross K/V of the
// first `source` positions and an empty self-attention cache.
std::map<std::string, Tensor> encdec_decode_case(const models::PretrainedModel& model, int64_t len,
                                                 const std::map<std::string, Tensor>& cross,
                                                 const Tensor& ids) {
  std::map<std::string, Tensor> c = empty_cache(model, len);
  for (const auto& [name, t] : cross) c.emplace(name, contiguous(t));
  c.emplace("input_ids", contiguous(ids));
  return c;
}

// T5 (tools/reference/make_encdec_fixtures.py): encoder at 15 and 40 source tokens,
// cross_kv at 15 and 3, decode at (source 15, 4 tokens) and (5, 1).
void prepare_t5(const std::string& name, const fs::path& root, Batch& batch) {
  const std::string folder = testing::fixture_path("encdec/" + name);
  auto model = models::from_pretrained(folder);
  const GenerationExportOptions g = cache_len(32);
  auto components = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  ASSERT_EQ(components.size(), 3u);
  const Tensor ids = models::load_npy(folder + "/input_ids.npy");  // [1, 15]
  const Tensor states = models::load_npy(folder + "/encoder_hidden_states.npy");
  const Tensor keys = models::load_npy(folder + "/cross_key.npy");  // [layers, 1, h, 15, d]
  const Tensor values = models::load_npy(folder + "/cross_value.npy");
  const Tensor decoder_ids = models::load_npy(folder + "/decoder_input_ids.npy");
  std::vector<int64_t> long_ids;
  for (int64_t i = 0; i < 40; ++i) long_ids.push_back(3 + (i * 7) % 39);
  auto decode_case = [&](int64_t source, int64_t tokens) {
    std::map<std::string, Tensor> cross;
    for (int64_t l = 0; l < keys.size(0); ++l) {
      cross.emplace("cross_key_cache." + std::to_string(l),
                    slice(select(keys, 0, l), 2, 0, source));
      cross.emplace("cross_value_cache." + std::to_string(l),
                    slice(select(values, 0, l), 2, 0, source));
    }
    return encdec_decode_case(*model, g.max_cache_len, cross, slice(decoder_ids, 1, 0, tokens));
  };
  ComponentCases cases = {
      {"encoder", {{{"input_ids", ids}}, {{"input_ids", Tensor::from_vector(long_ids, {1, 40})}}}},
      {"cross_kv",
       {{{"encoder_hidden_states", states}},
        {{"encoder_hidden_states", contiguous(slice(states, 1, 0, 3))}}}},
      {"decode", {decode_case(15, 4), decode_case(5, 1)}},
  };
  prepare_components(name, components, cases, root, batch);
}

// Whisper (tools/reference/make_whisper_fixtures.py): the encoder on two inputs, cross_kv,
// decode over the cross K/V with an empty cache (the 4-token prompt) and one token.
void prepare_whisper(const fs::path& root, Batch& batch) {
  const std::string folder = testing::fixture_path("whisper/whisper");
  auto model = models::from_pretrained(folder);
  auto* whisper = dynamic_cast<models::EncoderDecoderModel*>(model.get());
  ASSERT_NE(whisper, nullptr);
  const GenerationExportOptions g = cache_len(32);
  auto components = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  ASSERT_EQ(components.size(), 3u);
  const Tensor features = models::load_npy(folder + "/input_features.npy");  // [1, 16, 100]
  const Tensor features8 = models::load_npy(folder + "/input_features_8k.npy");
  const Tensor states = models::load_npy(folder + "/encoder_hidden.npy");  // [1, 50, 32]
  const std::map<std::string, Tensor> cross = whisper->cross_attention_cache(states).named();
  const Tensor prompt = models::load_npy(folder + "/decoder_input_ids.npy");  // [1, 4]
  ComponentCases cases = {
      {"encoder", {{{"input_features", features}}, {{"input_features", features8}}}},
      {"cross_kv", {{{"encoder_hidden_states", states}}}},
      {"decode",
       {encdec_decode_case(*model, g.max_cache_len, cross, prompt),
        encdec_decode_case(*model, g.max_cache_len, cross, slice(prompt, 1, 0, 1))}},
  };
  prepare_components("whisper", components, cases, root, batch);
}

TEST(ExecutorchComponents, VisionLanguageAndEncoderDecoderComponentsInExecutorchEqualIngot) {
  SKIP_WITHOUT_VENV();
  et::ScratchDir dir("components");
  Batch batch;
  prepare_llava(dir.path(), batch);
  prepare_qwen2_vl(dir.path(), batch);
  for (const char* t5 : {"t5", "t5_gated"}) prepare_t5(t5, dir.path(), batch);
  prepare_whisper(dir.path(), batch);
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
