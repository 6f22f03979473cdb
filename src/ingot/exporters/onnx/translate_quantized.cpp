// ingot::quantized_linear -> ONNX (quantized_lowering.h). The program's packed layout
// (ops/cpu/quantized_gemv.h: q uint8 [N, K] or [N, K/2] with two nibbles per byte, low
// first; scales f32 [N, K/G]; zeros uint8 [N, K/G] or the fixed 2^(bits-1)) maps to:
//
//  matmul_nbits: MatMulNBits(A, B [N, K/bs, bs*bits/8], scales [N*K/bs], zero_points)
//    with K, N, bits, block_size attributes. ONNX Runtime's nibble order and default
//    zero point (2^(bits-1)) are ingot's, so B is the same bytes. int8 per channel uses
//    the largest power-of-two block (16..128) dividing K, its scale repeated per block.
//    Asymmetric int4 packs the zero points two per byte, per row.
//  dequantize_linear: DequantizeLinear(q, scale, zero_point) -> W [N, K] f32, then
//    MatMul(A, Transpose(W)). int8: per-axis (axis 0, zero point 128); int4: blocked
//    (axis 1, block_size G) on uint4 data, which needs opset >= 21.
// A bias is an Add after the product.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ingot/exporters/onnx/lowering.h"
#include "ingot/exporters/onnx/quantized_lowering.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/onnx/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::onnx {

namespace {

// The parameter tensor bound to tensor argument i (a top-level graph input).
const Tensor& state_of(TranslationContext& cx, size_t i) {
  const ExportedProgram& p = cx.lowering().program();
  const ir::ValueId id = std::get<ir::TensorRef>(cx.node().args[i]).id;
  for (size_t j = 0; j < p.graph->inputs.size(); ++j) {
    if (p.graph->inputs[j] == id && p.signature.inputs[j].kind == InputKind::Parameter)
      return p.state.at(p.signature.inputs[j].target);
  }
  cx.unsupported(fmt::format("argument {} is not a parameter of the program", i));
}

std::string target_of(TranslationContext& cx, size_t i) {
  const ExportedProgram& p = cx.lowering().program();
  const ir::ValueId id = std::get<ir::TensorRef>(cx.node().args[i]).id;
  for (size_t j = 0; j < p.graph->inputs.size(); ++j)
    if (p.graph->inputs[j] == id) return p.signature.inputs[j].target;
  return "w";
}

// A zero-copy initializer of t's bytes with other dims (and optionally another type).
std::string relabelled(TranslationContext& cx, const std::string& name, const Tensor& t,
                       std::vector<int64_t> dims, DataType type = DataType::Undefined) {
  TensorProto p = make_tensor(name, contiguous(t));
  p.dims = std::move(dims);
  if (type != DataType::Undefined) p.data_type = type;
  return cx.g().add_initializer(std::move(p));
}

// Two 4-bit values per byte, per row, low nibble first: [rows, ceil(cols / 2)].
Tensor pack_nibbles(const std::vector<uint8_t>& v, int64_t rows, int64_t cols) {
  const int64_t per_row = (cols + 1) / 2;
  std::vector<uint8_t> out(size_t(rows * per_row), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[size_t(r * per_row + c / 2)] |= uint8_t((v[size_t(r * cols + c)] & 15) << (4 * (c & 1)));
  return Tensor::from_vector(out, {rows, per_row});
}

std::vector<uint8_t> zeros_of(const Tensor& zeros, int64_t count, uint8_t fixed) {
  if (!zeros.defined()) return std::vector<uint8_t>(size_t(count), fixed);
  const Tensor z = contiguous(zeros);
  return std::vector<uint8_t>(z.data<uint8_t>(), z.data<uint8_t>() + count);
}

std::string add_bias(TranslationContext& cx, std::string y) {
  if (cx.is_none(4)) return y;
  return cx.op("Add", {y, cx.in(4)});
}

void translate_matmul_nbits(TranslationContext& cx, int64_t bits, int64_t group) {
  const Tensor& q = state_of(cx, 1);
  const Tensor& s = state_of(cx, 2);
  const Tensor zeros = cx.is_none(3) ? Tensor() : state_of(cx, 3);
  const std::string name = target_of(cx, 1);
  const int64_t n = q.size(0), k = bits == 4 ? q.size(1) * 2 : q.size(1);
  int64_t block = group;
  Tensor scales = s;
  if (bits == 8 && group == k) {  // per channel (group < k: a GGUF's Q8_0, one scale per block)
    block = 0;
    for (int64_t b : {128, 64, 32, 16})
      if (k % b == 0) {
        block = b;
        break;
      }
    if (block == 0)
      cx.unsupported(
          fmt::format("int8 MatMulNBits needs in_features divisible by 16, got {}; "
                      "export with quantized_matmul \"dequantize_linear\"",
                      k));
    // One scale per row -> one per block (the same value k / block times).
    scales = contiguous(expand(s, {SymInt(n), SymInt(k / block)}));
  }
  const int64_t blocks = k / block;
  std::vector<std::string> inputs = {
      cx.in(0), relabelled(cx, name + "_nbits", q, {n, blocks, block * bits / 8}),
      relabelled(cx, target_of(cx, 2) + "_nbits", scales, {n * blocks})};
  if (zeros.defined()) {
    Tensor packed = bits == 4 ? pack_nibbles(zeros_of(zeros, n * blocks, 0), n, blocks) : zeros;
    inputs.push_back(relabelled(cx, target_of(cx, 3) + "_nbits", packed, {packed.numel()}));
  }
  NodeOptions o;
  o.domain = "com.microsoft";
  if (cx.node().source.known()) o.doc_string = cx.node().source.str();
  const std::string y =
      cx.g()
          .add_node("MatMulNBits", inputs, {cx.hint()},
                    {attr("K", k), attr("N", n), attr("bits", bits), attr("block_size", block)}, o)
          .at(0);
  cx.set_output(0, add_bias(cx, y));
}

void translate_dequantize_linear(TranslationContext& cx, int64_t bits, int64_t group) {
  const Tensor& q = state_of(cx, 1);
  const Tensor& s = state_of(cx, 2);
  const Tensor zeros = cx.is_none(3) ? Tensor() : state_of(cx, 3);
  const int64_t n = q.size(0), k = bits == 4 ? q.size(1) * 2 : q.size(1);
  std::string w;
  if (bits == 8 && group != k)
    cx.unsupported(
        fmt::format("int8 DequantizeLinear is written per output channel; this weight "
                    "has groups of {} (a GGUF's Q8_0): export with quantized_matmul "
                    "\"matmul_nbits\"",
                    group));
  if (bits == 8) {
    // Per-axis: scale [N], zero point uint8 [N] (128).
    const std::string scale = relabelled(cx, target_of(cx, 2) + "_axis", s, {n});
    const std::string zp = cx.g().add_initializer(
        make_tensor(target_of(cx, 1) + "_zero_point", zeros_of(Tensor(), n, 128), {n}));
    w = cx.op("DequantizeLinear", {cx.in(1), scale, zp}, {attr("axis", int64_t(0))});
  } else {
    if (cx.opset() < 21)
      cx.unsupported(
          fmt::format("int4 DequantizeLinear needs uint4 blocked quantisation "
                      "(opset >= 21), the export uses opset {}; set opset 21 or "
                      "quantized_matmul \"matmul_nbits\"",
                      cx.opset()));
    const int64_t groups = k / group;
    const std::string data =
        relabelled(cx, target_of(cx, 1) + "_uint4", q, {n, k}, DataType::Uint4);
    const Tensor zp = pack_nibbles(zeros_of(zeros, n * groups, 8), n, groups);
    const std::string zpv =
        relabelled(cx, target_of(cx, 1) + "_zero_point", zp, {n, groups}, DataType::Uint4);
    w = cx.op("DequantizeLinear", {data, cx.in(2), zpv},
              {attr("axis", int64_t(1)), attr("block_size", group)});
  }
  const std::string wt = cx.op("Transpose", {w}, {attr("perm", {1, 0})});
  cx.set_output(0, add_bias(cx, cx.op("MatMul", {cx.in(0), wt})));
}

void translate_quantized_linear(TranslationContext& cx) {
  if (cx.in_dtype(0) != DType::F32)
    cx.unsupported("quantised linears are exported for float32 activations only");
  const int64_t bits = cx.int_(5), group = cx.int_(6);
  if (cx.lowering().options().quantized_matmul == "dequantize_linear")
    translate_dequantize_linear(cx, bits, group);
  else
    translate_matmul_nbits(cx, bits, group);
}

INGOT_ONNX_TRANSLATION(quantized_linear, "ingot::quantized_linear", translate_quantized_linear);

void collect_reads(const GraphProto& g, std::set<std::string>& read, bool& microsoft) {
  for (const NodeProto& n : g.node) {
    microsoft = microsoft || n.domain == "com.microsoft";
    for (const std::string& i : n.input) read.insert(i);
    for (const AttributeProto& a : n.attribute)
      if (const auto* sub = std::get_if<Box<GraphProto>>(&a.value))
        collect_reads(**sub, read, microsoft);
  }
  for (const ValueInfoProto& o : g.output) read.insert(o.name);
  for (const ValueInfoProto& i : g.input) read.insert(i.name);  // buffer defaults
}

}  // namespace

void finish_quantized_model(ModelProto& model) {
  bool quantized = false;
  for (const NodeProto& n : model.graph.node)
    quantized = quantized || n.op_type == "MatMulNBits" || n.op_type == "DequantizeLinear";
  if (!quantized) return;
  std::set<std::string> read;
  bool microsoft = false;
  collect_reads(model.graph, read, microsoft);
  auto& inits = model.graph.initializer;
  inits.erase(std::remove_if(inits.begin(), inits.end(),
                             [&](const TensorProto& t) { return !read.contains(t.name); }),
              inits.end());
  bool imported = false;
  for (const OperatorSetId& o : model.opset_import)
    imported = imported || o.domain == "com.microsoft";
  if (microsoft && !imported) model.opset_import.push_back({"com.microsoft", 1});
}

}  // namespace ingot::exporters::onnx
