// libFuzzer target: generation_config.json reading (and its config.json fallback) must
// reject malformed input with an ingot::Error (IoError / ValueError) and never crash,
// hang or overflow; a config that reads must answer new_token_limit for any prompt.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "ingot/core/error.h"
#include "ingot/models/generation_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool model_config : {false, true}) {
    try {
      ingot::models::GenerationConfig c;
      if (model_config) {
        c.fill_from_model_config(text, "fuzz-config");
      } else {
        c = ingot::models::GenerationConfig::from_json_text(text, "fuzz-input");
      }
      for (int64_t prompt : {int64_t(0), int64_t(7), std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()}) {
        c.new_token_limit(prompt);
      }
    } catch (const ingot::Error&) {
    }
  }
  return 0;
}
