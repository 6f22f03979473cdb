// The names of the growing-cache generation layout (CacheLayout::kPastPresent,
// generation_capture.h): what the traced decode step calls its cache inputs and outputs,
// and the printf patterns ONNX Runtime GenAI's genai_config.json gives for them. One
// place, so the trace, the manifest's step layout and genai_config.json agree.
//
//   inputs   past_key_values.N.key / .value  [batch, kv_heads, past, head_dim]
//   outputs  present.N.key / .value          [batch, kv_heads, past + tokens, head_dim]
#pragma once

#include <string>
#include <string_view>

namespace ingot::exporters {

inline constexpr std::string_view kPastPrefix = "past_key_values.";
inline constexpr std::string_view kPresentPrefix = "present.";
// genai_config.json's decoder.inputs / decoder.outputs patterns (%d = the layer).
inline constexpr const char* kPastKeyPattern = "past_key_values.%d.key";
inline constexpr const char* kPastValuePattern = "past_key_values.%d.value";
inline constexpr const char* kPresentKeyPattern = "present.%d.key";
inline constexpr const char* kPresentValuePattern = "present.%d.value";

inline std::string past_key_name(size_t layer) {
  return std::string(kPastPrefix) + std::to_string(layer) + ".key";
}
inline std::string past_value_name(size_t layer) {
  return std::string(kPastPrefix) + std::to_string(layer) + ".value";
}
inline std::string present_key_name(size_t layer) {
  return std::string(kPresentPrefix) + std::to_string(layer) + ".key";
}
inline std::string present_value_name(size_t layer) {
  return std::string(kPresentPrefix) + std::to_string(layer) + ".value";
}

}  // namespace ingot::exporters
