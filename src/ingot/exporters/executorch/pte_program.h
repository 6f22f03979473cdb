// The in-memory form of an ExecuTorch program that ingot emits and pte_writer serialises:
// execution plans (one per method) with their values, one chain of kernel calls, the
// operator table and the memory plan, plus the constant weights and the initial values of
// mutable state. Weights are held as ingot Tensors (mapped, not copied); the writer streams
// them into the file's segments once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/exporters/executorch/pte_schema.h"

namespace ingot::exporters::executorch {

// Where a planned tensor lives: ExecuTorch's AllocationDetails (memory_id is 1-based).
struct Allocation {
  uint32_t memory_id = 1;
  uint64_t offset = 0;
};

struct TensorValue {
  pte::ScalarType scalar_type = pte::ScalarType::Float;
  std::vector<int32_t> sizes;  // DYNAMIC_BOUND: the upper bounds
  pte::Dynamism dynamism = pte::Dynamism::Static;
  uint32_t constant_index = 0;           // > 0: Program constant i (its data), 0: none
  uint32_t mutable_state_index = 0;      // > 0: initial value i of the mutable segment
  std::optional<Allocation> allocation;  // memory-planned; nullopt: bound at run time
  std::string name;                      // fully qualified name (mutable state), may be empty
};

struct NullValue {};
struct IntValue {
  int64_t v = 0;
};
struct BoolValue {
  bool v = false;
};
struct DoubleValue {
  double v = 0;
};
struct StringValue {
  std::string v;
};
struct IntListValue {
  std::vector<int32_t> items;  // value indices of IntValues
};
struct DoubleListValue {
  std::vector<double> items;
};
struct BoolListValue {
  std::vector<bool> items;
};
struct TensorListValue {
  std::vector<int32_t> items;  // value indices of tensors
};
struct OptionalTensorListValue {
  std::vector<int32_t> items;  // value indices, -1 for None
};

using EValue = std::variant<NullValue, IntValue, BoolValue, DoubleValue, TensorValue, StringValue,
                            IntListValue, DoubleListValue, BoolListValue, TensorListValue,
                            OptionalTensorListValue>;

struct OperatorRef {
  std::string name;      // "aten::add"
  std::string overload;  // "out"
  bool operator==(const OperatorRef&) const = default;
};

// One instruction of the chain (args are value indices):
//   Kernel    index: op_index into operators; args: the kernel's arguments, outputs last
//   Delegate  index: delegate_index into delegates; args: inputs then outputs
//   Move      args {from, to}: value `to` becomes value `from` (the EValue is copied, so a
//             tensor `to` then shares `from`'s memory); how a cond's branches hand their
//             results to the node's outputs
//   JumpFalse args {cond}: when cond (a Bool, or a Bool tensor: false if any element is
//             false) is false, execution goes on at instruction `index` of the chain
struct Instruction {
  enum class Kind { Kernel, Delegate, Move, JumpFalse } kind = Kind::Kernel;
  int32_t index = 0;
  std::vector<int32_t> args;
  // The user's source line (stack trace frame): file, line, function.
  std::string file, function;
  int32_t line = 0;
};

struct Delegate {
  std::string id;           // "XnnpackBackend"
  uint32_t data_index = 0;  // Program::delegate_data[data_index]
};

// A delegate's processed data, stored as its own segment of the file: `head` (e.g. the
// XNNPACK header and graph) followed by `tensors` (weights, streamed from their storage
// when the file is written, never copied in memory), tensor i at head.size() +
// tensor_offsets[i]; `size` bytes in all.
struct DelegateBlob {
  std::string head;
  std::vector<Tensor> tensors;
  std::vector<uint64_t> tensor_offsets;
  uint64_t size = 0;
};

struct ExecutionPlan {
  std::string name = "forward";
  std::vector<EValue> values;
  std::vector<int32_t> inputs, outputs;  // value indices
  std::vector<Instruction> instructions;
  std::vector<OperatorRef> operators;
  std::vector<Delegate> delegates;
  // Planned buffer sizes: [0] is reserved (0), [n] is the size of memory_id n.
  std::vector<int64_t> buffer_sizes{0};

  int32_t add(EValue v) {
    values.push_back(std::move(v));
    return int32_t(values.size() - 1);
  }
  int32_t operator_index(const OperatorRef& op) {
    for (size_t i = 0; i < operators.size(); ++i)
      if (operators[i] == op) return int32_t(i);
    operators.push_back(op);
    return int32_t(operators.size() - 1);
  }
};

struct Program {
  std::vector<ExecutionPlan> plans;
  // constants[i - 1] is the data of constant index i (index 0 is reserved for "none").
  std::vector<Tensor> constants;
  // mutable_state[i - 1]: the initial value of mutable_state_index i.
  std::vector<Tensor> mutable_state;
  std::vector<DelegateBlob> delegate_data;  // one data segment each
};

}  // namespace ingot::exporters::executorch
