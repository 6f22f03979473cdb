// OpenVINO as the judge of the OpenVINO exporter: every model is read and compiled by
// OpenVINO's CPU plugin (float32 inference requested) and its outputs equal ingot's
// runtime on the same ExportedProgram within 1e-4 (f32):
//  * every fixture architecture exported with dynamic batch and sequence, at three shapes,
//    and on the committed transformers inputs against the committed transformers outputs
//    (non-padded positions, 1e-4);
//  * the seed-001 programs OpenVINO can express;
//  * the stateful decode model of export_for_generation driven by a greedy loop over one
//    infer request (the cache in ReadValue / Assign variables): tokens equal ingot's own
//    loop for 32 steps; the same with stateful = false (cache as inputs / outputs).
// Needs the venv of tools/openvino/setup-venv; without it every test is skipped with that
// reason.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "../decoder_fixtures.h"
#include "../export/export_test_util.h"
#include "../export/seed_programs.h"
#include "../models/fixture_path.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/exporters/openvino/writer.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "ingot/text/tokenizer.h"
#include "ov_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ovt = testing::ov;
using testing::rand_tensor;

constexpr double kAtol = 1e-4;  // f32 OpenVINO vs ingot, and vs transformers

#define SKIP_WITHOUT_VENV() \
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason()

OpenVINOModel& ov_of(ExportArtifact& a) {
  return dynamic_cast<OpenVINOModel&>(a);
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Runs ingot's runtime on `inputs` (by user-input name) and returns its user outputs by
// output name; `feeds` receives the inputs by OpenVINO input name (a mutated input that
// is not stateful is input.<name>).
std::map<std::string, Tensor> run_ingot(const OpenVINOModel& p, runtime::ProgramModule& mod,
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
  const std::vector<std::string> names = openvino::openvino_output_names(p.program);
  size_t k = 0;
  for (size_t j = 0; j < sig.outputs.size(); ++j) {
    if (sig.outputs[j].kind == OutputKind::UserOutput)
      named[names.at(j)] = contiguous(outs.at(k++));
  }
  return named;
}

// --- fixture architectures ---------------------------------------------------------------

class OpenVINOFixtureConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenVINOFixtureConformance, DynamicBatchAndSequenceAtThreeShapesAndTransformersOutputs) {
  SKIP_WITHOUT_VENV();
  const std::string folder = testing::fixture_path(std::string("models/") + GetParam());
  auto model = models::from_pretrained(folder);
  ovt::ScratchDir dir(GetParam());
  OpenVINOConfig c;
  c.dynamic = true;
  auto artifact = OpenVINOExporter().export_(*model, c);
  OpenVINOModel& p = ov_of(*artifact);
  const fs::path file = dir.path() / "model.xml";
  p.save(file.string());
  // Dynamic batch and sequence with the Dims' ranges as intervals.
  const std::string xml = read_file(file);
  EXPECT_TRUE(testing::contains(xml,
                                "name=\"input_ids\" type=\"Parameter\" version=\"opset1\">\n"
                                "\t\t\t<data shape=\"1..1024,1.."))
      << xml.substr(0, 600);
  auto mod = runtime::ProgramModule(p.program);
  ovt::Cases cases(dir.path() / "cases");
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 17}}) {
    models::ModelInputs in = example_model_inputs(*model, b, s);
    in.input_ids = to(abs(mul(rand_tensor({b, s}, uint32_t(b * 31 + s)), Scalar(40))), DType::I64);
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
  // The committed transformers inputs and outputs (tools/reference/make_model_fixtures.py).
  std::map<std::string, Tensor> feeds{
      {"input_ids", formats::load_npy(folder + "/input_ids.npy")},
      {"attention_mask", formats::load_npy(folder + "/attention_mask.npy")}};
  if (fs::exists(folder + "/token_type_ids.npy"))
    feeds["token_type_ids"] = formats::load_npy(folder + "/token_type_ids.npy");
  std::map<std::string, Tensor> want, masks;
  const Tensor keep = ne(feeds["attention_mask"], Scalar(0));  // [batch, seq]
  for (const char* name : {"logits", "last_hidden_state", "pooler_output"}) {
    const std::string f = folder + "/" + name + ".npy";
    if (!fs::exists(f)) continue;
    want[name] = formats::load_npy(f);
    if (std::string(name) != "pooler_output") masks[name] = keep;
  }
  ASSERT_FALSE(want.empty());
  cases.add(feeds, want, masks);
  nlohmann::json summary = cases.run(file, kAtol);
  EXPECT_TRUE(summary.value("ok", false)) << summary.dump();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpenVINOFixtureConformance,
                         ::testing::ValuesIn(testing::model_fixtures()),
                         [](const auto& info) { return info.param; });

// --- seed-001 programs -----------------------------------------------------------------------

// Exports `fn` to OpenVINO and checks OpenVINO against ingot's runtime on each input set
// (given by user-input name); returns the artifact for further checks.
template <typename Fn, typename... Args>
std::unique_ptr<ExportArtifact> check_program(
    const std::string& name, nn::Module* module, Fn fn, const std::tuple<Args...>& example,
    const OpenVINOConfig& config, const std::vector<std::string>& input_names,
    const std::vector<std::map<std::string, Tensor>>& input_sets, double rtol = 0.0) {
  auto artifact = OpenVINOExporter().export_fn(module, fn, example, config, input_names);
  OpenVINOModel& p = ov_of(*artifact);
  ovt::ScratchDir dir(name);
  p.save((dir.path() / "model.xml").string());
  auto mod = runtime::ProgramModule(p.program);
  ovt::Cases cases(dir.path());
  for (const auto& inputs : input_sets) {
    std::map<std::string, Tensor> feeds;
    std::map<std::string, Tensor> want = run_ingot(p, mod, inputs, feeds);
    cases.add(feeds, want);
  }
  nlohmann::json summary = cases.run(dir.path() / "model.xml", kAtol, rtol);
  EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
  return artifact;
}

size_t count_type(const openvino::Graph& g, const std::string& type) {
  size_t n = 0;
  for (const auto& l : g.layers()) n += l.type == type;
  return n;
}

using testing::AddStatic;

TEST(OpenVINOSeedPrograms, StaticValueFolded) {
  SKIP_WITHOUT_VENV();
  AddStatic m;
  auto fn = [&m](const Tensor& x, int y) { return m.forward(x, y); };
  auto a = check_program("static", &m, fn, std::tuple{rand_tensor({1}, 1), 3}, OpenVINOConfig(),
                         {"x", "y"}, {{{"x", rand_tensor({1}, 2)}}});
  EXPECT_EQ(ov_of(*a).input_names, std::vector<std::string>{"x"});  // y = 3 is baked in
}

TEST(OpenVINOSeedPrograms, OptionalInputPassedOrNone) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::optional_product;
  Tensor x = rand_tensor({3, 3}, 1), y = rand_tensor({3, 3}, 2);
  check_program("optional_given", nullptr, fn, std::tuple{x, std::optional<Tensor>(y)},
                OpenVINOConfig(), {"x", "y"},
                {{{"x", rand_tensor({3, 3}, 3)}, {"y", rand_tensor({3, 3}, 4)}}});
  auto a = check_program("optional_none", nullptr, fn, std::tuple{x, std::optional<Tensor>()},
                         OpenVINOConfig(), {"x", "y"}, {{{"x", rand_tensor({3, 3}, 5)}}});
  EXPECT_EQ(ov_of(*a).input_names, std::vector<std::string>{"x"});
}

TEST(OpenVINOSeedPrograms, CondBecomesIf) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::sin_or_cos_by_sum;
  Tensor pos = abs(rand_tensor({3}, 2));
  OpenVINOConfig c;
  c.dynamic = true;
  auto a = check_program("cond", nullptr, fn, std::tuple{rand_tensor({3}, 1)}, c, {"x"},
                         {{{"x", pos}}, {{"x", neg(pos)}}, {{"x", abs(rand_tensor({7}, 4))}}});
  EXPECT_EQ(count_type(ov_of(*a).model.graph, "If"), 1u);
}

// A predicate on a size: computed in the graph from the input's dims.
TEST(OpenVINOSeedPrograms, CondOnASymbolicSize) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::branch_on_rows;
  OpenVINOConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 16}}})";
  auto a = check_program("cond_size", nullptr, fn, std::tuple{rand_tensor({3, 2}, 1)}, c, {"x"},
                         {{{"x", rand_tensor({3, 2}, 2)}}, {{"x", rand_tensor({9, 2}, 3)}}});
  EXPECT_TRUE(testing::contains(openvino::model_xml(ov_of(*a).model), "shape=\"1..16,2\""));
  // The interval is the Dim's range: OpenVINO refuses 17 rows.
  ovt::ScratchDir dir("cond_size_refused");
  ov_of(*a).save((dir.path() / "model.xml").string());
  ovt::Cases cases(dir.path());
  cases.add_refused({{"x", rand_tensor({17, 2}, 4)}});
  EXPECT_TRUE(cases.run(dir.path() / "model.xml").value("ok", false));
}

TEST(OpenVINOSeedPrograms, MapAndWhileLoopBecomeLoops) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::map_and_while_loop;
  OpenVINOConfig c;
  c.dynamic_shapes_json = R"({"xs": {"0": {"name": "n", "min": 1, "max": 16}}})";
  Tensor y = rand_tensor({3}, 2);
  auto a = check_program(
      "loops", nullptr, fn, std::tuple{rand_tensor({4, 3}, 1), y}, c, {"xs", "y"},
      {{{"xs", rand_tensor({4, 3}, 3)}, {"y", y}}, {{"xs", rand_tensor({6, 3}, 4)}, {"y", y}}});
  EXPECT_EQ(count_type(ov_of(*a).model.graph, "Loop"), 2u);
}

TEST(OpenVINOSeedPrograms, DataDependentSizesFromNonzeroAndItem) {
  SKIP_WITHOUT_VENV();
  auto nz = testing::nonzero_then_branch;
  Tensor x = where(gt(rand_tensor({3, 2}, 1), Scalar(0.5)), rand_tensor({3, 2}, 1), zeros({3, 2}));
  check_program("nonzero", nullptr, nz, std::tuple{x}, OpenVINOConfig(), {"x"},
                {{{"x", x}}, {{"x", ones({3, 2})}}});
  auto first_rows = testing::first_k_rows;
  check_program("item", nullptr, first_rows,
                std::tuple{rand_tensor({5, 2}, 2), Tensor::scalar(int64_t(3))}, OpenVINOConfig(),
                {"x", "k"},
                {{{"x", rand_tensor({5, 2}, 3)}, {"k", Tensor::scalar(int64_t(2))}},
                 {{"x", rand_tensor({5, 2}, 4)}, {"k", Tensor::scalar(int64_t(5))}}});
}

using Input = testing::SeedInput;

TEST(OpenVINOSeedPrograms, PytreeInputLeavesAreNamedByPath) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Input& x) { return add(x.f, Scalar(1)); };
  Input in{rand_tensor({10, 4}, 1), rand_tensor({10, 4}, 2)};
  auto a = check_program("pytree", nullptr, fn, std::tuple{in}, OpenVINOConfig(), {"x"},
                         {{{"x.f", rand_tensor({10, 4}, 3)}, {"x.p", rand_tensor({10, 4}, 4)}}});
  EXPECT_EQ(ov_of(*a).input_names, (std::vector<std::string>{"x.f", "x.p"}));
}

using testing::Counter;

// A mutated buffer is a variable (stateful, the default): its initial value is the
// buffer's, the runtime keeps the new value; without state it is an input/output pair.
TEST(OpenVINOSeedPrograms, BufferMutationIsAVariableOrAnInputOutputPair) {
  SKIP_WITHOUT_VENV();
  Counter m;
  Tensor x = rand_tensor({3}, 1);
  auto fn = [&m](const Tensor& t) { return m.forward(t); };
  auto stateful = OpenVINOExporter().export_fn(&m, fn, std::tuple{x}, OpenVINOConfig(), {"x"});
  OpenVINOModel& p = ov_of(*stateful);
  EXPECT_EQ(p.input_names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(p.variables, (std::vector<std::string>{"count"}));
  ovt::ScratchDir dir("counter");
  p.save((dir.path() / "model.xml").string());
  ovt::Cases cases(dir.path() / "stateful");
  cases.add({{"x", x}}, {{"output", add(x, Scalar(1))}, {"state.count", ones({3})}});
  EXPECT_TRUE(cases.run(dir.path() / "model.xml", kAtol).value("ok", false));

  OpenVINOConfig plain;
  plain.stateful = false;
  auto pair = OpenVINOExporter().export_fn(&m, fn, std::tuple{x}, plain, {"x"});
  OpenVINOModel& q = ov_of(*pair);
  EXPECT_EQ(q.input_names, (std::vector<std::string>{"input.count", "x"}));
  EXPECT_EQ(q.output_names, (std::vector<std::string>{"output.count", "output"}));
  q.save((dir.path() / "plain.xml").string());
  ovt::Cases cases2(dir.path() / "plain");
  cases2.add({{"x", x}, {"input.count", full({3}, 4.0)}},
             {{"output", add(x, Scalar(5))}, {"output.count", full({3}, 5.0)}});
  EXPECT_TRUE(cases2.run(dir.path() / "plain.xml", kAtol).value("ok", false));
}

using testing::RingWriter;

TEST(OpenVINOSeedPrograms, SliceAndSelectAssignmentIntoABuffer) {
  SKIP_WITHOUT_VENV();
  RingWriter m;
  OpenVINOConfig plain;
  plain.stateful = false;
  check_program("ring", &m, [&m](const Tensor& t) { return m.forward(t); },
                std::tuple{rand_tensor({1, 3}, 1)}, plain, {"x"},
                {{{"x", rand_tensor({1, 3}, 2)}, {"input.cache", rand_tensor({4, 3}, 3)}}});
}

TEST(OpenVINOSeedPrograms, SixteenBitFloats) {
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
  OpenVINOConfig c;
  c.dynamic = true;
  // ingot rounds to the 16-bit type after every op; OpenVINO's CPU plugin runs 16-bit
  // ops in float and rounds where it converts, so a chain of two bf16 ops can land two
  // bf16 ulps away (2^-6 relative).
  check_program(
      "halves", &m, [&m](const Tensor& t) { return m.forward(t); },
      std::tuple{rand_tensor({2, 4}, 1)}, c, {"x"},
      {{{"x", rand_tensor({2, 4}, 5)}}, {{"x", rand_tensor({5, 4}, 6)}}}, 1.0 / 64);
}

// --- greedy decode over the stateful infer request ------------------------------------------

struct DecodeCase {
  const char* name;
  std::string folder;
  std::vector<int64_t> prompt;
};

void PrintTo(const DecodeCase& c, std::ostream* os) {
  *os << c.name;
}

class OpenVINODecodeLoop : public ::testing::TestWithParam<DecodeCase> {};

// ingot's runtime on `p`'s program: the prompt once, then one token per step; returns the
// greedy tokens and the last position's logits of every step.
std::vector<int64_t> ingot_greedy(const OpenVINOModel& p, models::PretrainedModel& model,
                                  const Tensor& prompt, int64_t max_len, int64_t steps,
                                  std::vector<Tensor>& last_logits) {
  auto mod = runtime::ProgramModule(p.program);
  nn::StaticCache cache(*model.cache_spec(), 1, max_len);
  std::vector<int64_t> tokens;
  Tensor ids = prompt;
  for (int64_t s = 0; s < steps; ++s) {
    Tensor logits = mod(ids, cache).at(0);  // [1, q, vocab]
    Tensor last = contiguous(select(select(logits, 1, logits.size(1) - 1), 0, 0));
    last_logits.push_back(last);
    tokens.push_back(argmax(last, 0).item<int64_t>());
    ids = Tensor::from_vector(std::vector<int64_t>{tokens.back()}, {1, 1});
  }
  return tokens;
}

TEST_P(OpenVINODecodeLoop, GreedyTokensEqualIngotsRuntimeStatefulAndNot) {
  SKIP_WITHOUT_VENV();
  const DecodeCase& tc = GetParam();
  auto model = models::from_pretrained(tc.folder);
  const int64_t steps = 32;
  const int64_t prompt_len = int64_t(tc.prompt.size());
  const int64_t max_len = prompt_len + steps + 8;
  ovt::ScratchDir dir(std::string("decode_") + tc.name);
  Tensor prompt = Tensor::from_vector(tc.prompt, {1, prompt_len});
  formats::save_npy((dir.path() / "prompt.npy").string(), prompt);
  GenerationExportOptions g;
  g.max_cache_len = max_len;
  for (bool stateful : {true, false}) {
    OpenVINOConfig c;
    c.stateful = stateful;
    auto parts = OpenVINOExporter().export_for_generation(*model, c, g);
    OpenVINOModel& p = ov_of(*parts.at("decode"));
    const fs::path xml = dir.path() / (stateful ? "stateful.xml" : "plain.xml");
    p.save(xml.string());
    std::vector<Tensor> last_logits;
    std::vector<int64_t> tokens = ingot_greedy(p, *model, prompt, max_len, steps, last_logits);
    const fs::path logits_file = dir.path() / "logits.npy";
    ovt::ToolResult r = ovt::run_tool(
        "decode_loop.py", {xml.string(), "--prompt", (dir.path() / "prompt.npy").string(),
                           "--steps", std::to_string(steps), "--logits-out", logits_file.string()});
    ASSERT_EQ(r.status, 0) << r.log;
    ASSERT_TRUE(r.summary.is_object()) << r.log;
    EXPECT_EQ(r.summary["stateful"].get<bool>(), stateful);
    EXPECT_EQ(r.summary["tokens"].get<std::vector<int64_t>>(), tokens) << r.log;
    Tensor ov_logits = formats::load_npy(logits_file.string());  // [steps, vocab]
    ASSERT_EQ(ov_logits.size(0), steps);
    for (int64_t s = 0; s < steps; ++s)
      testing::expect_near_tensors(select(ov_logits, 0, s), last_logits[size_t(s)], kAtol);
  }
}

std::vector<DecodeCase> decode_cases() {
  std::vector<DecodeCase> out;
  for (const char* m : {"llama", "qwen3", "gpt2", "mistral_sliding_window"})
    out.push_back({m, testing::fixture_path(std::string("models/") + m), {3, 17, 42, 5, 9}});
  // The trained demo model decodes real text, so the tokens are not a constant stream.
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  auto tok = text::Tokenizer::from_folder(demo);
  out.push_back(
      {"demo_lm", demo, tok.encode("It is a truth universally acknowledged, that", false)});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Decoders, OpenVINODecodeLoop, ::testing::ValuesIn(decode_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ingot::exporters
