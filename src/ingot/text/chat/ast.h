// The syntax tree of a chat template: expressions and statements, as jinja2's parser
// builds them (jinja2.nodes), reduced to what the engine evaluates.
//
// Invariant: no tree is deeper than kMaxNesting (the parser rejects deeper input), so
// evaluating and destroying a tree by recursion is bounded.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingot/text/chat/value.h"

namespace ingot::text::chat {

inline constexpr int kMaxNesting = 128;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Literal,   // literal
  Name,      // name
  List,      // args: items
  Tuple,     // args: items
  Dict,      // args: key0, value0, key1, value1, ...
  GetAttr,   // args[0].name
  GetItem,   // args[0][args[1]]
  Slice,     // args[0][args[1]:args[2]:args[3]] (any of 1..3 may be null)
  Call,      // args[0](args[1..], kwargs)
  Filter,    // args[0] | name(args[1..], kwargs); args[0] null in filter blocks
  Test,      // args[0] is [not] name(args[1..], kwargs)
  Neg,       // -args[0]
  Pos,       // +args[0]
  Not,       // not args[0]
  And,       // args[0] and args[1]
  Or,        // args[0] or args[1]
  Binary,    // args[0] name args[1]; name one of + - * / // % **
  Compare,   // args[0] ops[0] args[1] ops[1] args[2] ... (chained); ops: == != < > <= >= in notin
  Concat,    // args joined with ~
  CondExpr,  // args[0] if args[1] else args[2] (args[2] may be null)
};

struct Expr {
  ExprKind kind;
  int line = 0;
  int depth = 1;  // 1 + the deepest child
  Value literal;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negated = false;  // Test: `is not`
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

enum class StmtKind {
  Text,         // text
  Output,       // {{ exprs[0] }}
  If,           // exprs[i] guards bodies[i]; a final extra body is the else branch
  For,          // for target in exprs[0] [if exprs[1]]: bodies[0], else bodies[1]
  Set,          // set target = exprs[0]
  SetBlock,     // set target | filters: bodies[0] endset
  Macro,        // macro text(params = defaults): bodies[0]
  FilterBlock,  // filter filters: bodies[0] endfilter
  With,         // with params[i] = exprs[i]: bodies[0]
  Generation,   // transformers' {% generation %}: bodies[0], rendered as is
  Break,
  Continue,
};

// What a for loop or set assigns: one name, a tuple of names to unpack, or a
// namespace attribute (names[0].attribute).
struct Target {
  std::vector<std::string> names;
  bool unpack = false;
  std::string attribute;
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
  Target target;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // Macro: one per param, null when it has none
  std::vector<ExprPtr> filters;   // Filter expressions whose operand is the body
  bool has_else = false;          // If / For
};

}  // namespace ingot::text::chat
