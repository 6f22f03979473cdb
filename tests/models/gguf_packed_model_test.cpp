// A GGUF's Q4_0 / Q8_0 linear weights kept packed on load (models/gguf_packed_linears.h),
// on every GGUF architecture fixture (tools/reference/make_gguf_model_fixtures.py: each
// holds Q4_0 and Q8_0 matrices beside Q4_1 / Q5_0 / Q5_1 / F16 ones; llama's q / k rows are
// rope-permuted, phi3's qkv is fused, qwen3moe has Q8_0 experts and a Q8_0 tied embedding):
//  - which layers are packed: every 2-D Q4_0 / Q8_0 tensor that a Linear reads and a Q8_0
//    embedding table (also when a tied LM head reads it), the weight replaced by qweight
//    uint8 + scales f32, and nothing else (a Q4_0 table, expert stacks and the other block
//    types stay float); the packed model holds fewer bytes;
//  - the packed weights dequantise bit for bit to the float path's weights (rope
//    permutation undone on the packed rows);
//  - logits against the same file loaded with gguf_packed = false (every weight float):
//    f32 activations within 1e-5 of the largest logit (the same products, summed per group
//    in another order); int8 activations (the default) within kInt8ActivationTolerance.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "relative_diff.h"
#include "ingot/formats/ggml_quantize.h"
#include "ingot/formats/gguf.h"
#include "ingot/formats/gguf_tensor.h"
#include "ingot/formats/gguf_writer.h"
#include "ingot/formats/npy.h"
#include "ingot/models/gguf_config.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/models/model.h"
#include "ingot/nn/layers.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;

// Int8 activations (the default: llama.cpp's Q8_0 rounding of each 32-block of x) differ
// from f32 arithmetic by at most sum |W| * s_x / 2 per output and layer. Through these
// random-weight fixtures (hidden 64, one or two layers) that measured 0.15% (gemma3) to
// 0.83% (qwen3moe) of the largest logit; 2% leaves room for another CPU's kernel table
// without hiding a wrong layout (a wrong nibble order or scale is tens of percent).
constexpr double kInt8ActivationTolerance = 0.02;

using ingot::testing::relative_diff;

int64_t state_bytes(PretrainedModel& m) {
  int64_t n = 0;
  for (const auto& [name, t] : m.state_dict()) n += int64_t(t.nbytes());
  return n;
}

// Checks that `packed` holds exactly the 2-D Q4_0 / Q8_0 tensors of `path` packed (linear
// weights, and a Q8_0 embedding table) and that they dequantise bit for bit to `plain`'s
// float weights (the same file loaded with gguf_packed = false).
void expect_packed_as_the_file_says(const std::string& path, PretrainedModel& packed,
                                    PretrainedModel& plain) {
  const formats::GgufFile f = formats::GgufFile::open(path);
  const GgufArchitecture arch = gguf_architecture(f);
  std::map<std::string, int> expected;  // module -> bits
  for (const formats::GgufTensorInfo& info : f.tensors()) {
    const bool q4 = info.type == formats::GgmlType::Q4_0, q8 = info.type == formats::GgmlType::Q8_0;
    if ((q8 || (q4 && info.name != "token_embd.weight")) && info.ne.size() == 2) {
      const std::string hf = gguf_to_hf_name(info.name, arch.gguf_name, f.path());
      expected[hf.substr(0, hf.size() - 7)] = q4 ? 4 : 8;  // without ".weight"
    }
  }
  ASSERT_FALSE(expected.empty());
  std::map<std::string, int> got;
  packed.visit([&](const std::string& fqn, nn::Module& m) {
    if (auto* l = dynamic_cast<nn::Linear*>(&m); l && l->is_packed()) {
      got[fqn] = l->packed_bits();
      EXPECT_EQ(l->packed_group(), 32);
      EXPECT_THROW(l->weight(), NotSupportedError);
    }
    if (auto* e = dynamic_cast<nn::Embedding*>(&m); e && e->is_packed()) {
      got[fqn] = 8;
      EXPECT_EQ(e->packed_group(), 32);
      EXPECT_THROW(e->weight(), NotSupportedError);
    }
  });
  EXPECT_EQ(got, expected);
  const auto ps = packed.state_dict(), fs = plain.state_dict();
  for (const auto& [m, bits] : expected) {
    SCOPED_TRACE(m);
    EXPECT_FALSE(ps.contains(m + ".weight"));
    const Tensor& q = ps.at(m + ".qweight");
    const Tensor& s = ps.at(m + ".scales");
    EXPECT_EQ(q.dtype(), DType::U8);
    EXPECT_EQ(s.dtype(), DType::F32);
    const Tensor deq = dequantize_weight(q, s, Tensor(), bits, 32);
    const Tensor want = contiguous(to(fs.at(m + ".weight"), DType::F32));
    ASSERT_EQ(deq.sizes(), want.sizes());
    EXPECT_EQ(std::memcmp(deq.raw_data(), want.raw_data(), want.nbytes()), 0);
  }
  EXPECT_LT(state_bytes(packed), state_bytes(plain));
}

class GgufPackedModel : public ::testing::TestWithParam<std::string> {
 protected:
  std::string dir() const { return fixture_path("gguf/models/" + GetParam()); }
  std::string file() const { return dir() + "/" + GetParam() + ".gguf"; }
  Tensor logits(PretrainedModel& m) const {
    ModelInputs in;
    in.input_ids = formats::load_npy(dir() + "/input_ids.npy");
    return m.forward(in).logits;
  }
};

TEST_P(GgufPackedModel, Q4_0AndQ8_0LinearsArePackedAndDequantiseToTheFloatWeights) {
  auto packed = from_pretrained(file());
  LoadOptions float_options;
  float_options.gguf_packed = false;
  auto plain = from_pretrained(file(), float_options);
  expect_packed_as_the_file_says(file(), *packed, *plain);
}

TEST_P(GgufPackedModel, LogitsMatchTheFloatPath) {
  auto packed = from_pretrained(file());
  LoadOptions float_options;
  float_options.gguf_packed = false;
  auto plain = from_pretrained(file(), float_options);
  const Tensor want = logits(*plain);  // no packed layer: the activation mode does not apply
  {
    const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
    const double d = relative_diff(logits(*packed), want);
    EXPECT_LE(d, 1e-5) << "f32 activations";
  }
  ASSERT_EQ(cpu::quant_activations(), cpu::QuantActivations::Int8);  // the default
  const double d = relative_diff(logits(*packed), want);
  std::printf("[ gguf packed ] %s: int8 activations, max |diff| / max |logit| = %.4g\n",
              GetParam().c_str(), d);
  EXPECT_LE(d, kInt8ActivationTolerance);
}

TEST_P(GgufPackedModel, Bf16ComputeRunsThePackedLayers) {
  LoadOptions bf16;
  bf16.compute_dtype = DType::BF16;
  auto packed = from_pretrained(file(), bf16);
  bf16.gguf_packed = false;
  auto plain = from_pretrained(file(), bf16);
  const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  const Tensor got = logits(*packed), want = logits(*plain);
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_LE(relative_diff(got, want), 0.02);  // bf16 rounding of the activations
}

// The tiny qwen3 (tied: no output.weight) with its token_embd rewritten as Q8_0, as
// llama.cpp's quantised files of small tied models hold it: the table is gathered packed
// (quantized_embedding) and the tied LM head multiplies with the same packed rows.
TEST(GgufPackedModelTied, AQ8_0TableServesTheLookupAndTheTiedHead) {
  const std::string src = fixture_path("gguf/models/qwen3/qwen3.gguf");
  const formats::GgufFile f = formats::GgufFile::open(src);
  formats::GgufWriter w;
  for (const auto& [key, value] : f.header().metadata) w.set(key, value);
  for (const formats::GgufTensorInfo& info : f.tensors()) {
    const uint8_t* data = f.tensor_data(info);
    if (info.name == "token_embd.weight") {
      const Tensor table = contiguous(to(formats::gguf_tensor(f, info), DType::F32));
      w.add_tensor(info.name, info.shape(), formats::GgmlType::Q8_0,
                   formats::quantize_rows(formats::GgmlType::Q8_0, table.data<float>(),
                                          table.size(0), table.size(1), nullptr));
    } else {
      w.add_tensor(info.name, info.shape(), info.type,
                   std::vector<uint8_t>(data, data + info.nbytes));
    }
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ingot_gguf_tied_q8_" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  w.write(path);
  auto packed = from_pretrained(path);
  LoadOptions float_options;
  float_options.gguf_packed = false;
  auto plain = from_pretrained(path, float_options);
  expect_packed_as_the_file_says(path, *packed, *plain);
  EXPECT_FALSE(packed->state_dict().contains("lm_head.weight"));  // tied
  ModelInputs in;
  in.input_ids = formats::load_npy(fixture_path("gguf/models/qwen3/input_ids.npy"));
  const Tensor want = plain->forward(in).logits;
  {
    const cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
    EXPECT_LE(relative_diff(packed->forward(in).logits, want), 1e-5);
  }
  EXPECT_LE(relative_diff(packed->forward(in).logits, want), kInt8ActivationTolerance);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Architectures, GgufPackedModel,
                         ::testing::Values("llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3",
                                           "stablelm", "qwen3moe"));

}  // namespace
}  // namespace ingot::models
