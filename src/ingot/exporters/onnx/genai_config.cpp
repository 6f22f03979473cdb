#include "ingot/exporters/onnx/genai_config.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "ingot/exporters/past_present_names.h"
#include "ingot/models/config.h"
#include "ingot/models/generation_config.h"

namespace ingot::exporters::onnx {

namespace {

// The decoder-only model types ONNX Runtime GenAI 0.18 runs through its decoder-only
// pipeline with one past/present tensor per layer for keys and one for values (its
// model-type table). A Hugging Face model_type outside them is refused here rather than
// at GenAI's load; gpt2 is left out because GenAI's gpt2 type drives a combined K/V cache.
constexpr std::array<std::string_view, 15> kGenaiDecoderTypes{
    "ernie4_5", "gemma", "gemma2", "gemma3_text", "granite", "internlm2", "llama",  "mistral",
    "nemotron", "olmo",  "phi",    "phi3",        "qwen2",   "qwen3",     "smollm3"};

}  // namespace

std::string genai_config_json(const models::PretrainedModel& model, const GenaiConfigOptions& o) {
  const std::string config_path = (std::filesystem::path(o.model_folder) / "config.json").string();
  const models::ConfigReader config = models::ConfigReader::from_file(config_path);
  const std::string type = config.get_string("model_type");
  INGOT_CHECK(std::find(kGenaiDecoderTypes.begin(), kGenaiDecoderTypes.end(), type) !=
                  kGenaiDecoderTypes.end(),
              NotSupportedError,
              "[onnx genai] {}: model_type '{}' is not a decoder type ONNX Runtime GenAI runs "
              "(it knows {})",
              config_path, type, fmt::join(kGenaiDecoderTypes, ", "));
  const std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), NotSupportedError, "[onnx genai] {} has no KV cache",
              model.architecture());
  const models::GenerationConfig gen = models::GenerationConfig::from_folder(o.model_folder);
  INGOT_CHECK(gen.eos_token_ids && !gen.eos_token_ids->empty(), ValueError,
              "[onnx genai] {}: no eos_token_id in generation_config.json or config.json; "
              "ONNX Runtime GenAI needs one to stop",
              o.model_folder);
  const std::vector<int64_t>& eos = *gen.eos_token_ids;

  nlohmann::ordered_json decoder;
  decoder["session_options"] = {{"log_id", "onnxruntime-genai"},
                                {"provider_options", nlohmann::ordered_json::array()}};
  decoder["filename"] = o.decoder_file;
  decoder["head_size"] = spec->head_dim;
  decoder["hidden_size"] = config.get_int("hidden_size");
  decoder["inputs"] = {{"input_ids", "input_ids"},
                       {"attention_mask", "attention_mask"},
                       {"position_ids", "position_ids"},
                       {"past_key_names", kPastKeyPattern},
                       {"past_value_names", kPastValuePattern}};
  decoder["outputs"] = {{"logits", "logits"},
                        {"present_key_names", kPresentKeyPattern},
                        {"present_value_names", kPresentValuePattern}};
  decoder["num_attention_heads"] = config.get_int("num_attention_heads");
  decoder["num_hidden_layers"] = spec->num_layers;
  decoder["num_key_value_heads"] = spec->num_kv_heads;

  nlohmann::ordered_json m;
  m["bos_token_id"] = gen.bos_token_id.value_or(eos.front());
  m["context_length"] = o.context_length;
  m["decoder"] = decoder;
  m["eos_token_id"] =
      eos.size() == 1 ? nlohmann::ordered_json(eos.front()) : nlohmann::ordered_json(eos);
  m["pad_token_id"] = gen.pad_token_id.value_or(eos.front());
  m["type"] = type;
  m["vocab_size"] = config.get_int("vocab_size");

  // transformers' defaults where generation_config.json is silent.
  nlohmann::ordered_json search;
  search["diversity_penalty"] = 0.0;
  search["do_sample"] = gen.do_sample.value_or(false);
  search["early_stopping"] = true;
  search["length_penalty"] = 1.0;
  search["max_length"] = o.context_length;
  search["min_length"] = 0;
  search["no_repeat_ngram_size"] = 0;
  search["num_beams"] = 1;
  search["num_return_sequences"] = 1;
  search["past_present_share_buffer"] = false;  // the growing layout: present = past + tokens
  search["repetition_penalty"] = gen.repetition_penalty.value_or(1.0);
  search["temperature"] = gen.temperature.value_or(1.0);
  search["top_k"] = gen.top_k.value_or(50);
  search["top_p"] = gen.top_p.value_or(1.0);

  nlohmann::ordered_json root;
  root["model"] = m;
  root["search"] = search;
  return root.dump(4) + "\n";
}

}  // namespace ingot::exporters::onnx
