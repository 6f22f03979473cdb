#include "ingot/ops/cpu/attention.h"

#include <cfloat>
#include <limits>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/attention_kernels.h"
#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

// Row-major index of a broadcast operand: `idx` indexes the full shape `full`; `s` is
// the operand's shape (right-aligned, size-1 dims broadcast).
int64_t broadcast_index(const IntShape& s, const IntShape& full, const IntShape& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < s.size(); ++d) {
    const size_t fd = full.size() - s.size() + d;
    off = off * s[d] + (s[d] == 1 ? 0 : idx[fd]);
  }
  return off;
}

// Naive attention in double over rank-4 q [B, Hq, L, E], k/v [Bk, Hkv, S, E|Ev]
// (Bk = B or 1): explicit score matrix, softmax, weighted sum. Fully masked rows -> 0.
std::vector<double> reference_sdpa(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& mask, bool causal, std::optional<double> scale) {
  const IntShape qs = q.sizes(), ks = k.sizes(), vs = v.sizes();
  const int64_t B = qs[0], Hq = qs[1], L = qs[2], E = qs[3], Hkv = ks[1], S = ks[2], Ev = vs[3];
  const int64_t group = Hq / Hkv;
  const auto qv = values(q), kv = values(k), vv = values(v);
  const std::vector<double> mv = mask.defined() ? values(mask) : std::vector<double>{};
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(E));
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> out;
  std::vector<double> scores(static_cast<size_t>(S));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t bk = ks[0] == 1 ? 0 : b;
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < L; ++i) {
        double mx = ninf;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e) {
            dot += qv[size_t(((b * Hq + h) * L + i) * E + e)] *
                   kv[size_t(((bk * Hkv + hk) * S + j) * E + e)];
          }
          double s = dot * sc;
          if (causal && j > i) s = ninf;
          if (mask.defined()) {
            const double m = mv[size_t(broadcast_index(mask.sizes(), {B, Hq, L, S}, {b, h, i, j}))];
            if (mask.dtype() == DType::Bool)
              s = m != 0 ? s : ninf;
            else
              s += m;
          }
          scores[size_t(j)] = s;
          mx = std::max(mx, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          scores[size_t(j)] = mx == ninf ? 0.0 : std::exp(scores[size_t(j)] - mx);
          sum += scores[size_t(j)];
        }
        for (int64_t c = 0; c < Ev; ++c) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) {
            o += scores[size_t(j)] * vv[size_t(((bk * Hkv + hk) * S + j) * Ev + c)];
          }
          out.push_back(sum == 0 ? 0.0 : o / sum);
        }
      }
    }
  }
  return out;
}

enum class MaskKind { None, Bool, Float };
enum class Layout { Contiguous, SeqMajor, Strided };  // SeqMajor: [b, s, h, d] transposed

struct AttnCase {
  int64_t b, hq, hkv, l, s, e, ev;
  bool causal = false;
  MaskKind mask = MaskKind::None;
  IntShape mask_shape = {};  // empty: full [b, hq, l, s]
  std::optional<double> scale = std::nullopt;
};

const AttnCase kCases[] = {
    {1, 4, 4, 1, 37, 16, 16},                         // MHA decode, S not a block multiple
    {2, 8, 2, 1, 130, 32, 32},                        // GQA decode
    {1, 6, 1, 5, 70, 24, 24},                         // MQA, L > 1
    {2, 4, 4, 9, 1, 8, 8},                            // S = 1
    {1, 4, 2, 70, 70, 16, 16, true},                  // causal prefill, several query blocks
    {1, 2, 2, 5, 3, 8, 8, true},                      // causal with L > S
    {2, 4, 2, 6, 65, 20, 12, false, MaskKind::Bool},  // E != Ev, tails everywhere
    {2, 4, 4, 7, 33, 16, 16, false, MaskKind::Float},
    {2, 4, 4, 7, 33, 16, 16, false, MaskKind::Bool, {7, 33}},         // [L, S] broadcast
    {2, 4, 2, 3, 40, 16, 16, false, MaskKind::Float, {2, 1, 1, 40}},  // key padding
    {1, 4, 4, 4, 20, 16, 16, false, MaskKind::Float, {1, 4, 1, 1}},   // per-head bias
    {1, 3, 3, 4, 10, 8, 8, false, MaskKind::None, {}, 0.37},          // custom scale
    {1, 4, 1, 1, 1500, 32, 32},                         // decode long enough to split keys
    {1, 4, 1, 1, 1500, 32, 32, true},                   // decode + causal: only key 0 visible
    {1, 4, 2, 2, 1100, 32, 32, false, MaskKind::Bool},  // split keys with a mask
    {1, 16, 8, 1, 300, 128, 128},                       // Qwen3-0.6B decode, S % 8 != 0
    {1, 4, 2, 3, 101, 72, 44, false, MaskKind::Bool},   // E, Ev past a 32-column strip
};

Tensor make_input(const IntShape& shape, DType t, std::mt19937& rng, Layout layout) {
  Tensor x = testing::random_tensor(shape, t, rng, -1.5, 1.5);
  if (layout == Layout::Strided) return testing::noncontiguous_like(x);
  if (layout == Layout::SeqMajor) {
    // Stored [b, s, h, d] (as a linear projection writes it), viewed [b, h, s, d].
    Tensor stored = Tensor::empty({shape[0], shape[2], shape[1], shape[3]}, t);
    Tensor view = transpose(stored, 1, 2);
    copy_(view, x);
    return view;
  }
  return x;
}

Tensor make_mask(const AttnCase& c, DType qdtype, std::mt19937& rng) {
  if (c.mask == MaskKind::None) return Tensor();
  IntShape shape = c.mask_shape.empty() ? IntShape{c.b, c.hq, c.l, c.s} : c.mask_shape;
  if (c.mask == MaskKind::Bool) {
    // Mostly true, and never an all-false row unless the test wants one.
    std::bernoulli_distribution keep(0.8);
    return testing::make_tensor(shape, DType::Bool, [&](int64_t i) {
      return (i % shape.back()) == 0 || keep(rng) ? 1.0 : 0.0;
    });
  }
  return testing::random_tensor(shape, qdtype, rng, -2, 1);
}

double attn_tolerance(DType t) {
  return t == DType::F32 ? 2e-5 : t == DType::F64 ? 1e-10 : 2 * testing::default_atol(t);
}

// Each kernel set the CPU has, forced (Auto is the widest); a set the CPU lacks is
// skipped rather than silently run as Generic.
class AttentionIsaTest : public ::testing::TestWithParam<cpu::AttentionIsa> {
 protected:
  void SetUp() override {
    const cpu::AttentionIsa isa = GetParam();
    if (isa != cpu::AttentionIsa::Auto && cpu::resolved_attention_isa(isa) != isa)
      GTEST_SKIP() << "this CPU lacks the kernel set";
    cpu::set_attention_isa(isa);
  }
  void TearDown() override { cpu::set_attention_isa(cpu::AttentionIsa::Auto); }
};

TEST_P(AttentionIsaTest, MatchesNaiveReference) {
  std::mt19937 rng(21);
  for (DType t : testing::kFloatDTypes) {
    for (const AttnCase& c : kCases) {
      for (Layout layout : {Layout::Contiguous, Layout::SeqMajor, Layout::Strided}) {
        Tensor q = make_input({c.b, c.hq, c.l, c.e}, t, rng, layout);
        Tensor k = make_input({c.b, c.hkv, c.s, c.e}, t, rng, layout);
        Tensor v = make_input({c.b, c.hkv, c.s, c.ev}, t, rng, layout);
        Tensor mask = make_mask(c, t, rng);
        const bool gqa = c.hq != c.hkv;
        Tensor out = scaled_dot_product_attention(
            q, k, v, mask.defined() ? std::optional<Tensor>(mask) : std::nullopt, c.causal, c.scale,
            gqa);
        const std::string what =
            fmt::format("{} b{} hq{} hkv{} l{} s{} e{} ev{} causal{} mask{} layout{}", t, c.b, c.hq,
                        c.hkv, c.l, c.s, c.e, c.ev, c.causal, int(c.mask), int(layout));
        ASSERT_EQ(out.sizes(), (IntShape{c.b, c.hq, c.l, c.ev})) << what;
        ASSERT_EQ(out.dtype(), t);
        const double tol = attn_tolerance(t);
        testing::expect_close(out, reference_sdpa(q, k, v, mask, c.causal, c.scale), tol, tol,
                              what);
      }
    }
  }
}

TEST_P(AttentionIsaTest, FullyMaskedRowsAreZero) {
  std::mt19937 rng(4);
  for (DType t : {DType::F32, DType::BF16}) {
    Tensor q = testing::random_tensor({1, 2, 3, 16}, t, rng);
    Tensor k = testing::random_tensor({1, 2, 80, 16}, t, rng);
    Tensor v = testing::random_tensor({1, 2, 80, 16}, t, rng);
    // Row 1 sees nothing (bool), row 2 sees only key 79.
    Tensor bmask = testing::make_tensor(
        {3, 80}, DType::Bool, [](int64_t i) { return i < 80 ? 1.0 : (i == 239 ? 1.0 : 0.0); });
    Tensor out = scaled_dot_product_attention(q, k, v, bmask);
    testing::expect_close(out, reference_sdpa(q, k, v, bmask, false, {}), 2e-2, 2e-2);
    const auto ov = values(out);
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t c = 0; c < 16; ++c) EXPECT_EQ(ov[size_t((h * 3 + 1) * 16 + c)], 0.0);
    }
    // An additive -inf row behaves the same.
    const double ninf = -std::numeric_limits<double>::infinity();
    Tensor fmask =
        testing::make_tensor({3, 80}, t, [&](int64_t i) { return i / 80 == 1 ? ninf : 0.0; });
    Tensor out2 = scaled_dot_product_attention(q, k, v, fmask);
    const auto o2 = values(out2);
    for (int64_t c = 0; c < 16; ++c) EXPECT_EQ(o2[size_t(16 + c)], 0.0);
  }
}

// A static cache's decode step: 256 slots, the mask hiding every slot past the position.
// The kernel computes only the keys up to the last visible one (hidden whole blocks and
// the hidden tail of the block holding the position are never read), so the result is
// bit-equal to attention over the visible prefix alone even with NaN in the hidden slots
// (an unread slot; 0 * NaN would poison the output). Bool and additive masks, one and
// several query rows, f32 and bf16.
TEST_P(AttentionIsaTest, HiddenKeysAreNeverRead) {
  std::mt19937 rng(9);
  std::normal_distribution<double> normal;
  const double ninf = -std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::F32, DType::BF16}) {
    for (int64_t visible : {1, 17, 64, 65, 200}) {
      for (int64_t l : {1, 3}) {
        Tensor q = testing::random_tensor({1, 4, l, 32}, t, rng);
        // [1, 2, 256, 32]: slots past `visible` hold NaN.
        auto cache = [&] {
          return testing::make_tensor({1, 2, 256, 32}, t, [&](int64_t i) {
            return (i / 32) % 256 < visible ? normal(rng) : nan;
          });
        };
        Tensor k = cache(), v = cache();
        Tensor bmask = testing::make_tensor(
            {l, 256}, DType::Bool, [&](int64_t i) { return i % 256 < visible ? 1.0 : 0.0; });
        Tensor fmask = testing::make_tensor(
            {l, 256}, t, [&](int64_t i) { return i % 256 < visible ? 0.0 : ninf; });
        Tensor kp = contiguous(slice(k, 2, 0, visible)), vp = contiguous(slice(v, 2, 0, visible));
        const Tensor prefix =
            scaled_dot_product_attention(q, kp, vp, std::nullopt, false, {}, true);
        for (const Tensor& mask : {bmask, fmask}) {
          const Tensor out = scaled_dot_product_attention(q, k, v, mask, false, {}, true);
          testing::expect_close(out, values(prefix), 0, 0,
                                fmt::format("{} visible {} rows {}", t, visible, l));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, AttentionIsaTest,
                         ::testing::Values(cpu::AttentionIsa::Auto, cpu::AttentionIsa::Generic,
                                           cpu::AttentionIsa::Avx2, cpu::AttentionIsa::Avx512),
                         [](const auto& info) -> std::string {
                           switch (info.param) {
                             case cpu::AttentionIsa::Auto:
                               return "Auto";
                             case cpu::AttentionIsa::Avx2:
                               return "Avx2";
                             case cpu::AttentionIsa::Avx512:
                               return "Avx512";
                             default:
                               return "Generic";
                           }
                         });

// Auto runs the widest kernel set the CPU has: an AVX2-only CPU (AMD Zen 1-3) must not
// fall back to the portable kernels.
TEST(Attention, AutoPicksTheWidestKernelSet) {
  const CpuFeatures& f = cpu_features();
  const cpu::AttentionIsa want = f.avx512_kernels() ? cpu::AttentionIsa::Avx512
                                 : f.avx2_kernels() ? cpu::AttentionIsa::Avx2
                                                    : cpu::AttentionIsa::Generic;
  EXPECT_EQ(cpu::detected_attention_isa(), want);
  EXPECT_EQ(cpu::resolved_attention_isa(cpu::AttentionIsa::Auto), want);
  EXPECT_EQ(cpu::resolved_attention_isa(cpu::AttentionIsa::Generic), cpu::AttentionIsa::Generic);
  EXPECT_EQ(cpu::resolved_attention_isa(cpu::AttentionIsa::Avx2),
            f.avx2_kernels() ? cpu::AttentionIsa::Avx2 : cpu::AttentionIsa::Generic);
}

// The AVX2 online-softmax step against double exp, per element, at every tail length:
// row 0 spreads scores over [-110, 0] under a running max of 0 (normal, subnormal and
// underflowed weights, and -inf entries); row 1 has seen nothing and sees nothing (state
// kept, weights 0, alpha 1); row 2 sees its first keys (alpha = exp(-inf) = 0).
TEST(AttentionKernels, Avx2SoftmaxStepMatchesExp) {
  if (!cpu::attn::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 + FMA + F16C";
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  constexpr int64_t kLd = 80;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> wide(-110.0f, 0.0f), narrow(-5.0f, 5.0f);
  for (int64_t nk = 1; nk <= 72; ++nk) {
    std::vector<float> sc(3 * kLd, 123.0f);  // past nk: must stay untouched
    for (int64_t j = 0; j < nk; ++j) {
      sc[size_t(j)] = j % 11 == 3 ? kNegInf : wide(rng);
      sc[size_t(kLd + j)] = kNegInf;
      sc[size_t(2 * kLd + j)] = narrow(rng);
    }
    const std::vector<float> in = sc;
    float run_max[3] = {0.0f, kNegInf, kNegInf}, run_sum[3] = {2.0f, 0.0f, 0.0f}, alpha[3];
    cpu::attn::softmax_step_avx2(sc.data(), kLd, 3, nk, run_max, run_sum, alpha);
    double mx2 = -INFINITY;
    for (int64_t j = 0; j < nk; ++j) mx2 = std::max(mx2, double(in[size_t(2 * kLd + j)]));
    double sum0 = 0, sum2 = 0;
    for (int64_t j = 0; j < nk; ++j) {
      const double want0 = std::exp(double(in[size_t(j)]));
      // The kernel's argument is the float difference (rounded): the reference's too.
      const double want2 = std::exp(double(in[size_t(2 * kLd + j)] - float(mx2)));
      sum0 += want0, sum2 += want2;
      // 3 float ulps at the weight's magnitude (absolute 2^-149 in the subnormals).
      const double tol0 = 3 * std::ldexp(std::max(want0, double(FLT_MIN)), -23);
      EXPECT_LE(std::abs(sc[size_t(j)] - want0), tol0) << "nk " << nk << " x " << in[size_t(j)];
      EXPECT_LE(std::abs(sc[size_t(2 * kLd + j)] - want2), 3 * std::ldexp(want2, -23));
      EXPECT_EQ(sc[size_t(kLd + j)], 0.0f);
    }
    for (int64_t j = nk; j < kLd; ++j) ASSERT_EQ(sc[size_t(j)], 123.0f) << "nk " << nk;
    EXPECT_EQ(run_max[0], 0.0f);
    EXPECT_EQ(alpha[0], 1.0f);
    EXPECT_NEAR(run_sum[0], 2.0 + sum0, 1e-6 * (2.0 + sum0));
    EXPECT_EQ(run_max[1], kNegInf);
    EXPECT_EQ(run_sum[1], 0.0f);
    EXPECT_EQ(alpha[1], 1.0f);
    EXPECT_EQ(double(run_max[2]), mx2);
    EXPECT_EQ(alpha[2], 0.0f);
    EXPECT_NEAR(run_sum[2], sum2, 1e-6 * sum2);
  }
}

TEST(Attention, LowerRanksAndBroadcastKvHeads) {
  std::mt19937 rng(8);
  Tensor q = testing::random_tensor({4, 5, 8}, DType::F32, rng);  // [H, L, E]
  Tensor k = testing::random_tensor({4, 9, 8}, DType::F32, rng);
  Tensor v = testing::random_tensor({4, 9, 8}, DType::F32, rng);
  Tensor out3 = scaled_dot_product_attention(q, k, v, std::nullopt, true);
  testing::expect_close(
      out3, reference_sdpa(unsqueeze(q, 0), unsqueeze(k, 0), unsqueeze(v, 0), Tensor(), true, {}),
      1e-5, 1e-5, "rank 3");
  Tensor q2 = select(q, 0, 1), k2 = select(k, 0, 1), v2 = select(v, 0, 1);  // [L, E]
  Tensor out2 = scaled_dot_product_attention(q2, k2, v2);
  testing::expect_close(
      out2,
      reference_sdpa(unsqueeze(unsqueeze(q2, 0), 0), unsqueeze(unsqueeze(k2, 0), 0),
                     unsqueeze(unsqueeze(v2, 0), 0), Tensor(), false, {}),
      1e-5, 1e-5, "rank 2");
  // One kv head broadcasts over the query heads without enable_gqa (matmul broadcasting),
  // and a batch of 1 in key/value broadcasts over query's batch.
  Tensor qb = testing::random_tensor({2, 4, 3, 8}, DType::F32, rng);
  Tensor kb = testing::random_tensor({1, 1, 6, 8}, DType::F32, rng);
  Tensor vb = testing::random_tensor({1, 1, 6, 8}, DType::F32, rng);
  testing::expect_close(scaled_dot_product_attention(qb, kb, vb),
                        reference_sdpa(qb, kb, vb, Tensor(), false, {}), 1e-5, 1e-5, "broadcast");
  // Empty key sequence: no visible key, zeros. Empty query: empty output.
  Tensor ke = Tensor::empty({1, 1, 0, 8}, DType::F32);
  EXPECT_EQ(values(scaled_dot_product_attention(qb, ke, ke)),
            std::vector<double>(2 * 4 * 3 * 8, 0.0));
  EXPECT_EQ(scaled_dot_product_attention(Tensor::empty({2, 4, 0, 8}, DType::F32), kb, vb).sizes(),
            (IntShape{2, 4, 0, 8}));
}

// Expects `f` to throw E with every fragment in the message.
template <typename E, typename F>
void expect_error(F f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "expected an error";
  } catch (const E& e) {
    for (const auto& s : fragments)
      EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
}

TEST(Attention, ErrorsNameArgumentsAndShapes) {
  Tensor q = Tensor::empty({1, 8, 4, 16}, DType::F32, true);
  Tensor k = Tensor::empty({1, 3, 6, 16}, DType::F32, true);
  Tensor k8 = Tensor::empty({1, 8, 6, 16}, DType::F32, true);
  Tensor mask = Tensor::empty({4, 6}, DType::Bool, true);
  expect_error<ValueError>([&] { scaled_dot_product_attention(q, k8, k8, mask, true); },
                           {"[scaled_dot_product_attention]", "is_causal", "[4, 6]"});
  expect_error<ShapeError>([&] { scaled_dot_product_attention(q, k, k); },
                           {"enable_gqa", "[1, 8, 4, 16]", "[1, 3, 6, 16]"});
  expect_error<ShapeError>([&] { scaled_dot_product_attention(q, k, k, {}, false, {}, true); },
                           {"multiple", "[1, 3, 6, 16]"});
  expect_error<NotSupportedError>(
      [&] {
        static const OpHandle op("scaled_dot_product_attention");
        op({q, k8, k8, std::nullopt, 0.1});
      },
      {"dropout_p"});
  expect_error<ShapeError>(
      [&] {
        scaled_dot_product_attention(q, Tensor::empty({8, 6, 16}, DType::F32, true), k8);
      },
      {"rank", "[8, 6, 16]"});
  expect_error<ShapeError>(
      [&] { scaled_dot_product_attention(Tensor::empty({16}, DType::F32), k8, k8); }, {"rank"});
  expect_error<ShapeError>(
      [&] {
        scaled_dot_product_attention(q, k8, k8, Tensor::empty({5, 6}, DType::Bool, true));
      },
      {"attn_mask", "[5, 6]", "[1, 8, 4, 6]"});
  expect_error<ShapeError>(
      [&] {
        scaled_dot_product_attention(q, Tensor::empty({1, 8, 6, 12}, DType::F32, true), k8);
      },
      {"head_dim"});
  expect_error<DTypeError>(
      [&] {
        scaled_dot_product_attention(q, Tensor::empty({1, 8, 6, 16}, DType::F16, true), k8);
      },
      {"same dtype"});
  expect_error<DTypeError>(
      [&] {
        scaled_dot_product_attention(q, k8, k8, Tensor::empty({4, 6}, DType::I64, true));
      },
      {"attn_mask", "int64"});
}

}  // namespace
}  // namespace ingot
