// libFuzzer target: a generation directory's manifest.json (runtime::Generator::load, through
// generation::GenerationManifest::read: format and version first, then typed fields)
// must be refused with an ingot::Error when malformed (wrong types, a component file
// outside the directory, a format ingot's runtime does not run, missing files) and never
// crash or hang.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "ingot/core/error.h"
#include "ingot/runtime/generator/generator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ingot_manifest_fuzz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "manifest.json", std::ios::binary).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    ingot::runtime::Generator::load(dir.string());
  } catch (const ingot::Error&) {
  }
  return 0;
}
