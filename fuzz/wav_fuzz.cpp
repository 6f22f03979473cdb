// libFuzzer target: reading an audio file (libsndfile behind ingot's checks) must reject
// any malformed input with an ingot::IoError and never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>

#include "ingot/core/error.h"
#include "ingot/media/audio_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ingot::media::Audio a = ingot::media::read_audio_bytes(data, size, "fuzz-input");
    volatile size_t sink = ingot::media::downmix_to_mono(a).size();
    (void)sink;
  } catch (const ingot::IoError&) {
  }
  return 0;
}
