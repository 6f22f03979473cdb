// Evaluates a parsed chat template: scopes, statements, expressions, calls, and the
// budget that bounds a render (steps, work bytes, output bytes, recursion depth).
//
// Scoping follows jinja2: `if` shares its scope; every for-loop iteration, `with` and
// macro call opens a new one, so `set` inside them is not seen outside (namespace()
// attributes are the way out). A macro sees the template's top-level variables as they
// are when it is called, its arguments, and nothing of its caller's scopes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingot/text/chat/ast.h"
#include "ingot/text/chat/template.h"
#include "ingot/text/chat/value.h"

namespace ingot::text::chat {

class Interpreter {
 public:
  Interpreter(const std::string& origin, const RenderLimits& limits);

  std::string render(const Body& body, const DictData& variables);

  // --- for builtins (filters, tests, methods, globals) ---
  // Errors at the line being evaluated.
  [[noreturn]] void error(std::string_view message) const;
  [[noreturn]] void unsupported(std::string_view message) const;
  // The ValueError jinja2's Undefined raises when `value` is used where it cannot be.
  [[noreturn]] void undefined_error(const Value& value, std::string_view use) const;
  int line() const { return line_; }
  const std::string& origin() const { return origin_; }
  // Counts `bytes` of built data against max_work_bytes.
  void charge(size_t bytes);
  // Calls a callable value (builtin, bound method, macro).
  Value call(const Value& callee, CallArgs& args);

 private:
  enum class Flow { Normal, Break, Continue };
  using Frame = std::vector<std::pair<std::string, Value>>;

  struct DepthGuard {
    Interpreter& in;
    explicit DepthGuard(Interpreter& interpreter);
    ~DepthGuard() { --in.depth_; }
  };

  Flow exec(const Body& body);
  Flow exec(const Stmt& stmt);
  void exec_if(const Stmt& s, Flow& flow);
  Flow exec_for(const Stmt& s);
  void assign(const Target& target, const Value& value);
  Value define_macro(const Stmt& s);
  Value call_macro(const Stmt& s, CallArgs& args);
  std::string capture(const Body& body);
  Value apply_filters(const std::vector<ExprPtr>& filters, Value operand);

  Value eval(const Expr& e);
  Value eval_call(const Expr& e);
  CallArgs eval_args(const Expr& e, size_t first);
  Value lookup(const std::string& name) const;
  void set_variable(const std::string& name, Value value);
  void write(std::string_view text);
  void step();

  const std::string& origin_;
  RenderLimits limits_;
  std::vector<Frame> frames_;  // frames_[0]: the template's globals and top-level sets
  size_t base_ = 1;            // first frame of the running macro (or 1 outside macros)
  std::string* out_ = nullptr;
  size_t output_bytes_ = 0;
  size_t work_bytes_ = 0;
  uint64_t steps_ = 0;
  int depth_ = 0;
  int line_ = 0;
};

}  // namespace ingot::text::chat
