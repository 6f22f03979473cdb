#include "ingot/models/gguf_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "ingot/core/error.h"

namespace ingot::models {
namespace {

using formats::GgufFile;
using nlohmann::json;

struct ArchEntry {
  const char* gguf_name;
  const char* hf_class;
  const char* model_type;
  // llama.cpp runs it with its "normal" (interleaved-pair) rope, so its converter
  // permuted the rows of attn_q / attn_k; NEOX-rope models (qwen2, qwen3) are stored as is.
  bool unpermute_qk;
  // The metadata key (after "{arch}.") whose value is head_dim, or nullptr for
  // hidden_size / num_attention_heads (transformers maps rope.dimension_count for llama
  // and mistral; for qwen3 ingot reads attention.key_length, which llama.cpp writes).
  const char* head_dim_key;
  // Writing (`ingot export --format gguf`): the general.architecture llama.cpp's converter
  // writes for hf_class (Mistral is a "llama" to llama.cpp), nullptr while ingot cannot
  // write the architecture.
  const char* written_as;
};

const std::vector<ArchEntry>& arch_table() {
  static const std::vector<ArchEntry> t = {
      {"llama", "LlamaForCausalLM", "llama", true, "rope.dimension_count", "llama"},
      {"mistral", "MistralForCausalLM", "mistral", true, "rope.dimension_count", "llama"},
      {"qwen2", "Qwen2ForCausalLM", "qwen2", false, nullptr, "qwen2"},
      {"qwen3", "Qwen3ForCausalLM", "qwen3", false, "attention.key_length", "qwen3"},
      {"phi3", "Phi3ForCausalLM", "phi3", false, nullptr, nullptr},
      {"gemma2", "Gemma2ForCausalLM", "gemma2", false, "attention.key_length", nullptr},
      {"gemma3", "Gemma3ForCausalLM", "gemma3_text", false, "attention.key_length", nullptr},
      {"qwen3moe", "Qwen3MoeForCausalLM", "qwen3_moe", false, "attention.key_length", nullptr},
      {"stablelm", "StableLmForCausalLM", "stablelm", false, nullptr, nullptr},
  };
  return t;
}

const ArchEntry& find_arch(const GgufFile& f) {
  const std::string arch = f.get_string("general.architecture");
  std::vector<std::string> names;
  for (const ArchEntry& e : arch_table()) {
    if (arch == e.gguf_name) {
      // transformers: a llama file named "mistral" is a Mistral model.
      if (arch == "llama" && f.get_optional_string("general.name") == "mistral")
        return arch_table()[1];
      return e;
    }
    names.push_back(e.gguf_name);
  }
  INGOT_THROW(NotSupportedError,
              "[gguf] '{}': architecture '{}' cannot be loaded from a GGUF by ingot (supported: "
              "{}); convert the model to a Hugging Face folder instead",
              f.path(), arch, fmt::join(names, ", "));
}

// The config's sizes checked against the tensors the file holds, before a model is built
// from them: a corrupt count (a block_count of 2^31, a huge head_dim or expert count)
// would otherwise make ingot build that many modules or buffers. Each tensor's size is
// already bounded by the file's, so sizes that agree with the tensors are bounded too.
void check_against_tensors(const GgufFile& f, const json& c) {
  const std::string a = f.get_string("general.architecture") + ".";
  auto mismatch = [&](const std::string& what, int64_t config, int64_t tensors) {
    INGOT_CHECK(config == tensors, IoError,
                "[gguf] '{}': {} is {} in the metadata but {} in the tensors (corrupt file?)",
                f.path(), what, config, tensors);
  };
  int64_t blocks = 0;
  for (const auto& t : f.tensors()) {
    if (!t.name.starts_with("blk.")) continue;
    const size_t dot = t.name.find('.', 4);
    int64_t index = 0;
    for (size_t i = 4; i < dot && i < t.name.size(); ++i) {
      if (t.name[i] < '0' || t.name[i] > '9' || index > (int64_t(1) << 40)) break;
      index = index * 10 + (t.name[i] - '0');
    }
    blocks = std::max(blocks, index + 1);
  }
  mismatch("'" + a + "block_count'", c["num_hidden_layers"].get<int64_t>(), blocks);
  if (f.contains("token_embd.weight")) {
    const std::vector<int64_t> ne = f.tensor_info("token_embd.weight").ne;
    INGOT_CHECK(ne.size() == 2, IoError, "[gguf] '{}': tensor 'token_embd.weight' is not 2-D",
                f.path());
    mismatch("'" + a + "embedding_length'", c["hidden_size"].get<int64_t>(), ne[0]);
    mismatch("the vocabulary size", c["vocab_size"].get<int64_t>(), ne[1]);
  }
  const int64_t heads = c["num_attention_heads"].get<int64_t>();
  const int64_t head_dim = c.contains("head_dim")
                               ? c["head_dim"].get<int64_t>()
                               : c["hidden_size"].get<int64_t>() / std::max<int64_t>(heads, 1);
  if (f.contains("blk.0.attn_q.weight")) {
    const std::vector<int64_t> ne = f.tensor_info("blk.0.attn_q.weight").ne;
    INGOT_CHECK(
        ne.size() == 2 && heads > 0 && head_dim > 0 && heads <= ne[1] && heads * head_dim == ne[1],
        IoError,
        "[gguf] '{}': {} heads of {} dims do not match 'blk.0.attn_q.weight' of {} rows "
        "(corrupt file?)",
        f.path(), heads, head_dim, ne.size() == 2 ? ne[1] : -1);
  }
  if (f.contains("blk.0.attn_k.weight")) {
    const std::vector<int64_t> ne = f.tensor_info("blk.0.attn_k.weight").ne;
    const int64_t kv = c["num_key_value_heads"].get<int64_t>();
    INGOT_CHECK(ne.size() == 2 && kv > 0 && kv <= heads && kv * head_dim == ne[1], IoError,
                "[gguf] '{}': {} key/value heads of {} dims do not match 'blk.0.attn_k.weight' "
                "of {} rows (corrupt file?)",
                f.path(), kv, head_dim, ne.size() == 2 ? ne[1] : -1);
  }
  if (c.contains("num_experts") && f.contains("blk.0.ffn_gate_exps.weight")) {
    const std::vector<int64_t> ne = f.tensor_info("blk.0.ffn_gate_exps.weight").ne;
    mismatch("'" + a + "expert_count'", c["num_experts"].get<int64_t>(),
             ne.size() == 3 ? ne[2] : -1);
  }
}

}  // namespace

GgufArchitecture gguf_architecture_for_writing(const std::string& hf_class) {
  std::vector<std::string> names;
  for (const ArchEntry& e : arch_table()) {
    if (!e.written_as) continue;
    if (hf_class == e.hf_class) {
      // The permutation follows the architecture llama.cpp runs it as.
      const ArchEntry& as = *std::find_if(arch_table().begin(), arch_table().end(),
                                          [&](const ArchEntry& a) {
                                            return std::string(a.gguf_name) == e.written_as;
                                          });
      return {e.written_as, e.hf_class, as.unpermute_qk};
    }
    names.push_back(e.hf_class);
  }
  INGOT_THROW(NotSupportedError,
              "[gguf] architecture '{}' cannot be written as a GGUF by ingot yet (supported: {})",
              hf_class, fmt::join(names, ", "));
}

GgufArchitecture gguf_architecture(const GgufFile& file) {
  const ArchEntry& e = find_arch(file);
  return {file.get_string("general.architecture"), e.hf_class, e.unpermute_qk};
}

std::string gguf_config_json(const GgufFile& f) {
  const ArchEntry& e = find_arch(f);
  const std::string a = f.get_string("general.architecture") + ".";
  json c;
  c["architectures"] = {e.hf_class};
  c["model_type"] = e.model_type;
  c["num_hidden_layers"] = f.get_int(a + "block_count");
  c["hidden_size"] = f.get_int(a + "embedding_length");
  c["intermediate_size"] = f.get_int(a + "feed_forward_length");
  c["num_attention_heads"] = f.get_int(a + "attention.head_count");
  c["num_key_value_heads"] =
      f.get_optional_int(a + "attention.head_count_kv").value_or(c["num_attention_heads"]);
  if (auto v = f.get_optional_int(a + "context_length")) c["max_position_embeddings"] = *v;
  if (auto v = f.get_optional_double(a + "attention.layer_norm_rms_epsilon"))
    c["rms_norm_eps"] = *v;
  if (auto v = f.get_optional_double(a + "rope.freq_base")) c["rope_theta"] = *v;
  if (e.head_dim_key) {
    if (auto v = f.get_optional_int(a + e.head_dim_key)) c["head_dim"] = *v;
  }
  if (auto v = f.get_optional_int(a + "attention.sliding_window")) c["sliding_window"] = *v;
  // vocab_size: the key when present, else the tokenizer's token count (transformers).
  if (auto v = f.get_optional_int(a + "vocab_size")) {
    c["vocab_size"] = *v;
  } else if (const formats::GgufValue* tokens = f.find("tokenizer.ggml.tokens");
             tokens && tokens->is_array()) {
    c["vocab_size"] = tokens->array().size();
  } else {
    c["vocab_size"] = f.tensor_info("token_embd.weight").shape()[0];
  }
  c["tie_word_embeddings"] = !f.contains("output.weight");
  // Gemma 2 / 3: what transformers' configs default to where llama.cpp's metadata is
  // silent (it leaves these keys unread; the values are those of the released models).
  const std::string arch = f.get_string("general.architecture");
  if (arch == "gemma2" || arch == "gemma3") {
    if (!c.contains("sliding_window")) c["sliding_window"] = 4096;
    if (auto v = f.get_optional_double(a + "final_logit_softcapping")) {
      c["final_logit_softcapping"] = *v;
    } else if (arch == "gemma2") {
      c["final_logit_softcapping"] = 30.0;
    }
  }
  if (arch == "gemma2")
    c["attn_logit_softcapping"] =
        f.get_optional_double(a + "attn_logit_softcapping").value_or(50.0);
  if (arch == "gemma3") c["rope_local_base_freq"] = 10000.0;
  if (arch == "stablelm") {
    // transformers reads these from the tensors present; the partial rotary factor from
    // the rope's dimension count (its config's default 0.25 when absent).
    if (auto v = f.get_optional_double(a + "attention.layer_norm_epsilon"))
      c["layer_norm_eps"] = *v;
    bool qkv_bias = false, ffn_norm = false, qk_norm = false;
    for (const auto& t : f.tensors()) {
      qkv_bias |= t.name.ends_with("attn_q.bias") || t.name.ends_with("attn_k.bias") ||
                  t.name.ends_with("attn_v.bias");
      ffn_norm |= t.name.find(".ffn_norm.") != std::string::npos;
      qk_norm |= t.name.find(".attn_q_norm.") != std::string::npos;
    }
    INGOT_CHECK(!qk_norm, NotSupportedError,
                "[gguf] '{}': stablelm with per-head q/k LayerNorms (attn_q_norm) is not "
                "supported from a GGUF yet",
                f.path());
    c["use_qkv_bias"] = qkv_bias;
    c["use_parallel_residual"] = !ffn_norm;
    const double head_dim =
        double(c["hidden_size"].get<int64_t>()) / double(c["num_attention_heads"].get<int64_t>());
    const auto rope_dims = f.get_optional_int(a + "rope.dimension_count");
    c["partial_rotary_factor"] = rope_dims ? double(*rope_dims) / head_dim : 0.25;
  }
  if (arch == "qwen3moe") {
    // Every layer sparse (llama.cpp's qwen3moe has no dense layers), routing weights
    // renormalised over the chosen experts (transformers' GGUF default, llama.cpp's graph).
    c["num_experts"] = f.get_int(a + "expert_count");
    c["num_experts_per_tok"] = f.get_int(a + "expert_used_count");
    c["moe_intermediate_size"] = f.get_optional_int(a + "expert_feed_forward_length").value_or(768);
    c["norm_topk_prob"] = true;
    c["decoder_sparse_step"] = 1;
  }
  const std::pair<const char*, const char*> ids[] = {
      {"tokenizer.ggml.bos_token_id", "bos_token_id"},
      {"tokenizer.ggml.eos_token_id", "eos_token_id"},
      {"tokenizer.ggml.padding_token_id", "pad_token_id"},
      {"tokenizer.ggml.unknown_token_id", "unk_token_id"}};
  for (const auto& [key, name] : ids) {
    if (auto v = f.get_optional_int(key)) c[name] = *v;
  }
  if (auto name = f.get_optional_string("general.name")) c["_model_name_or_path"] = *name;
  check_against_tensors(f, c);
  return c.dump(2);
}

}  // namespace ingot::models
