// ingot's Jinja engine for chat templates: the subset of jinja2 that Hugging Face chat
// templates use, rendering exactly as transformers does (ImmutableSandboxedEnvironment
// with trim_blocks, lstrip_blocks and the loopcontrols extension; tojson as
// json.dumps(ensure_ascii=False); raise_exception; strftime_now). docs/chat_templates.md
// lists what is supported.
//
// A Template is immutable once parsed and may be rendered concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ingot/text/chat/value.h"

namespace ingot::text::chat {

// Bounds that make any template, however hostile, finish quickly. Exceeding one is a
// ValueError naming it.
struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // the rendered text
  size_t max_work_bytes = size_t{1} << 30;     // strings and lists built while rendering
  uint64_t max_steps = 20'000'000;             // expression evaluations and loop iterations
  int max_depth = 400;                         // nested evaluation, macro calls included
};

class Template {
 public:
  // Parses `source`; `origin` names the template in errors (a file path, or
  // "<name>/tokenizer_config.json:chat_template"). ValueError for a syntax error or
  // invalid UTF-8, NotSupportedError for a construct the engine lacks (unknown filters
  // and tests are found here, before rendering).
  static Template parse(std::string_view source, std::string origin);

  // Renders with `variables` (string keys) as the template's globals. Errors name the
  // origin and line; raise_exception() throws TemplateRaised.
  std::string render(const DictData& variables, const RenderLimits& limits = {}) const;

  const std::string& origin() const;

 private:
  struct Impl;
  explicit Template(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace ingot::text::chat
