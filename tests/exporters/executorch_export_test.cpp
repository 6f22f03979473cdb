// The ExecuTorch exporter. Without a venv: the .pte layout (identifier, extended header,
// aligned segments), the memory planner's offsets, configs, and the errors of bad input.
// With the reference venv (executorch pinned): ExecuTorch's own runtime loads every .pte
// and its outputs equal ingot's runtime on the same ExportedProgram within 1e-4 (f32) and
// the committed transformers logits within 1e-4:
//  * every decoder fixture architecture with dynamic batch and sequence at three shapes.
#include <gtest/gtest.h>

#include <fstream>

#include "../decoder_fixtures.h"
#include "../export/export_test_util.h"
#include "../export/seed_programs.h"
#include "../models/fixture_path.h"
#include "et_harness.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/executorch/memory_planner.h"
#include "ingot/exporters/executorch/pte_writer.h"
#include "ingot/exporters/pretrained.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace et = testing::et;
using testing::rand_tensor;

constexpr double kAtol = 1e-4;  // f32 ExecuTorch vs ingot / transformers

#define SKIP_WITHOUT_VENV() \
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason()

ExecutorchProgram& pte_of(ExportArtifact& a) {
  return dynamic_cast<ExecutorchProgram&>(a);
}

uint64_t u64_at(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | uint8_t(s[at + size_t(i)]);
  return v;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// --- memory planner ------------------------------------------------------------------------

TEST(ExecutorchMemoryPlanner, ReusesMemoryOfDeadTensorsAndKeepsLiveOnesApart) {
  using executorch::PlannedBuffer;
  // a lives [0, 1] (256 B), b [1, 2] (100 B), c [2, 3] (256 B). a and c never live together
  // (c reuses a's bytes); b overlaps both, so it goes after them.
  std::vector<PlannedBuffer> bufs{{256, 0, 1}, {100, 1, 2}, {256, 2, 3}};
  executorch::MemoryPlan p = executorch::plan_memory(bufs, 64);
  EXPECT_EQ(p.offsets[0], 0u);
  EXPECT_EQ(p.offsets[2], 0u);
  EXPECT_EQ(p.offsets[1], 256u);
  EXPECT_EQ(p.arena_bytes, 384u);  // 256 + 100 rounded up to 64
  // Everything alive at once: no reuse, every buffer at its own aligned offset.
  std::vector<PlannedBuffer> all{{10, -1, 5}, {70, -1, 5}, {64, -1, 5}};
  p = executorch::plan_memory(all, 64);
  EXPECT_EQ(p.offsets[1], 0u);    // 70 B -> 128
  EXPECT_EQ(p.offsets[2], 128u);  // 64 B
  EXPECT_EQ(p.offsets[0], 192u);  // 10 B -> 64
  EXPECT_EQ(p.arena_bytes, 256u);
}

// --- .pte layout ---------------------------------------------------------------------------

struct TinyMlp : nn::Module {
  TinyMlp() : Module("TinyMlp") {
    w = register_parameter("w", rand_tensor({4, 3}, 1));
    b = register_parameter("b", rand_tensor({4}, 2));
  }
  Tensor forward(const Tensor& x) { return relu(linear(x, *w, *b)); }
  Tensor *w, *b;
};

TEST(ExecutorchPte, HeaderIdentifierAndAlignedConstantSegment) {
  TinyMlp m;
  ExecutorchConfig c;
  auto a = ExecutorchExporter().export_fn(&m, [&](const Tensor& x) { return m.forward(x); },
                                          std::tuple{rand_tensor({2, 3}, 3)}, c, {"x"});
  et::ScratchDir dir("layout");
  const fs::path file = dir.path() / "mlp.pte";
  a->save(file.string());
  const std::string bytes = read_file(file);
  ASSERT_GT(bytes.size(), 64u);
  EXPECT_EQ(bytes.substr(4, 4), "ET12");
  EXPECT_EQ(bytes.substr(8, 4), "eh00");
  EXPECT_EQ(uint8_t(bytes[12]), 32u);  // header length
  const uint64_t program_size = u64_at(bytes, 16), base = u64_at(bytes, 24),
                 segments = u64_at(bytes, 32);
  EXPECT_LE(program_size, base);
  EXPECT_EQ(base % 128, 0u);
  EXPECT_EQ(base + segments, bytes.size());
  // The weights are in the segment, bit for bit: w (48 B) at 0, b (16 B) at 64.
  const Tensor w = contiguous(*m.w);
  EXPECT_EQ(std::memcmp(bytes.data() + base, w.raw_data(), w.nbytes()), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + base + 64, m.b->raw_data(), m.b->nbytes()), 0);
  EXPECT_FALSE(fs::exists(file.string() + ".tmp"));
  EXPECT_EQ(pte_of(*a).output_names, std::vector<std::string>{"output"});
}

// --- configs and bad input -----------------------------------------------------------------

TEST(ExecutorchConfig, JsonRoundTripAndAutoExporter) {
  auto c = AutoExportConfig::from_json(
      R"({"export_format": "executorch", "dynamic": true, "alloc_graph_output": false})");
  ASSERT_EQ(c->export_format(), "executorch");
  const auto& e = dynamic_cast<const ExecutorchConfig&>(*c);
  EXPECT_TRUE(e.dynamic);
  EXPECT_FALSE(e.alloc_graph_output);
  EXPECT_EQ(e.backend, "portable");
  auto again = AutoExportConfig::from_json(c->to_json());
  EXPECT_EQ(again->to_json(), c->to_json());
  EXPECT_EQ(AutoExporter::from_config(*c)->backend(), "executorch");
  try {
    AutoExportConfig::from_json(R"({"export_format": "executorch", "backend": "coreml"})");
    FAIL() << "expected a ValueError";
  } catch (const ValueError& err) {
    EXPECT_NE(std::string(err.what()).find("\"portable\" or \"xnnpack\""), std::string::npos)
        << err.what();
  }
}

// backend="xnnpack": the linear is a DelegateCall to XnnpackBackend whose payload is an
// XNNPACK header + XNNGraph ("XN01"); its weight lives in the payload only.
TEST(ExecutorchXnnpack, LinearBecomesADelegateCallWithItsWeightInThePayload) {
  TinyMlp m;
  ExecutorchConfig c;
  c.backend = "xnnpack";
  auto a = ExecutorchExporter().export_fn(&m, [&](const Tensor& x) { return m.forward(x); },
                                          std::tuple{rand_tensor({2, 3}, 3)}, c, {"x"});
  const auto& pte = pte_of(*a).pte;
  ASSERT_EQ(pte.plans.at(0).delegates.size(), 1u);
  EXPECT_EQ(pte.plans.at(0).delegates[0].id, "XnnpackBackend");
  const std::string& payload = pte.delegate_data.at(0).head;  // the weights follow it
  EXPECT_EQ(pte.delegate_data.at(0).tensors.size(), 2u);      // w and the bias
  EXPECT_EQ(payload.substr(4, 4), "XH00");
  const uint32_t fb = uint32_t(uint8_t(payload[10])) | uint32_t(uint8_t(payload[11])) << 8;
  EXPECT_EQ(payload.substr(fb + 4, 4), "XN01");
  int delegate_calls = 0;
  for (const auto& in : pte.plans.at(0).instructions)
    delegate_calls += in.kind == executorch::Instruction::Kind::Delegate;
  EXPECT_EQ(delegate_calls, 1);
  for (const Tensor& t : pte.constants) EXPECT_EQ(t.numel(), 0);  // w and b moved
  EXPECT_THROW(
      {
        ExecutorchConfig bad;
        bad.backend = "vulkan";
        ExecutorchExporter().export_fn(&m, [&](const Tensor& x) { return m.forward(x); },
                                       std::tuple{rand_tensor({2, 3}, 3)}, bad, {"x"});
      },
      ValueError);
}

TEST(ExecutorchErrors, AnOpWithoutKernelNamesTheOpTheLineAndTheFix) {
  ExecutorchConfig c;
  const int line = __LINE__ + 2;
  auto fn = [](const Tensor& x) {
    return sort(x, -1).first;  // sort has no mapping in the kernel table
  };
  try {
    ExecutorchExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({2, 5}, 3)}, c, {"x"});
    FAIL() << "expected NotSupportedError";
  } catch (const NotSupportedError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'sort'"), std::string::npos) << m;
    EXPECT_NE(m.find("executorch_export_test.cpp:" + std::to_string(line)), std::string::npos) << m;
    EXPECT_NE(m.find("INGOT_EXECUTORCH_KERNEL"), std::string::npos) << m;
  }
}

TEST(ExecutorchErrors, AFailedSaveLeavesNoFile) {
  TinyMlp m;
  ExecutorchConfig c;
  auto a = ExecutorchExporter().export_fn(&m, [&](const Tensor& x) { return m.forward(x); },
                                          std::tuple{rand_tensor({2, 3}, 3)}, c, {"x"});
  et::ScratchDir dir("failed_save");
  const fs::path missing = dir.path() / "no_such_dir" / "m.pte";
  EXPECT_THROW(a->save(missing.string()), IoError);
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_FALSE(fs::exists(missing.string() + ".tmp"));
}

// --- seed-001 programs (ExecuTorch's runtime as the judge) ----------------------------------

// Exports `fn`, saves it and checks ExecuTorch against ingot's runtime on each input set
// (the method's inputs by position); returns the artifact.
template <typename Fn, typename... Args>
std::unique_ptr<ExportArtifact> check_program(const std::string& name, nn::Module* module, Fn fn,
                                              const std::tuple<Args...>& example,
                                              const ExecutorchConfig& config,
                                              const std::vector<std::string>& input_names,
                                              const std::vector<std::vector<Tensor>>& input_sets,
                                              double rtol = 0.0, double atol = kAtol) {
  auto artifact = ExecutorchExporter().export_fn(module, fn, example, config, input_names);
  ExecutorchProgram& p = pte_of(*artifact);
  et::ScratchDir dir(name);
  const fs::path file = dir.path() / "model.pte";
  p.save(file.string());
  et::Cases cases(dir.path() / "cases");
  et::add_ingot_cases(cases, p, input_sets);
  nlohmann::json summary = cases.run(file, atol, rtol);
  EXPECT_TRUE(summary.value("ok", false)) << name << ": " << summary.dump();
  return artifact;
}

TEST(ExecutorchSeedPrograms, LinearReluWithDynamicBatch) {
  SKIP_WITHOUT_VENV();
  TinyMlp m;
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 16}}})";
  check_program("mlp", &m, [&](const Tensor& x) { return m.forward(x); },
                std::tuple{rand_tensor({2, 3}, 3)}, c, {"x"},
                {{rand_tensor({1, 3}, 4)}, {rand_tensor({2, 3}, 5)}, {rand_tensor({16, 3}, 6)}});
}

TEST(ExecutorchSeedPrograms, StaticValueFolded) {
  SKIP_WITHOUT_VENV();
  testing::AddStatic m;
  auto fn = [&m](const Tensor& x, int y) { return m.forward(x, y); };
  auto a = check_program("static", &m, fn, std::tuple{rand_tensor({1}, 1), 3}, ExecutorchConfig(),
                         {"x", "y"}, {{rand_tensor({1}, 2)}});
  EXPECT_EQ(pte_of(*a).input_names, std::vector<std::string>{"x"});  // y = 3 is baked in
}

TEST(ExecutorchSeedPrograms, OptionalInputPassedOrNone) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::optional_product;
  Tensor x = rand_tensor({3, 3}, 1), y = rand_tensor({3, 3}, 2);
  check_program("optional_given", nullptr, fn, std::tuple{x, std::optional<Tensor>(y)},
                ExecutorchConfig(), {"x", "y"}, {{rand_tensor({3, 3}, 3), rand_tensor({3, 3}, 4)}});
  auto a = check_program("optional_none", nullptr, fn, std::tuple{x, std::optional<Tensor>()},
                         ExecutorchConfig(), {"x", "y"}, {{rand_tensor({3, 3}, 5)}});
  EXPECT_EQ(pte_of(*a).input_names, std::vector<std::string>{"x"});
}

TEST(ExecutorchSeedPrograms, PytreeInputLeavesAreNamedByPath) {
  SKIP_WITHOUT_VENV();
  using Input = testing::SeedInput;
  auto fn = [](const Input& x) { return add(x.f, Scalar(1)); };
  Input in{rand_tensor({10, 4}, 1), rand_tensor({10, 4}, 2)};
  auto a = check_program("pytree", nullptr, fn, std::tuple{in}, ExecutorchConfig(), {"x"},
                         {{rand_tensor({10, 4}, 3), rand_tensor({10, 4}, 4)}});
  EXPECT_EQ(pte_of(*a).input_names, (std::vector<std::string>{"x.f", "x.p"}));
}

// item(): the first k rows, k read from data; the unbacked size is bounded by check().
TEST(ExecutorchSeedPrograms, DataDependentSizeFromItem) {
  SKIP_WITHOUT_VENV();
  auto first_rows = testing::first_k_rows;
  check_program("item", nullptr, first_rows,
                std::tuple{rand_tensor({5, 2}, 2), Tensor::scalar(int64_t(3))}, ExecutorchConfig(),
                {"x", "k"},
                {{rand_tensor({5, 2}, 3), Tensor::scalar(int64_t(2))},
                 {rand_tensor({5, 2}, 4), Tensor::scalar(int64_t(5))}});
}

// A mutated buffer is program state: planned memory initialised from the .pte's mutable
// segment at load and written back at the end of each call, so the count goes on from one
// execute to the next (the cases run in order on one loaded method).
TEST(ExecutorchSeedPrograms, BufferMutationIsStateThatPersistsAcrossCalls) {
  SKIP_WITHOUT_VENV();
  testing::Counter m;
  Tensor x = rand_tensor({3}, 1);
  auto artifact = ExecutorchExporter().export_fn(&m, [&m](const Tensor& t) { return m.forward(t); },
                                                 std::tuple{x}, ExecutorchConfig(), {"x"});
  ExecutorchProgram& p = pte_of(*artifact);
  EXPECT_EQ(p.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(p.output_names, std::vector<std::string>{"output"});
  EXPECT_EQ(p.pte.mutable_state.size(), 1u);
  et::ScratchDir dir("counter");
  p.save((dir.path() / "model.pte").string());
  et::Cases cases(dir.path() / "cases");
  for (int call = 1; call <= 3; ++call)
    cases.add({{"x", x}}, {{0, {"output", add(x, Scalar(call))}}});
  EXPECT_TRUE(cases.run(dir.path() / "model.pte", kAtol).value("ok", false));
  ExecutorchConfig no_state;
  no_state.alloc_mutable_buffers = false;
  EXPECT_THROW(ExecutorchExporter().export_fn(&m, [&m](const Tensor& t) { return m.forward(t); },
                                              std::tuple{x}, no_state, {"x"}),
               NotSupportedError);
}

using testing::RingWriter;

// Slice and select assignment into a buffer: the second call reads what the first wrote.
TEST(ExecutorchSeedPrograms, SliceAndSelectAssignmentIntoABuffer) {
  SKIP_WITHOUT_VENV();
  RingWriter m;
  Tensor x1 = rand_tensor({1, 3}, 2), x2 = rand_tensor({1, 3}, 3);
  auto a =
      ExecutorchExporter().export_fn(&m, [&m](const Tensor& t) { return m.forward(t); },
                                     std::tuple{rand_tensor({1, 3}, 1)}, ExecutorchConfig(), {"x"});
  et::ScratchDir dir("ring");
  a->save((dir.path() / "model.pte").string());
  // Expected: eager calls on the module, whose buffer carries over (export left it as is).
  et::Cases cases(dir.path() / "cases");
  cases.add({{"x", x1}}, {{0, {"output", contiguous(clone(m.forward(x1)))}}});
  cases.add({{"x", x2}}, {{0, {"output", contiguous(clone(m.forward(x2)))}}});
  EXPECT_TRUE(cases.run(dir.path() / "model.pte", kAtol).value("ok", false));
}

TEST(ExecutorchSeedPrograms, SixteenBitFloats) {
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
  // Both sides round to the 16-bit type once per op; the portable set has no silu, so the
  // .pte rounds sigmoid(x) to bf16 before the mul (one rounding more than ingot's fused
  // silu): one bf16 ulp (2^-7) absolute and relative.
  ExecutorchConfig c;  // ExecuTorch needs a bound on every dynamic size
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 8}}})";
  check_program(
      "halves", &m, [&m](const Tensor& t) { return m.forward(t); },
      std::tuple{rand_tensor({2, 4}, 1)}, c, {"x"},
      {{rand_tensor({2, 4}, 5)}, {rand_tensor({5, 4}, 6)}}, 1.0 / 128, 1.0 / 128);
}

// Control flow: cond / map / while_loop become JumpFalseCall / MoveCall instructions and
// executorch_prim counters (emitter_control_flow.cpp); ExecuTorch's runtime runs both
// branches of each cond (one input set each, on one loaded method) == ingot's runtime.
size_t count_instructions(const ExecutorchProgram& p, executorch::Instruction::Kind kind) {
  size_t n = 0;
  for (const auto& in : p.pte.plans.at(0).instructions) n += in.kind == kind;
  return n;
}

TEST(ExecutorchSeedPrograms, CondOnDataTakesBothBranches) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::sin_or_cos_by_sum;
  Tensor pos = add(abs(rand_tensor({3}, 2)), Scalar(0.1));
  Tensor neg = sub(ingot::neg(abs(rand_tensor({3}, 3))), Scalar(0.1));
  auto a = check_program("cond_data", nullptr, fn, std::tuple{rand_tensor({3}, 1)},
                         ExecutorchConfig(), {"x"}, {{pos}, {neg}, {pos}}, 0.0, 1e-5);
  ExecutorchProgram& p = pte_of(*a);
  EXPECT_EQ(count_instructions(p, executorch::Instruction::Kind::JumpFalse), 2u);
  EXPECT_EQ(count_instructions(p, executorch::Instruction::Kind::Move), 2u);
  // The branches' results really differ: sin on the positive, cos on the negative input.
  runtime::ProgramModule mod(p.program);
  testing::expect_near_tensors(mod.run({pos})[0], sin(pos), 1e-6);
  testing::expect_near_tensors(mod.run({neg})[0], cos(neg), 1e-6);
}

// A predicate on a dynamic size: executorch_prim::lt.Scalar computes it at run time.
TEST(ExecutorchSeedPrograms, CondOnADynamicSizeTakesBothBranches) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::branch_on_rows;
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "rows", "min": 2, "max": 8}}})";
  auto a = check_program("cond_size", nullptr, fn, std::tuple{rand_tensor({6, 2}, 1)}, c, {"x"},
                         {{rand_tensor({6, 2}, 2)},
                          {rand_tensor({3, 2}, 3)},
                          {rand_tensor({8, 2}, 4)},
                          {rand_tensor({4, 2}, 5)}},
                         0.0, 1e-5);
  runtime::ProgramModule mod(pte_of(*a).program);
  Tensor big = rand_tensor({6, 2}, 6), small = rand_tensor({3, 2}, 7);
  testing::expect_near_tensors(mod.run({big})[0], add(big, Scalar(1)), 1e-6);
  testing::expect_near_tensors(mod.run({small})[0], mul(small, Scalar(3)), 1e-6);
}

// map over rows (a loop of select_copy / body / et_copy_index) and a while_loop (carried
// values copied back each iteration; the condition is a bool tensor).
TEST(ExecutorchSeedPrograms, MapAndWhileLoopRunAsLoops) {
  SKIP_WITHOUT_VENV();
  auto fn = testing::map_and_while_loop;
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"xs": {"0": {"name": "rows", "min": 1, "max": 6}}})";
  auto a = check_program("map_while", nullptr, fn,
                         std::tuple{rand_tensor({4, 3}, 1), rand_tensor({3}, 2)}, c, {"xs", "y"},
                         {{rand_tensor({4, 3}, 3), rand_tensor({3}, 4)},
                          {rand_tensor({1, 3}, 5), rand_tensor({3}, 6)},
                          {rand_tensor({6, 3}, 7), rand_tensor({3}, 8)}},
                         0.0, 1e-5);
  // map: the test at the top and the jump back; while_loop: the exit and the jump back.
  EXPECT_EQ(count_instructions(pte_of(*a), executorch::Instruction::Kind::JumpFalse), 4u);
}

// Nested: a cond inside a map body (jumps inside a loop, moves inside an iteration); the
// map's result is read by a later kernel, and a shorter call follows a longer one.
TEST(ExecutorchSeedPrograms, CondInsideMap) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Tensor& xs) {
    Tensor mapped = map(
        [](const TensorList& in) {
          return cond(
              gt(sum(in[0]), Scalar(0)),
              [](const TensorList& b) { return TensorList{mul(b[0], Scalar(2))}; },
              [](const TensorList& b) { return TensorList{neg(b[0])}; }, {in[0]});
        },
        {xs})[0];
    return add(mapped, Scalar(1));
  };
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"xs": {"0": {"name": "rows", "min": 1, "max": 8}}})";
  check_program("cond_in_map", nullptr, fn, std::tuple{rand_tensor({5, 4}, 1)}, c, {"xs"},
                {{rand_tensor({5, 4}, 2)},
                 {rand_tensor({2, 4}, 3)},
                 {rand_tensor({8, 4}, 4)},
                 {rand_tensor({3, 4}, 5)}},
                0.0, 1e-5);
}

// A predicate combining size conditions with and / or / != is one integer "margin" that
// is positive exactly when it holds (min for and, max for or), computed by executorch_prim
// ops and compared with 0: every way through the predicate, on one loaded method.
TEST(ExecutorchSeedPrograms, CondOnAndOrPredicatesTakesBothBranches) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Tensor& x) {
    const SymInt a = x.sym_size(0), b = x.sym_size(1);
    Tensor first = cond(
        (a > SymInt(4) && b > SymInt(2)) || a == SymInt(2),
        [](const TensorList& in) { return TensorList{add(in[0], Scalar(1))}; },
        [](const TensorList& in) { return TensorList{mul(in[0], Scalar(3))}; }, {x})[0];
    Tensor second = cond(
        !(a > SymInt(6)) && a != b,
        [](const TensorList& in) { return TensorList{sin(in[0])}; },
        [](const TensorList& in) { return TensorList{cos(in[0])}; }, {x})[0];
    return std::tuple{first, second};
  };
  ExecutorchConfig c;
  c.dynamic_shapes_json =
      R"({"x": {"0": {"name": "a", "min": 2, "max": 8}, "1": {"name": "b", "min": 2, "max": 8}}})";
  // (a, b): and holds | and fails on b | eq holds | all fail | a == b | a > 6
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{6, 3}, {6, 2}, {2, 5},
                                                           {3, 3}, {5, 5}, {7, 4}};
  std::vector<std::vector<Tensor>> sets;
  for (size_t i = 0; i < shapes.size(); ++i)
    sets.push_back({rand_tensor({shapes[i].first, shapes[i].second}, uint32_t(10 + i))});
  auto art = check_program("cond_and_or", nullptr, fn, std::tuple{rand_tensor({6, 3}, 1)}, c,
                           {"x"}, sets, 0.0, 1e-5);
  // ingot's runtime takes the branches the predicates say (so ExecuTorch did too).
  runtime::ProgramModule mod(pte_of(*art).program);
  for (const auto& [a, b] : shapes) {
    Tensor x = rand_tensor({a, b}, uint32_t(a * 8 + b));
    std::vector<Tensor> out = mod.run({x});
    const bool first = (a > 4 && b > 2) || a == 2, second = !(a > 6) && a != b;
    testing::expect_near_tensors(out[0], first ? add(x, Scalar(1)) : mul(x, Scalar(3)), 1e-6);
    testing::expect_near_tensors(out[1], second ? sin(x) : cos(x), 1e-6);
  }
  // No NotSupportedError any more: the instructions hold the margins' min / max.
  size_t junctions = 0;
  const auto& plan = pte_of(*art).pte.plans.at(0);
  for (const auto& in : plan.instructions) {
    if (in.kind != executorch::Instruction::Kind::Kernel) continue;
    const std::string& name = plan.operators.at(size_t(in.index)).name;
    junctions += name == "executorch_prim::sym_min" || name == "executorch_prim::sym_max";
  }
  EXPECT_GE(junctions, 2u);
}

// A map over a leading size that may be 0: the test is at the top of the loop, so 0 rows
// run the body zero times and the outputs are empty with their other sizes ([0, cols] with
// the call's cols). Longer and shorter calls alternate with empty ones on one loaded
// method (the outputs are reset to 0 rows at every run).
TEST(ExecutorchSeedPrograms, MapOverAPossiblyEmptyLeadingSize) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Tensor& xs, const Tensor& y) {
    TensorList out = map(
        [](const TensorList& in) {
          return TensorList{add(mul(in[0], Scalar(2)), in[1]), sum(in[0])};
        },
        {xs}, {y});
    return std::tuple{out[0], out[1]};
  };
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"xs": {"0": {"name": "n", "min": 0, "max": 6},
                                     "1": {"name": "m", "min": 1, "max": 5}},
                              "y": {"0": {"name": "m", "min": 1, "max": 5}}})";
  std::vector<std::vector<Tensor>> sets;
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{3, 4}, {0, 4}, {6, 2}, {0, 5},
                                                              {1, 3}, {0, 1}})
    sets.push_back({rand_tensor({n, m}, uint32_t(n * 7 + m)), rand_tensor({m}, uint32_t(m))});
  auto art = check_program("map_empty", nullptr, fn,
                           std::tuple{rand_tensor({3, 4}, 1), rand_tensor({4}, 2)}, c,
                           {"xs", "y"}, sets, 0.0, 1e-5);
  runtime::ProgramModule mod(pte_of(*art).program);
  std::vector<Tensor> empty = mod.run({rand_tensor({0, 5}, 3), rand_tensor({5}, 4)});
  EXPECT_EQ(empty.at(0).sizes(), (IntShape{0, 5}));
  EXPECT_EQ(empty.at(1).sizes(), (IntShape{0}));
}

// nonzero: a data-dependent size planned for its bound (every element of the input) and
// resized by the portable nonzero.out kernel. Seed 001's program (check() settles the
// branch; the assert is not emitted), then a program that reads the count back as a size
// (a view of 2 * count elements) at several counts including 0, with a dynamic input.
TEST(ExecutorchSeedPrograms, DataDependentSizesFromNonzero) {
  SKIP_WITHOUT_VENV();
  auto seed = testing::nonzero_then_branch;
  Tensor x = where(gt(rand_tensor({3, 2}, 1), Scalar(0.5)), rand_tensor({3, 2}, 1), zeros({3, 2}));
  auto art = check_program("nonzero_seed", nullptr, seed, std::tuple{x}, ExecutorchConfig(), {"x"},
                           {{x}, {ones({3, 2})}, {where(gt(rand_tensor({3, 2}, 2), Scalar(0)),
                                                         ones({3, 2}), zeros({3, 2}))}});
  // The rows' bound is 3 * 2 elements: [6, 2] int64 planned.
  const auto& plan = pte_of(*art).pte.plans.at(0);
  bool bounded = false;
  for (const auto& v : plan.values) {
    const auto* t = std::get_if<executorch::TensorValue>(&v);
    bounded |= t && t->scalar_type == executorch::pte::ScalarType::Long &&
               t->sizes == std::vector<int32_t>{6, 2} &&
               t->dynamism == executorch::pte::Dynamism::DynamicBound;
  }
  EXPECT_TRUE(bounded);

  auto flat = [](const Tensor& t) {
    Tensor idx = nonzero(t);
    return std::tuple{idx, add(reshape(idx, {idx.sym_size(0) * SymInt(2)}), Scalar(1))};
  };
  ExecutorchConfig c;
  c.dynamic_shapes_json = R"({"t": {"0": {"name": "rows", "min": 1, "max": 5}}})";
  auto some = [](int64_t rows, uint32_t seed) {
    return where(gt(rand_tensor({rows, 2}, seed), Scalar(0.3)), ones({rows, 2}), zeros({rows, 2}));
  };
  check_program("nonzero_sizes", nullptr, flat, std::tuple{some(4, 1)}, c, {"t"},
                {{some(4, 2)}, {zeros({3, 2})}, {ones({5, 2})}, {some(1, 3)}, {zeros({5, 2})},
                 {some(3, 4)}});
}

// What is still not supported is a clear error naming the size, not a .pte: a
// data-dependent size without an upper bound (item() not bounded by check()).
TEST(ExecutorchSeedPrograms, UnboundedDataDependentSizeIsAClearError) {
  auto unbounded = [](const Tensor& x, const Tensor& k) {
    SymInt n = item_int(k);
    check_is_size(n);
    return expand(slice(x, 0, 0, 1), {n, SymInt(2)});  // [1, 2] -> [n, 2]
  };
  try {
    ExecutorchExporter().export_fn(nullptr, unbounded,
                                   std::tuple{rand_tensor({5, 2}, 1), Tensor::scalar(int64_t(3))},
                                   ExecutorchConfig(), {"x", "k"});
    FAIL() << "expected NotSupportedError";
  } catch (const NotSupportedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("has no upper bound"), std::string::npos) << what;
    EXPECT_NE(what.find("u0"), std::string::npos) << what;
  }
}

// scaled_dot_product_attention left in a program (a torch.export archive in the training
// dialect is never traced by ingot, so the trace-time patch does not replace it) is
// composed of portable kernels (kernels_attention.cpp). The program here is traced
// without the ExecuTorch patches and lowered: grouped kv heads with an additive mask,
// is_causal with a scale, and a bool mask with a fully masked query row (zeros, as
// ingot's kernel gives), at three dynamic lengths.
TEST(ExecutorchSeedPrograms, AttentionLeftInTheProgramIsComposedOfPortableKernels) {
  SKIP_WITHOUT_VENV();
  auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
               const Tensor& keep) {
    return std::tuple{scaled_dot_product_attention(q, k, v, bias, false, std::nullopt, true),
                      scaled_dot_product_attention(q, k, v, std::nullopt, true, 0.3, true),
                      scaled_dot_product_attention(q, k, v, keep, false, std::nullopt, true)};
  };
  auto inputs = [](int64_t len, uint32_t seed) {
    Tensor keep = gt(rand_tensor({1, 1, len, len}, seed + 4), Scalar(-0.5));
    keep = contiguous(clone(keep));
    for (int64_t j = 0; j < len; ++j) keep.data<bool>()[j] = false;  // query row 0: no key
    return std::vector<Tensor>{rand_tensor({1, 4, len, 8}, seed), rand_tensor({1, 2, len, 8}, seed + 1),
                               rand_tensor({1, 2, len, 8}, seed + 2),
                               rand_tensor({1, 1, len, len}, seed + 3), keep};
  };
  ExportOptions o;
  o.input_names = {"q", "k", "v", "bias", "keep"};
  const std::string len = R"({"name": "len", "min": 1, "max": 8})";
  o.dynamic_shapes = DynamicShapes::from_json(
      "[{\"2\": " + len + "}, {\"2\": " + len + "}, {\"2\": " + len + "}, {\"2\": " + len +
          ", \"3\": " + len + "}, {\"2\": " + len + ", \"3\": " + len + "}]",
      "test");
  const std::vector<Tensor> example = inputs(5, 1);
  ExportedProgram ep = ingot::export_(
      nullptr, fn, std::tuple{example[0], example[1], example[2], example[3], example[4]}, o);
  size_t attention = 0;
  for (const ir::Node& n : ep.graph->nodes()) attention += n.target == "scaled_dot_product_attention";
  ASSERT_EQ(attention, 3u) << ep.print();
  runtime::ProgramModule mod(ep);
  auto artifact = ExecutorchExporter().lower(std::move(ep), ExecutorchConfig());
  ExecutorchProgram& p = pte_of(*artifact);
  et::ScratchDir dir("sdpa_mapped");
  const fs::path file = dir.path() / "model.pte";
  p.save(file.string());
  et::Cases cases(dir.path() / "cases");
  for (auto [length, seed] : {std::pair<int64_t, uint32_t>{5, 10}, {1, 20}, {8, 30}}) {
    const std::vector<Tensor> in = inputs(length, seed);
    std::vector<Tensor> outs = mod.run(in);
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (size_t i = 0; i < in.size(); ++i) feeds.push_back({p.input_names.at(i), in[i]});
    std::vector<std::pair<size_t, std::pair<std::string, Tensor>>> want;
    for (size_t j = 0; j < outs.size(); ++j)
      want.push_back({j, {p.output_names.at(j), contiguous(outs[j])}});
    // (the fully masked row really is zeros on the ingot side)
    testing::expect_near_tensors(select(select(outs[2], 2, 0), 0, 0), zeros({4, 8}), 0.0);
    cases.add(feeds, want);
  }
  nlohmann::json summary = cases.run(file, 1e-5, 0.0);
  EXPECT_TRUE(summary.value("ok", false)) << summary.dump();
}

// --- fixture architectures (ExecuTorch's runtime as the judge) -----------------------------

// Runs ingot's runtime on the method inputs; returns the user outputs by position.
std::vector<Tensor> run_ingot(const ExecutorchProgram& p, runtime::ProgramModule& mod,
                              const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs = mod.run(inputs);
  for (Tensor& t : outs) t = contiguous(t);
  return outs;
}

// Dynamic batch and sequence, three shapes: ExecuTorch's outputs == ingot's runtime on the
// same program and == the committed transformers outputs (1e-4).
// Exports one fixture, checks the ingot side, and adds its run (tag "<name>/<backend>") to
// `runs` for ExecuTorch.
void prepare_fixture_conformance(const std::string& name, const std::string& backend,
                                 const fs::path& root, std::vector<nlohmann::json>& runs) {
  SCOPED_TRACE(name + " / " + backend);
  const std::string folder = testing::fixture_path(std::string("models/") + name);
  auto model = models::from_pretrained(folder);
  const fs::path dir = root / (name + "_" + backend);
  fs::create_directories(dir);
  ExecutorchConfig c;
  c.dynamic = true;
  c.max_batch = 4;
  c.max_seq = 24;
  c.backend = backend;
  auto artifact = ExecutorchExporter().export_(*model, c);
  ExecutorchProgram& p = pte_of(*artifact);
  if (backend == "xnnpack") {
    // Every linear is a delegate call (the projections and the lm head at least).
    EXPECT_GE(p.pte.plans.at(0).delegates.size(), 2u);
    std::cout << p.pte.plans.at(0).delegates.size() << " XNNPACK delegate calls\n";
  }
  const fs::path file = dir / "model.pte";
  p.save(file.string());
  const std::string out_name = p.output_names.at(0);  // logits, or last_hidden_state (bert)
  // The method's inputs by name from ModelInputs (input_ids, attention_mask[, token_type_ids]).
  auto method_inputs = [&](const models::ModelInputs& in) {
    std::vector<std::pair<std::string, Tensor>> v;
    for (const std::string& n : p.input_names) {
      if (n == "input_ids")
        v.push_back({n, in.input_ids});
      else if (n == "attention_mask")
        v.push_back({n, in.attention_mask});
      else if (n == "token_type_ids")
        v.push_back({n, in.token_type_ids});
      else
        ADD_FAILURE() << "unexpected input " << n;
    }
    return v;
  };
  auto tensors = [](const std::vector<std::pair<std::string, Tensor>>& v) {
    std::vector<Tensor> t;
    for (const auto& [n, x] : v) t.push_back(x);
    return t;
  };
  auto mod = runtime::ProgramModule(p.program);
  et::Cases cases(dir / "cases");
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {3, 17}}) {
    models::ModelInputs in = example_model_inputs(*model, b, s);
    in.input_ids = to(abs(mul(rand_tensor({b, s}, uint32_t(b * 31 + s)), Scalar(40))), DType::I64);
    if (s > 1) {  // one padded key in the first row (no row is fully masked)
      in.attention_mask = contiguous(clone(in.attention_mask));
      in.attention_mask.data<int64_t>()[s - 1] = 0;
    }
    const auto inputs = method_inputs(in);
    std::vector<Tensor> want = run_ingot(p, mod, tensors(inputs));
    cases.add(inputs, {{0, {out_name, want.at(0)}}});
  }
  // transformers' own outputs on the committed inputs (tools/reference/make_model_fixtures.py).
  {
    models::ModelInputs ref;
    ref.input_ids = formats::load_npy(folder + "/input_ids.npy");
    ref.attention_mask = formats::load_npy(folder + "/attention_mask.npy");
    if (fs::exists(folder + "/token_type_ids.npy"))
      ref.token_type_ids = formats::load_npy(folder + "/token_type_ids.npy");
    // (padded query positions left out, as tests/models/hf_conformance_test.cpp does)
    cases.add(method_inputs(ref),
              {{0, {out_name, formats::load_npy(folder + "/" + out_name + ".npy")}}},
              ref.attention_mask);
  }
  runs.push_back(cases.batch_run(name + "/" + backend, file, kAtol));
  std::cout << name << " / " << backend << ": memory plan " << p.planned_bytes << " bytes ("
            << p.planned_bytes_without_reuse << " without reuse)\n";
  EXPECT_LT(p.planned_bytes, p.planned_bytes_without_reuse);
}

// Every fixture architecture on the portable backend, and a subset (each family of
// attention / MLP layout once) with backend="xnnpack" (linear / matmul in XNNPACK
// delegates, which the pybindings register as XnnpackBackend; the rest portable). All of
// them run in one Python process (run_cases.py --batch): torch and the runtime load once
// instead of once per program. Each program is named in its failure.
TEST(ExecutorchFixtureConformance, DynamicBatchAndSequenceAtThreeShapesAndTransformersLogits) {
  SKIP_WITHOUT_VENV();
  et::ScratchDir dir("fixtures");
  std::vector<nlohmann::json> runs;
  std::vector<std::string> tags;
  for (const std::string& name : testing::model_fixtures()) {
    prepare_fixture_conformance(name, "portable", dir.path(), runs);
    tags.push_back(name + "/portable");
  }
  for (const char* name : {"llama", "qwen3", "gpt2", "gpt_neox", "bert"}) {
    prepare_fixture_conformance(name, "xnnpack", dir.path(), runs);
    tags.push_back(std::string(name) + "/xnnpack");
  }
  const nlohmann::json results = et::run_batch(dir.path(), runs);
  for (const std::string& tag : tags) {
    ASSERT_TRUE(results.contains(tag)) << tag << " did not run";
    EXPECT_TRUE(results[tag].value("ok", false)) << tag << ": " << results[tag].dump();
  }
  EXPECT_EQ(results.size(), tags.size());
}

}  // namespace
}  // namespace ingot::exporters
