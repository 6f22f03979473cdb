// Lowering an ExportedProgram to an OpenVINO model through the translation table.
//
// Layout (docs/openvino.md):
//  * user inputs are Parameters named by the user input (input_ids, attention_mask, x,
//    pytree leaves by path); their symbolic dims are dynamic dims whose intervals are the
//    symbols' ranges ("1..1024,1..4096");
//  * user outputs are Results named by their output path (logits, last_hidden_state;
//    "output" / "output_N" for unnamed ones);
//  * parameters, buffers and lifted constants are Consts sharing the weights' bytes;
//  * a mutated input (a static KV cache tensor, a mutated buffer) is, with `stateful`, a
//    variable named by its target: ReadValue (initial value: the buffer, or zeros for a
//    user input) and Assign of the new value, so the runtime keeps it across infer
//    calls; without `stateful`, the pair input.<name> / output.<name>;
//  * `generation_inputs` (stateful decode components): the inputs attention_mask
//    [batch, ?], position_ids [batch, ?] and beam_idx [batch] of OpenVINO GenAI's layout
//    are added; every cache variable with a batch dim is read through Gather(beam_idx).
//    The graph computes its mask and positions from the cache's position, as ingot's
//    decode step does (an unpadded prompt), so attention_mask and position_ids are
//    accepted for the layout and not read.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingot/exporters/lowering/sym_lowering.h"
#include "ingot/exporters/openvino/ir.h"
#include "ingot/exporters/openvino/translation.h"
#include "ingot/ir/program.h"

namespace ingot::exporters::openvino {

struct LoweringOptions {
  bool stateful = true;
  bool generation_inputs = false;
  std::string name = "ingot";
};

struct LoweredModel {
  Model model;
  std::vector<std::string> input_names, output_names;
  std::vector<std::string> variables;  // variable ids (stateful mutated inputs)
};

// Throws NotSupportedError for an op without a translation.
LoweredModel lower_program(const ExportedProgram& program, const LoweringOptions& options = {});

// The names the lowering gives the program's outputs, in signature order (mutations as
// output.<name>).
std::vector<std::string> openvino_output_names(const ExportedProgram& program);

class Lowering {
 public:
  Lowering(const ExportedProgram& program, const LoweringOptions& options);
  // Not copied or moved: the size-expression lowering's scope hooks hold `this`.
  Lowering(const Lowering&) = delete;
  Lowering& operator=(const Lowering&) = delete;
  LoweredModel run();

  // One ingot graph lowered into one OpenVINO graph (the model, or an If / Loop body).
  struct Scope {
    Graph* graph = nullptr;
    Scope* parent = nullptr;
    const ir::Graph* ir = nullptr;
    std::vector<std::optional<Value>> values;
    std::map<std::string, std::pair<Value, int64_t>> sources;   // symbol -> (value, dim)
    std::unordered_map<sym::Expr, Value, sym::ExprHash> exprs;  // i64 [1] / boolean [1]
    // Values of the enclosing graph this body reads: (outer value, body Parameter).
    std::vector<std::pair<Value, Value>> captures;
    bool same_graph_as_parent = false;  // an inlined subgraph (lower_inline)
  };

  Scope& scope() { return *scope_; }
  Value sym1(const sym::Expr& e);
  Value sym_bool1(const sym::Expr& e);
  // Lowers `g` into `body` (a fresh graph) with its inputs bound to body Parameters made
  // from `inputs` (outer values); returns the body values of g's outputs and fills
  // `captures` with the outer values the body also reads (symbols), each a Parameter.
  std::vector<Value> lower_body(Graph& body, const ir::Graph& g, const std::vector<Value>& params,
                                std::vector<std::pair<Value, Value>>& captures,
                                bool same_graph = false);
  // Lowers `g` into the current graph with its inputs bound to `inputs`; returns the
  // values of its outputs (while_loop's first test of its condition).
  std::vector<Value> lower_inline(const ir::Graph& g, const std::vector<Value>& inputs);

 private:
  void lower_nodes(const ir::Graph& g);
  // `v` of scope `from` made visible in the current scope (captured through every body).
  Value import(Scope* from, Value v);
  Value materialise_symbol(const sym::Expr& symbol);
  std::string partial_shape(const ir::ValueInfo& info) const;

  const ExportedProgram& program_;
  LoweringOptions options_;
  Scope* scope_ = nullptr;
  // Size expressions as OpenVINO ops (exporters/lowering/sym_lowering.h).
  std::unique_ptr<lowering::SymSpelling<Value>> spelling_;
  std::unique_ptr<lowering::SymLowering<Value>> sym_;
};

}  // namespace ingot::exporters::openvino
