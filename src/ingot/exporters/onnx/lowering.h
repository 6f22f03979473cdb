// Lowering an ExportedProgram to an ONNX model through the translation table.
//
// Naming (docs/onnx.md, seed 003):
//  * user inputs keep their names (input_ids, attention_mask, x); user outputs are named
//    by their output tree path (logits, last_hidden_state; "output" / "output_N" for
//    unnamed ones);
//  * a mutated user input (a static KV cache tensor) is the pair input.<name> /
//    output.<name>, so ONNX Runtime IO binding can give both one buffer;
//  * a mutated buffer is the same pair, with the buffer's value as the input's default
//    (an initializer of the same name);
//  * parameters, other buffers and lifted constants are initializers named by their
//    state-dict name (model.layers.0.self_attn.q_proj.weight), sharing the weights' bytes;
//  * symbolic dims are dim_params named after the program's symbols (the Dim names:
//    batch, seq, tokens).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ingot/exporters/lowering/sym_lowering.h"
#include "ingot/exporters/onnx/builder.h"
#include "ingot/exporters/onnx/translation.h"
#include "ingot/ir/program.h"

namespace ingot::exporters::onnx {

struct LoweringOptions {
  int64_t opset = kDefaultOpset;
  std::string graph_name = "main";
  // How ingot::quantized_linear is written: "matmul_nbits" (com.microsoft MatMulNBits)
  // or "dequantize_linear" (DequantizeLinear + MatMul); OnnxConfig::quantized_matmul.
  std::string quantized_matmul = "matmul_nbits";
};

struct LoweredModel {
  ModelProto model;
  // (input.<name>, output.<name>) pairs that may share one buffer.
  std::vector<std::pair<std::string, std::string>> inplace_pairs;
  std::vector<std::string> input_names;   // graph inputs, in order
  std::vector<std::string> output_names;  // graph outputs, in order
};

// Translates every node (and subgraph) of `program`. Throws NotSupportedError for an op
// without a translation (naming the op, the user's line and how to register one).
LoweredModel lower_program(const ExportedProgram& program, const LoweringOptions& options = {});

// The ONNX names the lowering gives the program's user outputs, in signature order
// (mutations included as output.<name>).
std::vector<std::string> onnx_output_names(const ExportedProgram& program);

// The lowering state behind TranslationContext (one per lower_program call).
class Lowering {
 public:
  Lowering(const ExportedProgram& program, const LoweringOptions& options);
  // Not copied or moved: the size-expression lowering's scope hooks hold `this`.
  Lowering(const Lowering&) = delete;
  Lowering& operator=(const Lowering&) = delete;
  LoweredModel run();

  // One ingot graph being lowered into one ONNX builder.
  struct Scope {
    GraphBuilder* builder = nullptr;
    Scope* parent = nullptr;
    const ir::Graph* graph = nullptr;
    std::vector<std::optional<std::string>> values;  // ONNX value of each ingot value
    std::map<std::string, std::pair<std::string, int64_t>> sources;   // symbol -> (value, dim)
    std::unordered_map<sym::Expr, std::string, sym::ExprHash> exprs;  // int64 [1] / bool [1]
  };

  Scope& scope() { return *scope_; }
  int64_t opset() const { return options_.opset; }
  const LoweringOptions& options() const { return options_; }
  const ExportedProgram& program() const { return program_; }
  std::string value_hint(const std::string& ingot_name) const;

  std::string sym1(const sym::Expr& e);
  std::string sym_bool1(const sym::Expr& e);
  std::vector<std::string> lower_graph(GraphBuilder& b, const ir::Graph& g,
                                       const std::vector<std::string>& inputs);

 private:
  void lower_nodes(const ir::Graph& g);
  std::string materialise_symbol(const sym::Expr& symbol);

  const ExportedProgram& program_;
  LoweringOptions options_;
  Scope* scope_ = nullptr;
  // Size expressions as ONNX ops (exporters/lowering/sym_lowering.h).
  std::unique_ptr<lowering::SymSpelling<std::string>> spelling_;
  std::unique_ptr<lowering::SymLowering<std::string>> sym_;
  std::set<std::string> reserved_;
  std::set<std::string> typed_;  // values that already have a type (inputs, value_info)
};

}  // namespace ingot::exporters::onnx
