// libFuzzer target: the .ingot archive loader must reject any malformed input with an
// ingot::IoError (NotSupportedError for an op this build lacks) and never crash, hang or
// read out of bounds. A program that loads must print, verify, and survive a second
// save/load unchanged (decoding is canonical, so re-encoding what was decoded is exact).
//
// Two input forms, so mutations reach the JSON decoders instead of mostly breaking the
// header's lengths:
//   - a whole archive ("INGOT\0..."), loaded as is;
//   - "{...JSON...}\0DATA": the harness writes a consistent header around the JSON
//     section and the data section (the seed corpus has both forms).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ingot/core/error.h"
#include "ingot/formats/archive_header.h"
#include "ingot/formats/serialize.h"

namespace {

std::string wrap_json_form(const uint8_t* data, size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t json_length = nul ? size_t(nul - data) : size;
  const size_t rest = nul ? size - json_length - 1 : 0;
  ingot::archive::Header h;
  h.json_offset = ingot::archive::kHeaderSize;
  h.json_length = json_length;
  h.data_offset = ingot::archive::align_up(h.json_offset + json_length);
  h.data_length = rest;
  std::string out = ingot::archive::encode_archive_header(h);
  out.append(reinterpret_cast<const char*>(data), json_length);
  out.resize(h.data_offset, '\0');
  if (rest > 0) out.append(reinterpret_cast<const char*>(nul + 1), rest);
  return out;
}

void load_and_check(const uint8_t* data, size_t size) {
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    if (size > 0 && data[0] == '{') {
      const std::string archive = wrap_json_form(data, size);
      load_and_check(reinterpret_cast<const uint8_t*>(archive.data()), archive.size());
    } else {
      load_and_check(data, size);
    }
  } catch (const ingot::IoError&) {
  } catch (const ingot::NotSupportedError&) {
  }
  return 0;
}
