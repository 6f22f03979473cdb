#include "ingot/runtime/passes/pipeline.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "ingot/runtime/passes/bf16_embedding_tables.h"
#include "ingot/runtime/passes/fuse_sibling_linears.h"
#include "ingot/runtime/passes/fuse_silu_mul.h"
#include "ingot/runtime/passes/huge_page_weights.h"
#include "ingot/runtime/passes/int8_embedding_tables.h"
#include "ingot/runtime/passes/last_position_logits.h"
#include "ingot/runtime/passes/packed_linear_weights.h"
#include "ingot/runtime/passes/small_weights_arena.h"

namespace ingot::runtime {

namespace {

struct PassEntry {
  std::string name;
  std::function<std::unique_ptr<LoadPass>()> make;
};

template <typename Pass>
PassEntry entry(const char* name) {
  return {name, [] { return std::make_unique<Pass>(); }};
}

// The pipeline, in order. Weights move to huge pages first (every later copy shares
// them); the prefill's LM head is cut to the last position before the fusions see it;
// sibling linears fuse before silu * mul (both read the MLP); tables and panels last
// (they replace weights the fusions leave in place), a table with int8 rows beside it
// before the bf16 one would hold it in bf16; float sibling linears after the panels (the
// f32 weights one table packs stay packed linears, the rest fuse); the small weights
// onto huge pages last, once every pass has made the ones the programs keep.
const std::vector<PassEntry>& pass_list() {
  static const std::vector<PassEntry> list = {
      entry<HugePageWeightsPass>("huge_page_weights"),
      entry<LastPositionLogitsPass>("last_position_logits"),
      entry<FuseSiblingLinearsPass>("fuse_sibling_linears"),
      entry<FuseSiluMulPass>("fuse_silu_mul"),
      entry<Int8EmbeddingTablesPass>("int8_embedding_tables"),
      entry<Bf16EmbeddingTablesPass>("bf16_embedding_tables"),
      entry<PackedLinearWeightsPass>("packed_linear_weights"),
      entry<FuseSiblingFloatLinearsPass>("fuse_sibling_float_linears"),
      entry<SmallWeightsArenaPass>("small_weights_arena"),
  };
  return list;
}

}  // namespace

const std::vector<std::string>& load_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const PassEntry& e : pass_list()) out.push_back(e.name);
    return out;
  }();
  return names;
}

int PassReport::changes(const std::string& component, const std::string& pass) const {
  int n = 0;
  for (const PassRecord& r : records)
    if (r.component == component && r.pass == pass) n += r.changes;
  return n;
}

std::string PassReport::str() const {
  std::vector<std::string> order;  // components in the order first seen
  std::map<std::string, std::vector<std::string>> done;
  for (const PassRecord& r : records) {
    if (!done.contains(r.component)) order.push_back(r.component);
    std::vector<std::string>& parts = done[r.component];
    if (r.changes > 0) parts.push_back(fmt::format("{} {}", r.pass, r.changes));
  }
  std::string out;
  for (const std::string& c : order) {
    const std::vector<std::string>& parts = done[c];
    out += fmt::format("{}: {}\n", c,
                       parts.empty() ? "unchanged" : fmt::format("{}", fmt::join(parts, ", ")));
  }
  if (!disabled.empty()) out += fmt::format("disabled: {}\n", fmt::join(disabled, ", "));
  return out;
}

PassPipeline::PassPipeline(const RuntimeOptions& options) {
  for (const PassEntry& e : pass_list()) {
    if (options.pass_enabled(e.name))
      passes_.push_back(e.make());
    else
      report_.disabled.push_back(e.name);
  }
}

ExportedProgram PassPipeline::run(const ExportedProgram& program, const PassTarget& target) {
  ExportedProgram out = program;
  for (const std::unique_ptr<LoadPass>& pass : passes_)
    report_.records.push_back({target.component, pass->name(), pass->run(out, target)});
  return out;
}

}  // namespace ingot::runtime
