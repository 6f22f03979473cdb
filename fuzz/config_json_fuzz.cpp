// libFuzzer target: config.json reading must reject malformed input with an ingot::Error
// (IoError / NotSupportedError) and never crash or hang: the ConfigReader getters every
// architecture uses, the rope parameters, and the Llama-family hyper-parameters
// (DecoderConfig::from_llama_like, which divides by the head count).
#include <cstddef>
#include <cstdint>
#include <string>

#include "ingot/core/error.h"
#include "ingot/models/config.h"
#include "ingot/models/decoder/decoder_lm.h"

namespace {

// Every getter on `key`, each failure an ingot::Error.
void read_key(const ingot::models::ConfigReader& c, const std::string& key) {
  c.has(key);
  try {
    c.get_int(key, 0);
  } catch (const ingot::Error&) {
  }
  try {
    c.get_optional_int(key);
  } catch (const ingot::Error&) {
  }
  try {
    c.get_double(key, 0.0);
  } catch (const ingot::Error&) {
  }
  try {
    c.get_bool(key, false);
  } catch (const ingot::Error&) {
  }
  try {
    c.get_string(key, "");
  } catch (const ingot::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto c = ingot::models::ConfigReader::from_json_text(text, "fuzz-input");
    for (const char* key : {"vocab_size", "hidden_size", "num_attention_heads", "rope_theta",
                            "tie_word_embeddings", "hidden_act", "sliding_window"}) {
      read_key(c, key);
    }
    try {
      c.architecture();
    } catch (const ingot::Error&) {
    }
    try {
      c.rope();
    } catch (const ingot::Error&) {
    }
    ingot::models::DecoderConfig::from_llama_like(c);
  } catch (const ingot::Error&) {
  }
  return 0;
}
