// libFuzzer target: the chat-template engine must reject any malformed template with an
// ingot::Error (ValueError / NotSupportedError / TemplateRaised) and never crash or hang;
// a template that parses is rendered with a small conversation under tight limits.
//
// Input: the template text. Its first byte also picks the conversation's shape, so
// templates reading messages, tools and add_generation_prompt get varied data.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ingot/core/error.h"
#include "ingot/text/chat/json.h"
#include "ingot/text/chat/template.h"

namespace {

const char* const kVariables[] = {
    R"({"messages": [{"role": "user", "content": "Hello"}], "add_generation_prompt": true,
        "bos_token": "<s>", "eos_token": "</s>", "tools": null})",
    R"({"messages": [{"role": "system", "content": " sys "}, {"role": "user", "content": "héllo 🚀"},
        {"role": "assistant", "content": "<think>\nx\n</think>\n\ny",
         "tool_calls": [{"id": "abcdefghi", "function": {"name": "f", "arguments": {"a": [1, 2.5, null]}}}]},
        {"role": "tool", "content": "{\"r\": 1}"}], "add_generation_prompt": false,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})",
    R"({"messages": [], "add_generation_prompt": true, "enable_thinking": false})",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const ingot::text::chat::Value variables[] = {
      ingot::text::chat::value_from_json(kVariables[0], "fuzz"),
      ingot::text::chat::value_from_json(kVariables[1], "fuzz"),
      ingot::text::chat::value_from_json(kVariables[2], "fuzz"),
  };
  ingot::text::chat::RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_work_bytes = 16 << 20;
  limits.max_steps = 200000;
  try {
    auto tpl = ingot::text::chat::Template::parse(text, "fuzz-input");
    const auto& vars = variables[size ? data[0] % 3 : 0];
    tpl.render(vars.as_dict(), limits);
  } catch (const ingot::Error&) {
  }
  return 0;
}
