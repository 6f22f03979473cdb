// Loading a Qwen3-0.6B-shaped checkpoint: time and memory of from_pretrained.
//
// The checkpoint (config.json + a 1.2 GB bf16 model.safetensors, sparse on disk) is
// written once to the temp dir. With compute dtype bf16 the weights are views of the
// mapped file, so resident memory grows by far less than the file: the counters report
// the peak RSS growth during the load next to the file size.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "ingot/models/model.h"

namespace {

namespace fs = std::filesystem;

// Qwen3-0.6B's shapes.
constexpr int64_t kVocab = 151936, kHidden = 1024, kLayers = 28, kHeads = 16, kKvHeads = 8,
                  kHeadDim = 128, kInter = 3072;

// Writes the folder once; returns its path and the weight file size.
std::pair<std::string, size_t> synthetic_checkpoint() {
  static const auto result = [] {
    fs::path dir = fs::temp_directory_path() / "ingot_qwen3_0.6b_shaped";
    fs::create_directories(dir);
    nlohmann::json config = {
        {"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"},
        {"vocab_size", kVocab}, {"hidden_size", kHidden}, {"intermediate_size", kInter},
        {"num_hidden_layers", kLayers}, {"num_attention_heads", kHeads},
        {"num_key_value_heads", kKvHeads}, {"head_dim", kHeadDim},
        {"max_position_embeddings", 40960}, {"rms_norm_eps", 1e-6},
        {"rope_theta", 1000000.0}, {"tie_word_embeddings", true}, {"torch_dtype", "bfloat16"}};
    std::ofstream(dir / "config.json") << config.dump(2);
    // The header lists every tensor; the data section is left as a hole (zeros).
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"model.embed_tokens.weight", {kVocab, kHidden}}, {"model.norm.weight", {kHidden}}};
    for (int64_t l = 0; l < kLayers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      shapes.push_back({p + "input_layernorm.weight", {kHidden}});
      shapes.push_back({p + "post_attention_layernorm.weight", {kHidden}});
      shapes.push_back({p + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}});
      shapes.push_back({p + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}});
      shapes.push_back({p + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}});
      shapes.push_back({p + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}});
      shapes.push_back({p + "self_attn.q_norm.weight", {kHeadDim}});
      shapes.push_back({p + "self_attn.k_norm.weight", {kHeadDim}});
      shapes.push_back({p + "mlp.gate_proj.weight", {kInter, kHidden}});
      shapes.push_back({p + "mlp.up_proj.weight", {kInter, kHidden}});
      shapes.push_back({p + "mlp.down_proj.weight", {kHidden, kInter}});
    }
    nlohmann::json header = nlohmann::json::object();
    size_t offset = 0;
    for (const auto& [name, shape] : shapes) {
      size_t bytes = 2;
      for (int64_t s : shape) bytes *= size_t(s);
      header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
      offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    const std::string path = (dir / "model.safetensors").string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    uint64_t n = text.size();
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << text;
    f.close();
    fs::resize_file(path, 8 + text.size() + offset);
    return std::make_pair(dir.string(), size_t(8 + text.size() + offset));
  }();
  return result;
}

// A /proc/self/status field in kB.
int64_t status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

// Resets the peak-RSS mark (VmHWM) to the current RSS.
void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

void BM_FromPretrainedQwen3_0_6B_Bf16(benchmark::State& state) {
  auto [dir, file_bytes] = synthetic_checkpoint();
  int64_t peak_growth_kb = 0;
  for (auto _ : state) {
    const int64_t before = status_kb("VmRSS:");
    reset_peak_rss();
    auto model = ingot::models::from_pretrained(dir, {ingot::DType::BF16});
    peak_growth_kb = std::max(peak_growth_kb, status_kb("VmHWM:") - before);
    benchmark::DoNotOptimize(model);
  }
  state.counters["file_MB"] = double(file_bytes) / 1e6;
  state.counters["peak_rss_growth_MB"] = double(peak_growth_kb) * 1024 / 1e6;
  state.counters["rss_growth_fraction_of_file"] = double(peak_growth_kb) * 1024 / double(file_bytes);
}
BENCHMARK(BM_FromPretrainedQwen3_0_6B_Bf16)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
