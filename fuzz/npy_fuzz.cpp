// libFuzzer target: the .npy parser must reject any malformed input with an
// ingot::IoError and never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>

#include "ingot/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ingot::Tensor t = ingot::formats::parse_npy(data, size, "fuzz-input");
    volatile int64_t sink = t.numel();
    (void)sink;
  } catch (const ingot::IoError&) {
  }
  return 0;
}
