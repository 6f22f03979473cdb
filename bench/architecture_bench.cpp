// Export time and greedy decoding speed of two later architectures on synthetic bf16
// checkpoints (weights are zeros mapped from a sparse file, so the numbers measure the
// compute and memory traffic of the shapes, not the text):
//  * Gemma-3-1B-shaped: 26 layers, hidden 1152, 4 heads / 1 kv head of 256, 5 sliding
//    (window 512) to 1 full layer, local and global rotary, sandwich norms, 262k vocab;
//  * Qwen3-30B-A3B-shaped but small: its layer shapes (hidden 2048, 32 / 4 heads of 128,
//    128 experts of 768, 8 per token) with 4 layers instead of 48.
// Counters: export_s (export_for_generation, multi-token decode graph), prefill / decode
// tokens per second of the runtime Generator (16-token prompt, 16 new tokens).
#include <benchmark/benchmark.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "bench_model.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/runtime/generator.h"

namespace {

using ingot::bench::TensorShapes;

std::pair<std::string, size_t> gemma3_1b() {
  const int64_t vocab = 262144, hidden = 1152, inter = 6912, layers = 26, heads = 4, kv = 1,
                hd = 256;
  nlohmann::json layer_types = nlohmann::json::array();
  for (int64_t l = 0; l < layers; ++l) layer_types.push_back((l + 1) % 6 ? "sliding_attention" : "full_attention");
  nlohmann::json config = {
      {"architectures", {"Gemma3ForCausalLM"}}, {"model_type", "gemma3_text"},
      {"vocab_size", vocab}, {"hidden_size", hidden}, {"intermediate_size", inter},
      {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"num_key_value_heads", kv},
      {"head_dim", hd}, {"max_position_embeddings", 32768}, {"rms_norm_eps", 1e-6},
      {"hidden_activation", "gelu_pytorch_tanh"}, {"query_pre_attn_scalar", 256},
      {"sliding_window", 512}, {"layer_types", layer_types}, {"tie_word_embeddings", true},
      {"rope_parameters", {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 1e6}}},
                           {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e4}}}}}};
  TensorShapes shapes = {{"model.embed_tokens.weight", {vocab, hidden}}, {"model.norm.weight", {hidden}}};
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* norm : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                             "post_feedforward_layernorm"}) {
      shapes.push_back({p + norm + ".weight", {hidden}});
    }
    shapes.push_back({p + "self_attn.q_proj.weight", {heads * hd, hidden}});
    shapes.push_back({p + "self_attn.k_proj.weight", {kv * hd, hidden}});
    shapes.push_back({p + "self_attn.v_proj.weight", {kv * hd, hidden}});
    shapes.push_back({p + "self_attn.o_proj.weight", {hidden, heads * hd}});
    shapes.push_back({p + "self_attn.q_norm.weight", {hd}});
    shapes.push_back({p + "self_attn.k_norm.weight", {hd}});
    shapes.push_back({p + "mlp.gate_proj.weight", {inter, hidden}});
    shapes.push_back({p + "mlp.up_proj.weight", {inter, hidden}});
    shapes.push_back({p + "mlp.down_proj.weight", {hidden, inter}});
  }
  return ingot::bench::write_synthetic_checkpoint("ingot_gemma3_1b_shaped", config.dump(2), shapes);
}

std::pair<std::string, size_t> qwen3_30b_a3b_small() {
  const int64_t vocab = 151936, hidden = 2048, layers = 4, heads = 32, kv = 4, hd = 128,
                experts = 128, moe_inter = 768;
  nlohmann::json config = {
      {"architectures", {"Qwen3MoeForCausalLM"}}, {"model_type", "qwen3_moe"},
      {"vocab_size", vocab}, {"hidden_size", hidden}, {"intermediate_size", 6144},
      {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"num_key_value_heads", kv},
      {"head_dim", hd}, {"max_position_embeddings", 40960}, {"rms_norm_eps", 1e-6},
      {"rope_theta", 1e6}, {"num_experts", experts}, {"num_experts_per_tok", 8},
      {"moe_intermediate_size", moe_inter}, {"norm_topk_prob", true},
      {"tie_word_embeddings", false}};
  TensorShapes shapes = {{"model.embed_tokens.weight", {vocab, hidden}},
                         {"model.norm.weight", {hidden}}, {"lm_head.weight", {vocab, hidden}}};
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    shapes.push_back({p + "input_layernorm.weight", {hidden}});
    shapes.push_back({p + "post_attention_layernorm.weight", {hidden}});
    shapes.push_back({p + "self_attn.q_proj.weight", {heads * hd, hidden}});
    shapes.push_back({p + "self_attn.k_proj.weight", {kv * hd, hidden}});
    shapes.push_back({p + "self_attn.v_proj.weight", {kv * hd, hidden}});
    shapes.push_back({p + "self_attn.o_proj.weight", {hidden, heads * hd}});
    shapes.push_back({p + "self_attn.q_norm.weight", {hd}});
    shapes.push_back({p + "self_attn.k_norm.weight", {hd}});
    shapes.push_back({p + "mlp.gate.weight", {experts, hidden}});
    for (int64_t e = 0; e < experts; ++e) {
      const std::string q = p + "mlp.experts." + std::to_string(e) + ".";
      shapes.push_back({q + "gate_proj.weight", {moe_inter, hidden}});
      shapes.push_back({q + "up_proj.weight", {moe_inter, hidden}});
      shapes.push_back({q + "down_proj.weight", {hidden, moe_inter}});
    }
  }
  return ingot::bench::write_synthetic_checkpoint("ingot_qwen3_30b_a3b_shaped_4_layers",
                                                  config.dump(2), shapes);
}

void BM_ExportAndDecode(benchmark::State& state, std::pair<std::string, size_t> (*make)()) {
  auto [dir, file_bytes] = make();
  auto model = ingot::models::from_pretrained(dir, {ingot::DType::BF16});
  ingot::exporters::GenerationExportOptions o;
  o.max_cache_len = 64;
  o.multi_token_decode = true;
  const auto start = std::chrono::steady_clock::now();
  ingot::runtime::Generator gen((ingot::exporters::NativeExporter().export_for_generation(
                                     *model, ingot::exporters::NativeExportConfig(), o))
                                    .package(),
                                std::nullopt, ingot::runtime::RuntimeOptions::from_environment());
  const double export_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<int64_t> prompt(16);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int64_t(i * 7 + 1);
  ingot::runtime::GenerateOptions go;
  go.max_new_tokens = 16;
  ingot::runtime::GenerationStats stats;
  gen.generate(prompt, go, &stats);  // warm-up: faults the mapped weights in
  for (auto _ : state) gen.generate(prompt, go, &stats);
  state.counters["export_s"] = export_s;
  state.counters["weights_file_MB"] = double(file_bytes) / 1e6;
  state.counters["prefill_tok_s"] = stats.prefill_tokens_per_second();
  state.counters["decode_tok_s"] = stats.decode_tokens_per_second();
}
BENCHMARK_CAPTURE(BM_ExportAndDecode, gemma3_1b_shaped_bf16, gemma3_1b)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_ExportAndDecode, qwen3_30b_a3b_shaped_4_layers_bf16, qwen3_30b_a3b_small)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
