// ONNX Runtime as the judge of the ONNX exporter: every model passes the onnx checker
// (full_check) and ORT's outputs equal ingot's runtime on the same ExportedProgram within
// 1e-4 (f32):
//  * every fixture architecture exported with dynamic batch and sequence, at three shapes,
//    with and without the optimiser;
//  * the seed-001 programs ONNX can express (static values, optional inputs, cond -> If,
//    map / while_loop -> Loop, data-dependent sizes, pytree inputs, buffer mutation);
//  * the decode graph of export_for_generation driven by a greedy loop over ORT with the
//    static cache bound in place (IO binding): tokens equal ingot's own loop.
// Needs the venv of tools/onnx/setup-venv; without it every test is skipped with that reason.
#include <gtest/gtest.h>

#include <set>

#include "../decoder_fixtures.h"
#include "../export/export_test_util.h"
#include "../export/seed_programs.h"
#include "../models/fixture_path.h"
#include "generation_component_cases.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/onnx/optimize.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/formats/npy.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "ingot/text/tokenizer.h"
#include "ort_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ort = testing::ort;
using testing::rand_tensor;

constexpr double kAtol = 1e-4;  // f32 ORT vs ingot

#define SKIP_WITHOUT_VENV() \
  if (!ort::have_venv()) GTEST_SKIP() << ort::skip_reason()

OnnxProgram& onnx_of(ExportArtifact& a) {
  return dynamic_cast<OnnxProgram&>(a);
}

// Runs ingot's runtime on `inputs` (by user-input name) and returns its user outputs by
// ONNX output name; `feeds` receives the inputs by ONNX input name (a mutated input is
// input.<name>).
std::map<std::string, Tensor> run_ingot(const OnnxProgram& p, ingot::runtime::ProgramModule& mod,
                                        const std::map<std::string, Tensor>& inputs,
                                        std::map<std::string, Tensor>& feeds) {
  const GraphSignature& sig = p.program.signature;
  std::set<std::string> mutated;
  for (const OutputSpec& o : sig.outputs) {
    if (o.kind == OutputKind::UserInputMutation) mutated.insert(o.target);
  }
  std::vector<Tensor> user;
  for (const InputSpec& in : sig.inputs) {
    if (in.kind != InputKind::UserInput) continue;
    const Tensor& t = inputs.at(in.target);
    feeds[mutated.contains(in.target) ? "input." + in.target : in.target] = contiguous(clone(t));
    user.push_back(t);
  }
  std::vector<Tensor> outs = mod.run(user);
  std::map<std::string, Tensor> named;
  size_t k = 0;
  for (size_t j = 0; j < sig.outputs.size(); ++j) {
    if (sig.outputs[j].kind == OutputKind::UserOutput)
      named[p.output_names.at(j)] = contiguous(outs.at(k++));
  }
  return named;
}

// --- fixture architectures ---------------------------------------------------------------

class OnnxFixtureConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxFixtureConformance, DynamicBatchAndSequenceAtThreeShapesWithAndWithoutOptimize) {
  SKIP_WITHOUT_VENV();
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  ort::ScratchDir dir(GetParam());
  for (bool optimize : {false, true}) {
    OnnxConfig c;
    c.dynamic = true;
    c.optimize = optimize;
    auto artifact = OnnxExporter().export_(*model, c);
    OnnxProgram& p = onnx_of(*artifact);
    const fs::path file = dir.path() / (optimize ? "optimized.onnx" : "model.onnx");
    p.save(file.string());
    auto mod = ingot::runtime::ProgramModule(p.program);
    ort::Cases cases(dir.path() / (optimize ? "cases_opt" : "cases"));
    for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 17}}) {
      models::ModelInputs in = example_model_inputs(*model, b, s);
      in.input_ids =
          to(abs(mul(rand_tensor({b, s}, uint32_t(b * 31 + s)), Scalar(40))), DType::I64);
      if (s > 1) {  // one padded key in the first row (no row is fully masked)
        in.attention_mask = contiguous(clone(in.attention_mask));
        in.attention_mask.data<int64_t>()[s - 1] = 0;
      }
      std::map<std::string, Tensor> inputs{{"input_ids", in.input_ids},
                                           {"attention_mask", in.attention_mask}};
      if (in.token_type_ids.defined()) inputs["token_type_ids"] = in.token_type_ids;
      std::map<std::string, Tensor> feeds;
      std::map<std::string, Tensor> want = run_ingot(p, mod, inputs, feeds);
      cases.add(feeds, want);
    }
    nlohmann::json summary = cases.run(file, kAtol);
    EXPECT_TRUE(summary.value("ok", false)) << summary.dump();
  }
}

// Static shapes: the optimiser folds the positions, masks and reshapes into constants
// (what it cannot do with symbolic sizes); ORT must still agree with and without it.
TEST_P(OnnxFixtureConformance, StaticShapesFoldedByTheOptimizer) {
  SKIP_WITHOUT_VENV();
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  ort::ScratchDir dir(std::string("static_") + GetParam());
  models::ModelInputs in = example_model_inputs(*model, 2, 7);
  in.input_ids = to(abs(mul(rand_tensor({2, 7}, 11), Scalar(40))), DType::I64);
  std::map<std::string, Tensor> inputs{{"input_ids", in.input_ids},
                                       {"attention_mask", in.attention_mask}};
  if (in.token_type_ids.defined()) inputs["token_type_ids"] = in.token_type_ids;
  size_t nodes[2] = {0, 0};
  for (bool optimize : {false, true}) {
    OnnxConfig c;
    c.optimize = optimize;
    auto artifact = OnnxExporter().export_(*model, in, c);
    OnnxProgram& p = onnx_of(*artifact);
    nodes[optimize] = onnx::count_nodes(p.model);
    const fs::path file = dir.path() / (optimize ? "optimized.onnx" : "model.onnx");
    p.save(file.string());
    auto mod = ingot::runtime::ProgramModule(p.program);
    ort::Cases cases(dir.path() / (optimize ? "cases_opt" : "cases"));
    std::map<std::string, Tensor> feeds;
    std::map<std::string, Tensor> want = run_ingot(p, mod, inputs, feeds);
    cases.add(feeds, want);
    EXPECT_TRUE(cases.run(file, kAtol).value("ok", false));
  }
  EXPECT_LT(nodes[1], nodes[0]);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxFixtureConformance,
                         ::testing::ValuesIn(ingot::testing::model_fixtures()),
                         [](const auto& info) { return info.param; });

// --- seed-001 programs -----------------------------------------------------------------------

// Exports `fn` to ONNX and checks ORT against ingot's runtime on each input set (given by
// user-input name); returns the program for further checks.
template <typename Fn, typename... Args>
std::unique_ptr<ExportArtifact> check_program(
    const std::string& name, nn::Module* module, Fn fn, const std::tuple<Args...>& example,
    const OnnxConfig& config, const std::vector<std::string>& input_names,
    const std::vector<std::map<std::string, Tensor>>& input_sets, double rtol = 0.0) {
  auto artifact = OnnxExporter().export_fn(module, fn, example, config, input_names);
  OnnxProgram& p = onnx_of(*artifact);
  ort::ScratchDir dir(name);
  p.save((dir.path() / "model.onnx").string());
  auto mod = ingot::runtime::ProgramModule(p.program);
  ort::Cases cases(dir.path());
  for (const auto& inputs : input_sets) {
    std::map<std::string, Tensor> feeds;
    std::map<std::string, Tensor> want = run_ingot(p, mod, inputs, feeds);
    cases.add(feeds, want);
  }
  nlohmann::json summary = cases.run(dir.path() / "model.onnx", kAtol, rtol);
  EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
  return artifact;
}

using testing::AddStatic;

TEST(OnnxSeedPrograms, StaticValueFolded) {
  SKIP_WITHOUT_VENV();
  AddStatic m;
  auto fn = [&m](const Tensor& x, int y) { return m.forward(x, y); };
  auto a = check_program("static", &m, fn, std::tuple{rand_tensor({1}, 1), 3}, OnnxConfig(),
                         {"x", "y"}, {{{"x", rand_tensor({1}, 2)}}});
  EXPECT_EQ(onnx_of(*a).input_names, std::vector<std::string>{"x"});  // y = 3 is baked in
}

TEST(OnnxSeedPrograms, OptionalInputPassedOrNone) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::optional_product;
  Tensor x = rand_tensor({3, 3}, 1), y = rand_tensor({3, 3}, 2);
  check_program("optional_given", nullptr, fn, std::tuple{x, std::optional<Tensor>(y)},
                OnnxConfig(), {"x", "y"},
                {{{"x", rand_tensor({3, 3}, 3)}, {"y", rand_tensor({3, 3}, 4)}}});
  auto a = check_program("optional_none", nullptr, fn, std::tuple{x, std::optional<Tensor>()},
                         OnnxConfig(), {"x", "y"}, {{{"x", rand_tensor({3, 3}, 5)}}});
  EXPECT_EQ(onnx_of(*a).input_names, std::vector<std::string>{"x"});
}

TEST(OnnxSeedPrograms, CondBecomesIf) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::sin_or_cos_by_sum;
  Tensor pos = abs(rand_tensor({3}, 2));
  OnnxConfig c;
  c.dynamic = true;
  auto a = check_program("cond", nullptr, fn, std::tuple{rand_tensor({3}, 1)}, c, {"x"},
                         {{{"x", pos}}, {{"x", neg(pos)}}, {{"x", abs(rand_tensor({7}, 4))}}});
  bool has_if = false;
  for (const auto& n : onnx_of(*a).model.graph.node) has_if = has_if || n.op_type == "If";
  EXPECT_TRUE(has_if);
}

// A predicate on a size (shape-dependent control flow kept as cond): computed in the
// graph from the input's dims.
TEST(OnnxSeedPrograms, CondOnASymbolicSize) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::branch_on_rows;
  OnnxConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 16}}})";
  auto a = check_program("cond_size", nullptr, fn, std::tuple{rand_tensor({3, 2}, 1)}, c, {"x"},
                         {{{"x", rand_tensor({3, 2}, 2)}}, {{"x", rand_tensor({9, 2}, 3)}}});
  EXPECT_TRUE(testing::contains(a->program.print(), "cond(")) << a->program.print();
}

TEST(OnnxSeedPrograms, MapAndWhileLoopBecomeLoops) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::map_and_while_loop;
  OnnxConfig c;
  c.dynamic_shapes_json = R"({"xs": {"0": {"name": "n", "min": 1, "max": 16}}})";
  Tensor y = rand_tensor({3}, 2);
  auto a = check_program(
      "loops", nullptr, fn, std::tuple{rand_tensor({4, 3}, 1), y}, c, {"xs", "y"},
      {{{"xs", rand_tensor({4, 3}, 3)}, {"y", y}}, {{"xs", rand_tensor({6, 3}, 4)}, {"y", y}}});
  size_t loops = 0;
  for (const auto& n : onnx_of(*a).model.graph.node) loops += n.op_type == "Loop";
  EXPECT_EQ(loops, 2u);
}

TEST(OnnxSeedPrograms, DataDependentSizesFromNonzeroAndItem) {
  SKIP_WITHOUT_VENV();
  auto nz = testing::nonzero_then_branch;
  Tensor x = where(gt(rand_tensor({3, 2}, 1), Scalar(0.5)), rand_tensor({3, 2}, 1), zeros({3, 2}));
  check_program("nonzero", nullptr, nz, std::tuple{x}, OnnxConfig(), {"x"},
                {{{"x", x}}, {{"x", ones({3, 2})}}});
  // item(): the first k rows, k read from data.
  auto first_rows = testing::first_k_rows;
  check_program("item", nullptr, first_rows,
                std::tuple{rand_tensor({5, 2}, 2), Tensor::scalar(int64_t(3))}, OnnxConfig(),
                {"x", "k"},
                {{{"x", rand_tensor({5, 2}, 3)}, {"k", Tensor::scalar(int64_t(2))}},
                 {{"x", rand_tensor({5, 2}, 4)}, {"k", Tensor::scalar(int64_t(5))}}});
}

using Input = testing::SeedInput;

TEST(OnnxSeedPrograms, PytreeInputLeavesAreNamedByPath) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Input& x) { return add(x.f, Scalar(1)); };
  Input in{rand_tensor({10, 4}, 1), rand_tensor({10, 4}, 2)};
  auto a = check_program("pytree", nullptr, fn, std::tuple{in}, OnnxConfig(), {"x"},
                         {{{"x.f", rand_tensor({10, 4}, 3)}, {"x.p", rand_tensor({10, 4}, 4)}}});
  EXPECT_EQ(onnx_of(*a).input_names, (std::vector<std::string>{"x.f", "x.p"}));
}

using testing::Counter;

TEST(OnnxSeedPrograms, BufferMutationIsAnInputOutputPairWithTheBufferAsDefault) {
  SKIP_WITHOUT_VENV();
  Counter m;
  Tensor x = rand_tensor({3}, 1);
  auto artifact = OnnxExporter().export_fn(&m, [&m](const Tensor& t) { return m.forward(t); },
                                           std::tuple{x}, OnnxConfig(), {"x"});
  OnnxProgram& p = onnx_of(*artifact);
  EXPECT_EQ(p.input_names, (std::vector<std::string>{"input.count", "x"}));
  EXPECT_EQ(p.output_names, (std::vector<std::string>{"output.count", "output"}));
  ort::ScratchDir dir("counter");
  p.save((dir.path() / "model.onnx").string());
  ort::Cases cases(dir.path());
  // Not fed: the buffer's exported value (zeros) is the default. Fed: the caller's state.
  cases.add({{"x", x}}, {{"output", add(x, Scalar(1))}, {"output.count", ones({3})}});
  cases.add({{"x", x}, {"input.count", full({3}, 4.0)}},
            {{"output", add(x, Scalar(5))}, {"output.count", full({3}, 5.0)}});
  EXPECT_TRUE(cases.run(dir.path() / "model.onnx", kAtol).value("ok", false));
}

using testing::RingWriter;

TEST(OnnxSeedPrograms, SliceAndSelectAssignmentIntoABuffer) {
  SKIP_WITHOUT_VENV();
  RingWriter m;
  check_program("ring", &m, [&m](const Tensor& t) { return m.forward(t); },
                std::tuple{rand_tensor({1, 3}, 1)}, OnnxConfig(), {"x"},
                {{{"x", rand_tensor({1, 3}, 2)}}});
}

TEST(OnnxSeedPrograms, SixteenBitFloatsWithTheBf16IrFix) {
  SKIP_WITHOUT_VENV();
  struct Halves : nn::Module {
    Tensor *wh, *wb;
    Halves() : Module("Halves") {
      wh = register_parameter("wh", to(rand_tensor({4}, 3), DType::F16));
      wb = register_parameter("wb", to(rand_tensor({4}, 4), DType::BF16));
    }
    Tensor forward(const Tensor& x) {
      Tensor h = add(to(x, DType::F16), *wh);
      Tensor b = silu(mul(to(x, DType::BF16), *wb));
      return add(to(h, DType::F32), to(b, DType::F32));
    }
  } m;
  OnnxConfig c;
  c.dynamic = true;
  // Both sides round once per op to the 16-bit type, from float; where ORT's float kernel
  // differs in the last float bits (its Sigmoid is an approximation) the 16-bit result
  // can land one 16-bit ulp away: a relative tolerance of one bf16 ulp (2^-7).
  check_program(
      "halves", &m, [&m](const Tensor& t) { return m.forward(t); },
      std::tuple{rand_tensor({2, 4}, 1)}, c, {"x"},
      {{{"x", rand_tensor({2, 4}, 5)}}, {{"x", rand_tensor({5, 4}, 6)}}}, 1.0 / 128);
}

// --- decode loop with the cache bound in place ------------------------------------------------

struct DecodeCase {
  const char* name;
  std::string folder;
  std::vector<int64_t> prompt;
};

void PrintTo(const DecodeCase& c, std::ostream* os) {
  *os << c.name;
}

class OnnxDecodeLoop : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(OnnxDecodeLoop, GreedyTokensEqualIngotsRuntimeWithTheCacheBoundInPlace) {
  SKIP_WITHOUT_VENV();
  const DecodeCase& tc = GetParam();
  auto model = models::from_pretrained(tc.folder);
  const int64_t max_len = 48, steps = 16;
  OnnxConfig c;
  c.dynamic = true;
  GenerationExportOptions g;
  g.max_cache_len = max_len;
  auto parts = OnnxExporter().export_for_generation(*model, c, g);
  OnnxProgram& p = onnx_of(*parts.at("decode"));
  ort::ScratchDir dir(std::string("decode_") + tc.name);
  p.save((dir.path() / "decode.onnx").string());
  const int64_t prompt_len = int64_t(tc.prompt.size());
  Tensor prompt = Tensor::from_vector(tc.prompt, {1, prompt_len});
  formats::save_npy((dir.path() / "prompt.npy").string(), prompt);

  // ingot's runtime on the same program: prompt once, then one token per step.
  auto mod = ingot::runtime::ProgramModule(p.program);
  nn::StaticCache cache(*model->cache_spec(), 1, max_len);
  std::vector<int64_t> tokens;
  std::vector<Tensor> last_logits;
  Tensor ids = prompt;
  for (int64_t s = 0; s < steps; ++s) {
    Tensor logits = mod(ids, cache).at(0);  // [1, q, vocab]
    Tensor last = contiguous(select(select(logits, 1, logits.size(1) - 1), 0, 0));
    last_logits.push_back(last);
    tokens.push_back(argmax(last, 0).item<int64_t>());
    ids = Tensor::from_vector(std::vector<int64_t>{tokens.back()}, {1, 1});
  }
  EXPECT_EQ(cache.seq_length(), prompt_len + steps - 1);

  ort::ToolResult r = ort::run_tool(
      "decode_loop.py",
      {(dir.path() / "decode.onnx").string(), "--prompt", (dir.path() / "prompt.npy").string(),
       "--steps", std::to_string(steps), "--logits-out", (dir.path() / "logits.npy").string()});
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_TRUE(r.summary.is_object()) << r.log;
  EXPECT_EQ(r.summary["tokens"].get<std::vector<int64_t>>(), tokens) << r.log;
  EXPECT_EQ(r.summary["cache_position"].get<int64_t>(), prompt_len + steps - 1);
  Tensor ort_logits = formats::load_npy((dir.path() / "logits.npy").string());  // [steps, vocab]
  ASSERT_EQ(ort_logits.size(0), steps);
  for (int64_t s = 0; s < steps; ++s) {
    testing::expect_near_tensors(select(ort_logits, 0, s), last_logits[size_t(s)], kAtol);
  }
}

std::vector<DecodeCase> decode_cases() {
  std::vector<DecodeCase> out;
  // Plus one of each block the later families brought: soft-capping + alternating windows
  // (gemma2), local rope + q/k norm (gemma3), LongRoPE + fused projections (phi3), parallel
  // residual + interleaved qkv (gpt_neox), per-head LayerNorm (stablelm), NoPE (smollm3),
  // post-norm blocks (olmo2), experts (mixtral, qwen3_moe).
  for (const char* m :
       {"llama", "qwen3", "gpt2", "mistral_sliding_window", "gemma2", "gemma3", "phi3_longrope",
        "gpt_neox", "stablelm", "smollm3", "olmo2", "mixtral", "qwen3_moe"}) {
    out.push_back({m, testing::fixture_path(std::string("models/") + m), {3, 17, 42, 5, 9}});
  }
  // The trained demo model decodes real text, so the tokens are not a constant stream.
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  auto tok = text::Tokenizer::from_folder(demo);
  out.push_back(
      {"demo_lm", demo, tok.encode("It is a truth universally acknowledged, that", false)});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Decoders, OnnxDecodeLoop, ::testing::ValuesIn(decode_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ingot::exporters

// --- vision-language and encoder-decoder components (issue 18) ---------------------------

namespace ingot::exporters {
namespace {

using testing::ComponentCases;

// Each component's cases (generation_component_cases.h, inputs by user-input name) run
// by ONNX Runtime on the saved component == ingot's runtime on the program it was lowered
// from (kAtol).
void expect_components_in_ort_equal_ingot(GenerationExport& components, const ComponentCases& cases,
                                          const fs::path& dir) {
  for (const auto& [name, inputs] : cases) {
    OnnxProgram& p = onnx_of(*components.at(name));
    const fs::path file = dir / (name + ".onnx");
    p.save(file.string());
    ingot::runtime::ProgramModule mod(p.program);
    ort::Cases c(dir / ("cases_" + name));
    for (const auto& in : inputs) {
      std::map<std::string, Tensor> feeds;  // by ONNX input name (input.<cache tensor>)
      std::map<std::string, Tensor> want = run_ingot(p, mod, in, feeds);
      c.add(feeds, want);
    }
    nlohmann::json summary = c.run(file, kAtol);
    EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
  }
}

// LLaVA's generation components exported to ONNX by the one export_for_generation: every
// component (image_encoder at 1 and 3 images, multi_modal_projector, language_model over
// the fixture's merged embeddings with an empty cache, lm_head at 1 and 27 tokens, decode)
// run by ONNX Runtime equals ingot's runtime on the program it was lowered from (1e-4).
TEST(OnnxVisionLanguage, LlavaComponentsInOrtEqualIngot) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path("vlm/llava");
  auto model = models::from_pretrained(folder);
  ort::ScratchDir dir("llava");
  GenerationExportOptions g;
  g.max_cache_len = 64;
  auto components = OnnxExporter().export_for_generation(*model, OnnxConfig(), g);
  ASSERT_EQ(components.size(), 5u);
  expect_components_in_ort_equal_ingot(
      components, testing::llava_component_cases(*model, folder, g.max_cache_len), dir.path());
}

// T5's encoder-decoder components (tools/reference/make_encdec_fixtures.py) as ONNX in
// ONNX Runtime == ingot's runtime (1e-4): the encoder at two source lengths, cross_kv at
// two, decode over the fixture's cross K/V and an empty cache (the decoder prompt block)
// and at a shorter source.
class OnnxEncoderDecoder : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxEncoderDecoder, T5ComponentsInOrtEqualIngot) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path("encdec/" + GetParam());
  auto model = models::from_pretrained(folder);
  ort::ScratchDir dir("encdec_" + GetParam());
  GenerationExportOptions g;
  g.max_cache_len = 32;
  auto components = OnnxExporter().export_for_generation(*model, OnnxConfig(), g);
  ASSERT_EQ(components.size(), 3u);
  expect_components_in_ort_equal_ingot(
      components, testing::t5_component_cases(*model, folder, g.max_cache_len), dir.path());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OnnxEncoderDecoder, ::testing::Values("t5", "t5_gated"));

// Qwen2-VL: the patch image encoder (2-D rotary, per-image attention mask, merger) at one
// and two images, the M-RoPE language model, lm_head and the decode step with rope_deltas.
TEST(OnnxVisionLanguage, Qwen2VLComponentsInOrtEqualIngot) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path("vlm/qwen2_vl");
  auto model = models::from_pretrained(folder);
  ort::ScratchDir dir("qwen2_vl");
  GenerationExportOptions g;
  g.max_cache_len = 160;
  auto components = OnnxExporter().export_for_generation(*model, OnnxConfig(), g);
  ASSERT_EQ(components.size(), 4u);
  expect_components_in_ort_equal_ingot(
      components, testing::qwen2_vl_component_cases(*model, folder, g.max_cache_len), dir.path());
}

// Whisper's encoder-decoder components (tools/reference/make_whisper_fixtures.py) as ONNX
// in ONNX Runtime == ingot's runtime (1e-4): the encoder (convolutions as shifted
// matmuls) on two inputs, cross_kv, and decode over the cross K/V with an empty cache
// (the 4-token decoder prompt) and one token.
TEST(OnnxWhisper, ComponentsInOrtEqualIngot) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path("whisper/whisper");
  auto model = models::from_pretrained(folder);
  auto* whisper = dynamic_cast<models::EncoderDecoderModel*>(model.get());
  ASSERT_NE(whisper, nullptr);
  ort::ScratchDir dir("whisper");
  GenerationExportOptions g;
  g.max_cache_len = 32;
  auto components = OnnxExporter().export_for_generation(*model, OnnxConfig(), g);
  ASSERT_EQ(components.size(), 3u);
  expect_components_in_ort_equal_ingot(
      components, testing::whisper_component_cases(*whisper, folder, g.max_cache_len), dir.path());
}

}  // namespace
}  // namespace ingot::exporters
