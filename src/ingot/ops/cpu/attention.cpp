// Fused attention driver: work decomposition, threading, masking and the online-softmax
// bookkeeping shared by the ISA-specific block kernels (see attention.h for the
// algorithm). The Generic kernels here are portable C++ (the compiler vectorises the
// inner loops for the baseline ISA); the AVX-512 ones live in attention_avx512.cpp, the
// AVX2 ones in attention_avx2.cpp.
#include "ingot/ops/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/attention_kernels.h"

namespace ingot::cpu {
namespace {

constexpr int64_t kKeyBlock = 64;       // keys per online-softmax step
constexpr int64_t kRowsPerItem = 64;    // target query rows (heads x positions) per item
constexpr int64_t kMinSplitKeys = 512;  // shortest key range worth its own task

std::atomic<AttentionIsa> g_isa{AttentionIsa::Auto};

// --- portable block kernels, on blocks already converted to Acc -------------------------

template <typename Acc>
struct GenericKernels {
  using KV = Acc;  // K/V blocks are converted to Acc before the kernels run
  static constexpr bool kConvertBlocks = true;

  static void scores(const Acc* q, int64_t m, int64_t e, const Acc* k, int64_t ks, int64_t nk,
                     Acc scale, Acc* sc, int64_t ldsc) {
    constexpr int kLanes = 8;
    for (int64_t r = 0; r < m; ++r) {
      const Acc* qr = q + r * e;
      for (int64_t j = 0; j < nk; ++j) {
        const Acc* kr = k + j * ks;
        Acc part[kLanes] = {};
        int64_t c = 0;
        for (; c + kLanes <= e; c += kLanes) {
          for (int u = 0; u < kLanes; ++u) part[u] += qr[c + u] * kr[c + u];
        }
        for (int u = 0; c < e; ++c, ++u) part[u] += qr[c] * kr[c];
        Acc dot = 0;
        for (int u = 0; u < kLanes; ++u) dot += part[u];
        sc[r * ldsc + j] = dot * scale;
      }
    }
  }

  static void softmax_step(Acc* sc, int64_t ldsc, int64_t m, int64_t nk, Acc* run_max, Acc* run_sum,
                           Acc* alpha) {
    constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
    for (int64_t r = 0; r < m; ++r) {
      Acc* row = sc + r * ldsc;
      Acc mx = kNegInf;
      for (int64_t j = 0; j < nk; ++j) mx = std::max(mx, row[j]);
      const Acc m_new = std::max(run_max[r], mx);
      if (m_new == kNegInf) {  // nothing visible yet
        std::fill(row, row + nk, Acc(0));
        alpha[r] = 1;
        continue;
      }
      Acc sum = 0;
      for (int64_t j = 0; j < nk; ++j) {
        row[j] = std::exp(row[j] - m_new);
        sum += row[j];
      }
      alpha[r] = std::exp(run_max[r] - m_new);
      run_sum[r] = run_sum[r] * alpha[r] + sum;
      run_max[r] = m_new;
    }
  }

  static void accumulate(const Acc* p, int64_t ldp, int64_t m, const Acc* v, int64_t vs, int64_t nk,
                         int64_t ev, Acc* acc) {
    for (int64_t r = 0; r < m; ++r) {
      Acc* ar = acc + r * ev;
      for (int64_t j = 0; j < nk; ++j) {
        const Acc pj = p[r * ldp + j];
        const Acc* vr = v + j * vs;
        for (int64_t c = 0; c < ev; ++c) ar[c] += pj * vr[c];
      }
    }
  }
};

// The ISA kernels read K/V in their stored dtype T (f32, f16, bf16).
template <typename T>
struct Avx512Kernels {
  using KV = T;
  static constexpr bool kConvertBlocks = false;

  static void scores(const float* q, int64_t m, int64_t e, const T* k, int64_t ks, int64_t nk,
                     float scale, float* sc, int64_t ldsc) {
    attn::scores_avx512(q, m, e, k, ks, nk, scale, sc, ldsc);
  }
  static void softmax_step(float* sc, int64_t ldsc, int64_t m, int64_t nk, float* run_max,
                           float* run_sum, float* alpha) {
    attn::softmax_step_avx512(sc, ldsc, m, nk, run_max, run_sum, alpha);
  }
  static void accumulate(const float* p, int64_t ldp, int64_t m, const T* v, int64_t vs, int64_t nk,
                         int64_t ev, float* acc) {
    attn::accumulate_avx512(p, ldp, m, v, vs, nk, ev, acc);
  }
};

template <typename T>
struct Avx2Kernels {
  using KV = T;
  static constexpr bool kConvertBlocks = false;

  static void scores(const float* q, int64_t m, int64_t e, const T* k, int64_t ks, int64_t nk,
                     float scale, float* sc, int64_t ldsc) {
    attn::scores_avx2(q, m, e, k, ks, nk, scale, sc, ldsc);
  }
  static void softmax_step(float* sc, int64_t ldsc, int64_t m, int64_t nk, float* run_max,
                           float* run_sum, float* alpha) {
    attn::softmax_step_avx2(sc, ldsc, m, nk, run_max, run_sum, alpha);
  }
  static void accumulate(const float* p, int64_t ldp, int64_t m, const T* v, int64_t vs, int64_t nk,
                         int64_t ev, float* acc) {
    attn::accumulate_avx2(p, ldp, m, v, vs, nk, ev, acc);
  }
};

// --- per-thread scratch -------------------------------------------------------------------

// Grows monotonically and is reused by every call on the thread, so steady-state calls
// (a decode loop) allocate nothing.
class Scratch {
 public:
  void reserve(size_t bytes) {
    if (buf_.size() < bytes) buf_.resize(bytes);
    used_ = 0;
  }
  template <typename U>
  U* take(int64_t n) {
    used_ = (used_ + 63) & ~size_t(63);
    U* p = reinterpret_cast<U*>(buf_.data() + used_);
    used_ += size_t(std::max<int64_t>(n, 1)) * sizeof(U);
    return p;
  }

 private:
  std::vector<std::byte> buf_;
  size_t used_ = 0;
};

thread_local Scratch t_scratch;

// --- work decomposition -------------------------------------------------------------------

struct Plan {
  int64_t group = 1;    // query heads per kv head
  int64_t rows = 1;     // query positions per item
  int64_t qblocks = 1;  // ceil(lq / rows)
  int64_t items = 0;    // batch * hkv * qblocks
  int64_t splits = 1;   // key-range chunks per item
  int64_t chunk = 0;    // keys per chunk (a multiple of kKeyBlock)
  int64_t max_m = 1;    // group * rows: query rows of one item
};

Plan make_plan(const AttentionProblem& p) {
  Plan pl;
  pl.group = p.hq / p.hkv;
  pl.rows = std::min<int64_t>(p.lq, std::max<int64_t>(1, kRowsPerItem / pl.group));
  pl.qblocks = (p.lq + pl.rows - 1) / pl.rows;
  pl.items = p.batch * p.hkv * pl.qblocks;
  pl.max_m = pl.group * pl.rows;
  pl.chunk = std::max<int64_t>(p.s, 1);
  // Too few items to keep every thread busy (decode): split the keys as well.
  const int64_t threads = num_threads();
  if (pl.items < 2 * threads && p.s >= 2 * kMinSplitKeys && !in_parallel_region()) {
    const int64_t want = std::min((2 * threads + pl.items - 1) / pl.items, p.s / kMinSplitKeys);
    int64_t chunk = (p.s + want - 1) / want;
    chunk = (chunk + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
    pl.chunk = chunk;
    pl.splits = (p.s + chunk - 1) / chunk;
  }
  return pl;
}

// A mask element as an additive score bias: bool true -> 0, false -> -inf.
template <typename Acc, typename M>
Acc mask_bias(const M* m, int64_t i) {
  if constexpr (std::is_same_v<M, bool>) {
    return m[i] ? Acc(0) : -std::numeric_limits<Acc>::infinity();
  } else {
    return Acc(m[i]);
  }
}

// One past the last true among the n bools at m (0 when none), testing eight per load:
// a decode step's mask row over a static cache is mostly false, and a compare per byte
// made this scan cost more instructions than a short context's attention arithmetic.
inline int64_t end_of_last_true(const bool* m, int64_t n) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(m);
  int64_t j = n;
  for (; j % 8 != 0; --j) {
    if (bytes[j - 1]) return j;
  }
  for (; j > 0; j -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes + j - 8, sizeof(word));
    if (word == 0) continue;
    while (!bytes[j - 1]) --j;
    return j;
  }
  return 0;
}

template <typename Fn>
void dispatch_mask_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::Bool:
      return fn.template operator()<bool>();
    case DType::F16:
      return fn.template operator()<Half>();
    case DType::BF16:
      return fn.template operator()<BFloat16>();
    case DType::F32:
      return fn.template operator()<float>();
    case DType::F64:
      return fn.template operator()<double>();
    default:
      INGOT_INTERNAL_ASSERT(false);
  }
}

// Partial result of one (item, split): running max, running sum and unnormalised
// accumulator of each row, merged after all splits ran.
template <typename Acc>
struct Partials {
  std::vector<Acc> data;
  int64_t stride = 0;  // per task: max_m * (ev + 2)
};

// Runs one task: item `item`, key chunk `split`.
template <typename T, typename K, typename Acc>
void run_task(const AttentionProblem& p, const Plan& pl, int64_t item, int64_t split,
              Partials<Acc>* partials) {
  using KV = typename K::KV;
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  const int64_t qb = item % pl.qblocks;
  const int64_t kvh = (item / pl.qblocks) % p.hkv;
  const int64_t b = item / (pl.qblocks * p.hkv);
  const int64_t i0 = qb * pl.rows, i1 = std::min(p.lq, i0 + pl.rows);
  const int64_t nrow = i1 - i0;
  const int64_t m = pl.group * nrow;  // row r: head kvh*group + r / nrow, position i0 + r % nrow
  const int64_t s0 = split * pl.chunk;
  int64_t s1 = std::min(p.s, s0 + pl.chunk);
  if (p.causal) s1 = std::min(s1, i1);  // row i sees keys j <= i; the block's last row is i1 - 1

  Scratch& sc = t_scratch;
  sc.reserve(size_t(m * (p.e + p.ev + kKeyBlock + 3)) * sizeof(Acc) +
             size_t(kKeyBlock * (p.e + p.ev)) * sizeof(KV) + 8 * 64);
  Acc* qf = sc.take<Acc>(m * p.e);
  Acc* acc = sc.take<Acc>(m * p.ev);
  Acc* scores = sc.take<Acc>(m * kKeyBlock);
  Acc* run_max = sc.take<Acc>(m);
  Acc* run_sum = sc.take<Acc>(m);
  Acc* alpha = sc.take<Acc>(m);
  KV* kbuf = sc.take<KV>(kKeyBlock * p.e);
  KV* vbuf = sc.take<KV>(kKeyBlock * p.ev);

  const T* q = static_cast<const T*>(p.q) + p.q_batch_offset[size_t(b)];
  const T* kbase = static_cast<const T*>(p.k) + p.k_batch_offset[size_t(b)] + kvh * p.k_sh;
  const T* vbase = static_cast<const T*>(p.v) + p.v_batch_offset[size_t(b)] + kvh * p.v_sh;
  for (int64_t r = 0; r < m; ++r) {
    const int64_t h = kvh * pl.group + r / nrow, i = i0 + r % nrow;
    const T* qr = q + h * p.q_sh + i * p.q_sl;
    for (int64_t c = 0; c < p.e; ++c) qf[r * p.e + c] = Acc(qr[c * p.q_se]);
    std::fill(acc + r * p.ev, acc + (r + 1) * p.ev, Acc(0));
    run_max[r] = kNegInf;
    run_sum[r] = 0;
  }

  // How many leading keys of the block [j0, j0 + nk) to compute: the keys after them are
  // hidden by the mask from every row of the item (0: the whole block is hidden). A hidden
  // key adds exp(-inf) = 0 to every sum and 0 * v to every output, so leaving it out (and
  // its K/V reads) is exact. A static cache's decode step masks the slots past the
  // position: most of the cache, and the tail of the block holding the position.
  auto visible_keys = [&](int64_t j0, int64_t nk) {
    if (p.mask_kind == AttentionMask::None) return nk;
    int64_t visible = 0;
    dispatch_mask_type(p.mask_dtype, [&]<typename MT>() {
      const MT* mbase = static_cast<const MT*>(p.mask) + p.mask_batch_offset[size_t(b)];
      const MT* previous = nullptr;
      for (int64_t r = 0; r < m && visible < nk; ++r) {
        const int64_t h = kvh * pl.group + r / nrow, i = i0 + r % nrow;
        const MT* mr = mbase + h * p.m_sh + i * p.m_sl + j0 * p.m_ss;
        if (mr == previous) continue;  // a mask broadcast over heads: rows share it
        previous = mr;
        if constexpr (std::is_same_v<MT, bool>) {
          if (p.m_ss == 1) {
            const int64_t end = end_of_last_true(mr + visible, nk - visible);  // past `visible`
            if (end > 0) visible += end;
            continue;
          }
        }
        for (int64_t j = nk; j > visible; --j) {
          if (mask_bias<Acc>(mr, (j - 1) * p.m_ss) != kNegInf) {
            visible = j;
            break;
          }
        }
      }
    });
    return visible;
  };

  for (int64_t j0 = s0; j0 < s1; j0 += kKeyBlock) {
    const int64_t nk = visible_keys(j0, std::min(kKeyBlock, s1 - j0));
    if (nk == 0) continue;
    // K and V rows of the block with unit element stride (converted or gathered when
    // the kernels need it).
    const KV* kb;
    const KV* vb;
    int64_t ks, vs;
    if (K::kConvertBlocks || p.k_se != 1) {
      for (int64_t j = 0; j < nk; ++j) {
        const T* kr = kbase + (j0 + j) * p.k_ss;
        for (int64_t c = 0; c < p.e; ++c) kbuf[j * p.e + c] = KV(kr[c * p.k_se]);
      }
      kb = kbuf, ks = p.e;
    } else {
      kb = reinterpret_cast<const KV*>(kbase + j0 * p.k_ss), ks = p.k_ss;
    }
    if (K::kConvertBlocks || p.v_se != 1) {
      for (int64_t j = 0; j < nk; ++j) {
        const T* vr = vbase + (j0 + j) * p.v_ss;
        for (int64_t c = 0; c < p.ev; ++c) vbuf[j * p.ev + c] = KV(vr[c * p.v_se]);
      }
      vb = vbuf, vs = p.ev;
    } else {
      vb = reinterpret_cast<const KV*>(vbase + j0 * p.v_ss), vs = p.v_ss;
    }

    K::scores(qf, m, p.e, kb, ks, nk, Acc(p.scale), scores, kKeyBlock);

    if (p.causal && j0 + nk - 1 > i0) {
      for (int64_t r = 0; r < m; ++r) {
        const int64_t i = i0 + r % nrow;
        for (int64_t j = std::max<int64_t>(0, i + 1 - j0); j < nk; ++j)
          scores[r * kKeyBlock + j] = kNegInf;
      }
    }
    if (p.mask_kind != AttentionMask::None) {
      dispatch_mask_type(p.mask_dtype, [&]<typename MT>() {
        const MT* mbase = static_cast<const MT*>(p.mask) + p.mask_batch_offset[size_t(b)];
        for (int64_t r = 0; r < m; ++r) {
          const int64_t h = kvh * pl.group + r / nrow, i = i0 + r % nrow;
          const MT* mr = mbase + h * p.m_sh + i * p.m_sl + j0 * p.m_ss;
          Acc* row = scores + r * kKeyBlock;
          for (int64_t j = 0; j < nk; ++j) row[j] += mask_bias<Acc>(mr, j * p.m_ss);
        }
      });
    }

    K::softmax_step(scores, kKeyBlock, m, nk, run_max, run_sum, alpha);
    for (int64_t r = 0; r < m; ++r) {
      if (alpha[r] == Acc(1)) continue;
      Acc* ar = acc + r * p.ev;
      for (int64_t c = 0; c < p.ev; ++c) ar[c] *= alpha[r];
    }
    K::accumulate(scores, kKeyBlock, m, vb, vs, nk, p.ev, acc);
  }

  if (partials == nullptr) {
    // Normalise and write. A row that saw no visible key (run_sum 0) is all zeros,
    // PyTorch's _safe_softmax convention.
    for (int64_t r = 0; r < m; ++r) {
      const int64_t h = kvh * pl.group + r / nrow, i = i0 + r % nrow;
      T* o = static_cast<T*>(p.out) + ((b * p.hq + h) * p.lq + i) * p.ev;
      const Acc inv = run_sum[r] == Acc(0) ? Acc(0) : Acc(1) / run_sum[r];
      for (int64_t c = 0; c < p.ev; ++c) o[c] = T(acc[r * p.ev + c] * inv);
    }
    return;
  }
  Acc* slot = partials->data.data() + (item * pl.splits + split) * partials->stride;
  for (int64_t r = 0; r < m; ++r) {
    slot[r * (p.ev + 2)] = run_max[r];
    slot[r * (p.ev + 2) + 1] = run_sum[r];
    std::copy(acc + r * p.ev, acc + (r + 1) * p.ev, slot + r * (p.ev + 2) + 2);
  }
}

// Merges the splits of one item: rescale each chunk's state to the common max.
template <typename T, typename Acc>
void merge_item(const AttentionProblem& p, const Plan& pl, int64_t item,
                const Partials<Acc>& partials) {
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  const int64_t qb = item % pl.qblocks;
  const int64_t kvh = (item / pl.qblocks) % p.hkv;
  const int64_t b = item / (pl.qblocks * p.hkv);
  const int64_t i0 = qb * pl.rows, nrow = std::min(p.lq, i0 + pl.rows) - i0;
  const Acc* base = partials.data.data() + item * pl.splits * partials.stride;
  thread_local std::vector<Acc> weights;
  weights.resize(size_t(pl.splits));
  for (int64_t r = 0; r < pl.group * nrow; ++r) {
    const int64_t h = kvh * pl.group + r / nrow, i = i0 + r % nrow;
    T* o = static_cast<T*>(p.out) + ((b * p.hq + h) * p.lq + i) * p.ev;
    Acc mx = kNegInf;
    for (int64_t s = 0; s < pl.splits; ++s)
      mx = std::max(mx, base[s * partials.stride + r * (p.ev + 2)]);
    if (mx == kNegInf) {  // no visible key in any chunk
      std::fill(o, o + p.ev, T(0.0f));
      continue;
    }
    Acc sum = 0;
    for (int64_t s = 0; s < pl.splits; ++s) {
      const Acc* st = base + s * partials.stride + r * (p.ev + 2);
      weights[size_t(s)] = st[0] == kNegInf ? Acc(0) : std::exp(st[0] - mx);
      sum += st[1] * weights[size_t(s)];
    }
    const Acc inv = sum == Acc(0) ? Acc(0) : Acc(1) / sum;
    for (int64_t c = 0; c < p.ev; ++c) {
      Acc v = 0;
      for (int64_t s = 0; s < pl.splits; ++s) {
        v += base[s * partials.stride + r * (p.ev + 2) + 2 + c] * weights[size_t(s)];
      }
      o[c] = T(v * inv);
    }
  }
}

template <typename T, typename K, typename Acc>
void run(const AttentionProblem& p) {
  const Plan pl = make_plan(p);
  const int64_t tasks = pl.items * pl.splits;
  if (pl.splits == 1) {
    // Costliest first (causal: later query blocks see more keys) for load balance.
    ThreadPool::global().run(tasks, [&](int64_t t) {
      const int64_t item = (t / pl.qblocks) * pl.qblocks + (pl.qblocks - 1 - t % pl.qblocks);
      run_task<T, K, Acc>(p, pl, item, 0, nullptr);
    });
    return;
  }
  Partials<Acc> partials;
  partials.stride = pl.max_m * (p.ev + 2);
  partials.data.resize(size_t(tasks * partials.stride));
  ThreadPool::global().run(tasks, [&](int64_t t) {
    run_task<T, K, Acc>(p, pl, t / pl.splits, t % pl.splits, &partials);
  });
  ThreadPool::global().run(pl.items,
                           [&](int64_t item) { merge_item<T, Acc>(p, pl, item, partials); });
}

// Runs p with storage dtype T on the resolved ISA's kernels (float accumulation).
template <typename T>
void run_float(const AttentionProblem& p, AttentionIsa isa) {
  if (isa == AttentionIsa::Avx512) return run<T, Avx512Kernels<T>, float>(p);
  if (isa == AttentionIsa::Avx2) return run<T, Avx2Kernels<T>, float>(p);
  return run<T, GenericKernels<float>, float>(p);
}

}  // namespace

void set_attention_isa(AttentionIsa isa) {
  g_isa.store(isa);
}

AttentionIsa detected_attention_isa() {
  static const AttentionIsa isa = attn::cpu_has_avx512() ? AttentionIsa::Avx512
                                  : attn::cpu_has_avx2() ? AttentionIsa::Avx2
                                                         : AttentionIsa::Generic;
  return isa;
}

AttentionIsa resolved_attention_isa(AttentionIsa requested) {
  static const bool avx512 = attn::cpu_has_avx512(), avx2 = attn::cpu_has_avx2();
  switch (requested) {
    case AttentionIsa::Auto:
      return detected_attention_isa();
    case AttentionIsa::Avx512:
      return avx512 ? requested : AttentionIsa::Generic;
    case AttentionIsa::Avx2:
      return avx2 ? requested : AttentionIsa::Generic;
    default:
      return AttentionIsa::Generic;
  }
}

void scaled_dot_product_attention(const AttentionProblem& p) {
  if (p.batch == 0 || p.hq == 0 || p.lq == 0 || p.ev == 0) return;
  const AttentionIsa isa = resolved_attention_isa(g_isa.load());
  switch (p.dtype) {
    case DType::F64:
      return run<double, GenericKernels<double>, double>(p);
    case DType::F32:
      return run_float<float>(p, isa);
    case DType::F16:
      return run_float<Half>(p, isa);
    case DType::BF16:
      return run_float<BFloat16>(p, isa);
    default:
      INGOT_THROW(DTypeError, "[scaled_dot_product_attention] unsupported dtype {}", p.dtype);
  }
}

}  // namespace ingot::cpu
