// The seed-001 programs ingot traces (tests/export/seed_programs.h) written as .pt2:
// each loads with torch.export.load and its .module() gives ingot's outputs within 1e-5
// (tools/reference/check_pt2.py in the reference venv; SKIP with the reason without it).
// The programs cover static values, optional inputs (given and None), a user-type input
// (torch's keyword arguments), buffer mutation (add_ and slice / select assignment),
// cond on data and on a size (inputs chosen so that both branches run), map and
// while_loop, nonzero's unbacked size with check(), item() with check_is_size(), and
// 16-bit floats. In process, every written archive is read back and runs equal to ingot.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "export/export_test_util.h"
#include "export/seed_programs.h"
#include "ingot/export/export.h"
#include "ingot/export/pt2/reader.h"
#include "ingot/export/pt2/writer.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "pt2_torch_check.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::rand_tensor;

// One seed program: its export and the user-input sets (flat, in in_spec order) it runs on.
struct SeedCase {
  std::string name;
  ExportedProgram ep;
  std::vector<std::vector<Tensor>> inputs;
  // Optional per-set check that the set exercises what it is meant to (a cond branch).
  std::function<void(size_t set, const std::vector<Tensor>& in, const std::vector<Tensor>& out)>
      expect;
};

Tensor positive(Tensor t) {
  return add(abs(t), Scalar(0.1));
}

ExportOptions named(std::vector<std::string> names, DynamicShapes shapes = {}) {
  ExportOptions o;
  o.input_names = std::move(names);
  o.dynamic_shapes = std::move(shapes);
  return o;
}

DynamicShapes rows(const char* name) {
  return DynamicShapes::tensor({{0, Dim(name, 1, 16)}});
}

// The seed programs, exported. Modules are kept alive by the static storage below.
std::vector<SeedCase> seed_cases() {
  std::vector<SeedCase> c;
  static testing::AddStatic add_static;
  c.push_back({"add_static",
               export_(add_static, std::tuple{rand_tensor({1}, 1), 3}, named({"x", "y"})),
               {{rand_tensor({1}, 2)}},
               {}});
  static testing::Counter counter;
  c.push_back({"counter",
               export_(
                   &counter, [](const Tensor& x) { return counter.forward(x); },
                   std::tuple{rand_tensor({3}, 1)}, named({"x"})),
               {{rand_tensor({3}, 3)}},
               {}});
  static testing::RingWriter ring;
  c.push_back({"ring_writer",
               export_(
                   &ring, [](const Tensor& x) { return ring.forward(x); },
                   std::tuple{rand_tensor({1, 3}, 1)}, named({"x"})),
               {{rand_tensor({1, 3}, 2)}},
               {}});
  const Tensor x33 = rand_tensor({3, 3}, 1), y33 = rand_tensor({3, 3}, 2);
  c.push_back({"optional_given",
               export_(nullptr, testing::optional_product,
                       std::tuple{x33, std::optional<Tensor>(y33)}, named({"x", "y"})),
               {{rand_tensor({3, 3}, 3), rand_tensor({3, 3}, 4)}},
               {}});
  c.push_back({"optional_none",
               export_(nullptr, testing::optional_product, std::tuple{x33, std::optional<Tensor>()},
                       named({"x", "y"})),
               {{rand_tensor({3, 3}, 5)}},
               {}});
  c.push_back({"pytree_input",
               export_(
                   nullptr, [](const testing::SeedInput& in) { return add(in.f, Scalar(1)); },
                   std::tuple{testing::SeedInput{rand_tensor({10, 4}, 1), rand_tensor({10, 4}, 2)}},
                   named({"x"})),
               {{rand_tensor({10, 4}, 3), rand_tensor({10, 4}, 4)}},
               {}});
  // cond on data: a positive sum takes sin, a negative one cos (checked per set).
  const Tensor pos = positive(rand_tensor({3}, 2));
  c.push_back(
      {"cond_on_data",
       export_(nullptr, testing::sin_or_cos_by_sum, std::tuple{rand_tensor({3}, 1)},
               named({"x"}, DynamicShapes::tuple({DynamicShapes::tensor({{0, Dim("n", 1, 16)}})}))),
       {{pos}, {neg(pos)}, {positive(rand_tensor({7}, 4))}},
       [](size_t set, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
         testing::expect_near_tensors(out[0], set == 1 ? cos(in[0]) : sin(in[0]), 1e-6);
       }});
  // cond on a size: more than 4 rows add 1, otherwise times 3.
  c.push_back({"cond_on_size",
               export_(nullptr, testing::branch_on_rows, std::tuple{rand_tensor({3, 2}, 1)},
                       named({"x"}, DynamicShapes::tuple({rows("r")}))),
               {{rand_tensor({3, 2}, 2)}, {rand_tensor({9, 2}, 3)}},
               [](size_t, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
                 const bool big = in[0].size(0) > 4;
                 testing::expect_near_tensors(
                     out[0], big ? add(in[0], Scalar(1)) : mul(in[0], Scalar(3)), 1e-6);
               }});
  const Tensor y3 = rand_tensor({3}, 2);
  c.push_back({"map_and_while_loop",
               export_(nullptr, testing::map_and_while_loop, std::tuple{rand_tensor({4, 3}, 1), y3},
                       named({"xs", "y"}, DynamicShapes::tuple({rows("n"), {}}))),
               {{rand_tensor({4, 3}, 3), y3}, {rand_tensor({6, 3}, 4), rand_tensor({3}, 5)}},
               {}});
  const Tensor nz =
      where(gt(rand_tensor({3, 2}, 1), Scalar(0.5)), rand_tensor({3, 2}, 1), zeros({3, 2}));
  c.push_back({"nonzero_then_branch",
               export_(nullptr, testing::nonzero_then_branch, std::tuple{nz}, named({"x"})),
               {{nz}, {ones({3, 2})}},
               {}});
  c.push_back(
      {"item_first_k_rows",
       export_(nullptr, testing::first_k_rows,
               std::tuple{rand_tensor({5, 2}, 2), Tensor::scalar(int64_t(3))}, named({"x", "k"})),
       {{rand_tensor({5, 2}, 3), Tensor::scalar(int64_t(2))},
        {rand_tensor({5, 2}, 4), Tensor::scalar(int64_t(5))}},
       {}});
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
  };
  static Halves halves;
  c.push_back(
      {"sixteen_bit_floats",
       export_(
           &halves, [](const Tensor& x) { return halves.forward(x); },
           std::tuple{rand_tensor({2, 4}, 1)}, named({"x"}, DynamicShapes::tuple({rows("b")}))),
       {{rand_tensor({2, 4}, 5)}, {rand_tensor({5, 4}, 6)}},
       {}});
  return c;
}

// ingot's outputs for one input set, from a fresh module (buffers at their exported values).
std::vector<Tensor> run_ingot(const ExportedProgram& ep, const std::vector<Tensor>& in) {
  runtime::ProgramModule mod(ep);
  std::vector<Tensor> out;
  for (const Tensor& t : mod.run(in)) out.push_back(contiguous(clone(t)));
  return out;
}

double max_diff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return INFINITY;
  const Tensor fa = contiguous(to(a, DType::F64)), fb = contiguous(to(b, DType::F64));
  double m = 0;
  for (int64_t i = 0; i < fa.numel(); ++i)
    m = std::max(m, std::fabs(fa.data<double>()[i] - fb.data<double>()[i]));
  return m;
}

TEST(Pt2WriteSeeds, EverySeedProgramIsWrittenAndReadsBackEqual) {
  for (SeedCase& sc : seed_cases()) {
    const std::string bytes = pt2::save_pt2_to_bytes(sc.ep);
    const ExportedProgram back = pt2::load_pt2_from_bytes(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr, sc.name + ".pt2");
    for (size_t k = 0; k < sc.inputs.size(); ++k) {
      const std::vector<Tensor> want = run_ingot(sc.ep, sc.inputs[k]);
      if (sc.expect) sc.expect(k, sc.inputs[k], want);
      const std::vector<Tensor> got = run_ingot(back, sc.inputs[k]);
      ASSERT_EQ(got.size(), want.size()) << sc.name;
      for (size_t j = 0; j < got.size(); ++j)
        EXPECT_LE(max_diff(got[j], want[j]), 1e-6) << sc.name << " output " << j;
    }
  }
}

// check_pt2's case folder for one input set: the module's positional arguments (or one
// user type's fields as keyword arguments, as the writer calls it) and ingot's outputs.
void write_case(const ExportedProgram& ep, const std::vector<Tensor>& in,
                const std::vector<Tensor>& want, const fs::path& dir) {
  fs::create_directories(dir / "in");
  fs::create_directories(dir / "want");
  size_t t = 0;
  const auto& top = ep.in_spec.children;
  if (top.size() == 1 && !top[0].keys.empty() && !top[0].is_leaf()) {
    for (size_t i = 0; i < top[0].keys.size(); ++i)
      formats::save_npy((dir / "in" / ("kw_" + top[0].keys[i] + ".npy")).string(), in.at(t++));
  } else {
    for (size_t i = 0; i < top.size(); ++i) {
      const TreeSpec& s = top[i];
      const bool tensor = s.type == "tensor" || (s.type == "optional" && !s.children.empty());
      if (tensor)
        formats::save_npy((dir / "in" / (std::to_string(i) + "_x.npy")).string(), in.at(t++));
      else
        std::ofstream(dir / "in" / (std::to_string(i) + "_x.json"))
            << testing::pt2::static_json(s.value);
    }
  }
  ASSERT_EQ(t, in.size()) << "the input tree has " << t << " tensors, the set " << in.size();
  for (size_t j = 0; j < want.size(); ++j)
    formats::save_npy((dir / "want" / (std::to_string(j) + ".npy")).string(), want[j]);
}

TEST(Pt2WriteSeedsTorch, EverySeedProgramRunsInTorchEqualToIngot) {
  if (!testing::pt2::have_torch())
    GTEST_SKIP() << "no reference venv with torch at " << testing::pt2::ref_python()
                 << " (tools/reference/setup-venv)";
  testing::pt2::Scratch dir("seeds");
  std::vector<std::pair<fs::path, fs::path>> pairs;
  for (SeedCase& sc : seed_cases()) {
    const fs::path archive = dir.path() / (sc.name + ".pt2");
    pt2::save_pt2(sc.ep, archive.string());
    for (size_t k = 0; k < sc.inputs.size(); ++k) {
      const std::vector<Tensor> want = run_ingot(sc.ep, sc.inputs[k]);
      const fs::path cd = dir.path() / (sc.name + "_case" + std::to_string(k));
      write_case(sc.ep, sc.inputs[k], want, cd);
      pairs.push_back({archive, cd});
    }
  }
  const testing::pt2::ToolRun r = testing::pt2::check_pt2(pairs, 1e-5);
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_TRUE(r.summary.value("ok", false)) << r.log;
  std::printf("check_pt2: %zu seed cases, worst |diff| vs ingot %g\n", pairs.size(),
              r.summary.value("worst", -1.0));
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// The writer records each node's C++ line as torch's stack_trace, which the reader reads
// back as the node's source line.
TEST(Pt2WriteSeeds, SourceLinesTravelAsStackTraces) {
  for (SeedCase& sc : seed_cases()) {
    if (sc.name != "cond_on_data") continue;
    const std::string bytes = pt2::save_pt2_to_bytes(sc.ep);
    EXPECT_NE(bytes.find("seed_programs.h\\\", line "), std::string::npos);
    const ExportedProgram back = pt2::load_pt2_from_bytes(
        reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr, sc.name + ".pt2");
    ASSERT_FALSE(back.graph->nodes().empty());
    bool found = false;
    for (const ir::Node& n : back.graph->nodes())
      found = found || n.source.file.ends_with("seed_programs.h");
    EXPECT_TRUE(found) << back.print();
  }
}

}  // namespace
}  // namespace ingot
