// Quality of the export quantizer (issue 17), measured on ingot's runtime:
//  - every decoder fixture, per scheme, with f32 and with int8 activations: logits error vs
//    the float program (max |dq - f| / max |f|), top-1 agreement over all positions,
//    greedy-token agreement over 16 decode
//    steps (tokens equal to the float run's, up to the first difference);
//  - the trained demo LM: perplexity on its held-out tokens (the end of Persuasion,
//    tests/fixtures/demo_lm/heldout_tokens.npy from tools/quant/make_heldout_tokens.py),
//    asserted within +1% of float32 for int8 and +5% for int4 (group 32), with float
//    activations and with int8 activations (cpu::QuantActivations::Int8).
// The figures are printed (and recorded as test properties) for the docs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "../decoder_fixtures.h"
#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::exporters {
namespace {

struct Named {
  const char* name;
  QuantizerConfig q;
};

std::vector<Named> schemes() {
  QuantizerConfig i8, i4, i4z;
  i8.scheme = "int8";
  i4.scheme = "int4";
  i4.group_size = 32;
  i4z = i4;
  i4z.zero_point = true;
  return {{"int8", i8}, {"int4_g32", i4}, {"int4_g32_zp", i4z}};
}

Tensor logits_of(models::PretrainedModel& model, const QuantizerConfig& q) {
  NativeExportConfig c;
  c.quantizer = q;
  auto a = NativeExporter().export_(model, c);
  runtime::ProgramModule m(a->program);
  return contiguous(to(m.run(a->program.example_inputs)[0], DType::F32));  // [b, s, vocab]
}

std::vector<int64_t> greedy(models::PretrainedModel& model, const QuantizerConfig& q) {
  NativeExportConfig c;
  c.quantizer = q;
  GenerationExportOptions g;
  g.max_cache_len = 32;
  runtime::Generator gen((NativeExporter().export_for_generation(model, c, g)).package());
  runtime::GenerateOptions o;
  o.max_new_tokens = 16;
  return gen.generate({1, 5, 9, 2}, o);
}

TEST(QuantizeQuality, DecoderFixtures) {
  std::printf("%-28s %-15s %10s %8s %8s\n", "fixture", "scheme", "rel_err", "top1", "greedy");
  for (const std::string& name : testing::decoder_fixtures()) {
    auto model = models::from_pretrained(testing::fixture_path("models/" + name));
    const Tensor ref = logits_of(*model, {});
    const std::vector<int64_t> ref_tokens = greedy(*model, {});
    const int64_t vocab = ref.size(2), rows = ref.numel() / vocab;
    // f32 activations (the exact path) and int8 ones (the default: "_a8").
    for (const bool a8 : {false, true})
      for (const Named& s : schemes()) {
        cpu::ScopedQuantActivations mode(a8 ? cpu::QuantActivations::Int8
                                            : cpu::QuantActivations::Float);
        const std::string scheme = std::string(s.name) + (a8 ? "_a8" : "");
        const Tensor got = logits_of(*model, s.q);
        ASSERT_EQ(got.sizes(), ref.sizes()) << name;
        const float* a = ref.data<float>();
        const float* b = got.data<float>();
        double max_err = 0, max_ref = 0;
        int64_t agree = 0;
        for (int64_t r = 0; r < rows; ++r) {
          int64_t ia = 0, ib = 0;
          for (int64_t v = 0; v < vocab; ++v) {
            const int64_t i = r * vocab + v;
            max_err = std::max(max_err, double(std::fabs(a[i] - b[i])));
            max_ref = std::max(max_ref, double(std::fabs(a[i])));
            if (a[i] > a[r * vocab + ia]) ia = v;
            if (b[i] > b[r * vocab + ib]) ib = v;
          }
          agree += ia == ib;
        }
        const std::vector<int64_t> tokens = greedy(*model, s.q);
        size_t same = 0;
        while (same < tokens.size() && same < ref_tokens.size() && tokens[same] == ref_tokens[same])
          ++same;
        const double rel = max_err / std::max(max_ref, 1e-12), top1 = double(agree) / double(rows);
        std::printf("%-28s %-15s %10.4f %8.3f %5zu/%zu\n", name.c_str(), scheme.c_str(), rel, top1,
                    same, ref_tokens.size());
        RecordProperty(name + "." + scheme + ".rel_err", std::to_string(rel));
        // Sanity bounds for random-weight toy fixtures (hidden 32..64, near-tied logits;
        // the MoE routers flip experts on small changes): the quantised program computes
        // the float function to within the scheme's rounding. Greedy agreement is reported
        // only. The real quality bound is the demo LM's perplexity below. int8 activations
        // add their own rounding (per 32-block, as llama.cpp's Q8_0 x Q8_0): on int8 weights
        // the largest rel_err went 0.040 -> 0.058 (gemma2) and the lowest top-1 0.875 ->
        // 0.8125 (olmo2: 13 of 16 rows), hence their bounds 0.08 / 0.8; int4's error is
        // dominated by the weights (its bounds hold in both modes).
        const bool moe = name == "mixtral" || name == "qwen3_moe";
        if (s.q.bits() == 8) {
          EXPECT_LT(rel, moe ? 0.5 : a8 ? 0.08 : 0.05) << name << " " << scheme;
          EXPECT_GE(top1, a8 ? 0.8 : 0.85) << name << " " << scheme;
        } else {
          EXPECT_LT(rel, 0.9) << name << " " << scheme;
          EXPECT_GE(top1, 0.5) << name << " " << scheme;
        }
      }
  }
}

// Mean next-token negative log-likelihood of `ids` over consecutive windows of `window`
// tokens, computed by the (possibly quantised) exported forward program.
double heldout_nll(models::PretrainedModel& model, const QuantizerConfig& q, const Tensor& ids,
                   int64_t window, int64_t windows) {
  models::ModelInputs in;
  in.input_ids = Tensor::empty({1, window}, DType::I64);
  NativeExportConfig c;
  c.quantizer = q;
  auto a = NativeExporter().export_(model, in, c);
  runtime::ProgramModule m(a->program);
  EXPECT_EQ(a->program.example_inputs.size(), 1u);
  double nll = 0;
  int64_t count = 0;
  for (int64_t w = 0; w < windows; ++w) {
    Tensor x = Tensor::empty({1, window}, DType::I64);
    for (int64_t t = 0; t < window; ++t) x.data<int64_t>()[t] = ids.data<int64_t>()[w * window + t];
    Tensor lp = contiguous(log_softmax(to(m.run({x})[0], DType::F32), -1));  // [1, window, V]
    const int64_t vocab = lp.size(2);
    for (int64_t t = 0; t + 1 < window; ++t) {
      nll -= lp.data<float>()[t * vocab + x.data<int64_t>()[t + 1]];
      ++count;
    }
  }
  return nll / double(count);
}

TEST(QuantizeQuality, DemoLmHeldOutPerplexity) {
  const std::string root = std::getenv("INGOT_SOURCE_DIR")
                               ? std::getenv("INGOT_SOURCE_DIR")
                               : std::string(INGOT_FIXTURES_DIR) + "/../..";
  auto model = models::from_pretrained(root + "/assets/demo-lm");
  const Tensor ids = contiguous(
      to(formats::load_npy(testing::fixture_path("demo_lm/heldout_tokens.npy")), DType::I64));
  constexpr int64_t kWindow = 512;  // the training script's evaluation windows
  const int64_t windows = std::min<int64_t>(8, ids.numel() / kWindow);
  const double f32 = std::exp(heldout_nll(*model, {}, ids, kWindow, windows));
  std::printf("demo LM held-out perplexity (%lld tokens): float32 %.3f\n",
              (long long)(windows * (kWindow - 1)), f32);
  // Both activation modes of the quantised kernels: exact float activations, and int8
  // activations per block of 32 (cpu::QuantActivations::Int8, llama.cpp's Q8_0 scheme).
  for (const auto& [act, act_name] : {std::pair{cpu::QuantActivations::Float, ""},
                                      std::pair{cpu::QuantActivations::Int8, "_a8"}}) {
    cpu::ScopedQuantActivations mode(act);
    for (const Named& s : schemes()) {
      const std::string name = std::string(s.name) + act_name;
      const double ppl = std::exp(heldout_nll(*model, s.q, ids, kWindow, windows));
      std::printf("  %-15s %.3f (%+.2f%%)\n", name.c_str(), ppl, 100.0 * (ppl / f32 - 1.0));
      RecordProperty("demo_lm.ppl." + name, std::to_string(ppl));
      EXPECT_LE(ppl, f32 * (s.q.bits() == 8 ? 1.01 : 1.05)) << name;
    }
  }
}

}  // namespace
}  // namespace ingot::exporters
