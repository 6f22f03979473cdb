// Errors of the chat-template engine. Every message starts with "[chat_template]" and
// names the template's origin and line: "[chat_template] 'qwen3/chat_template.jinja'
// line 12: unknown filter 'frobnicate'".
//
//   ValueError         a syntax error, or a runtime error of the template's own making
//                      (wrong types, undefined values used, limits exceeded)
//   NotSupportedError  a jinja2 construct the engine does not implement
//   TemplateRaised     the template called raise_exception(message)
#pragma once

#include <string>
#include <string_view>

#include "ingot/core/error.h"

namespace ingot::text::chat {

// raise_exception(message) from the template: the message as the template wrote it is
// template_message(); what() adds the origin and line.
class TemplateRaised : public ValueError {
 public:
  TemplateRaised(const std::string& what, std::string template_message)
      : ValueError(what), template_message_(std::move(template_message)) {}
  const std::string& template_message() const { return template_message_; }

 private:
  std::string template_message_;
};

std::string located(const std::string& origin, int line, std::string_view message);
[[noreturn]] void fail(const std::string& origin, int line, std::string_view message);
[[noreturn]] void fail_unsupported(const std::string& origin, int line, std::string_view message);

}  // namespace ingot::text::chat
