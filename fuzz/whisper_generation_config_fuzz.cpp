// libFuzzer target: Whisper's generation settings (generation_config.json) must reject
// malformed input with an IoError or ValueError and never crash; the prompt built from
// whatever parses must be an error or a list of ids.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ingot/core/error.h"
#include "ingot/models/encdec/whisper_generation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto g = ingot::models::WhisperGenerationConfig::from_json_text(text, "fuzz-input");
    volatile size_t sink = g.decoder_prompt().size();
    (void)sink;
  } catch (const ingot::IoError&) {
  } catch (const ingot::ValueError&) {
  }
  return 0;
}
