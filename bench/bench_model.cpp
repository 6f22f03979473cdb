#include "bench_model.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "ingot/core/error.h"

namespace ingot::bench {

namespace fs = std::filesystem;

namespace {
// Qwen3-0.6B's shapes.
constexpr int64_t kVocab = 151936, kHidden = 1024, kLayers = 28, kHeads = 16, kKvHeads = 8,
                  kHeadDim = 128, kInter = 3072;

// Qwen3-0.6B's config.json.
nlohmann::json qwen3_config() {
  return {{"architectures", {"Qwen3ForCausalLM"}},
          {"model_type", "qwen3"},
          {"vocab_size", kVocab},
          {"hidden_size", kHidden},
          {"intermediate_size", kInter},
          {"num_hidden_layers", kLayers},
          {"num_attention_heads", kHeads},
          {"num_key_value_heads", kKvHeads},
          {"head_dim", kHeadDim},
          {"max_position_embeddings", 40960},
          {"rms_norm_eps", 1e-6},
          {"rope_theta", 1000000.0},
          {"tie_word_embeddings", true},
          {"torch_dtype", "bfloat16"}};
}

// Qwen3-0.6B's tensors (tied embeddings: no lm_head.weight).
TensorShapes qwen3_shapes() {
  TensorShapes shapes = {{"model.embed_tokens.weight", {kVocab, kHidden}},
                         {"model.norm.weight", {kHidden}}};
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
  return shapes;
}

// Writes the safetensors preamble (header length, JSON header listing `shapes` as bf16
// tensors in order, padded to 8 bytes) to `f`; returns {preamble bytes, data bytes}.
std::pair<size_t, size_t> write_bf16_header(std::ofstream& f, const TensorShapes& shapes) {
  nlohmann::json header = nlohmann::json::object();
  size_t offset = 0;
  for (const auto& [tensor, shape] : shapes) {
    size_t bytes = 2;
    for (int64_t s : shape) bytes *= size_t(s);
    header[tensor] = {
        {"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t n = text.size();
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << text;
  return {8 + text.size(), offset};
}

}  // namespace

std::pair<std::string, size_t> synthetic_qwen3_checkpoint() {
  static const auto result =
      write_synthetic_checkpoint("ingot_qwen3_0.6b_shaped", qwen3_config().dump(2), qwen3_shapes());
  return result;
}

std::pair<std::string, size_t> write_synthetic_checkpoint(const std::string& name,
                                                          const std::string& config_json,
                                                          const TensorShapes& shapes) {
  fs::path dir = fs::temp_directory_path() / name;
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << config_json;
  // The header lists every tensor; the data section is left as a hole (zeros).
  const std::string path = (dir / "model.safetensors").string();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  const auto [preamble, data] = write_bf16_header(f, shapes);
  f.close();
  fs::resize_file(path, preamble + data);
  return {dir.string(), preamble + data};
}

size_t write_random_qwen3_checkpoint(const std::string& folder, uint64_t seed) {
  fs::path dir(folder);
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << qwen3_config().dump(2);
  const TensorShapes shapes = qwen3_shapes();
  const std::string path = (dir / "model.safetensors").string();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  const auto [preamble, data] = write_bf16_header(f, shapes);
  // splitmix64: a fast, seedable stream; each value is uniform in [-1, 1).
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto uniform = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return float(int64_t(z >> 11) - (int64_t(1) << 52)) * 0x1p-52f;
  };
  std::vector<uint16_t> chunk;
  for (const auto& [name, shape] : shapes) {
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    // Norm weights near 1, matrices with standard deviation 0.02 (uniform, a = 0.02 * sqrt 3).
    const bool norm = shape.size() == 1;
    chunk.resize(size_t(numel));
    for (auto& v : chunk) {
      const float x = norm ? 1.0f + 0.1f * uniform() : 0.0346410f * uniform();
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      v = uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);  // round to nearest even
    }
    f.write(reinterpret_cast<const char*>(chunk.data()), std::streamsize(chunk.size() * 2));
  }
  INGOT_CHECK(f.good(), ingot::IoError, "[bench] cannot write '{}'", path);
  return preamble + data;
}

int64_t status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::strlen(field) + 1));
  }
  return -1;
}

void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

}  // namespace ingot::bench
