// RuntimeOptions: how the runtime prepares the programs it runs, in one place. The
// library reads no environment variable for these: a caller (the CLI, a benchmark doing
// an A/B comparison) builds the options, from_environment() being the one reader of the
// INGOT_* switches.
#pragma once

#include <set>
#include <string>

namespace ingot::runtime {

struct RuntimeOptions {
  // Load-time passes to skip, by name (runtime/passes/pipeline.h lists them). Every pass
  // runs by default.
  std::set<std::string> disabled_passes;

  bool pass_enabled(const std::string& name) const { return !disabled_passes.contains(name); }

  // The defaults, less the passes the environment turns off: INGOT_DISABLE_PASSES (a
  // comma-separated list of pass names; an unknown name is a ValueError listing them) and
  // the older switch INGOT_PACKED_WEIGHTS=0 (packed_linear_weights).
  static RuntimeOptions from_environment();
};

}  // namespace ingot::runtime
