// Per-op timing of planned runs (INGOT_OP_PROFILE=1): every kernel step of an
// ExecutionPlan is timed and its time added to a row keyed by op, output shape and first
// input shape ("mm [1, 3072] <- [1, 1024]"). The table (total ms, calls, µs per call,
// share) is printed to stderr when the process exits. Off by default: a plan then pays
// one well-predicted branch per run, not per step.
#pragma once

#include <string>

namespace ingot::runtime {

// True when the environment sets INGOT_OP_PROFILE to something other than 0 (read once).
bool op_profile_enabled();
// Adds one timed call of `label`.
void op_profile_add(const std::string& label, double seconds);

}  // namespace ingot::runtime
