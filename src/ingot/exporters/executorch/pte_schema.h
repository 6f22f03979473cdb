// ExecuTorch's program format (`.pte`), as far as ingot writes it: the tables, their field
// slots and the enum values, stated here so the writer (pte_writer.cpp) builds the
// flatbuffer with FlatBufferBuilder's table API and no generated code.
//
// Facts come from the schema the `executorch` package ships (schema/program.fbs and
// scalar_type.fbs, executorch 1.5.1; root type Program, file identifier "ET12"). A
// flatbuffer field is addressed by its slot: the n-th field of a table (counting a union
// field as two, its type tag first) has vtable offset 4 + 2n (`slot(n)` below).
//
// File layout (exir/_serialize/_program.py's facts):
//   [0,4)   root table offset (flatbuffer)     [4,8) "ET12"
//   [8,40)  extended header: "eh00", u32 header length (32), u64 program size (flatbuffer
//           + header), u64 segment base offset, u64 segment data size (little endian)
//   [40,..) the rest of the flatbuffer (its internal offsets are relative, so inserting
//           the header at byte 8 only shifts the root offset by 32)
//   segment base (aligned) .. : the data segments (constant weights; mutable state), each
//           aligned; a tensor's bytes are at segment offset + SubsegmentOffsets.offsets[i].
#pragma once

#include <cstdint>

namespace ingot::exporters::executorch::pte {

constexpr const char* kFileIdentifier = "ET12";
constexpr const char* kExtendedHeaderMagic = "eh00";
constexpr uint32_t kExtendedHeaderLength = 32;
constexpr uint32_t kSchemaVersion = 0;  // Program.version (EXECUTORCH_SCHEMA_VERSION)
// Alignment of each tensor inside a segment (the runtime needs 16; 64 keeps SIMD loads
// and mmap'd weights cache-line aligned) and of each segment in the file.
constexpr uint64_t kTensorAlignment = 64;
constexpr uint64_t kSegmentAlignment = 128;

constexpr uint16_t slot(int n) {
  return uint16_t(4 + 2 * n);
}

// enum ScalarType : byte (scalar_type.fbs); values are c10's.
enum class ScalarType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
};

// enum TensorShapeDynamism : byte. DYNAMIC_BOUND: `sizes` are upper bounds; memory is
// planned for them and the kernels resize within them.
enum class Dynamism : int8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };

// union KernelTypes (EValue.val): the tag values (0 = NONE).
enum class KernelType : uint8_t {
  Null = 1,
  Int = 2,
  Bool = 3,
  Double = 4,
  Tensor = 5,
  String = 6,
  IntList = 7,  // items: EValue indices of Int values (boxed lists)
  DoubleList = 8,
  BoolList = 9,
  TensorList = 10,          // items: EValue indices of tensors
  OptionalTensorList = 11,  // items: EValue indices, -1 for None
};

// union InstructionArguments (Instruction.instr_args).
enum class InstructionType : uint8_t {
  KernelCall = 1,
  DelegateCall = 2,
  MoveCall = 3,
  JumpFalseCall = 4,
  FreeCall = 5,
};

enum class DataLocation : int8_t { Inline = 0, Segment = 1 };

// Field slots, table by table (the order of program.fbs).
namespace Tensor {
constexpr int scalar_type = 0, storage_offset = 1, sizes = 2, dim_order = 3, requires_grad = 4,
              data_buffer_idx = 5,  // > 0: constant (or initial state of a mutable tensor)
    allocation_info = 6,            // non-null: memory-planned (memory_id, offset)
    layout = 7, shape_dynamism = 8, extra_tensor_info = 9;
}
namespace AllocationDetails {
// memory_id is 1-based: id n is the method's planned buffer n - 1
// (non_const_buffer_sizes[n]); slot 0 of the sizes is reserved.
constexpr int memory_id = 0, memory_offset_low = 1, memory_offset_high = 2;
}  // namespace AllocationDetails
namespace ExtraTensorInfo {
constexpr int mutable_data_segments_idx = 0, fully_qualified_name = 1, location = 2;
}
namespace Scalar {  // Int, Bool, Double, String: one field each
constexpr int value = 0;
}
namespace List {  // IntList, DoubleList, BoolList, TensorList, OptionalTensorList
constexpr int items = 0;
}
namespace EValue {
constexpr int val_type = 0, val = 1;
}
namespace Operator {
constexpr int name = 0, overload = 1;
}
namespace KernelCall {  // DelegateCall has the same two slots (delegate_index, args)
constexpr int op_index = 0, args = 1;
}
namespace MoveCall {
constexpr int move_from = 0, move_to = 1;
}
namespace JumpFalseCall {
constexpr int cond_value_index = 0, destination_instruction = 1;
}
namespace Instruction {
constexpr int instr_args_type = 0, instr_args = 1;
}
namespace Frame {
constexpr int filename = 0, lineno = 1, name = 2, context = 3;
}
namespace FrameList {
constexpr int items = 0;
}
namespace Chain {
constexpr int inputs = 0, outputs = 1, instructions = 2, stacktrace = 3;
}
namespace BackendDelegateDataReference {
constexpr int location = 0, index = 1;
}
namespace CompileSpec {
constexpr int key = 0, value = 1;
}
namespace BackendDelegate {
constexpr int id = 0, processed = 1, compile_specs = 2;
}
namespace BackendDelegateInlineData {
constexpr int data = 0;
}
namespace ExecutionPlan {
constexpr int name = 0, container_meta_type = 1, values = 2, inputs = 3, outputs = 4, chains = 5,
              operators = 6, delegates = 7, non_const_buffer_sizes = 8;
}
namespace ContainerMetadata {
constexpr int encoded_inp_str = 0, encoded_out_str = 1;
}
namespace DataSegment {
constexpr int offset = 0, size = 1;
}
namespace SubsegmentOffsets {
constexpr int segment_index = 0, offsets = 1;
}
namespace Program {
constexpr int version = 0, execution_plan = 1, constant_buffer = 2, backend_delegate_data = 3,
              segments = 4, constant_segment = 5, mutable_data_segments = 6, named_data = 7;
}

}  // namespace ingot::exporters::executorch::pte
