// libFuzzer target: the safetensors header parser must reject any malformed input with
// an ingot::IoError and never crash, hang or read out of bounds. Accepted inputs are
// then read tensor by tensor through the same path the loader uses.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ingot/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto header = ingot::formats::parse_safetensors(data, size, "fuzz-input");
    // Touch every tensor's bytes as the loader's views would.
    volatile uint8_t sink = 0;
    for (const auto& [name, e] : header.entries) {
      const uint8_t* p = data + header.data_start;
      for (size_t i = e.begin; i < e.end; i += 64) sink = sink + p[i];
      if (e.end > e.begin) sink = sink + p[e.end - 1];
    }
  } catch (const ingot::IoError&) {
  }
  return 0;
}
