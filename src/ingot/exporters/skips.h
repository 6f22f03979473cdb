// The skip table: models, or model x backend x task combinations, known not to export,
// each with the reason and what would have to change (seed 004's EXPORT_SKIPS). The
// exporters consult it first and raise NotSupportedError with the reason, instead of
// failing somewhere deep in the trace. The list is meant to shrink, not grow.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace ingot::exporters {

struct SkipEntry {
  std::string architecture;  // config.json architecture ("BertModel"), or "*"
  std::string backend;       // "native", "onnx", or "*"
  std::string task;          // "export" (a forward), "generation", or "*"
  std::string reason;        // names the model-side change that would lift the skip
  std::string where;
};

void register_skip(SkipEntry entry, std::source_location where = std::source_location::current());
const std::vector<SkipEntry>& skip_table();

// The entry that applies, if any.
std::optional<SkipEntry> find_skip(const std::string& architecture, const std::string& backend,
                                   const std::string& task);
// Throws NotSupportedError "[exporters] <arch> cannot be exported (<task>, <backend>):
// <reason>" when an entry applies.
void check_not_skipped(const std::string& architecture, const std::string& backend,
                       const std::string& task);

}  // namespace ingot::exporters

#define INGOT_REGISTER_SKIP(id, architecture, backend, task, reason)              \
  static const bool kSkip_##id = [] {                                             \
    ::ingot::exporters::register_skip({architecture, backend, task, reason, {}}); \
    return true;                                                                  \
  }()
