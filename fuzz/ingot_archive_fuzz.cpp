// libFuzzer target: the .ingot archive loader must reject any malformed input with an
// ingot::IoError (NotSupportedError for an op this build lacks) and never crash, hang or
// read out of bounds. A program that loads must print, verify, and survive a second
// save/load unchanged (decoding is canonical, so re-encoding what was decoded is exact).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ingot/core/error.h"
#include "ingot/export/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ingot::ExportedProgram ep = ingot::load_from_bytes(data, size, nullptr, "fuzz-input");
    const std::string printed = ep.print();
    ep.verify();
    // Touch every tensor's bytes as a run would.
    volatile uint8_t sink = 0;
    auto touch = [&](const ingot::Tensor& t) {
      const auto* p = static_cast<const uint8_t*>(t.raw_data());
      for (size_t i = 0; i < t.nbytes(); i += 64) sink = sink + p[i];
      if (t.nbytes() > 0) sink = sink + p[t.nbytes() - 1];
    };
    for (const auto& [name, t] : ep.state) touch(t);
    for (const auto& [name, t] : ep.constants) touch(t);
    for (const ingot::Tensor& t : ep.example_inputs) touch(t);
    const std::string again = ingot::save_to_bytes(ep);
    ingot::ExportedProgram ep2 = ingot::load_from_bytes(
        reinterpret_cast<const uint8_t*>(again.data()), again.size(), nullptr, "fuzz-resaved");
    if (ep2.print() != printed || ingot::save_to_bytes(ep2) != again) std::abort();
  } catch (const ingot::IoError&) {
  } catch (const ingot::NotSupportedError&) {
  }
  return 0;
}
