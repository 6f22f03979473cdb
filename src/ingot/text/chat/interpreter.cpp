// The chat-template interpreter: statements, expressions and the render budget.
#include "ingot/text/chat/interpreter.h"

#include <fmt/format.h>

#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/errors.h"

namespace ingot::text::chat {

Interpreter::Interpreter(const std::string& origin, const RenderLimits& limits)
    : origin_(origin), limits_(limits) {}

Interpreter::DepthGuard::DepthGuard(Interpreter& interpreter) : in(interpreter) {
  if (++in.depth_ > in.limits_.max_depth) {
    --in.depth_;
    in.error(fmt::format("evaluation nests deeper than {} levels (runaway macro recursion?)",
                         in.limits_.max_depth));
  }
}

void Interpreter::error(std::string_view message) const {
  fail(origin_, line_, message);
}

void Interpreter::unsupported(std::string_view message) const {
  fail_unsupported(origin_, line_, message);
}

void Interpreter::undefined_error(const Value& value, std::string_view use) const {
  const std::string& hint = value.undefined_hint();
  error(fmt::format("{} ({})", hint.empty() ? "undefined value" : hint, use));
}

void Interpreter::charge(size_t bytes) {
  work_bytes_ += bytes;
  if (work_bytes_ > limits_.max_work_bytes) {
    error(fmt::format("the template built more than {} bytes of strings and lists",
                      limits_.max_work_bytes));
  }
}

void Interpreter::step() {
  if (++steps_ > limits_.max_steps) {
    error(fmt::format("the template ran more than {} steps (an endless loop?)", limits_.max_steps));
  }
}

void Interpreter::write(std::string_view text) {
  if (out_ == nullptr) return;
  output_bytes_ += text.size();
  if (output_bytes_ > limits_.max_output_bytes) {
    error(fmt::format("the output exceeds {} bytes", limits_.max_output_bytes));
  }
  out_->append(text);
}

std::string Interpreter::render(const Body& body, const DictData& variables) {
  frames_.clear();
  frames_.emplace_back();
  for (const auto& [k, v] : variables.items) {
    if (k.is_string()) frames_[0].emplace_back(k.as_string(), v);
  }
  base_ = 1;
  std::string out;
  out_ = &out;
  exec(body);
  out_ = nullptr;
  return out;
}

// --- scopes ---

Value Interpreter::lookup(const std::string& name) const {
  for (size_t i = frames_.size(); i-- > base_;) {
    for (const auto& [k, v] : frames_[i]) {
      if (k == name) return v;
    }
  }
  for (const auto& [k, v] : frames_[0]) {
    if (k == name) return v;
  }
  Value global = builtin_global(name);
  if (!global.is_undefined()) return global;
  return Value::undefined(fmt::format("'{}' is undefined", name));
}

void Interpreter::set_variable(const std::string& name, Value value) {
  Frame& frame = frames_.size() > base_ ? frames_.back() : frames_[0];
  for (auto& [k, v] : frame) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  frame.emplace_back(name, std::move(value));
}

void Interpreter::assign(const Target& target, const Value& value) {
  if (!target.attribute.empty()) {
    Value ns = lookup(target.names[0]);
    if (!ns.is_namespace()) {
      error(fmt::format("cannot assign attribute '{}' on '{}': it is not a namespace()",
                        target.attribute, target.names[0]));
    }
    if (value.holds_namespace()) {
      error(
          fmt::format("cannot store a namespace in '{}.{}': a namespace() cannot hold another "
                      "namespace",
                      target.names[0], target.attribute));
    }
    if (value.depth() + 1 > kMaxValueNesting) {
      error(fmt::format("a value nests deeper than {} levels", kMaxValueNesting));
    }
    ns.as_namespace().attrs.set(Value(target.attribute), value);
    return;
  }
  if (!target.unpack) {
    set_variable(target.names[0], value);
    return;
  }
  std::vector<Value> items = iterate(*this, value);
  if (items.size() < target.names.size()) {
    error(fmt::format("not enough values to unpack (expected {}, got {})", target.names.size(),
                      items.size()));
  }
  if (items.size() > target.names.size()) {
    error(fmt::format("too many values to unpack (expected {})", target.names.size()));
  }
  for (size_t i = 0; i < items.size(); ++i) set_variable(target.names[i], items[i]);
}

// --- statements ---

Interpreter::Flow Interpreter::exec(const Body& body) {
  for (const auto& s : body) {
    Flow flow = exec(*s);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

std::string Interpreter::capture(const Body& body) {
  std::string text;
  std::string* saved_out = out_;
  size_t saved_bytes = output_bytes_;
  out_ = &text;
  try {
    exec(body);
  } catch (...) {
    out_ = saved_out;
    throw;
  }
  out_ = saved_out;
  output_bytes_ = saved_bytes;
  charge(text.size());
  return text;
}

Value Interpreter::apply_filters(const std::vector<ExprPtr>& filters, Value operand) {
  for (const auto& f : filters) {
    line_ = f->line;
    CallArgs args = eval_args(*f, 1);
    line_ = f->line;
    operand = apply_filter(*this, f->name, operand, args);
  }
  return operand;
}

Interpreter::Flow Interpreter::exec(const Stmt& s) {
  DepthGuard guard(*this);
  step();
  line_ = s.line;
  switch (s.kind) {
    case StmtKind::Text:
      write(s.text);
      return Flow::Normal;
    case StmtKind::Output: {
      Value v = eval(*s.exprs[0]);
      if (v.is_string()) {
        write(v.as_string());
      } else {
        std::string text = to_str(v);
        charge(text.size());
        write(text);
      }
      return Flow::Normal;
    }
    case StmtKind::If: {
      Flow flow = Flow::Normal;
      exec_if(s, flow);
      return flow;
    }
    case StmtKind::For:
      return exec_for(s);
    case StmtKind::Set:
      assign(s.target, eval(*s.exprs[0]));
      return Flow::Normal;
    case StmtKind::SetBlock: {
      Value v = apply_filters(s.filters, Value(capture(s.bodies[0])));
      assign(s.target, v);
      return Flow::Normal;
    }
    case StmtKind::Macro:
      set_variable(s.text, define_macro(s));
      return Flow::Normal;
    case StmtKind::FilterBlock: {
      Value v = apply_filters(s.filters, Value(capture(s.bodies[0])));
      std::string text = to_str(v);
      write(text);
      return Flow::Normal;
    }
    case StmtKind::With: {
      Frame frame;
      for (size_t i = 0; i < s.params.size(); ++i)
        frame.emplace_back(s.params[i], eval(*s.exprs[i]));
      frames_.push_back(std::move(frame));
      Flow flow;
      try {
        flow = exec(s.bodies[0]);
      } catch (...) {
        frames_.pop_back();
        throw;
      }
      frames_.pop_back();
      return flow;
    }
    case StmtKind::Generation:
      return exec(s.bodies[0]);
    case StmtKind::Break:
      return Flow::Break;
    case StmtKind::Continue:
      return Flow::Continue;
  }
  return Flow::Normal;
}

void Interpreter::exec_if(const Stmt& s, Flow& flow) {
  for (size_t i = 0; i < s.exprs.size(); ++i) {
    line_ = s.exprs[i]->line;
    if (eval(*s.exprs[i]).truthy()) {
      flow = exec(s.bodies[i]);
      return;
    }
  }
  if (s.has_else) flow = exec(s.bodies.back());
}

Interpreter::Flow Interpreter::exec_for(const Stmt& s) {
  std::vector<Value> items = iterate(*this, eval(*s.exprs[0]));
  charge(items.size() * sizeof(Value));
  struct FrameGuard {
    std::vector<Frame>& frames;
    ~FrameGuard() { frames.pop_back(); }
  };
  if (s.exprs.size() > 1) {  // for x in xs if cond: filter first, so loop.length counts
    std::vector<Value> kept;
    for (Value& item : items) {
      step();
      frames_.emplace_back();
      FrameGuard guard{frames_};
      assign(s.target, item);
      if (eval(*s.exprs[1]).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  const auto n = static_cast<int64_t>(items.size());
  // loop.cycle(a, b, ...) picks by the current index.
  auto index_cell = std::make_shared<int64_t>(0);
  Value cycle = Value::callable("loop.cycle", [index_cell](Interpreter& in, CallArgs& args) {
    if (args.positional.empty()) in.error("loop.cycle() needs at least one value");
    return args.positional[static_cast<size_t>(*index_cell) % args.positional.size()];
  });
  for (int64_t i = 0; i < n; ++i) {
    step();
    *index_cell = i;
    const auto at = static_cast<size_t>(i);
    Value loop = Value::dict(std::vector<std::pair<std::string, Value>>{
        {"index", Value(i + 1)},
        {"index0", Value(i)},
        {"revindex", Value(n - i)},
        {"revindex0", Value(n - i - 1)},
        {"first", Value(i == 0)},
        {"last", Value(i == n - 1)},
        {"length", Value(n)},
        {"depth", Value(1)},
        {"depth0", Value(0)},
        {"previtem", i > 0 ? items[at - 1] : Value::undefined("there is no previous item")},
        {"nextitem", i + 1 < n ? items[at + 1] : Value::undefined("there is no next item")},
        {"cycle", cycle},
    });
    frames_.emplace_back();
    FrameGuard guard{frames_};
    frames_.back().emplace_back("loop", std::move(loop));
    assign(s.target, items[at]);
    Flow flow = exec(s.bodies[0]);
    if (flow == Flow::Break) break;
  }
  if (n == 0 && s.has_else) return exec(s.bodies[1]);
  return Flow::Normal;
}

Value Interpreter::define_macro(const Stmt& s) {
  const Stmt* macro = &s;
  return Value::callable(
      s.text, [macro](Interpreter& in, CallArgs& args) { return in.call_macro(*macro, args); });
}

Value Interpreter::call_macro(const Stmt& s, CallArgs& args) {
  if (args.positional.size() > s.params.size()) {
    error(fmt::format("macro '{}' takes not more than {} argument(s)", s.text, s.params.size()));
  }
  Frame frame;
  for (size_t i = 0; i < s.params.size(); ++i) frame.emplace_back(s.params[i], Value());
  for (size_t i = 0; i < args.positional.size(); ++i) frame[i].second = args.positional[i];
  std::vector<bool> given(s.params.size(), false);
  for (size_t i = 0; i < args.positional.size(); ++i) given[i] = true;
  for (auto& [name, value] : args.keyword) {
    size_t i = 0;
    while (i < s.params.size() && s.params[i] != name) ++i;
    if (i == s.params.size()) {
      error(fmt::format("macro '{}' has no parameter named '{}'", s.text, name));
    }
    frame[i].second = value;
    given[i] = true;
  }
  size_t saved_base = base_;
  int saved_line = line_;
  base_ = frames_.size();
  frames_.push_back(std::move(frame));
  std::string text;
  try {
    for (size_t i = 0; i < s.params.size(); ++i) {
      if (given[i]) continue;
      frames_.back()[i].second =
          s.defaults[i]
              ? eval(*s.defaults[i])
              : Value::undefined(fmt::format("parameter '{}' was not provided", s.params[i]));
    }
    text = capture(s.bodies[0]);
  } catch (...) {
    frames_.resize(base_);
    base_ = saved_base;
    throw;
  }
  frames_.resize(base_);
  base_ = saved_base;
  line_ = saved_line;
  return Value(std::move(text));
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) undefined_error(callee, "called");
  if (!callee.is_callable()) error(fmt::format("'{}' object is not callable", callee.type_name()));
  DepthGuard guard(*this);
  return callee.as_callable().call(*this, args);
}

// --- expressions ---

CallArgs Interpreter::eval_args(const Expr& e, size_t first) {
  CallArgs args;
  for (size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i]));
  for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, eval(*v));
  return args;
}

Value Interpreter::eval_call(const Expr& e) {
  const Expr& callee = *e.args[0];
  if (callee.kind == ExprKind::GetAttr) {
    Value obj = eval(*callee.args[0]);
    CallArgs args = eval_args(e, 1);
    line_ = e.line;
    if (auto result = call_method(*this, obj, callee.name, args)) return *result;
    Value fn = get_attribute(*this, obj, callee.name);
    return call(fn, args);
  }
  Value fn = eval(callee);
  CallArgs args = eval_args(e, 1);
  line_ = e.line;
  return call(fn, args);
}

Value Interpreter::eval(const Expr& e) {
  DepthGuard guard(*this);
  step();
  line_ = e.line;
  switch (e.kind) {
    case ExprKind::Literal:
      return e.literal;
    case ExprKind::Name:
      return lookup(e.name);
    case ExprKind::List:
    case ExprKind::Tuple: {
      std::vector<Value> items;
      items.reserve(e.args.size());
      for (const auto& a : e.args) items.push_back(eval(*a));
      charge(items.size() * sizeof(Value));
      return Value::list(std::move(items), e.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
      DictData d;
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        Value k = eval(*e.args[i]);
        if (k.is_list() && !k.as_list().tuple) error("unhashable type: 'list' as a dict key");
        if (k.is_dict() || k.is_undefined())
          error(fmt::format("unhashable dict key of type '{}'", k.type_name()));
        d.set(std::move(k), eval(*e.args[i + 1]));
      }
      charge(d.items.size() * 2 * sizeof(Value));
      return Value::dict(std::move(d));
    }
    case ExprKind::GetAttr: {
      Value obj = eval(*e.args[0]);
      line_ = e.line;
      return get_attribute(*this, obj, e.name);
    }
    case ExprKind::GetItem: {
      Value obj = eval(*e.args[0]);
      Value key = eval(*e.args[1]);
      line_ = e.line;
      return get_item(*this, obj, key);
    }
    case ExprKind::Slice: {
      Value obj = eval(*e.args[0]);
      Value bounds[3];
      const Value* ptrs[3] = {nullptr, nullptr, nullptr};
      for (int i = 0; i < 3; ++i) {
        if (e.args[static_cast<size_t>(i) + 1]) {
          bounds[i] = eval(*e.args[static_cast<size_t>(i) + 1]);
          ptrs[i] = &bounds[i];
        }
      }
      line_ = e.line;
      return get_slice(*this, obj, ptrs[0], ptrs[1], ptrs[2]);
    }
    case ExprKind::Call:
      return eval_call(e);
    case ExprKind::Filter: {
      Value operand = eval(*e.args[0]);
      CallArgs args = eval_args(e, 1);
      line_ = e.line;
      return apply_filter(*this, e.name, operand, args);
    }
    case ExprKind::Test: {
      Value operand;
      // `x is defined` must not fail on an undefined x.
      operand = eval(*e.args[0]);
      CallArgs args = eval_args(e, 1);
      line_ = e.line;
      bool result = apply_test(*this, e.name, operand, args);
      return Value(result != e.negated);
    }
    case ExprKind::Neg: {
      Value a = eval(*e.args[0]);
      line_ = e.line;
      return negate(*this, a);
    }
    case ExprKind::Pos: {
      Value a = eval(*e.args[0]);
      line_ = e.line;
      if (a.is_undefined()) undefined_error(a, "unary '+'");
      if (!a.is_number()) error(fmt::format("bad operand type for unary +: '{}'", a.type_name()));
      return a.is_bool() ? Value(a.integer()) : a;
    }
    case ExprKind::Not:
      return Value(!eval(*e.args[0]).truthy());
    case ExprKind::And: {
      Value a = eval(*e.args[0]);
      return a.truthy() ? eval(*e.args[1]) : a;
    }
    case ExprKind::Or: {
      Value a = eval(*e.args[0]);
      return a.truthy() ? a : eval(*e.args[1]);
    }
    case ExprKind::Binary: {
      Value a = eval(*e.args[0]);
      Value b = eval(*e.args[1]);
      line_ = e.line;
      return binary_op(*this, e.name, a, b);
    }
    case ExprKind::Compare: {
      Value left = eval(*e.args[0]);
      for (size_t i = 0; i < e.ops.size(); ++i) {
        Value right = eval(*e.args[i + 1]);
        line_ = e.line;
        if (!compare_op(*this, e.ops[i], left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case ExprKind::Concat: {
      std::string out;
      for (const auto& a : e.args) out += to_str(eval(*a));
      charge(out.size());
      return Value(std::move(out));
    }
    case ExprKind::CondExpr:
      if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
      if (e.args[2]) return eval(*e.args[2]);
      return Value::undefined(fmt::format(
          "the inline if-expression on line {} evaluated to false and has no else section",
          e.line));
  }
  return Value();
}

}  // namespace ingot::text::chat
