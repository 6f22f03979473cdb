// GEMM driver: argument checks, ISA selection, the small-m (GEMV) route and the
// BLIS-style blocked loop nest over packed panels, split across the thread pool.
//
// Blocked loop nest for one thread's sub-rectangle of C (rows [m0, m1), cols [n0, n1)):
//   for jc (nc columns)         B block [kc, nc] packed once, reused by every row block
//     for pc (kc steps of k)
//       pack B[pc, jc]
//       for ic (mc rows)        A block [mc, kc] packed, stays in L2
//         for jr (nr columns)   B panel [kc, nr] stays in L1 across the ir loop
//           for ir (mr rows)    micro-kernel: C tile [mr, nr] += A panel · B panel
// The first pc step applies beta; later steps accumulate (beta = 1).
#include "ingot/ops/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ingot/core/cpu_features.h"
#include "ingot/core/error.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/gemm_internal.h"

namespace ingot::cpu {
namespace {

using detail::GemmKernels;

GemmIsa detect_isa() {
  if (cpu_features().avx512_kernels()) return GemmIsa::Avx512;
  if (cpu_features().avx2_kernels()) return GemmIsa::Avx2;
  return GemmIsa::Scalar;
}

GemmIsa initial_isa() {
  GemmIsa isa = detect_isa();
  if (const char* env = std::getenv("INGOT_GEMM_ISA")) {
    const std::string v = env;
    GemmIsa want = v == "scalar" ? GemmIsa::Scalar : v == "avx2" ? GemmIsa::Avx2 : isa;
    isa = std::min(isa, want);
  }
  return isa;
}

std::atomic<GemmIsa>& isa_slot() {
  static std::atomic<GemmIsa> slot{initial_isa()};
  return slot;
}

const GemmKernels& active_kernels() {
  switch (isa_slot().load(std::memory_order_relaxed)) {
    case GemmIsa::Avx512:
      return detail::avx512_kernels();
    case GemmIsa::Avx2:
      return detail::avx2_kernels();
    default:
      return detail::scalar_kernels();
  }
}

// ---- scratch memory -------------------------------------------------------------------

struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
};

// A per-thread growable, 64-byte aligned f32 buffer; steady-state calls do not allocate.
class Scratch {
 public:
  float* get(size_t n) {
    if (n > size_) {
      ptr_.reset(static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64))));
      size_ = n;
    }
    return ptr_.get();
  }

 private:
  std::unique_ptr<float, AlignedFree> ptr_;
  size_t size_ = 0;
};

thread_local Scratch t_pack_a, t_pack_b, t_small;

// ---- epilogue -------------------------------------------------------------------------

// C[r, c] = alpha * src[r, c] + beta * C[r, c] for an [rows, cols] tile (beta == 0: C is
// not read).
void store_tile(void* c, DType c_dtype, int64_t ldc, int64_t rows, int64_t cols, const float* src,
                int64_t lds, float alpha, float beta) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* s = src + i * lds;
    if (c_dtype == DType::F32) {
      float* d = static_cast<float*>(c) + i * ldc;
      if (beta == 0.0f) {
        for (int64_t j = 0; j < cols; ++j) d[j] = alpha * s[j];
      } else {
        for (int64_t j = 0; j < cols; ++j) d[j] = alpha * s[j] + beta * d[j];
      }
    } else {
      for (int64_t j = 0; j < cols; ++j) {
        float v = alpha * s[j];
        if (beta != 0.0f) v += beta * detail::load_as_float(c, c_dtype, i * ldc + j);
        detail::store_from_float(c, c_dtype, i * ldc + j, v);
      }
    }
  }
}

// k == 0: C = beta * C.
void scale_c(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      const int64_t idx = i * g.ldc + j;
      const float v = g.beta == 0.0f ? 0.0f : g.beta * detail::load_as_float(g.c, g.c_dtype, idx);
      detail::store_from_float(g.c, g.c_dtype, idx, v);
    }
}

// ---- small m ---------------------------------------------------------------------------

// Rows of A up to which a product with B in the linear layout streams W (gemv_linear).
constexpr int64_t kSmallM = 16;

// x = A as contiguous f32 [m, k] (a view of A itself when it already is).
const float* contiguous_a(const GemmArgs& g, int64_t* ldx) {
  if (g.a.dtype == DType::F32 && g.a.stride_col == 1) {
    *ldx = g.a.stride_row;
    return static_cast<const float*>(g.a.data);
  }
  float* x = t_small.get(size_t(g.m * g.k));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t p = 0; p < g.k; ++p)
      x[i * g.k + p] =
          detail::load_as_float(g.a.data, g.a.dtype, i * g.a.stride_row + p * g.a.stride_col);
  *ldx = g.k;
  return x;
}

// x split as two bf16 arrays xh + xl (round-to-nearest hi part, then the rounded
// remainder), rows kpad apart and zero-padded; for GemvBf16Fn.
const uint16_t* split_bf16(const GemmArgs& g, int64_t kpad) {
  auto* xs = reinterpret_cast<uint16_t*>(t_small.get(size_t(g.m * kpad)));  // 2 x m x kpad u16
  uint16_t* xh = xs;
  uint16_t* xl = xs + g.m * kpad;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t p = 0; p < kpad; ++p) {
      const float v = p < g.k ? detail::load_as_float(g.a.data, g.a.dtype,
                                                      i * g.a.stride_row + p * g.a.stride_col)
                              : 0.0f;
      const uint16_t hi = BFloat16::round_from_float(v);
      xh[i * kpad + p] = hi;
      xl[i * kpad + p] = BFloat16::round_from_float(v - detail::bf16_bits_to_float(hi));
    }
  return xs;
}

// bf16 activations times bf16 weights in the linear layout, more rows than a GEMV (a
// prefill): the vdpbf16ps tile kernel (gemm_bf16_avx512.cpp), no packing or conversion.
// Each thread takes a contiguous range of weight rows (C columns) and walks it in blocks
// of kBf16Nc rows, each block's f32 sums written to a per-thread [m, kBf16Nc] buffer and
// stored once (alpha, beta, C's dtype).
bool bf16_dot_applies(const GemmKernels& kr, const GemmArgs& g) {
  return kr.gemm_bf16_dot != nullptr && g.m > detail::kGemvMaxM && g.a.dtype == DType::BF16 &&
         g.b.dtype == DType::BF16 && g.a.stride_col == 1 && g.b.stride_row == 1;
}

// m <= kSmallM and B in the linear layout (stride_row == 1): stream the rows of W, no
// packing. m <= kGemvMaxM (decode) is one GEMV kernel call per chunk of W rows; a larger
// small m (a short prefill) runs the same kernels over groups of kGemvMaxM rows of x,
// the chunk of W (64 rows) read from memory once and from L2 by the later groups. For
// such m the blocked GEMM's packing pass over W (converted to f32) and its 14-row tiles
// (16 rows = two tiles, 12 of 28 rows padding) cost as much as the product itself.
bool gemv_linear_applies(const GemmKernels& kr, const GemmArgs& g) {
  return !bf16_dot_applies(kr, g) && g.m <= kSmallM && g.b.stride_row == 1;
}

// A's rows as the GEMV kernels read them, prepared once per product (gemv_linear) or once
// for several products with the same A (gemm_siblings).
struct GemvInput {
  bool bf16_dot = false;     // the bf16 dot-product kernel (decode, bf16 weights)
  bool x_is_bf16 = false;    // A already bf16: no low half
  const float* x = nullptr;  // f32 rows, ldx apart (not bf16_dot)
  int64_t ldx = 0;
  const uint16_t* xs = nullptr;  // bf16 rows xh then xl, kpad apart (bf16_dot)
  int64_t kpad = 0;
};

GemvInput gemv_input(const GemmKernels& kr, const GemmArgs& g) {
  GemvInput in;
  in.bf16_dot = g.b.dtype == DType::BF16 && kr.gemv_bf16 != nullptr && g.m <= detail::kGemvMaxM;
  in.x_is_bf16 = g.a.dtype == DType::BF16;
  in.kpad = (g.k + detail::kGemvBf16Pad - 1) / detail::kGemvBf16Pad * detail::kGemvBf16Pad;
  if (in.bf16_dot) {
    in.xs = split_bf16(g, in.kpad);
  } else {
    in.x = contiguous_a(g, &in.ldx);
  }
  return in;
}

// At least ~64 KiB of weights per task so the pool's wake-up cost stays small.
int64_t gemv_grain(int64_t k) {
  return std::max<int64_t>(64, (int64_t(1) << 14) / std::max<int64_t>(k, 1));
}

// Columns [nb, ne) of C (rows of W) of the product g, from the prepared rows of A.
void gemv_linear_rows(const GemmKernels& kr, const GemmArgs& g, const GemvInput& in, int64_t nb,
                      int64_t ne) {
  constexpr int64_t kChunk = 64;  // columns of C per kernel call
  float out[kSmallM * kChunk];
  int64_t start = nb;  // the rows from here on go by chunks
  // One row of x: the range of W rows is read as kPanelStreams streams (the range cut in
  // that many parts, row i of each part computed together), as gemv_panels. The last
  // rows (fewer than S) go through the same kernel with the last one repeated, so every
  // row's sum is the same bits however the rows are split (gemm_siblings splits them
  // differently from gemm).
  if (!in.bf16_dot && g.m == 1 && kr.gemv_row_streams != nullptr) {
    constexpr int S = detail::kPanelStreams;
    const int64_t part = (ne - nb) / S;
    const auto run = [&](const int64_t* rows, int count) {
      kr.gemv_row_streams(g.k, in.x, g.b.data, g.b.dtype, g.b.stride_col, rows, out);
      for (int s = 0; s < count; ++s)
        store_tile(const_cast<char*>(detail::elem_ptr(g.c, g.c_dtype, rows[s])), g.c_dtype, g.ldc,
                   1, 1, out + s, 1, g.alpha, g.beta);
    };
    int64_t rows[S];
    for (int64_t i = 0; i < part; ++i) {
      for (int s = 0; s < S; ++s) rows[s] = nb + s * part + i;
      run(rows, S);
    }
    const int64_t rest = ne - (nb + S * part);
    if (rest > 0) {
      for (int s = 0; s < S; ++s) rows[s] = nb + S * part + std::min<int64_t>(s, rest - 1);
      run(rows, int(rest));
    }
    start = ne;
  }
  for (int64_t n0 = start; n0 < ne; n0 += kChunk) {
    const int64_t n1 = std::min(ne, n0 + kChunk);
    if (in.bf16_dot) {
      kr.gemv_bf16(g.m, g.k, in.xs, in.x_is_bf16 ? nullptr : in.xs + g.m * in.kpad, in.kpad,
                   static_cast<const uint16_t*>(g.b.data), g.b.stride_col, n0, n1, out, kChunk);
    } else {
      for (int64_t i0 = 0; i0 < g.m; i0 += detail::kGemvMaxM) {
        kr.gemv_dot(std::min(detail::kGemvMaxM, g.m - i0), g.k, in.x + i0 * in.ldx, in.ldx,
                    g.b.data, g.b.dtype, g.b.stride_col, n0, n1, out + i0 * kChunk, kChunk);
      }
    }
    void* c = const_cast<char*>(detail::elem_ptr(g.c, g.c_dtype, n0));
    store_tile(c, g.c_dtype, g.ldc, g.m, n1 - n0, out, kChunk, g.alpha, g.beta);
  }
}

void gemv_linear(const GemmKernels& kr, const GemmArgs& g) {
  const GemvInput in = gemv_input(kr, g);
  parallel_for(0, g.n, gemv_grain(g.k),
               [&](int64_t nb, int64_t ne) { gemv_linear_rows(kr, g, in, nb, ne); });
}

// The bf16 tile route (bf16_dot_applies, above).
constexpr int64_t kBf16Nc = 96;   // weight rows per block: 96 x 1024 x 2 B in L2
constexpr int64_t kBf16Unit = 6;  // columns per split unit (the kernel's tile width)

// Columns [nb, ne) of C on the bf16 tile route; nb a multiple of kBf16Unit, so the tiles
// are the same whatever range a thread gets.
void gemm_bf16_dot_rows(const GemmKernels& kr, const GemmArgs& g, int64_t nb, int64_t ne) {
  const auto* a = static_cast<const uint16_t*>(g.a.data);
  const auto* w = static_cast<const uint16_t*>(g.b.data);
  float* buf = t_pack_a.get(size_t(g.m * kBf16Nc));
  for (int64_t n0 = nb; n0 < ne; n0 += kBf16Nc) {
    const int64_t n1 = std::min(ne, n0 + kBf16Nc);
    kr.gemm_bf16_dot(g.m, g.k, a, g.a.stride_row, w, g.b.stride_col, n0, n1, buf, kBf16Nc);
    void* c = const_cast<char*>(detail::elem_ptr(g.c, g.c_dtype, n0));
    store_tile(c, g.c_dtype, g.ldc, g.m, n1 - n0, buf, kBf16Nc, g.alpha, g.beta);
  }
}

// Small products (under 4 MFLOP) stay on one thread.
int64_t bf16_dot_grain(double flops, int64_t units) {
  return flops < 4e6 ? units : 1;
}

void gemm_bf16_dot(const GemmKernels& kr, const GemmArgs& g) {
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k);
  const int64_t units = (g.n + kBf16Unit - 1) / kBf16Unit;
  parallel_for(0, units, bf16_dot_grain(flops, units), [&](int64_t ub, int64_t ue) {
    gemm_bf16_dot_rows(kr, g, ub * kBf16Unit, std::min(g.n, ue * kBf16Unit));
  });
}

// m <= kGemvMaxM and B rows contiguous (stride_col == 1, e.g. x @ W with W [k, n]):
// accumulate rows of B scaled by x into column chunks of C.
void gemv_rows(const GemmArgs& g) {
  int64_t ldx = 0;
  const float* x = contiguous_a(g, &ldx);
  constexpr int64_t kChunk = 256;
  parallel_for(0, g.n, kChunk, [&](int64_t nb, int64_t ne) {
    float acc[detail::kGemvMaxM * kChunk];
    for (int64_t n0 = nb; n0 < ne; n0 += kChunk) {
      const int64_t w = std::min(ne, n0 + kChunk) - n0;
      std::fill(acc, acc + g.m * kChunk, 0.0f);
      for (int64_t p = 0; p < g.k; ++p) {
        const int64_t off = p * g.b.stride_row + n0;
        for (int64_t i = 0; i < g.m; ++i) {
          const float xv = x[i * ldx + p];
          float* a = acc + i * kChunk;
          switch (g.b.dtype) {
            case DType::F32: {
              const float* brow = static_cast<const float*>(g.b.data) + off;
              for (int64_t j = 0; j < w; ++j) a[j] += xv * brow[j];
              break;
            }
            case DType::BF16: {
              const uint16_t* brow = static_cast<const uint16_t*>(g.b.data) + off;
              for (int64_t j = 0; j < w; ++j) a[j] += xv * detail::bf16_bits_to_float(brow[j]);
              break;
            }
            default: {
              const uint16_t* brow = static_cast<const uint16_t*>(g.b.data) + off;
              for (int64_t j = 0; j < w; ++j) a[j] += xv * Half::to_float(brow[j]);
              break;
            }
          }
        }
      }
      void* c = const_cast<char*>(detail::elem_ptr(g.c, g.c_dtype, n0));
      store_tile(c, g.c_dtype, g.ldc, g.m, w, acc, kChunk, g.alpha, g.beta);
    }
  });
}

// ---- blocked GEMM ----------------------------------------------------------------------

// C (f32) rows [m0, m1) x cols [n0, n1) of alpha * A·B + beta * C, on this thread. B is
// g.b, packed block by block here, or `panels` already packed as this table's B panels
// over the whole k (gemm.h PanelWeight; n0 a multiple of nr).
void gemm_block_range(const GemmKernels& kr, const GemmArgs& g, const float* panels, float* c,
                      int64_t ldc, float alpha, float beta, int64_t m0, int64_t m1, int64_t n0,
                      int64_t n1) {
  const int mr = kr.mr, nr = kr.nr;
  // Prepacked panels under few rows of A: the whole k in one step when the A block still
  // fits in L2 (256 KiB), so each B panel is one long sequential read.
  const int64_t kc_step =
      panels && (m1 - m0) * g.k * int64_t(sizeof(float)) <= (int64_t(256) << 10) ? g.k : kr.kc;
  const int64_t kc_max = std::min(kc_step, g.k);
  const int64_t nc_max = std::min(kr.nc, (n1 - n0 + nr - 1) / nr * nr);
  const int64_t mc_max = std::min(kr.mc, (m1 - m0 + mr - 1) / mr * mr);
  float* bbuf = panels ? nullptr : t_pack_b.get(size_t(kc_max * nc_max));
  float* abuf = t_pack_a.get(size_t(kc_max * mc_max));
  alignas(64) float tile[32 * 64];  // mr * nr <= 2048 for every table

  for (int64_t jc = n0; jc < n1; jc += kr.nc) {
    const int64_t nc = std::min(kr.nc, n1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kc_step) {
      const int64_t kc = std::min(kc_step, g.k - pc);
      const float beta_step = pc == 0 ? beta : 1.0f;
      // The block's first panel and the distance between its panels.
      const float* b_block = bbuf;
      int64_t panel_stride = kc * nr;
      if (panels) {
        b_block = panels + (jc / nr) * g.k * nr + pc * nr;
        panel_stride = g.k * nr;
      } else {
        kr.pack_b(g.b, pc, kc, jc, nc, nr, bbuf);
      }
      for (int64_t ic = m0; ic < m1; ic += kr.mc) {
        const int64_t mc = std::min(kr.mc, m1 - ic);
        kr.pack_a(g.a, ic, mc, pc, kc, mr, abuf);
        // Prepacked panels come from memory, not from a block packed just now: the next
        // panel's kc rows are prefetched into L2 a share per micro-kernel call.
        const int64_t panel_lines = panels ? kc * nr * int64_t(sizeof(float)) / 64 : 0;
        const int64_t lines_per_call =
            (panel_lines + (mc + mr - 1) / mr - 1) / ((mc + mr - 1) / mr);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          const float* bp = b_block + (jr / nr) * panel_stride;
          const char* next =
              jr + nr < nc ? reinterpret_cast<const char*>(bp + panel_stride) : nullptr;
          const int64_t cols = std::min<int64_t>(nr, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += mr) {
            if (next) {
              const int64_t l0 = (ir / mr) * lines_per_call;
              const int64_t l1 = std::min(panel_lines, l0 + lines_per_call);
              for (int64_t l = l0; l < l1; ++l) __builtin_prefetch(next + l * 64, 0, 2);
            }
            const float* ap = abuf + (ir / mr) * kc * mr;
            const int64_t rows = std::min<int64_t>(mr, mc - ir);
            float* ct = c + (ic + ir) * ldc + jc + jr;
            if (rows == mr && cols == nr) {
              kr.micro(kc, ap, bp, ct, ldc, alpha, beta_step);
            } else if (cols == nr && kr.edge_tiles != nullptr) {
              kr.edge_tiles[rows - 1](kc, ap, bp, ct, ldc, alpha, beta_step);
            } else {
              kr.micro(kc, ap, bp, tile, nr, 1.0f, 0.0f);
              store_tile(ct, DType::F32, ldc, rows, cols, tile, nr, alpha, beta_step);
            }
          }
        }
      }
    }
  }
}

// Splits C among the pool's threads (along n when it has enough column panels, else
// along m) and runs the blocked loop nest on each part (`panels`: see gemm_block_range).
void gemm_blocked(const GemmKernels& kr, const GemmArgs& g, float* c, int64_t ldc, float alpha,
                  float beta, const float* panels = nullptr) {
  const int64_t threads = num_threads();
  const double flops = 2.0 * double(g.m) * double(g.n) * double(g.k);
  const int64_t n_panels = (g.n + kr.nr - 1) / kr.nr;
  const int64_t m_panels = (g.m + kr.mr - 1) / kr.mr;
  const bool tiny = flops < 4e6;
  if (tiny || threads == 1) {
    gemm_block_range(kr, g, panels, c, ldc, alpha, beta, 0, g.m, 0, g.n);
  } else if (n_panels >= 2 * threads || n_panels >= m_panels) {
    parallel_for(0, n_panels, 1, [&](int64_t pb, int64_t pe) {
      gemm_block_range(kr, g, panels, c, ldc, alpha, beta, 0, g.m, pb * kr.nr,
                       std::min(g.n, pe * kr.nr));
    });
  } else {
    parallel_for(0, m_panels, 1, [&](int64_t pb, int64_t pe) {
      gemm_block_range(kr, g, panels, c, ldc, alpha, beta, pb * kr.mr, std::min(g.m, pe * kr.mr), 0,
                       g.n);
    });
  }
}

bool is_supported_float(DType t) {
  return t == DType::F32 || t == DType::BF16 || t == DType::F16;
}

void check_args(const GemmArgs& g) {
  INGOT_CHECK(g.m >= 0 && g.n >= 0 && g.k >= 0, ValueError,
              "[gemm] sizes must be non-negative, got m={} n={} k={}", g.m, g.n, g.k);
  INGOT_CHECK(is_supported_float(g.a.dtype), DTypeError,
              "[gemm] A has dtype {}; expected float32, bfloat16 or float16", g.a.dtype);
  INGOT_CHECK(is_supported_float(g.b.dtype), DTypeError,
              "[gemm] B has dtype {}; expected float32, bfloat16 or float16", g.b.dtype);
  INGOT_CHECK(is_supported_float(g.c_dtype), DTypeError,
              "[gemm] C has dtype {}; expected float32, bfloat16 or float16", g.c_dtype);
  INGOT_CHECK(g.m <= 1 || g.ldc >= g.n, ValueError,
              "[gemm] ldc={} is smaller than n={}: rows of C would overlap", g.ldc, g.n);
}

// ---- weights packed once ---------------------------------------------------------------

// m <= kGemvMaxM against packed panels of the active table's width. Each thread takes a
// range of panels; at m = 1 it reads the range as kPanelStreams sequential streams (the
// range cut in that many parts, panel i of each part computed together), else as one.
void gemv_panels(const GemmKernels& kr, int64_t m, const float* x, int64_t ldx,
                 const PanelWeight& w, float* y, int64_t ldy, float beta) {
  constexpr int S = detail::kPanelStreams;
  const int64_t width = w.width;
  const int64_t panels = (w.n + width - 1) / width;
  const float* const data = w.data;
  const int64_t panel_floats = w.k * width;
  // Panel q's sums (out: [m, width]) stored into y.
  const auto store = [&](int64_t q, const float* out) {
    store_tile(y + q * width, DType::F32, ldy, m, std::min(width, w.n - q * width), out, width,
               1.0f, beta);
  };
  // At least ~64 KiB of weights per task, as in gemv_linear.
  const int64_t grain_rows = std::max<int64_t>(64, (int64_t(1) << 14) / std::max<int64_t>(w.k, 1));
  parallel_for(0, panels, (grain_rows + width - 1) / width, [&](int64_t qb, int64_t qe) {
    alignas(64) float out[detail::kGemvMaxM * 64];  // [m, width] or [S, width]; width <= 64
    int64_t q = qb;
    if (m == 1 && kr.gemv_panel_streams != nullptr) {
      const int64_t part = (qe - qb) / S;  // panels per stream; the rest below
      for (int64_t i = 0; i < part; ++i) {
        const float* streams[S];
        for (int s = 0; s < S; ++s) streams[s] = data + (qb + s * part + i) * panel_floats;
        kr.gemv_panel_streams(w.k, x, streams, out);
        for (int s = 0; s < S; ++s) store(qb + s * part + i, out + s * width);
      }
      q = qb + S * part;
    }
    for (; q < qe; ++q) {
      kr.gemv_panel(m, w.k, x, ldx, data + q * panel_floats, out);
      store(q, out);
    }
  });
}

}  // namespace

int64_t gemm_panel_width() {
  const GemmKernels& kr = active_kernels();
  return kr.gemv_panel != nullptr ? kr.nr : 0;
}

void pack_weight_panels(const float* w, int64_t ldw, int64_t n, int64_t k, int64_t width,
                        float* out) {
  INGOT_CHECK(n >= 0 && k >= 0 && width > 0 && width <= 64 && ldw >= k, ValueError,
              "[gemm] cannot pack a [{}, {}] weight (row stride {}) as panels of width {}", n, k,
              ldw, width);
  const GemmKernels& kr = active_kernels();
  // B = W^T in the linear layout; the table's packer over the whole k is the panel layout.
  const MatrixView b{w, DType::F32, 1, ldw};
  const auto pack = width == kr.nr ? kr.pack_b : detail::pack_b_generic;
  const int64_t panels = (n + width - 1) / width;
  parallel_for(0, panels, 16, [&](int64_t qb, int64_t qe) {
    const int64_t n0 = qb * width, n1 = std::min(n, qe * width);
    pack(b, 0, k, n0, n1 - n0, int(width), out + qb * k * width);
  });
}

void gemm_panels(int64_t m, const float* x, int64_t ldx, const PanelWeight& w, float* y,
                 int64_t ldy, float beta) {
  INGOT_CHECK(m >= 0 && w.n >= 0 && w.k >= 0 && w.width > 0 && w.width <= 64, ValueError,
              "[gemm] bad packed product: m={} n={} k={} width={}", m, w.n, w.k, w.width);
  if (m == 0 || w.n == 0) return;
  const GemmKernels& kr = active_kernels();
  if (w.width != kr.nr || kr.gemv_panel == nullptr || w.k == 0) {
    // Another table's panels (the ISA was changed after packing): each panel is a plain
    // strided B [k, width] (row stride width).
    for (int64_t q = 0; q * w.width < w.n; ++q) {
      GemmArgs g;
      g.m = m;
      g.n = std::min(w.width, w.n - q * w.width);
      g.k = w.k;
      g.a = {x, DType::F32, ldx, 1};
      g.b = {w.data + q * w.k * w.width, DType::F32, w.width, 1};
      g.c = y + q * w.width;
      g.ldc = ldy;
      g.beta = beta;
      gemm(g);
    }
    return;
  }
  if (m <= detail::kGemvMaxM) return gemv_panels(kr, m, x, ldx, w, y, ldy, beta);
  GemmArgs g;
  g.m = m;
  g.n = w.n;
  g.k = w.k;
  g.a = {x, DType::F32, ldx, 1};
  gemm_blocked(kr, g, y, ldy, 1.0f, beta, w.data);
}

GemmIsa gemm_isa() {
  return isa_slot().load(std::memory_order_relaxed);
}
GemmIsa best_supported_gemm_isa() {
  static const GemmIsa best = detect_isa();
  return best;
}
GemmIsa set_gemm_isa(GemmIsa isa) {
  const GemmIsa v = std::min(isa, best_supported_gemm_isa());
  isa_slot().store(v, std::memory_order_relaxed);
  return v;
}
std::string_view gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Avx512:
      return "avx512";
    case GemmIsa::Avx2:
      return "avx2";
    default:
      return "scalar";
  }
}

void gemm(const GemmArgs& g) {
  check_args(g);
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) return scale_c(g);
  const GemmKernels& kr = active_kernels();

  if (bf16_dot_applies(kr, g)) return gemm_bf16_dot(kr, g);
  if (gemv_linear_applies(kr, g)) return gemv_linear(kr, g);
  if (g.m <= detail::kGemvMaxM && g.b.stride_col == 1) return gemv_rows(g);

  if (g.c_dtype == DType::F32) {
    gemm_blocked(kr, g, static_cast<float*>(g.c), g.ldc, g.alpha, g.beta);
    return;
  }
  // 16-bit C: accumulate the whole sum in f32, round once.
  std::vector<float> acc(size_t(g.m * g.n));
  gemm_blocked(kr, g, acc.data(), g.n, 1.0f, 0.0f);
  store_tile(g.c, g.c_dtype, g.ldc, g.m, g.n, acc.data(), g.n, g.alpha, g.beta);
}

void gemm_siblings(std::span<const GemmArgs> products) {
  INGOT_CHECK(!products.empty(), ValueError, "[gemm_siblings] no products");
  for (const GemmArgs& g : products) check_args(g);
  const GemmArgs& g0 = products[0];
  const GemmKernels& kr = active_kernels();
  // The route every product takes alone: streamed (GEMV kernels) or bf16 tiles; one pool
  // pass needs the same route and the same A for all.
  const bool stream = gemv_linear_applies(kr, g0), tiles = bf16_dot_applies(kr, g0);
  bool shared = g0.m > 0 && g0.k > 0 && (stream || tiles);
  for (const GemmArgs& g : products)
    shared = shared && g.m == g0.m && g.k == g0.k && g.a.data == g0.a.data &&
             g.a.dtype == g0.a.dtype && g.a.stride_row == g0.a.stride_row &&
             g.a.stride_col == g0.a.stride_col && g.b.dtype == g0.b.dtype && g.n > 0 &&
             gemv_linear_applies(kr, g) == stream && bf16_dot_applies(kr, g) == tiles;
  if (!shared) {
    for (const GemmArgs& g : products) gemm(g);
    return;
  }
  // One pass of the pool over the products' columns, concatenated (in units of `unit`
  // columns): part j of a thread's range is computed by product j's own route on those
  // columns, so every column is computed as gemm(g_j) computes it.
  const int64_t unit = tiles ? kBf16Unit : 1;
  int64_t units = 0;
  double flops = 0;
  for (const GemmArgs& g : products) {
    units += (g.n + unit - 1) / unit;
    flops += 2.0 * double(g.m) * double(g.n) * double(g.k);
  }
  GemvInput in;
  if (stream) in = gemv_input(kr, g0);
  const int64_t grain = tiles ? bf16_dot_grain(flops, units) : gemv_grain(g0.k);
  parallel_for(0, units, grain, [&](int64_t u0, int64_t u1) {
    int64_t offset = 0;
    for (const GemmArgs& g : products) {
      const int64_t own = (g.n + unit - 1) / unit;
      const int64_t lo = std::max(u0, offset) - offset, hi = std::min(u1, offset + own) - offset;
      offset += own;
      if (lo >= hi) continue;
      const int64_t nb = lo * unit, ne = std::min(g.n, hi * unit);
      if (tiles)
        gemm_bf16_dot_rows(kr, g, nb, ne);
      else
        gemv_linear_rows(kr, g, in, nb, ne);
    }
  });
}

}  // namespace ingot::cpu
