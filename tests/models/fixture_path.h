// Location of committed fixtures: $INGOT_SOURCE_DIR/tests/fixtures (set by ctest), else
// the path relative to this file.
#pragma once

#include <cstdlib>
#include <string>

namespace ingot::testing {

inline std::string fixture_path(const std::string& relative) {
  const char* root = std::getenv("INGOT_SOURCE_DIR");
  std::string base = root ? std::string(root) + "/tests/fixtures" : std::string(INGOT_FIXTURES_DIR);
  return base + "/" + relative;
}

}  // namespace ingot::testing
