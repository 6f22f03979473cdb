// ingot::quantized_embedding: rows of an int8 table packed per row or per group of a row
// (functional/quantized.h), dequantised as they are gathered:
// out[i, c] = (q[id_i, c] - 128) * s[id_i, c / G], G = dim / scales.size(1). It lets the
// embedding read the int8 rows of an lm_head tied to it instead of a float copy of the
// table (runtime/passes/int8_embedding_tables.h: per row), and a GGUF's Q8_0 table stay
// packed (models/gguf_packed_linears.h: G 32). The decomposition is the dequantised table
// (core ops) + embedding.
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/ops/index_utils.h"
#include "ingot/ops/registry.h"

namespace ingot {

namespace {

std::vector<OutputMeta> quantized_embedding_shape(const OpArgs& a) {
  const Tensor &q = a.tensor(0), &s = a.tensor(1), &indices = a.tensor(2);
  INGOT_CHECK(q.dim() == 2 && q.dtype() == DType::U8, DTypeError,
              "[{}] qweight must be a 2-D uint8 tensor [num_embeddings, dim], got {} {}", a.name(),
              q.dtype(), q.shape_string());
  INGOT_CHECK(s.dim() == 2 && s.dtype() == DType::F32 && bool(s.sym_size(0) == q.sym_size(0)) &&
                  bool(q.sym_size(1) % s.sym_size(1) == SymInt(0)),
              ShapeError,
              "[{}] scales must be float32 [{}, groups] (groups dividing the row's {} values: "
              "one per row or per group), got {} {}",
              a.name(), q.sym_size(0).str(), q.sym_size(1).str(), s.dtype(), s.shape_string());
  check_index_dtype(indices, a.name(), "indices");
  Shape out = indices.sym_sizes();
  out.push_back(q.sym_size(1));
  return {OutputMeta{DType::F32, out}};
}

void quantized_embedding_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor q = contiguous(a.tensor(0)), s = contiguous(a.tensor(1));
  const std::vector<int64_t> ids = read_indices(a.tensor(2), q.size(0), 0, a.name(), false);
  const int64_t dim = q.size(1);
  // out viewed as [num_indices, dim] f32 rows.
  const Tensor rows = out[0].as_strided({int64_t(ids.size()), dim}, {dim, 1}, 0);
  const uint8_t* table = q.data<uint8_t>();
  const int64_t groups = s.size(1), group = dim / groups;
  float* y = rows.data<float>();
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint8_t* row = table + ids[i] * dim;
    const float* scales = s.data<float>() + ids[i] * groups;
    for (int64_t c = 0; c < dim; ++c)
      y[int64_t(i) * dim + c] = float(int(row[c]) - 128) * scales[c / group];
  }
}

std::vector<Tensor> quantized_embedding_decomposition(const OpArgs& a) {
  const Tensor &q = a.tensor(0), &s = a.tensor(1);
  return {embedding(dequantize_weight(q, s, Tensor(), 8, q.size(1) / s.size(1)), a.tensor(2))};
}

const OpRegistrar kQuantizedEmbedding(
    define_op("ingot::quantized_embedding(Tensor qweight, Tensor scales, Tensor indices) -> Tensor")
        .shape(quantized_embedding_shape)
        .cpu(quantized_embedding_kernel)
        .decompose(quantized_embedding_decomposition));

const OpHandle kQuantizedEmbeddingOp("ingot::quantized_embedding");

}  // namespace

Tensor quantized_embedding(const Tensor& qweight, const Tensor& scales, const Tensor& indices,
                           std::source_location where) {
  CallSiteScope call_site(where);
  return kQuantizedEmbeddingOp({qweight, scales, indices})[0];
}

}  // namespace ingot
