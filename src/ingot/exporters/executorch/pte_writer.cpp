#include "ingot/exporters/executorch/pte_writer.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "ingot/core/error.h"
#include "ingot/ops/functional/views.h"

namespace ingot::exporters::executorch {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::uoffset_t;
using pte::slot;
using Table = Offset<void>;

uint64_t align_up(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

// Where each tensor of a segment starts (offsets[0] = 0 is the reserved "no data" entry,
// so offsets[i] is tensor i), and the segment's size.
struct SegmentLayout {
  std::vector<uint64_t> offsets{0};
  uint64_t size = 0;
};

SegmentLayout layout_of(const std::vector<Tensor>& tensors) {
  SegmentLayout l;
  for (const Tensor& t : tensors) {
    l.offsets.push_back(l.size);
    l.size = align_up(l.size + t.nbytes(), pte::kTensorAlignment);
  }
  return l;
}

// The two segments and where they go relative to the segment base.
struct FileLayout {
  SegmentLayout constants, state;
  uint64_t state_segment_offset = 0;       // relative to the segment base
  std::vector<uint64_t> delegate_offsets;  // each delegate blob's segment, relative too
  uint64_t segment_data_size = 0;
  bool has_constants() const { return constants.size > 0; }
  bool has_state() const { return state.size > 0; }
};

FileLayout file_layout(const Program& p) {
  FileLayout f;
  f.constants = layout_of(p.constants);
  f.state = layout_of(p.mutable_state);
  uint64_t end = 0;
  if (f.has_constants()) end = align_up(f.constants.size, pte::kSegmentAlignment);
  f.state_segment_offset = end;
  if (f.has_state()) end += f.state.size;
  for (const DelegateBlob& d : p.delegate_data) {
    end = align_up(end, pte::kSegmentAlignment);
    f.delegate_offsets.push_back(end);
    end += d.size;
  }
  f.segment_data_size = end;
  return f;
}

class Builder {
 public:
  // Every scalar field is written, defaults included (explicit beats implicit here).
  explicit Builder(FlatBufferBuilder& b) : b_(b) { b_.ForceDefaults(true); }

  Table tensor(const TensorValue& t) {
    auto sizes = b_.CreateVector(t.sizes);
    std::vector<uint8_t> order(t.sizes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = uint8_t(i);
    auto dim_order = b_.CreateVector(order);
    Table alloc{};
    if (t.allocation) {
      auto s = b_.StartTable();
      b_.AddElement<uint32_t>(slot(pte::AllocationDetails::memory_id), t.allocation->memory_id, 0);
      b_.AddElement<uint32_t>(slot(pte::AllocationDetails::memory_offset_low),
                              uint32_t(t.allocation->offset & 0xffffffffu), 0);
      b_.AddElement<uint32_t>(slot(pte::AllocationDetails::memory_offset_high),
                              uint32_t(t.allocation->offset >> 32), 0);
      alloc = Table(b_.EndTable(s));
    }
    Table extra{};
    if (!t.name.empty()) {
      auto name = b_.CreateString(t.name);
      auto s = b_.StartTable();
      b_.AddOffset(slot(pte::ExtraTensorInfo::fully_qualified_name), name);
      extra = Table(b_.EndTable(s));
    }
    const uint32_t data_index = t.constant_index ? t.constant_index : t.mutable_state_index;
    auto s = b_.StartTable();
    b_.AddElement<int8_t>(slot(pte::Tensor::scalar_type), int8_t(t.scalar_type), 0);
    b_.AddOffset(slot(pte::Tensor::sizes), sizes);
    b_.AddOffset(slot(pte::Tensor::dim_order), dim_order);
    b_.AddElement<uint32_t>(slot(pte::Tensor::data_buffer_idx), data_index, 0);
    if (t.allocation) b_.AddOffset(slot(pte::Tensor::allocation_info), alloc);
    b_.AddElement<int8_t>(slot(pte::Tensor::shape_dynamism), int8_t(t.dynamism), 0);
    if (!t.name.empty()) b_.AddOffset(slot(pte::Tensor::extra_tensor_info), extra);
    return Table(b_.EndTable(s));
  }

  // One EValue: the union's payload table, then the EValue table with its tag.
  Table evalue(const EValue& v) {
    pte::KernelType tag = pte::KernelType::Null;
    Table payload = std::visit([&](const auto& x) { return this->payload(x, tag); }, v);
    auto s = b_.StartTable();
    b_.AddElement<uint8_t>(slot(pte::EValue::val_type), uint8_t(tag), 0);
    b_.AddOffset(slot(pte::EValue::val), payload);
    return Table(b_.EndTable(s));
  }

  Table payload(const NullValue&, pte::KernelType& tag) {
    tag = pte::KernelType::Null;
    return Table(b_.EndTable(b_.StartTable()));
  }
  Table payload(const IntValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::Int;
    auto s = b_.StartTable();
    b_.AddElement<int64_t>(slot(pte::Scalar::value), x.v, 0);
    return Table(b_.EndTable(s));
  }
  Table payload(const BoolValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::Bool;
    auto s = b_.StartTable();
    b_.AddElement<uint8_t>(slot(pte::Scalar::value), uint8_t(x.v), 0);
    return Table(b_.EndTable(s));
  }
  Table payload(const DoubleValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::Double;
    auto s = b_.StartTable();
    b_.AddElement<double>(slot(pte::Scalar::value), x.v, 0.0);
    return Table(b_.EndTable(s));
  }
  Table payload(const StringValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::String;
    auto str = b_.CreateString(x.v);
    auto s = b_.StartTable();
    b_.AddOffset(slot(pte::Scalar::value), str);
    return Table(b_.EndTable(s));
  }
  Table payload(const TensorValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::Tensor;
    return tensor(x);
  }
  template <typename T, typename V>
  Table list(const V& items) {
    auto vec = b_.CreateVector(items);
    auto s = b_.StartTable();
    b_.AddOffset(slot(pte::List::items), vec);
    return Table(b_.EndTable(s));
  }
  Table payload(const IntListValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::IntList;
    std::vector<int64_t> items(x.items.begin(), x.items.end());
    return list<int64_t>(items);
  }
  Table payload(const DoubleListValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::DoubleList;
    return list<double>(x.items);
  }
  Table payload(const BoolListValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::BoolList;
    std::vector<uint8_t> items(x.items.begin(), x.items.end());
    return list<uint8_t>(items);
  }
  Table payload(const TensorListValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::TensorList;
    return list<int32_t>(x.items);
  }
  Table payload(const OptionalTensorListValue& x, pte::KernelType& tag) {
    tag = pte::KernelType::OptionalTensorList;
    return list<int32_t>(x.items);
  }

  Table instruction(const Instruction& in) {
    Table call;
    pte::InstructionType type = pte::InstructionType::KernelCall;
    switch (in.kind) {
      case Instruction::Kind::Kernel:
      case Instruction::Kind::Delegate: {
        auto args = b_.CreateVector(in.args);
        auto s = b_.StartTable();
        b_.AddElement<int32_t>(slot(pte::KernelCall::op_index), in.index, 0);
        b_.AddOffset(slot(pte::KernelCall::args), args);
        call = Table(b_.EndTable(s));
        if (in.kind == Instruction::Kind::Delegate) type = pte::InstructionType::DelegateCall;
        break;
      }
      case Instruction::Kind::Move: {
        auto s = b_.StartTable();
        // (force_defaults: value index 0 is a real value, not "absent")
        b_.AddElement<int32_t>(slot(pte::MoveCall::move_from), in.args.at(0), -1);
        b_.AddElement<int32_t>(slot(pte::MoveCall::move_to), in.args.at(1), -1);
        call = Table(b_.EndTable(s));
        type = pte::InstructionType::MoveCall;
        break;
      }
      case Instruction::Kind::JumpFalse: {
        auto s = b_.StartTable();
        b_.AddElement<int32_t>(slot(pte::JumpFalseCall::cond_value_index), in.args.at(0), -1);
        b_.AddElement<int32_t>(slot(pte::JumpFalseCall::destination_instruction), in.index, -1);
        call = Table(b_.EndTable(s));
        type = pte::InstructionType::JumpFalseCall;
        break;
      }
    }
    auto si = b_.StartTable();
    b_.AddElement<uint8_t>(slot(pte::Instruction::instr_args_type), uint8_t(type), 0);
    b_.AddOffset(slot(pte::Instruction::instr_args), call);
    return Table(b_.EndTable(si));
  }

  // The stack trace of one instruction: one frame, the user's source line.
  Table frames(const Instruction& in) {
    auto file = b_.CreateString(in.file);
    auto fn = b_.CreateString(in.function);
    auto s = b_.StartTable();
    b_.AddOffset(slot(pte::Frame::filename), file);
    b_.AddElement<int32_t>(slot(pte::Frame::lineno), in.line, 0);
    b_.AddOffset(slot(pte::Frame::name), fn);
    Table frame(b_.EndTable(s));
    auto items = b_.CreateVector(std::vector<Table>{frame});
    auto sl = b_.StartTable();
    b_.AddOffset(slot(pte::FrameList::items), items);
    return Table(b_.EndTable(sl));
  }

  Table plan(const ExecutionPlan& p) {
    std::vector<Table> values;
    for (const EValue& v : p.values) values.push_back(evalue(v));
    auto values_vec = b_.CreateVector(values);
    std::vector<Table> instructions, traces;
    for (const Instruction& in : p.instructions) {
      instructions.push_back(instruction(in));
      traces.push_back(frames(in));
    }
    auto instr_vec = b_.CreateVector(instructions);
    auto trace_vec = b_.CreateVector(traces);
    auto chain_in = b_.CreateVector(p.inputs);
    auto chain_out = b_.CreateVector(p.outputs);
    auto cs = b_.StartTable();
    b_.AddOffset(slot(pte::Chain::inputs), chain_in);
    b_.AddOffset(slot(pte::Chain::outputs), chain_out);
    b_.AddOffset(slot(pte::Chain::instructions), instr_vec);
    b_.AddOffset(slot(pte::Chain::stacktrace), trace_vec);
    Table chain(b_.EndTable(cs));
    auto chains = b_.CreateVector(std::vector<Table>{chain});

    std::vector<Table> ops;
    for (const OperatorRef& op : p.operators) {
      auto name = b_.CreateString(op.name);
      auto overload = b_.CreateString(op.overload);
      auto s = b_.StartTable();
      b_.AddOffset(slot(pte::Operator::name), name);
      b_.AddOffset(slot(pte::Operator::overload), overload);
      ops.push_back(Table(b_.EndTable(s)));
    }
    auto ops_vec = b_.CreateVector(ops);

    std::vector<Table> delegates;
    for (const Delegate& d : p.delegates) {
      auto id = b_.CreateString(d.id);
      auto rs = b_.StartTable();
      // Each delegate's data is a segment after the constant and state segments.
      b_.AddElement<int8_t>(slot(pte::BackendDelegateDataReference::location),
                            int8_t(pte::DataLocation::Segment), 0);
      b_.AddElement<uint32_t>(slot(pte::BackendDelegateDataReference::index),
                              first_delegate_segment_ + d.data_index, 0);
      Table ref(b_.EndTable(rs));
      auto specs = b_.CreateVector(std::vector<Table>{});
      auto s = b_.StartTable();
      b_.AddOffset(slot(pte::BackendDelegate::id), id);
      b_.AddOffset(slot(pte::BackendDelegate::processed), ref);
      b_.AddOffset(slot(pte::BackendDelegate::compile_specs), specs);
      delegates.push_back(Table(b_.EndTable(s)));
    }
    auto delegates_vec = b_.CreateVector(delegates);

    auto empty = b_.CreateString("");
    auto ms = b_.StartTable();
    b_.AddOffset(slot(pte::ContainerMetadata::encoded_inp_str), empty);
    b_.AddOffset(slot(pte::ContainerMetadata::encoded_out_str), empty);
    Table meta(b_.EndTable(ms));

    auto name = b_.CreateString(p.name);
    auto inputs = b_.CreateVector(p.inputs);
    auto outputs = b_.CreateVector(p.outputs);
    auto sizes = b_.CreateVector(p.buffer_sizes);
    auto s = b_.StartTable();
    b_.AddOffset(slot(pte::ExecutionPlan::name), name);
    b_.AddOffset(slot(pte::ExecutionPlan::container_meta_type), meta);
    b_.AddOffset(slot(pte::ExecutionPlan::values), values_vec);
    b_.AddOffset(slot(pte::ExecutionPlan::inputs), inputs);
    b_.AddOffset(slot(pte::ExecutionPlan::outputs), outputs);
    b_.AddOffset(slot(pte::ExecutionPlan::chains), chains);
    b_.AddOffset(slot(pte::ExecutionPlan::operators), ops_vec);
    b_.AddOffset(slot(pte::ExecutionPlan::delegates), delegates_vec);
    b_.AddOffset(slot(pte::ExecutionPlan::non_const_buffer_sizes), sizes);
    return Table(b_.EndTable(s));
  }

  Table segment(uint64_t offset, uint64_t size) {
    auto s = b_.StartTable();
    b_.AddElement<uint64_t>(slot(pte::DataSegment::offset), offset, 0);
    b_.AddElement<uint64_t>(slot(pte::DataSegment::size), size, 0);
    return Table(b_.EndTable(s));
  }

  Table subsegment(uint32_t segment_index, const std::vector<uint64_t>& offsets) {
    auto vec = b_.CreateVector(offsets);
    auto s = b_.StartTable();
    b_.AddElement<uint32_t>(slot(pte::SubsegmentOffsets::segment_index), segment_index, 0);
    b_.AddOffset(slot(pte::SubsegmentOffsets::offsets), vec);
    return Table(b_.EndTable(s));
  }

  Table program(const Program& p, const FileLayout& f) {
    first_delegate_segment_ = uint32_t(f.has_constants()) + uint32_t(f.has_state());
    std::vector<Table> plans;
    for (const ExecutionPlan& plan : p.plans) plans.push_back(this->plan(plan));
    auto plans_vec = b_.CreateVector(plans);

    std::vector<Table> segments;
    uint32_t next_segment = 0;
    std::optional<uint32_t> constant_segment, state_segment;
    if (f.has_constants()) {
      segments.push_back(segment(0, f.constants.size));
      constant_segment = next_segment++;
    }
    if (f.has_state()) {
      segments.push_back(segment(f.state_segment_offset, f.state.size));
      state_segment = next_segment++;
    }
    for (size_t i = 0; i < p.delegate_data.size(); ++i)
      segments.push_back(segment(f.delegate_offsets[i], p.delegate_data[i].size));
    auto segments_vec = b_.CreateVector(segments);
    // Without weights the constant segment still exists (empty offsets but the reserved
    // entry), so constant_buffer stays unused.
    Table constants = subsegment(constant_segment.value_or(0), f.constants.offsets);
    std::vector<Table> state;
    if (state_segment) state.push_back(subsegment(*state_segment, f.state.offsets));
    auto state_vec = b_.CreateVector(state);

    auto inline_vec = b_.CreateVector(std::vector<Table>{});  // delegate data: segments

    auto s = b_.StartTable();
    b_.AddElement<uint32_t>(slot(pte::Program::version), pte::kSchemaVersion, 0);
    b_.AddOffset(slot(pte::Program::execution_plan), plans_vec);
    b_.AddOffset(slot(pte::Program::backend_delegate_data), inline_vec);
    b_.AddOffset(slot(pte::Program::segments), segments_vec);
    b_.AddOffset(slot(pte::Program::constant_segment), constants);
    if (state_segment) b_.AddOffset(slot(pte::Program::mutable_data_segments), state_vec);
    return Table(b_.EndTable(s));
  }

 private:
  FlatBufferBuilder& b_;
  uint32_t first_delegate_segment_ = 0;
};

void put_u32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}

std::string header_for(const Program& program, const FileLayout& f) {
  FlatBufferBuilder b(1 << 16);
  Builder builder(b);
  Table root = builder.program(program, f);
  b.Finish(Offset<void>(root.o), pte::kFileIdentifier);
  const auto* data = reinterpret_cast<const char*>(b.GetBufferPointer());
  const size_t n = b.GetSize();
  INGOT_CHECK(n >= 8, InternalError, "[executorch] flatbuffer too short ({} bytes)", n);

  // Insert the extended header after the root offset and the identifier.
  std::string out;
  out.reserve(n + pte::kExtendedHeaderLength);
  out.append(data, 8);
  out.append(pte::kExtendedHeaderLength, '\0');
  out.append(data + 8, n - 8);
  uint32_t root_offset = 0;
  std::memcpy(&root_offset, data, 4);  // little endian (flatbuffers' wire order)
  put_u32(out, 0, root_offset + pte::kExtendedHeaderLength);
  std::memcpy(out.data() + 8, pte::kExtendedHeaderMagic, 4);
  put_u32(out, 12, pte::kExtendedHeaderLength);
  const uint64_t program_size = out.size();
  const uint64_t base = f.segment_data_size ? align_up(program_size, pte::kSegmentAlignment) : 0;
  put_u64(out, 16, program_size);
  put_u64(out, 24, base);
  put_u64(out, 32, f.segment_data_size);
  return out;
}

void write_padding(std::ofstream& out, uint64_t from, uint64_t to) {
  static const char zeros[256] = {};
  while (from < to) {
    const uint64_t n = std::min<uint64_t>(to - from, sizeof(zeros));
    out.write(zeros, std::streamsize(n));
    from += n;
  }
}

// Streams the tensors of one segment, each at its offset; returns bytes written.
uint64_t write_segment(std::ofstream& out, const std::vector<Tensor>& tensors,
                       const SegmentLayout& l) {
  uint64_t at = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    write_padding(out, at, l.offsets[i + 1]);
    at = l.offsets[i + 1];
    const Tensor c = tensors[i].is_contiguous() ? tensors[i] : contiguous(tensors[i]);
    out.write(static_cast<const char*>(c.raw_data()), std::streamsize(c.nbytes()));
    at += c.nbytes();
  }
  write_padding(out, at, l.size);
  return l.size;
}

}  // namespace

std::string serialize_program_header(const Program& program) {
  return header_for(program, file_layout(program));
}

void write_pte(const Program& program, const std::string& path) {
  namespace fs = std::filesystem;
  const FileLayout f = file_layout(program);
  const std::string head = header_for(program, f);
  const fs::path target(path);
  const fs::path tmp = target.parent_path() / (target.filename().string() + ".tmp");
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    INGOT_CHECK(out.good(), IoError, "[executorch] cannot write '{}'", tmp.string());
    out.write(head.data(), std::streamsize(head.size()));
    if (f.segment_data_size) {
      const uint64_t base = align_up(head.size(), pte::kSegmentAlignment);
      write_padding(out, head.size(), base);
      uint64_t at = 0;
      if (f.has_constants()) at += write_segment(out, program.constants, f.constants);
      if (f.has_state()) {
        write_padding(out, at, f.state_segment_offset);
        at = f.state_segment_offset + write_segment(out, program.mutable_state, f.state);
      }
      for (size_t i = 0; i < program.delegate_data.size(); ++i) {
        const DelegateBlob& d = program.delegate_data[i];
        write_padding(out, at, f.delegate_offsets[i]);
        at = f.delegate_offsets[i];
        out.write(d.head.data(), std::streamsize(d.head.size()));
        uint64_t in_blob = d.head.size();
        for (size_t t = 0; t < d.tensors.size(); ++t) {
          const uint64_t to = d.head.size() + d.tensor_offsets[t];
          write_padding(out, in_blob, to);
          const Tensor c = d.tensors[t].is_contiguous() ? d.tensors[t] : contiguous(d.tensors[t]);
          out.write(static_cast<const char*>(c.raw_data()), std::streamsize(c.nbytes()));
          in_blob = to + c.nbytes();
        }
        write_padding(out, in_blob, d.size);
        at += d.size;
      }
      write_padding(out, at, f.segment_data_size);
    }
    out.close();
    INGOT_CHECK(out.good(), IoError, "[executorch] writing '{}' failed", tmp.string());
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

}  // namespace ingot::exporters::executorch
