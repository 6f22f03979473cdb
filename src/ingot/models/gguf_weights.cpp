#include "ingot/models/gguf_weights.h"

#include <cstring>
#include <regex>

#include "ingot/formats/gguf_tensor.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

// blk.N.<name> -> model.layers.N.<hf name>.
const std::map<std::string, std::string>& block_names() {
  static const std::map<std::string, std::string> m = {
      {"attn_norm", "input_layernorm"},    {"ffn_norm", "post_attention_layernorm"},
      {"attn_q", "self_attn.q_proj"},      {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},      {"attn_output", "self_attn.o_proj"},
      {"attn_q_norm", "self_attn.q_norm"}, {"attn_k_norm", "self_attn.k_norm"},
      {"ffn_gate", "mlp.gate_proj"},       {"ffn_up", "mlp.up_proj"},
      {"ffn_down", "mlp.down_proj"},       {"ffn_gate_inp", "mlp.gate"},
  };
  return m;
}

// llama.cpp stores Gemma's RMSNorm(1 + w) weights as 1 + w; transformers' w is one less.
Tensor minus_one(const Tensor& t) {
  Tensor f = t.dtype() == DType::F32 ? contiguous(t) : to(t, DType::F32);
  Tensor out = Tensor::empty(f.sizes(), DType::F32);
  const float* src = f.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < f.numel(); ++i) dst[i] = src[i] - 1.0f;
  return out;
}

// The top-level names, llama.cpp's -> transformers' ("" = skipped when reading).
const std::map<std::string, std::string>& top_names() {
  static const std::map<std::string, std::string> top = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output_norm.bias", "model.norm.bias"},
      {"output.weight", "lm_head.weight"},
      {"rope_freqs.weight", ""},
  };
  return top;
}

// The transformers suffix of block part `part` ("attn_q" -> "self_attn.q_proj") in
// architecture `arch`; "" when it has none. Both directions read this.
std::string block_part_hf(const std::string& part, const std::string& arch) {
  auto it = block_names().find(part);
  std::string hf = it == block_names().end() ? "" : it->second;
  // Phi-3 keeps transformers' fused projections: attn_qkv = qkv_proj, and its ffn_up
  // holds [gate | up] (gate_up_proj).
  if (arch == "phi3" && part == "attn_qkv") hf = "self_attn.qkv_proj";
  if (arch == "phi3" && part == "ffn_up") hf = "mlp.gate_up_proj";
  // Gemma 2 / 3 sandwich blocks: norms after attention and around the MLP.
  if (arch == "gemma2" || arch == "gemma3") {
    if (part == "post_attention_norm") hf = "post_attention_layernorm";
    if (part == "ffn_norm") hf = "pre_feedforward_layernorm";
    if (part == "post_ffw_norm") hf = "post_feedforward_layernorm";
  }
  return hf;
}

// Every block part block_part_hf knows, in any architecture.
std::vector<std::string> block_parts() {
  std::vector<std::string> parts = {"attn_qkv", "post_attention_norm", "post_ffw_norm"};
  for (const auto& [part, hf] : block_names()) parts.push_back(part);
  return parts;
}

}  // namespace

std::string gguf_to_hf_name(const std::string& name, const std::string& arch,
                            const std::string& path) {
  if (auto it = top_names().find(name); it != top_names().end()) return it->second;
  static const std::regex block(R"(blk\.(\d+)\.([a-z_]+)\.(weight|bias))");
  std::smatch m;
  if (std::regex_match(name, m, block)) {
    const std::string hf = block_part_hf(m[2].str(), arch);
    if (!hf.empty()) return "model.layers." + m[1].str() + "." + hf + "." + m[3].str();
  }
  INGOT_CHECK(!(arch == "phi3" && name.starts_with("rope_factors_")), NotSupportedError,
              "[gguf] '{}': tensor '{}': Phi-3 with LongRoPE factors is not supported from a "
              "GGUF yet",
              path, name);
  INGOT_THROW(IoError, "[gguf] '{}': tensor '{}' has no Hugging Face name ingot knows", path, name);
}

std::string hf_to_gguf_name(const std::string& hf_name, const std::string& arch) {
  for (const auto& [gguf, hf] : top_names()) {
    if (!hf.empty() && hf == hf_name) return gguf;
  }
  static const std::regex layer(R"(model\.layers\.(\d+)\.(.+)\.(weight|bias))");
  std::smatch m;
  if (std::regex_match(hf_name, m, layer)) {
    for (const std::string& part : block_parts()) {
      if (block_part_hf(part, arch) == m[2].str())
        return "blk." + m[1].str() + "." + part + "." + m[3].str();
    }
  }
  return "";
}

namespace {

// Moves q/k rows between Hugging Face's rotate-half order and llama.cpp's interleaved one:
// within each head of 2d rows, HF row j * d + i is GGUF row 2i + j. `to_gguf`: HF -> GGUF.
Tensor move_rope_rows(const Tensor& t, int64_t n_head, bool to_gguf) {
  INGOT_CHECK(t.dim() >= 1 && t.size(0) > 0 && n_head > 0 && t.size(0) % (2 * n_head) == 0,
              ShapeError, "[gguf] cannot {} the rope permutation of a {} tensor over {} heads",
              to_gguf ? "apply" : "undo", t.shape_string(), n_head);
  Tensor src = contiguous(t);
  const int64_t rows = src.size(0);
  const int64_t d = rows / n_head / 2;
  const size_t row_bytes = src.nbytes() / size_t(rows);
  Tensor out = Tensor::empty(src.sizes(), src.dtype());
  const auto* in = static_cast<const uint8_t*>(src.raw_data());
  auto* o = static_cast<uint8_t*>(out.raw_data());
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t i = 0; i < d; ++i) {
        const int64_t hf = h * 2 * d + j * d + i, gguf = h * 2 * d + 2 * i + j;
        if (to_gguf)
          std::memcpy(o + gguf * row_bytes, in + hf * row_bytes, row_bytes);
        else
          std::memcpy(o + hf * row_bytes, in + gguf * row_bytes, row_bytes);
      }
    }
  }
  return out;
}

}  // namespace

Tensor permute_rope_rows(const Tensor& t, int64_t n_head) {
  return move_rope_rows(t, n_head, /*to_gguf=*/true);
}

Tensor unpermute_rope_rows(const Tensor& t, int64_t n_head) {
  return move_rope_rows(t, n_head, /*to_gguf=*/false);
}

GgufWeights gguf_weights(const formats::GgufFile& file, const GgufArchitecture& arch,
                         const MayPack& may_pack) {
  const std::string a = arch.gguf_name + ".";
  const int64_t n_head = file.get_int(a + "attention.head_count");
  const int64_t n_kv_head = file.get_optional_int(a + "attention.head_count_kv").value_or(n_head);
  // The rope permutation of q / k rows, where the architecture has one (rows move whole,
  // so a packed weight's qweight and scales move alike).
  auto unpermuted = [&](const std::string& hf, Tensor t) {
    if (!arch.unpermute_qk) return t;
    if (hf.find(".self_attn.q_proj.") != std::string::npos) return unpermute_rope_rows(t, n_head);
    if (hf.find(".self_attn.k_proj.") != std::string::npos)
      return unpermute_rope_rows(t, n_kv_head);
    return t;
  };
  GgufWeights out;
  static const std::regex experts(R"(blk\.(\d+)\.ffn_(gate|up|down)_exps\.weight)");
  for (const formats::GgufTensorInfo& info : file.tensors()) {
    std::smatch m;
    if (std::regex_match(info.name, m, experts)) {
      // [E, out, in]: one [out, in] projection per expert (views of one dequantised copy).
      Tensor all = formats::gguf_tensor(file, info);
      INGOT_CHECK(all.dim() == 3, IoError,
                  "[gguf] '{}': tensor '{}' should be [experts, out, in], is {}", file.path(),
                  info.name, all.shape_string());
      for (int64_t e = 0; e < all.size(0); ++e) {
        out.state.emplace(
            fmt::format("model.layers.{}.mlp.experts.{}.{}_proj.weight", m[1].str(), e, m[2].str()),
            select(all, 0, e));
      }
      continue;
    }
    const std::string hf = gguf_to_hf_name(info.name, arch.gguf_name, file.path());
    if (hf.empty()) continue;
    if (may_pack && formats::gguf_keeps_packed(info) && hf.ends_with(".weight") &&
        may_pack(hf, *formats::gguf_packed_layout(info.type))) {
      formats::GgufPackedTensor p = formats::gguf_packed_tensor(file, info);
      const std::string base = hf.substr(0, hf.size() - std::string(".weight").size());
      out.state.emplace(base + ".qweight", unpermuted(hf, p.qweight));
      out.state.emplace(base + ".scales", unpermuted(hf, p.scales));
      out.packed.emplace(base, p.layout);
      continue;
    }
    Tensor t = unpermuted(hf, formats::gguf_tensor(file, info));
    if ((arch.gguf_name == "gemma2" || arch.gguf_name == "gemma3") &&
        info.name.ends_with("norm.weight"))
      t = minus_one(t);
    out.state.emplace(hf, std::move(t));
  }
  return out;
}

std::map<std::string, Tensor> gguf_state_dict(const formats::GgufFile& file,
                                              const GgufArchitecture& arch) {
  return gguf_weights(file, arch, nullptr).state;
}

}  // namespace ingot::models
