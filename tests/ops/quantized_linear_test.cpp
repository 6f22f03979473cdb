// ingot::quantized_linear and its CPU kernels (ops/cpu/quantized_gemv.h): every kernel
// table (scalar, AVX2, AVX-VNNI, AVX-512; streamed rows for small m, dequantised blocks +
// gemm for larger m; f32 and int8 activations) against a double-precision dequantise +
// matmul reference, the op's decomposition
// against its kernel, the packer's rounding bound, 16-bit inputs, and bad layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::random_tensor;
using testing::values;

struct Scheme {
  int bits;
  int64_t group;  // 0: per row (k)
  bool zeros;
};

struct Quantised {
  Tensor q, scales, zeros;
  cpu::PackedWeight w;
  cpu::PackedBuffers buffers;
};

Quantised quantise(const Tensor& w32, const Scheme& s) {
  Quantised out;
  const int64_t n = w32.size(0), k = w32.size(1), g = s.group ? s.group : k;
  out.buffers = cpu::quantize_weight(w32.data<float>(), n, k, s.bits, g, s.zeros);
  out.q = Tensor::from_vector(out.buffers.q, {n, s.bits == 8 ? k : k / 2});
  out.scales = Tensor::from_vector(out.buffers.scales, {n, k / g});
  if (s.zeros) out.zeros = Tensor::from_vector(out.buffers.zeros, {n, k / g});
  out.w = {out.q.data<uint8_t>(),
           out.scales.data<float>(),
           s.zeros ? out.zeros.data<uint8_t>() : nullptr,
           s.bits,
           n,
           k,
           g};
  return out;
}

// The dequantised weight in double, from the packed bytes by the layout's definition.
std::vector<double> dequantised(const Quantised& qw) {
  const cpu::PackedWeight& w = qw.w;
  std::vector<double> out(size_t(w.n * w.k));
  for (int64_t r = 0; r < w.n; ++r) {
    for (int64_t c = 0; c < w.k; ++c) {
      int v = w.bits == 8 ? w.q[r * w.k + c] : (w.q[r * w.k / 2 + c / 2] >> (4 * (c & 1))) & 15;
      const int64_t g = c / w.group;
      out[size_t(r * w.k + c)] = double(v - w.zero(r, g)) * w.scales[r * w.groups() + g];
    }
  }
  return out;
}

// y[m, n] = x · W^T in double.
std::vector<double> reference(const Tensor& x, const std::vector<double>& w, int64_t n, int64_t k) {
  const std::vector<double> xv = values(x);
  const int64_t m = int64_t(xv.size()) / k;
  std::vector<double> y(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t c = 0; c < k; ++c) s += xv[size_t(i * k + c)] * w[size_t(j * k + c)];
      y[size_t(i * n + j)] = s;
    }
  return y;
}

class QuantizedKernels
    : public ::testing::TestWithParam<std::tuple<Scheme, int64_t, cpu::QuantIsa>> {
 protected:
  void TearDown() override { cpu::set_quant_isa(cpu::default_quant_isa()); }
};

// Bound on |y_int8 - y_exact| for output (i, j) with int8 activations: each activation is
// off by at most d / 2 (d = max|x| / 127 of its 32-block), so sum_c |W[j, c]| * d_c / 2.
double int8_activation_bound(const std::vector<double>& x, const std::vector<double>& w, int64_t i,
                             int64_t j, int64_t k) {
  double b = 0;
  for (int64_t c0 = 0; c0 < k; c0 += 32) {
    double amax = 0;
    for (int64_t c = c0; c < std::min(k, c0 + 32); ++c)
      amax = std::max(amax, std::abs(x[size_t(i * k + c)]));
    for (int64_t c = c0; c < std::min(k, c0 + 32); ++c)
      b += std::abs(w[size_t(j * k + c)]) * amax / 127.0 / 2.0;
  }
  return b;
}

// Every path equals the reference: with f32 activations within f32 summation error (q - z
// is exact in f32); with int8 activations (the default) within the activations' rounding
// bound.
TEST_P(QuantizedKernels, MatchDequantiseMatmulReference) {
  const auto [scheme, m, isa] = GetParam();
  if (!cpu::quant_isa_supported(isa))
    GTEST_SKIP() << "this CPU (after INGOT_ISA) cannot run kernel table " << int(isa)
                 << " (the lower tables' cases cover the f32 kernels)";
  cpu::set_quant_isa(isa);
  std::mt19937 rng(7);
  const int64_t n = 70, k = scheme.bits == 8 ? 200 : 256;  // 200: a tail after 16-wide steps
  Tensor w = random_tensor({n, k}, DType::F32, rng, -0.5, 0.5);
  Tensor x = random_tensor({m, k}, DType::F32, rng, -1.0, 1.0);
  Quantised qw = quantise(w, scheme);
  Tensor y = quantized_linear(x, qw.q, qw.scales, qw.zeros, Tensor(), scheme.bits, qw.w.group);
  ASSERT_EQ(y.sizes(), (IntShape{m, n}));
  const std::vector<double> wd = dequantised(qw), ref = reference(x, wd, n, k);
  {
    cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
    Tensor yf = quantized_linear(x, qw.q, qw.scales, qw.zeros, Tensor(), scheme.bits, qw.w.group);
    testing::expect_close(yf, ref, 1e-4, 1e-5, "quantized_linear f32 activations");
  }
  cpu::ScopedQuantActivations int8(cpu::QuantActivations::Int8);
  Tensor y8 = quantized_linear(x, qw.q, qw.scales, qw.zeros, Tensor(), scheme.bits, qw.w.group);
  const std::vector<double> got = values(y8), xv = values(x);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_LE(std::abs(got[size_t(i * n + j)] - ref[size_t(i * n + j)]),
                int8_activation_bound(xv, wd, i, j, k) * 1.0001 + 1e-5)
          << "int8 activations, row " << i << " output " << j;
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, QuantizedKernels,
    ::testing::Combine(::testing::Values(Scheme{8, 0, false}, Scheme{4, 32, false},
                                         Scheme{4, 64, true}, Scheme{4, 128, false},
                                         Scheme{4, 32, true}),
                       ::testing::Values(int64_t(1), int64_t(3), int64_t(9), int64_t(130)),
                       ::testing::Values(cpu::QuantIsa::Scalar, cpu::QuantIsa::Avx2,
                                         cpu::QuantIsa::AvxVnni, cpu::QuantIsa::Avx512)));

// The decomposition (what backends without a kernel run) equals the kernel with f32
// activations (the exact path), with a bias and batch dims.
TEST(QuantizedLinear, DecompositionEqualsKernel) {
  cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  std::mt19937 rng(3);
  for (const Scheme s : {Scheme{8, 0, false}, Scheme{4, 32, true}, Scheme{4, 64, false}}) {
    Tensor w = random_tensor({48, 128}, DType::F32, rng, -0.3, 0.3);
    Tensor x = random_tensor({2, 5, 128}, DType::F32, rng);
    Tensor bias = random_tensor({48}, DType::F32, rng);
    Quantised qw = quantise(w, s);
    const OpDef& op = OpRegistry::instance().get("ingot::quantized_linear");
    std::vector<Value> args = {
        x, qw.q, qw.scales, s.zeros ? Value(qw.zeros) : Value(), bias, int64_t(s.bits), qw.w.group};
    Tensor kernel = quantized_linear(x, qw.q, qw.scales, qw.zeros, bias, s.bits, qw.w.group);
    Tensor decomposed = op.decomposition_fn(normalize_args(op, args))[0];
    ASSERT_EQ(decomposed.sizes(), (IntShape{2, 5, 48}));
    testing::expect_close(kernel, values(decomposed), 1e-4, 1e-5, "decomposition");
  }
}

// Round to nearest: every weight is within half a step of its dequantised value, except
// in symmetric int4, where the group's extreme maps to -8 and a value of the opposite
// sign beyond 7.5 steps clamps to 7 (error at most one step).
TEST(QuantizedLinear, PackerRoundsToNearest) {
  std::mt19937 rng(11);
  Tensor w = random_tensor({16, 128}, DType::F32, rng, -1.0, 1.0);
  for (const Scheme s : {Scheme{8, 0, false}, Scheme{4, 32, false}, Scheme{4, 32, true}}) {
    Quantised qw = quantise(w, s);
    const std::vector<double> d = dequantised(qw), orig = values(w);
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 128; ++c) {
        const double step = qw.w.scales[r * qw.w.groups() + c / qw.w.group];
        const double w0 = orig[size_t(r * 128 + c)];
        const bool clamped = s.bits == 4 && !s.zeros && w0 / step > 7.5;
        EXPECT_LE(std::abs(d[size_t(r * 128 + c)] - w0),
                  (clamped ? 1.0 : 0.5) * std::abs(step) + 1e-6)
            << "bits " << s.bits << " row " << r << " col " << c;
      }
  }
}

// bf16 activations compute in f32 and round once; the output keeps the input dtype.
TEST(QuantizedLinear, Bfloat16Input) {
  cpu::ScopedQuantActivations exact(cpu::QuantActivations::Float);
  std::mt19937 rng(5);
  Tensor w = random_tensor({32, 64}, DType::F32, rng, -0.5, 0.5);
  Tensor x = random_tensor({3, 64}, DType::F32, rng);
  Quantised qw = quantise(w, {4, 32, false});
  Tensor y16 = quantized_linear(to(x, DType::BF16), qw.q, qw.scales, Tensor(), Tensor(), 4, 32);
  EXPECT_EQ(y16.dtype(), DType::BF16);
  testing::expect_close(y16, reference(to(to(x, DType::BF16), DType::F32), dequantised(qw), 32, 64),
                        2e-2, 1e-2, "bf16");
}

TEST(QuantizedLinear, BadLayoutsAreClearErrors) {
  std::mt19937 rng(1);
  Tensor x = random_tensor({2, 64}, DType::F32, rng);
  Tensor q = Tensor::empty({8, 32}, DType::U8, true), s = Tensor::empty({8, 2}, DType::F32, true);
  try {
    quantized_linear(x, q, s, Tensor(), Tensor(), 4, 48);
    FAIL() << "group 48 accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("group_size 48"), std::string::npos) << e.what();
  }
  try {
    quantized_linear(random_tensor({2, 60}, DType::F32, rng), q, s, Tensor(), Tensor(), 4, 32);
    FAIL() << "in_features mismatch accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("in_features 64"), std::string::npos) << e.what();
  }
  EXPECT_THROW(quantized_linear(x, to(q, DType::I8), s, Tensor(), Tensor(), 4, 32), DTypeError);
}

// ingot::quantized_linear2 / 3 (what runtime/passes/fuse_sibling_linears writes): each output is
// bit for bit its own quantized_linear's, for row counts that split unevenly over the
// threads, both activation modes, every ISA level the CPU has, decode and prefill m.
TEST(QuantizedLinearSiblings, EachOutputEqualsItsOwnLinear) {
  const OpHandle linear2("ingot::quantized_linear2"), linear3("ingot::quantized_linear3");
  std::mt19937 rng(11);
  for (const Scheme& scheme : {Scheme{8, 0, false}, Scheme{4, 32, false}, Scheme{4, 64, true}}) {
    const int64_t k = 256;
    std::vector<Quantised> w;
    for (int64_t n : {70, 33, 40})
      w.push_back(quantise(random_tensor({n, k}, DType::F32, rng, -0.5, 0.5), scheme));
    const int64_t bits = scheme.bits, group = scheme.group ? scheme.group : k;
    const auto zeros = [&](size_t j) { return scheme.zeros ? Value(w[j].zeros) : Value(); };
    for (cpu::QuantIsa isa : {cpu::QuantIsa::Scalar, cpu::QuantIsa::Avx2, cpu::QuantIsa::AvxVnni,
                              cpu::QuantIsa::Avx512}) {
      if (cpu::set_quant_isa(isa) != isa) continue;  // not on this CPU
      for (cpu::QuantActivations mode :
           {cpu::QuantActivations::Float, cpu::QuantActivations::Int8}) {
        cpu::ScopedQuantActivations scoped(mode);
        for (int64_t m : {1, 3, 9}) {
          const Tensor x = random_tensor({1, m, k}, DType::F32, rng, -1.0, 1.0);
          const std::vector<Tensor> three =
              linear3({x, w[0].q, w[0].scales, zeros(0), w[1].q, w[1].scales, zeros(1), w[2].q,
                       w[2].scales, zeros(2), bits, group});
          const std::vector<Tensor> two = linear2(
              {x, w[0].q, w[0].scales, zeros(0), w[1].q, w[1].scales, zeros(1), bits, group});
          ASSERT_EQ(three.size(), 3u);
          ASSERT_EQ(two.size(), 2u);
          for (size_t j = 0; j < 3; ++j) {
            const Tensor own =
                quantized_linear(x, w[j].q, w[j].scales, w[j].zeros, Tensor(), bits, group);
            ASSERT_EQ(three[j].sizes(), (IntShape{1, m, w[j].w.n}));
            EXPECT_EQ(values(three[j]), values(own))
                << "bits " << bits << " isa " << int(isa) << " int8 act "
                << (mode == cpu::QuantActivations::Int8) << " m " << m << " output " << j;
            if (j < 2) EXPECT_EQ(values(two[j]), values(own)) << "quantized_linear2 output " << j;
          }
        }
      }
    }
  }
  cpu::set_quant_isa(cpu::default_quant_isa());  // back to the start table
}

// Weights that do not share a layout are a clear error naming the op.
TEST(QuantizedLinearSiblings, MismatchedWeightsAreClearErrors) {
  const OpHandle linear2("ingot::quantized_linear2");
  std::mt19937 rng(12);
  const Quantised a = quantise(random_tensor({8, 64}, DType::F32, rng, -1, 1), {4, 32, true});
  const Quantised b = quantise(random_tensor({8, 64}, DType::F32, rng, -1, 1), {4, 32, false});
  const Quantised c = quantise(random_tensor({8, 128}, DType::F32, rng, -1, 1), {4, 32, true});
  const Tensor x = random_tensor({1, 64}, DType::F32, rng, -1, 1);
  EXPECT_THROW(
      linear2({x, a.q, a.scales, a.zeros, b.q, b.scales, Value(), int64_t(4), int64_t(32)}),
      ValueError);
  EXPECT_THROW(
      linear2({x, a.q, a.scales, a.zeros, c.q, c.scales, c.zeros, int64_t(4), int64_t(32)}),
      ShapeError);
}

}  // namespace
}  // namespace ingot
