#include "ingot/exporters/skips.h"

#include "ingot/exporters/registry.h"

namespace ingot::exporters {

namespace {
std::vector<SkipEntry>& table() {
  static std::vector<SkipEntry> t;
  return t;
}
bool matches(const std::string& pattern, const std::string& value) {
  return pattern == "*" || pattern == value;
}
}  // namespace

void register_skip(SkipEntry entry, std::source_location where) {
  INGOT_CHECK(!entry.architecture.empty() && !entry.backend.empty() && !entry.task.empty() &&
                  !entry.reason.empty(),
              InternalError,
              "[exporters] a skip entry needs an architecture, backend, task and reason");
  entry.where = source_site(where);
  table().push_back(std::move(entry));
}

const std::vector<SkipEntry>& skip_table() {
  return table();
}

std::optional<SkipEntry> find_skip(const std::string& architecture, const std::string& backend,
                                   const std::string& task) {
  for (const SkipEntry& e : table()) {
    if (matches(e.architecture, architecture) && matches(e.backend, backend) &&
        matches(e.task, task))
      return e;
  }
  return std::nullopt;
}

void check_not_skipped(const std::string& architecture, const std::string& backend,
                       const std::string& task) {
  if (auto e = find_skip(architecture, backend, task)) {
    INGOT_THROW(NotSupportedError,
                "[exporters] {} cannot be exported ({}, {} backend): {} (skip table entry at {})",
                architecture, task, backend, e->reason, e->where);
  }
}

// Encoders have no decode step: there is no KV cache to thread through a generation
// graph. Lifting this needs an encoder-decoder architecture, not an exporter change.
INGOT_REGISTER_SKIP(bert_generation, "BertModel", "*", "generation",
                    "encoder-only model without a KV cache or decode step; export its forward with "
                    "export_ instead of export_for_generation");

}  // namespace ingot::exporters
