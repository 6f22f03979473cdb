// libFuzzer target: the .pt2 (torch.export archive) reader must reject any malformed
// input with an ingot error that says what is wrong — IoError for the container and
// JSON, NotSupportedError for what ingot does not map, ValueError / ShapeError /
// DTypeError when torch's graph calls an op with arguments it cannot take — and never
// crash, hang, read out of bounds or hit an InternalError. A program that loads must
// print, verify and run once on its example inputs' shapes without crashing.
//
// Two input forms, so mutations reach the JSON decoding instead of mostly breaking the
// ZIP directory:
//   - a whole archive ("PK\3\4..."), read as is;
//   - "{...model.json...}\0{...weights config...}\0WEIGHT BYTES": the harness writes a
//     consistent archive (archive_format, archive_version, byteorder, models/model.json,
//     data/weights/model_weights_config.json, data/weights/weight_0) around the parts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ingot/core/error.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/formats/pt2/zip.h"

namespace {

std::string wrap_json_form(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t a = in.find('\0');
  const std::string_view model = in.substr(0, a);
  std::string_view config = "{\"config\": {}}", weight;
  if (a != std::string_view::npos) {
    const std::string_view rest = in.substr(a + 1);
    const size_t b = rest.find('\0');
    config = rest.substr(0, b);
    if (b != std::string_view::npos) weight = rest.substr(b + 1);
  }
  std::string out;
  ingot::pt2::ZipWriter w([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  w.add("m/archive_format", "pt2");
  w.add("m/archive_version", "0");
  w.add("m/byteorder", "little");
  w.add("m/models/model.json", model);
  w.add("m/data/weights/model_weights_config.json", config);
  w.add("m/data/weights/weight_0", weight);
  w.finish();
  return out;
}

void load_and_check(const uint8_t* data, size_t size) {
  ingot::ExportedProgram ep = ingot::pt2::load_pt2_from_bytes(data, size, nullptr, "fuzz-input");
  const std::string printed = ep.print();
  ep.verify();
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
  } catch (const ingot::InternalError&) {
    std::abort();  // a bug: malformed input must get a user-facing error
  } catch (const ingot::Error&) {
  }
  return 0;
}
