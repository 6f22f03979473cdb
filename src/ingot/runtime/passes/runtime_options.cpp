#include "ingot/runtime/passes/runtime_options.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "ingot/core/error.h"
#include "ingot/runtime/passes/pipeline.h"

namespace ingot::runtime {

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions o;
  if (const char* env = std::getenv("INGOT_DISABLE_PASSES")) {
    std::stringstream list(env);
    for (std::string name; std::getline(list, name, ',');) {
      if (name.empty()) continue;
      const auto& names = load_pass_names();
      INGOT_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ValueError,
                  "[runtime] INGOT_DISABLE_PASSES names '{}', which is no load pass (passes: {})",
                  name, fmt::join(names, ", "));
      o.disabled_passes.insert(name);
    }
  }
  if (const char* env = std::getenv("INGOT_PACKED_WEIGHTS"); env && std::string_view(env) == "0")
    o.disabled_passes.insert("packed_linear_weights");
  return o;
}

}  // namespace ingot::runtime
