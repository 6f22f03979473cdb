// ExecuTorch generation exports, judged by ExecuTorch's runtimes (the reference venv):
//  * seed 003's decode layout [input_ids, attention_mask, position_ids, cache...] from the
//    framework's export_for_generation: a greedy loop over ExecuTorch's Python runtime
//    produces ingot's own greedy tokens (the eager model over a StaticCache) for 32 steps
//    on the decoder fixtures and the demo LM, every step's logits within 1e-4;
//  * the same layout with alloc_graph_input / alloc_graph_output / alloc_mutable_buffers
//    false, driven by seed 003's C++ loop (tools/executorch/decode_inplace.cpp, built
//    against the wheel's C++ runtime): each mutated-cache output bound onto its input's
//    buffer with set_output_data_ptr, the cache written in place (never copied back);
//  * the LLM-runner layout, loaded by ExecuTorch's TextLLMRunner with the exported
//    tokenizer.json (tests/cli/export_executorch_test.cpp covers the CLI's directory).
// Without the venv each test prints SKIP with the reason.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "et_harness.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/executorch/llm_runner_layout.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/text/tokenizer.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace et = testing::et;

constexpr double kAtol = 1e-4;  // f32 ExecuTorch vs ingot
constexpr int64_t kMaxLen = 48, kSteps = 32;

#define SKIP_WITHOUT_VENV() \
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason()

ExecutorchProgram& pte_of(ExportArtifact& a) {
  return dynamic_cast<ExecutorchProgram&>(a);
}

struct DecodeCase {
  const char* name;
  std::string folder;
  std::vector<int64_t> prompt;
  std::string backend = "portable";
};

void PrintTo(const DecodeCase& c, std::ostream* os) {
  *os << c.name;
}

// ingot's own greedy generation: the eager model over a StaticCache (mask and positions
// derived by the model), prompt then one token per step. The last position's logits of
// each step.
struct Greedy {
  std::vector<int64_t> tokens;
  std::vector<Tensor> logits;
};

Greedy ingot_greedy(models::PretrainedModel& model, const std::vector<int64_t>& prompt) {
  nn::StaticCache cache(*model.cache_spec(), 1, kMaxLen);
  Greedy g;
  Tensor ids = Tensor::from_vector(prompt, {1, int64_t(prompt.size())});
  for (int64_t s = 0; s < kSteps; ++s) {
    models::ModelInputs in;
    in.input_ids = ids;
    in.cache = &cache;
    Tensor logits = model.forward(in).logits;  // [1, q, vocab]
    Tensor last = contiguous(select(select(logits, 1, logits.size(1) - 1), 0, 0));
    g.logits.push_back(last);
    g.tokens.push_back(argmax(last, 0).item<int64_t>());
    ids = Tensor::from_vector(std::vector<int64_t>{g.tokens.back()}, {1, 1});
  }
  return g;
}

// Exports the decode component in seed 003's layout and writes what the loops read: the
// .pte, io.json (names, prompt, initial cache files as .npy and raw bytes, window).
struct Exported {
  std::unique_ptr<ExportArtifact> decode;
  fs::path pte, io;
};

Exported export_decode(models::PretrainedModel& model, const DecodeCase& tc,
                       const ExecutorchConfig& c, const fs::path& dir) {
  GenerationExportOptions g;
  g.max_cache_len = kMaxLen;
  Exported e;
  e.decode = std::move(ExecutorchExporter().export_for_generation(model, c, g).at("decode"));
  ExecutorchProgram& p = pte_of(*e.decode);
  e.pte = dir / "decode.pte";
  e.io = dir / "io.json";
  p.save(e.pte.string());
  formats::save_npy((dir / "prompt.npy").string(),
                    Tensor::from_vector(tc.prompt, {1, int64_t(tc.prompt.size())}));
  nlohmann::json io{{"inputs", p.input_names},
                    {"outputs", p.output_names},
                    {"prompt", "prompt.npy"},
                    {"prompt_ids", tc.prompt},
                    {"initial", nlohmann::json::object()},
                    {"initial_raw", nlohmann::json::object()}};
  // (No "sliding_window": the caller's mask is the causal one; the program adds each
  // sliding layer's window itself.)
  nn::StaticCache empty(*model.cache_spec(), 1, kMaxLen);
  for (const auto& [name, t] : empty.named_tensors()) {
    Tensor ct = contiguous(t);
    formats::save_npy((dir / (name + ".npy")).string(), ct);
    std::ofstream(dir / (name + ".bin"), std::ios::binary)
        .write(static_cast<const char*>(ct.raw_data()), std::streamsize(ct.nbytes()));
    io["initial"][name] = name + ".npy";
  }
  // The C++ judge reads "initial" as raw bytes: a second file for it.
  nlohmann::json raw = io;
  for (auto& [name, f] : raw["initial"].items()) f = name + ".bin";
  std::ofstream(e.io) << io.dump();
  std::ofstream(dir / "io_raw.json") << raw.dump();
  return e;
}

void expect_same_run(const et::ToolResult& r, const Greedy& want, const fs::path& logits,
                     size_t prompt_len, bool raw_logits, int64_t vocab) {
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_TRUE(r.summary.is_object()) << r.log;
  EXPECT_EQ(r.summary["tokens"].get<std::vector<int64_t>>(), want.tokens) << r.log;
  // The cache position after the prompt and kSteps - 1 single tokens.
  EXPECT_EQ(r.summary["cache_position"].get<int64_t>(), int64_t(prompt_len) + kSteps - 1);
  Tensor et_logits;
  if (raw_logits) {
    std::ifstream in(logits, std::ios::binary);
    std::vector<float> v(size_t(kSteps * vocab));
    in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
    ASSERT_EQ(size_t(in.gcount()), v.size() * sizeof(float));
    et_logits = Tensor::from_vector(v, {kSteps, vocab});
  } else {
    et_logits = formats::load_npy(logits.string());  // [steps, vocab]
  }
  ASSERT_EQ(et_logits.size(0), kSteps);
  for (int64_t s = 0; s < kSteps; ++s)
    testing::expect_near_tensors(select(et_logits, 0, s), want.logits[size_t(s)], kAtol);
}

std::vector<DecodeCase> decode_cases() {
  std::vector<DecodeCase> out;
  // mistral: a window on every layer; gemma2 / gemma3: sliding and full layers mixed
  // (windows 4 and 3, so the 5-token prompt plus 32 steps runs far past them).
  for (const char* m : {"llama", "qwen3", "gpt2", "mistral_sliding_window", "gemma2", "gemma3"})
    out.push_back({m, testing::fixture_path(std::string("models/") + m), {3, 17, 42, 5, 9}});
  // The trained demo model decodes real text, so the tokens are not a constant stream.
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  auto tok = text::Tokenizer::from_folder(demo);
  out.push_back(
      {"demo_lm", demo, tok.encode("It is a truth universally acknowledged, that", false)});
  return out;
}

// --- seed 003's decode layout over the Python runtime -------------------------------------

class ExecutorchDecodeLoop : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(ExecutorchDecodeLoop, SeedLayoutGreedyTokensEqualIngotsFor32Steps) {
  const DecodeCase& tc = GetParam();
  auto model = models::from_pretrained(tc.folder);
  et::ScratchDir dir(std::string("gen_decode_") + tc.name);
  Exported e = export_decode(*model, tc, ExecutorchConfig(), dir.path());
  ExecutorchProgram& p = pte_of(*e.decode);
  ASSERT_GE(p.input_names.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(p.input_names.begin(), p.input_names.begin() + 3),
            (std::vector<std::string>{"input_ids", "attention_mask", "position_ids"}));
  for (size_t i = 3; i < p.input_names.size(); ++i)
    EXPECT_NE(std::find(p.output_names.begin(), p.output_names.end(), "output." + p.input_names[i]),
              p.output_names.end())
        << p.input_names[i] << " is not among the outputs";
  SKIP_WITHOUT_VENV();
  const Greedy want = ingot_greedy(*model, tc.prompt);
  et::ToolResult r = et::run_tool(
      "decode_loop.py", {e.pte.string(), "--io", e.io.string(), "--steps", std::to_string(kSteps),
                         "--logits-out", (dir.path() / "logits.npy").string()});
  expect_same_run(r, want, dir.path() / "logits.npy", tc.prompt.size(), false, 0);
}

INSTANTIATE_TEST_SUITE_P(Decoders, ExecutorchDecodeLoop, ::testing::ValuesIn(decode_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// The mask and positions are inputs the program uses: other relative positions change the
// logits (rotary), a mask hiding the first slot changes them.
TEST(ExecutorchDecodeLayout, MaskAndPositionsAreUsedNotDerived) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  GenerationExportOptions g;
  g.max_cache_len = 16;
  auto parts = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  auto mod = runtime::ProgramModule(parts.at("decode")->program);
  auto run = [&](int64_t gap, bool hide_first) {
    nn::StaticCache cache(*model->cache_spec(), 1, 16);
    Tensor ids = Tensor::from_vector(std::vector<int64_t>{3, 17, 42}, {1, 3});
    std::vector<uint8_t> m(3 * 16);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 16; ++j)
        m[size_t(i * 16 + j)] = j <= i && !(hide_first && j == 0 && i > 0);
    Tensor mask = to(Tensor::from_vector(std::vector<int64_t>(m.begin(), m.end()), {1, 1, 3, 16}),
                     DType::Bool);
    Tensor pos = Tensor::from_vector(std::vector<int64_t>{0, gap, 2 * gap}, {1, 3});
    return contiguous(mod(ids, mask, pos, cache).at(0));
  };
  Tensor base = run(1, false);
  EXPECT_GT(amax(abs(sub(run(3, false), base))).item<float>(), 1e-3);
  EXPECT_GT(amax(abs(sub(run(1, true), base))).item<float>(), 1e-3);
  // Derived layout on request: [input_ids, cache...].
  g.mask_and_position_inputs = false;
  auto derived = ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  EXPECT_EQ(pte_of(*derived.at("decode")).input_names.at(1), "key_cache.0");
}

// --- seed 003's C++ loop: the cache written in place --------------------------------------

class ExecutorchDecodeInPlace : public ::testing::TestWithParam<DecodeCase> {};

// alloc_graph_input / alloc_graph_output / alloc_mutable_buffers false: no input or output
// is in the memory plan, the caller's cache buffers are shared as inputs and bound as the
// mutated-cache outputs. The judge never copies an output back, so the tokens (and the
// cache position it reads from its own buffer) only follow if the writes landed in place.
TEST_P(ExecutorchDecodeInPlace, CallerBoundCacheIsWrittenInPlaceAndGivesIngotsTokens) {
  SKIP_WITHOUT_VENV();
  std::string log;
  const fs::path judge = et::build_cpp_judge("decode_inplace", log);
  if (judge.empty()) GTEST_SKIP() << "no C++ ExecuTorch runtime to judge with: " << log;
  const DecodeCase& tc = GetParam();
  auto model = models::from_pretrained(tc.folder);
  et::ScratchDir dir(std::string("gen_inplace_") + tc.name);
  ExecutorchConfig c;
  c.alloc_graph_input = c.alloc_graph_output = c.alloc_mutable_buffers = false;
  c.backend = tc.backend;
  Exported e = export_decode(*model, tc, c, dir.path());
  const Greedy want = ingot_greedy(*model, tc.prompt);
  const int64_t vocab = want.logits.at(0).size(0);
  et::ToolResult r =
      et::run_command("'" + judge.string() + "' '" + e.pte.string() + "' '" +
                      (dir.path() / "io_raw.json").string() + "' " + std::to_string(kSteps) + " '" +
                      (dir.path() / "logits.f32").string() + "'");
  expect_same_run(r, want, dir.path() / "logits.f32", tc.prompt.size(), true, vocab);
  EXPECT_TRUE(r.summary.value("in_place", false)) << r.log;
  std::cout << tc.name << ": ExecuTorch C++ in-place decode "
            << r.summary.value("tokens_per_s", 0.0) << " tokens/s\n";
}

// The demo LM also with backend="xnnpack" (its projections and lm head in XNNPACK
// delegates, the cache updates portable), the cache still written in place.
std::vector<DecodeCase> in_place_cases() {
  auto by_name = [](const std::string& name) {
    for (const DecodeCase& d : decode_cases())
      if (d.name == name) return d;
    throw std::logic_error("no decode case " + name);
  };
  std::vector<DecodeCase> c{by_name("llama"), by_name("demo_lm"), by_name("demo_lm")};
  c[2].name = "demo_lm_xnnpack";
  c[2].backend = "xnnpack";
  return c;
}

INSTANTIATE_TEST_SUITE_P(Decoders, ExecutorchDecodeInPlace, ::testing::ValuesIn(in_place_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// --- the LLM-runner layout: input_pos drives the step ------------------------------------

// forward(tokens, input_pos) on one loaded method, calls in order: a prompt at 0, a token
// at 5, a different token at 5 again (rewrites slot 5: the result is as if the first had
// never been fed), a new 3-token prompt at 0 (a restart over stale slots), a token at 3.
// Each call's logits == ingot's eager model over a fresh StaticCache fed the same
// sequence (1e-4). With input_pos ignored, calls 3-5 would sit at positions 6, 7 and 10.
// The exporter adds llm_runner.pte itself when it has the model folder (the bos / eos ids):
// a text decoder's generation directory holds the components and the runner, and the
// manifest records the runner's input roles.
TEST(ExecutorchLlmRunnerLayout, ExportForGenerationAddsTheRunnerWithItsStepLayout) {
  const std::string folder = testing::fixture_path("models/llama");
  auto model = models::from_pretrained(folder);
  GenerationExportOptions g;
  g.max_cache_len = 16;
  EXPECT_FALSE(ExecutorchExporter()
                   .export_for_generation(*model, ExecutorchConfig(), g)
                   .contains("llm_runner"));
  g.model_folder = folder;
  GenerationExport parts =
      ExecutorchExporter().export_for_generation(*model, ExecutorchConfig(), g);
  ASSERT_TRUE(parts.contains("llm_runner"));
  EXPECT_TRUE(parts.contains("decode"));
  const generation::ManifestComponent& runner = parts.manifest.components.at("llm_runner");
  EXPECT_EQ(runner.file, "llm_runner.pte");
  ASSERT_EQ(runner.layout.inputs.size(), 2u);
  EXPECT_EQ(runner.layout.inputs[0].role, generation::InputRole::kInputIds);
  EXPECT_EQ(runner.layout.inputs[1].name, "input_pos");
  EXPECT_EQ(runner.layout.inputs[1].role, generation::InputRole::kCachePosition);
}

TEST(ExecutorchLlmRunnerLayout, InputPosDrivesPositionsAndCacheWrites) {
  const std::string folder = testing::fixture_path("models/llama");
  auto model = models::from_pretrained(folder);
  GenerationExportOptions g;
  g.max_cache_len = 16;
  auto a = executorch::export_llm_runner(*model, folder, ExecutorchConfig(), g);
  ASSERT_EQ(a->input_names, (std::vector<std::string>{"input_ids", "input_pos"}));
  // Its step layout (the manifest's entry): the tokens, and input_pos as the cache position.
  ASSERT_EQ(a->step_layout.inputs.size(), 2u);
  EXPECT_EQ(a->step_layout.inputs[0].name, "input_ids");
  EXPECT_EQ(a->step_layout.inputs[0].role, generation::InputRole::kInputIds);
  EXPECT_EQ(a->step_layout.inputs[1].name, "input_pos");
  EXPECT_EQ(a->step_layout.inputs[1].role, generation::InputRole::kCachePosition);
  // ingot: every call's logits [1, n, vocab] for a sequence of calls on one cache.
  auto eager = [&](const std::vector<std::vector<int64_t>>& calls) {
    nn::StaticCache cache(*model->cache_spec(), 1, g.max_cache_len);
    Tensor last;
    for (const auto& ids : calls) {
      models::ModelInputs in;
      in.input_ids = Tensor::from_vector(ids, {1, int64_t(ids.size())});
      in.cache = &cache;
      last = contiguous(model->forward(in).logits);
    }
    return last;
  };
  const std::vector<int64_t> prompt{3, 17, 42, 5, 9}, again{11, 4, 8};
  const std::vector<int64_t> tok_a{7}, tok_b{23};
  struct Call {
    std::vector<int64_t> ids;
    int64_t pos;
    Tensor want;
  };
  std::vector<Call> calls{{prompt, 0, eager({prompt})},
                          {tok_a, 5, eager({prompt, tok_a})},
                          {tok_b, 5, eager({prompt, tok_b})},
                          {again, 0, eager({again})},
                          {tok_a, 3, eager({again, tok_a})}};
  // The ingot side itself tells the calls apart (a test that could not fail otherwise).
  EXPECT_GT(amax(abs(sub(calls[1].want, calls[2].want))).item<float>(), 1e-3);
  SKIP_WITHOUT_VENV();
  et::ScratchDir dir("llm_runner_input_pos");
  const fs::path pte = dir.path() / "llm_runner.pte";
  a->save(pte.string());
  et::Cases cases(dir.path() / "cases");
  for (const Call& c : calls)
    cases.add({{"input_ids", Tensor::from_vector(c.ids, {1, int64_t(c.ids.size())})},
               {"input_pos", Tensor::from_vector(std::vector<int64_t>{c.pos}, {1})}},
              {{0, {"logits", c.want}}});
  EXPECT_TRUE(cases.run(pte, kAtol).value("ok", false));
}

}  // namespace
}  // namespace ingot::exporters
