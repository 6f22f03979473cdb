// Template: parsing (with an up-front check of filter and test names) and rendering.
#include "ingot/text/chat/template.h"

#include <fmt/format.h>

#include "ingot/text/chat/ast.h"
#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/interpreter.h"
#include "ingot/text/chat/lexer.h"
#include "ingot/text/chat/parser.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

struct Template::Impl {
  std::string origin;
  Body body;
};

namespace {

// jinja2 resolves filter and test names when it compiles a template, so an unknown one
// is an error even in a branch that never runs.
void check_names(const Expr* e, const std::string& origin) {
  if (e == nullptr) return;
  if (e->kind == ExprKind::Filter) {
    Known k = known_filter(e->name);
    if (k == Known::Unsupported) {
      fail_unsupported(origin, e->line,
                       fmt::format("the filter '{}' is not supported by ingot's "
                                   "chat-template engine",
                                   e->name));
    }
    if (k == Known::Unknown) fail(origin, e->line, fmt::format("no filter named '{}'", e->name));
  }
  if (e->kind == ExprKind::Test && known_test(e->name) == Known::Unknown) {
    fail(origin, e->line, fmt::format("no test named '{}'", e->name));
  }
  for (const auto& a : e->args) check_names(a.get(), origin);
  for (const auto& [k, a] : e->kwargs) check_names(a.get(), origin);
}

void check_names(const Body& body, const std::string& origin) {
  for (const auto& s : body) {
    for (const auto& e : s->exprs) check_names(e.get(), origin);
    for (const auto& e : s->defaults) check_names(e.get(), origin);
    for (const auto& e : s->filters) check_names(e.get(), origin);
    for (const auto& b : s->bodies) check_names(b, origin);
  }
}

}  // namespace

Template Template::parse(std::string_view source, std::string origin) {
  size_t bad = find_invalid_utf8(source);
  if (bad != std::string_view::npos) {
    int line = 1;
    for (size_t i = 0; i < bad; ++i) line += source[i] == '\n';
    fail(origin, line, fmt::format("the template is not valid UTF-8 (byte offset {})", bad));
  }
  auto impl = std::make_shared<Impl>();
  impl->origin = std::move(origin);
  std::vector<Token> tokens = tokenize(source, impl->origin);
  impl->body = parse_template(tokens, impl->origin);
  check_names(impl->body, impl->origin);
  return Template(std::move(impl));
}

std::string Template::render(const DictData& variables, const RenderLimits& limits) const {
  Interpreter interpreter(impl_->origin, limits);
  return interpreter.render(impl_->body, variables);
}

const std::string& Template::origin() const {
  return impl_->origin;
}

}  // namespace ingot::text::chat
