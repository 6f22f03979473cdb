// Load-time passes: rewrites the runtime applies to the programs it runs for generation
// (runtime/passes/pipeline.h runs them in order over every component). Each rewrites a
// copy; the exported programs and their weights are untouched.
//
// A new pass is one file here (a LoadPass subclass next to the rewrite it wraps) plus one
// line in pipeline.cpp's list.
#pragma once

#include <string>

#include "ingot/export/program.h"
#include "ingot/runtime/passes/runtime_options.h"

namespace ingot::runtime {

// What a pass is applied to: one component of a generation package.
struct PassTarget {
  std::string component;  // "decode", "prefill", "image_encoder", ...
  // The program computes a prefill whose caller needs the last position's logits only
  // (runtime/passes/last_position_logits.h).
  bool prefill = false;
};

class LoadPass {
 public:
  virtual ~LoadPass() = default;
  // The name the report and RuntimeOptions::disabled_passes use.
  virtual const char* name() const = 0;
  // Rewrites `program` for `target` in place; returns how many changes it made (0: left
  // as it was). One pass object sees every component of one package, in order, so a
  // pass may share what it made (one packed copy of a weight both programs read).
  virtual int run(ExportedProgram& program, const PassTarget& target) = 0;
};

}  // namespace ingot::runtime
