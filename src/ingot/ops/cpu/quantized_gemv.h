// Matrix products on packed, weight-only quantised matrices (the quantized_linear op):
//
//   y[m, n] = sum_k x[m, k] * W[n, k],   W[n, k] = (q[n, k] - z[n, g]) * s[n, g],  g = k / G
//
// Packed layout (PackedWeight), the one the .ingot archive stores:
//  - bits 8: q uint8 [n, k], one byte per weight.
//  - bits 4: q uint8 [n, k / 2], weight 2j in the low nibble of byte j, 2j + 1 in the high
//    nibble (ONNX Runtime's MatMulNBits order, so the ONNX export shares the bytes).
//  - s f32 [n, k / G]; z uint8 [n, k / G] or null, meaning the fixed 2^(bits-1) (128 / 8:
//    symmetric weights stored unsigned).
// Invariants: k % G == 0; bits 4 needs G % 32 == 0 (32 / 64 / 128). q - z is an exact
// integer in f32, so each product equals the dequantise + matmul reference's up to the
// order of the f32 sums.
//
// By default (QuantActivations::Int8) x is quantised to int8 per 32-block and multiplied
// with integer dot products; with f32 activations (Float), small m (decode) streams each
// packed row once per x row and dequantises in registers, larger m (prefill) dequantises
// blocks of rows into f32 and runs cpu::gemm on them. All spread rows of W over the
// thread pool; the kernel table (QuantIsa) is picked at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ingot::cpu {

struct PackedWeight {
  const uint8_t* q = nullptr;
  const float* scales = nullptr;
  const uint8_t* zeros = nullptr;  // null: 2^(bits-1)
  int bits = 8;
  int64_t n = 0, k = 0, group = 0;

  int64_t row_bytes() const { return bits == 8 ? k : k / 2; }
  int64_t groups() const { return k / group; }
  int zero(int64_t row, int64_t g) const {
    return zeros ? zeros[row * groups() + g] : (1 << (bits - 1));
  }
};

// y[m, n] (rows ldy apart) = x[m, k] (rows ldx apart) · dequant(W)^T. Throws ValueError
// on a layout that breaks the invariants above.
void quantized_matmul(const float* x, int64_t ldx, int64_t m, const PackedWeight& w, float* y,
                      int64_t ldy);

// Several weights applied to the same x (the q / k / v projections of one input, or gate
// and up): y[j] [m, n_j] (contiguous) = x · dequant(W_j)^T, each equal to
// quantized_matmul's result for W_j, in one pass of the thread pool over all their rows
// (one fork / join, x quantised once in Int8 mode). The weights must share k, bits, group
// size and whether they have zero points; 1 to kMaxSiblings of them.
inline constexpr size_t kMaxSiblings = 4;
void quantized_matmul_siblings(const float* x, int64_t ldx, int64_t m,
                               std::span<const PackedWeight> w, std::span<float* const> y);

// The f32 weights of rows [r0, r1): out[(r - r0) * k + c] = W[r, c].
void dequantize_rows(const PackedWeight& w, int64_t r0, int64_t r1, float* out);

// Kernel tables, lowest to highest (cpu_features(), so INGOT_ISA caps them too):
//  - Scalar: the portable kernels (any CPU; ARM runs these).
//  - Avx2: AVX2 + FMA + F16C; int8 activations through vpmaddubsw + vpmaddwd.
//  - AvxVnni: Avx2's f32 kernels; int8 activations through AVX-VNNI vpdpbusd on ymm.
//  - Avx512: AVX-512 F/BW/VL/DQ f32 kernels; int8 activations through AVX512-VNNI on zmm
//    (per-row decode kernel, panel GEMM for prefill), or, on a CPU without AVX512-VNNI,
//    Avx2's maddubs kernel.
// The start value is Avx512 where the CPU runs it, else Avx2, else Scalar: AvxVnni is
// selected only by set_quant_isa, its kernel having measured level with or slower than
// maddubs on the one AVX-VNNI CPU measured (docs/quantization.md, "Kernel tables").
enum class QuantIsa { Scalar, Avx2, AvxVnni, Avx512 };
QuantIsa quant_isa();
// Selects the highest table at or below `isa` that the CPU runs; returns it.
QuantIsa set_quant_isa(QuantIsa isa);
// Whether this CPU (cpu_features()) runs `isa`'s kernels.
bool quant_isa_supported(QuantIsa isa);
// The start table (above); tests restore it after selecting others.
QuantIsa default_quant_isa();

// The integer dot-product kernel that int8 activations use at a table (for labels,
// benchmarks and tests): "scalar", "avx2-maddubs", "avxvnni-ymm", "avx512vnni-zmm".
enum class Int8DotKernel { Scalar, Avx2Maddubs, AvxVnniYmm, Avx512VnniZmm };
Int8DotKernel int8_dot_kernel(QuantIsa isa);
const char* int8_dot_kernel_name(Int8DotKernel k);

// How quantized_matmul treats the activations x (process-wide, a runtime choice; the
// environment variable INGOT_QUANT_ACTIVATIONS=int8|float sets the start value):
//  - Int8 (default): each x row is quantised to int8 in blocks of 32 along k
//    (s = max|x| / 127, q = round(x / s): llama.cpp's Q8_0 activations) and multiplied
//    with integer dot products (int8_dot_kernel of the table); per 32-block the int32
//    sum is scaled by s_x * s_w. Up to a few x rows (decode) a per-row kernel streams W;
//    on AVX512-VNNI, from quant_panel_min_rows() rows (prefill) a GEMM with 16 x rows per
//    register reads W once per 16-32 x rows; the ymm kernels (AVX2, AVX-VNNI) take their
//    GEMM with 8 x rows per register from quant_ymm_panel_min_rows() rows. Off the exact result by
//    the activations' rounding (at most sum |W| * s_x / 2 per output; docs/quantization.md has the
//    perplexity). Layouts it covers: bits 8 with one group per row (G == k) and no zero points
//    (what the export packs), bits 4 with G in {32, 64} or a multiple of 128, with or without zero
//    points; other layouts run the Float path. QuantIsa::Scalar runs the portable int8 kernel (the
//    reference the vector kernels are tested against).
//  - Float (opt-out, exact): x stays f32 and the weights are dequantised in registers;
//    results equal the dequantise + matmul reference to f32 rounding (what conformance
//    checks against other runtimes at 1e-3 pin).
enum class QuantActivations { Float, Int8 };
QuantActivations quant_activations();
QuantActivations set_quant_activations(QuantActivations a);  // returns the previous one
// True when Int8 mode runs integer dot products for `w` (its layout is covered).
bool int8_activations_apply(const PackedWeight& w);

// Int8 mode on AVX512-VNNI: from this many x rows (default 5, the measured crossover;
// INGOT_QUANT_PANEL_MIN_ROWS sets the start value) the prefill GEMM with the panel layout
// runs instead of the per-row kernel. Same integer sums either way; benchmarks set it
// high to time the per-row kernel. Returns the previous value; rows >= 1.
int64_t quant_panel_min_rows();
int64_t set_quant_panel_min_rows(int64_t rows);
// The same for the ymm kernel tables (Avx2, AvxVnni, and Avx512 without AVX512-VNNI): from
// this many x rows (default: the measured crossover, docs/quantization.md;
// INGOT_QUANT_YMM_PANEL_MIN_ROWS sets the start value) the 8-row panel GEMM runs instead of
// the ymm row kernels.
int64_t quant_ymm_panel_min_rows();
int64_t set_quant_ymm_panel_min_rows(int64_t rows);

// Sets the activation mode for a scope (tests, benchmarks), restoring the previous one.
class ScopedQuantActivations {
 public:
  explicit ScopedQuantActivations(QuantActivations a) : previous_(set_quant_activations(a)) {}
  ~ScopedQuantActivations() { set_quant_activations(previous_); }
  ScopedQuantActivations(const ScopedQuantActivations&) = delete;
  ScopedQuantActivations& operator=(const ScopedQuantActivations&) = delete;

 private:
  QuantActivations previous_;
};

}  // namespace ingot::cpu
