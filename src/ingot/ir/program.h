// ExportedProgram: what export produces, what the archive stores and what the runtime
// runs (torch.export.ExportedProgram, natively).
//
// It holds the functional graph, the signature that says what each graph input and
// output is (user input, parameter, buffer, lifted constant; user output, buffer or
// user-input mutation), the state (parameters and buffers by name: mapped weights, never
// copied), the range of every symbol, and the input/output tree structures.
//
// Input constraints are the placeholders' metadata plus the symbol ranges: a user input
// of f32[batch, 8] with batch in [1, 64] must have rank 2, dim 1 equal to 8 and dim 0 in
// [1, 64]; the same symbol in two places means those sizes must be equal.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ir/graph.h"
#include "ingot/ir/pytree.h"
#include "ingot/sym/shape_env.h"
#include "ingot/sym/value_ranges.h"

namespace ingot {

enum class InputKind { UserInput, Parameter, Buffer, ConstantTensor };
enum class OutputKind { UserOutput, BufferMutation, UserInputMutation };
const char* input_kind_name(InputKind k);    // "USER_INPUT", "PARAMETER", ...
const char* output_kind_name(OutputKind k);  // "USER_OUTPUT", "BUFFER_MUTATION", ...

struct InputSpec {
  InputKind kind;
  std::string name;        // the graph placeholder's name
  std::string target;      // state name ("layers.0.weight") or the user input's path ("x")
  bool persistent = true;  // buffers: part of the state dict
};

struct OutputSpec {
  OutputKind kind;
  std::string name;    // the graph value's name
  std::string target;  // the buffer or user input it updates; empty for user outputs
};

// One entry per graph input / output, in graph order.
struct GraphSignature {
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  std::string str() const;
};

// A symbol's permitted values (and, for symbols of user dims, which Dim it came from).
struct SymbolRange {
  sym::ValueRange range;
  bool backed = true;  // an input size (vs. a data-dependent size)
};

class ExportedProgram {
 public:
  std::shared_ptr<ir::Graph> graph;
  GraphSignature signature;
  std::map<std::string, Tensor> state;                   // parameters and buffers by target name
  std::map<std::string, Tensor> constants;               // lifted tensor constants by target name
  std::map<std::string, SymbolRange> range_constraints;  // by symbol name
  TreeSpec in_spec;   // the user inputs (tensor leaves are the USER_INPUT placeholders)
  TreeSpec out_spec;  // the user outputs
  std::vector<std::string> input_names;  // names of the top-level arguments
  std::vector<std::string> guards;       // the decisions the trace took, for inspection
  std::vector<Tensor> example_inputs;    // tensor leaves of the example inputs
  std::string ingot_version;
  // Keeps symbolic metadata of tensors made during tracing valid (sym/ nodes point to it).
  std::shared_ptr<void> trace_context;

  // torch-like listing: signature, graph with shapes and user source lines, ranges.
  std::string print() const;
  // Checks every node: known op, arguments of the right kinds, values defined before
  // use, output metadata equal to what the op's shape function gives. Throws
  // InternalError naming the node.
  void verify() const;

  size_t num_user_inputs() const;
  // A ShapeEnv holding the program's symbols (names and ranges; hints from the example
  // inputs), for passes that re-run shape functions. Data-dependent symbols are included
  // (with their lower bound as hint) when `with_unbacked`.
  std::shared_ptr<sym::ShapeEnv> make_shape_env(bool with_unbacked) const;
};

}  // namespace ingot
