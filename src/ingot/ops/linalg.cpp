// Matrix-product ops: mm, bmm, addmm, matmul, linear. Shape functions check ranks, the
// shared dim and dtypes over SymInt; kernels build strided (batch..., rows, cols) views
// of operands and output and hand them to cpu::matmul_into (cpu::gemm underneath).
#include "ingot/ops/functional/linalg.h"

#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/matmul.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> one(DType t, Shape s) {
  return {OutputMeta{t, std::move(s)}};
}

void check_rank(const Tensor& t, int64_t rank, std::string_view op, std::string_view arg) {
  INGOT_CHECK(t.dim() == rank, ShapeError, "[{}] {} must be a {}-D tensor, got shape {}", op, arg,
              rank, t.shape_string());
}

// Operands of one product share a dtype (as in ATen); bool has no product.
void check_dtypes(std::string_view op, const Tensor& a, const Tensor& b) {
  INGOT_CHECK(a.dtype() == b.dtype(), DTypeError,
              "[{}] expected both operands to have the same dtype, got {} and {}", op, a.dtype(),
              b.dtype());
  INGOT_CHECK(a.dtype() != DType::Bool, DTypeError, "[{}] bool tensors cannot be multiplied", op);
}

void check_inner(std::string_view op, const Tensor& a, const Tensor& b, const SymInt& ka,
                 const SymInt& kb) {
  INGOT_CHECK(bool(ka == kb), ShapeError, "[{}] shapes {} and {} cannot be multiplied", op,
              a.shape_string(), b.shape_string());
}

// A view of t with sizes `sizes`, where t's dims align with the last t.dim() dims of
// `sizes` and are either equal or 1 (stride 0 where broadcast); leading new dims stride 0.
Tensor broadcast_view(const Tensor& t, const IntShape& sizes) {
  const IntShape tsz = t.sizes();
  const IntShape& tst = t.strides();
  IntShape strides(sizes.size(), 0);
  const size_t lead = sizes.size() - tsz.size();
  for (size_t d = 0; d < tsz.size(); ++d)
    strides[lead + d] = (tsz[d] == 1 && sizes[lead + d] != 1) ? 0 : tst[d];
  return t.as_strided(sizes, strides, t.storage_offset());
}

// The output viewed with `sizes` (same element count, contiguous).
Tensor out_view(const Tensor& out, const IntShape& sizes) {
  return out.as_strided(sizes, contiguous_strides(sizes), out.storage_offset());
}

// [..., rows, cols] view of a 2-D matrix's transpose (no copy).
Tensor transposed(const Tensor& t) {
  return t.as_strided({t.size(1), t.size(0)}, {t.stride(1), t.stride(0)}, t.storage_offset());
}

// ---- mm / bmm ----------------------------------------------------------------------------

std::vector<OutputMeta> mm_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &y = a.tensor(1);
  check_rank(x, 2, a.name(), "self");
  check_rank(y, 2, a.name(), "mat2");
  check_dtypes(a.name(), x, y);
  check_inner(a.name(), x, y, x.sym_size(1), y.sym_size(0));
  return one(x.dtype(), {x.sym_size(0), y.sym_size(1)});
}

void mm_kernel(const OpArgs& a, std::span<const Tensor> out) {
  cpu::matmul_into(out[0], a.tensor(0), a.tensor(1));
}

std::vector<OutputMeta> bmm_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &y = a.tensor(1);
  check_rank(x, 3, a.name(), "self");
  check_rank(y, 3, a.name(), "mat2");
  check_dtypes(a.name(), x, y);
  INGOT_CHECK(bool(x.sym_size(0) == y.sym_size(0)), ShapeError,
              "[{}] batch sizes differ: shapes {} and {}", a.name(), x.shape_string(),
              y.shape_string());
  check_inner(a.name(), x, y, x.sym_size(2), y.sym_size(1));
  return one(x.dtype(), {x.sym_size(0), x.sym_size(1), y.sym_size(2)});
}

// ---- addmm ---------------------------------------------------------------------------------

std::vector<OutputMeta> addmm_shape(const OpArgs& a) {
  const Tensor &self = a.tensor(0), &x = a.tensor(1), &y = a.tensor(2);
  check_rank(x, 2, a.name(), "mat1");
  check_rank(y, 2, a.name(), "mat2");
  check_dtypes(a.name(), x, y);
  check_dtypes(a.name(), self, x);
  check_inner(a.name(), x, y, x.sym_size(1), y.sym_size(0));
  Shape out{x.sym_size(0), y.sym_size(1)};
  Shape b = broadcast_shapes(self.sym_sizes(), out, a.name());
  INGOT_CHECK(b.size() == 2 && bool(b[0] == out[0]) && bool(b[1] == out[1]), ShapeError,
              "[{}] self of shape {} does not broadcast to the product's shape {}", a.name(),
              self.shape_string(), shape_str(out));
  return one(x.dtype(), out);
}

void addmm_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const double beta = a.scalar(3).to_double(), alpha = a.scalar(4).to_double();
  if (beta != 0.0) cpu::copy_cast(out[0], a.tensor(0));
  cpu::matmul_into(out[0], a.tensor(1), a.tensor(2), alpha, beta);
}

// ---- matmul --------------------------------------------------------------------------------

// Batch dims of both operands (1-D operands have none) broadcast together.
Shape matmul_batch(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &y = a.tensor(1);
  Shape bx(x.sym_sizes().begin(), x.sym_sizes().end() - std::min<int64_t>(x.dim(), 2));
  Shape by(y.sym_sizes().begin(), y.sym_sizes().end() - std::min<int64_t>(y.dim(), 2));
  return broadcast_shapes(bx, by, a.name());
}

std::vector<OutputMeta> matmul_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &y = a.tensor(1);
  INGOT_CHECK(x.dim() >= 1 && y.dim() >= 1, ShapeError,
              "[{}] both arguments need at least 1 dimension, got shapes {} and {}", a.name(),
              x.shape_string(), y.shape_string());
  check_dtypes(a.name(), x, y);
  const SymInt& kx = x.sym_size(-1 + x.dim());
  const SymInt& ky = y.dim() == 1 ? y.sym_size(0) : y.sym_size(y.dim() - 2);
  check_inner(a.name(), x, y, kx, ky);
  Shape out = matmul_batch(a);
  if (x.dim() >= 2) out.push_back(x.sym_size(x.dim() - 2));
  if (y.dim() >= 2) out.push_back(y.sym_size(y.dim() - 1));
  return one(x.dtype(), out);
}

void matmul_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor &x = a.tensor(0), &y = a.tensor(1);
  const IntShape batch = to_int_shape(matmul_batch(a));
  const int64_t n = x.dim() >= 2 ? x.size(x.dim() - 2) : 1;
  const int64_t k = x.size(x.dim() - 1);
  const int64_t p = y.dim() >= 2 ? y.size(y.dim() - 1) : 1;
  // 1-D operands become a [1, k] row / [k, 1] column.
  const Tensor x2 = x.dim() == 1 ? x.as_strided({1, k}, {0, x.stride(0)}, x.storage_offset()) : x;
  const Tensor y2 = y.dim() == 1 ? y.as_strided({k, 1}, {y.stride(0), 0}, y.storage_offset()) : y;
  IntShape xs = batch, ys = batch, os = batch;
  xs.insert(xs.end(), {n, k});
  ys.insert(ys.end(), {k, p});
  os.insert(os.end(), {n, p});
  cpu::matmul_into(out_view(out[0], os), broadcast_view(x2, xs), broadcast_view(y2, ys));
}

// ---- linear --------------------------------------------------------------------------------

std::vector<OutputMeta> linear_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &w = a.tensor(1);
  const Tensor bias = a.optional_tensor(2);
  INGOT_CHECK(x.dim() >= 1, ShapeError, "[{}] input must have at least 1 dimension, got shape {}",
              a.name(), x.shape_string());
  check_rank(w, 2, a.name(), "weight");
  check_dtypes(a.name(), x, w);
  INGOT_CHECK(bool(x.sym_size(x.dim() - 1) == w.sym_size(1)), ShapeError,
              "[{}] input of shape {} and weight of shape {} cannot be multiplied: input's last "
              "dim must equal weight's dim 1",
              a.name(), x.shape_string(), w.shape_string());
  Shape out(x.sym_sizes().begin(), x.sym_sizes().end() - 1);
  out.push_back(w.sym_size(0));
  if (bias.defined()) {
    check_dtypes(a.name(), x, bias);
    Shape b = broadcast_shapes(bias.sym_sizes(), out, a.name());
    bool fits = b.size() == out.size();
    for (size_t i = 0; fits && i < b.size(); ++i) fits = bool(b[i] == out[i]);
    INGOT_CHECK(fits, ShapeError, "[{}] bias of shape {} does not broadcast to the output {}",
                a.name(), bias.shape_string(), shape_str(out));
  }
  return one(x.dtype(), out);
}

void linear_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor &x = a.tensor(0), &w = a.tensor(1);
  const Tensor bias = a.optional_tensor(2);
  if (bias.defined()) cpu::copy_cast(out[0], bias);
  const int64_t k = w.size(1), p = w.size(0);
  // input [..., k] -> [..., n = 1 or rows, k]: treat all leading dims as batch of rows.
  IntShape batch = x.sizes();
  batch.pop_back();
  const Tensor x2 = x.dim() == 1 ? x.as_strided({1, k}, {0, x.stride(0)}, x.storage_offset()) : x;
  const int64_t n = x.dim() == 1 ? 1 : batch.back();
  if (x.dim() >= 2) batch.pop_back();
  IntShape xs = batch, ws = batch, os = batch;
  xs.insert(xs.end(), {n, k});
  ws.insert(ws.end(), {k, p});
  os.insert(os.end(), {n, p});
  cpu::matmul_into(out_view(out[0], os), x2.as_strided(xs, x2.strides(), x2.storage_offset()),
                   broadcast_view(transposed(w), ws), 1.0, bias.defined() ? 1.0 : 0.0);
}

const OpRegistrar kMm(
    define_op("mm(Tensor self, Tensor mat2) -> Tensor").shape(mm_shape).cpu(mm_kernel));
const OpRegistrar kBmm(
    define_op("bmm(Tensor self, Tensor mat2) -> Tensor").shape(bmm_shape).cpu(mm_kernel));
const OpRegistrar kAddmm(
    define_op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
              "-> Tensor")
        .shape(addmm_shape)
        .cpu(addmm_kernel));
const OpRegistrar kMatmul(define_op("matmul(Tensor self, Tensor other) -> Tensor")
                              .shape(matmul_shape)
                              .cpu(matmul_kernel));
const OpRegistrar kLinear(
    define_op("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
        .shape(linear_shape)
        .cpu(linear_kernel));

const OpHandle kMmOp("mm"), kBmmOp("bmm"), kAddmmOp("addmm"), kMatmulOp("matmul"),
    kLinearOp("linear");

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2, std::source_location where) {
  CallSiteScope call_site(where);
  return kMmOp({self, mat2})[0];
}
Tensor bmm(const Tensor& self, const Tensor& mat2, std::source_location where) {
  CallSiteScope call_site(where);
  return kBmmOp({self, mat2})[0];
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta,
             Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kAddmmOp({self, mat1, mat2, beta, alpha})[0];
}
Tensor matmul(const Tensor& self, const Tensor& other, std::source_location where) {
  CallSiteScope call_site(where);
  return kMatmulOp({self, other})[0];
}
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias, std::source_location where) {
  CallSiteScope call_site(where);
  return kLinearOp({input, weight, bias.defined() ? Value(bias) : Value()})[0];
}

}  // namespace ingot
