// libFuzzer target: the GGUF header parser must reject any malformed input with an
// ingot::Error (IoError, or NotSupportedError for version 1) and never crash, hang, read
// out of bounds or allocate what the input cannot back. Accepted inputs are then
// dequantised tensor by tensor as the loader does.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/formats/gguf.h"
#include "ingot/formats/gguf_dequant.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto header = ingot::formats::parse_gguf(data, size, "fuzz-input");
    std::vector<float> out;
    for (const auto& t : header.tensors) {
      if (!ingot::formats::can_dequantize(t.type) || t.numel() > (1 << 16)) continue;
      out.resize(size_t(t.numel()));
      ingot::formats::dequantize_row(t.type, data + header.data_start + t.offset, out.data(),
                                     t.numel());
    }
  } catch (const ingot::Error&) {
  }
  return 0;
}
