// Fused scaled-dot-product attention on the CPU (flash-attention style).
//
// For each (batch, kv head, block of query rows) the kernel streams the keys in blocks:
// scores for the block, an online softmax update (running max m, running sum l, the
// output accumulator rescaled by exp(m_old - m_new)), then the weighted sum of the
// value rows. No [Lq, S] score matrix is ever formed. All query heads that share a kv
// head (GQA/MQA) are processed together, so each K/V row is read from memory once per
// query block: the decode case (Lq = 1) reads the cache exactly once.
//
// Accumulation is in float (double for f64). When there are fewer work items than
// threads (decode), the key range is also split and the partial (m, l, acc) merged.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/core/dtype.h"

namespace ingot::cpu {

enum class AttentionMask : uint8_t { None, Bool, Additive };

// One attention call, already validated. Strides are in elements. The batch dims are
// flattened: entry b of the *_batch_offset vectors is the element offset of batch b
// (broadcast batch dims contribute 0).
struct AttentionProblem {
  DType dtype = DType::F32;  // query, key, value and output
  int64_t batch = 1, hq = 1, hkv = 1, lq = 0, s = 0, e = 0, ev = 0;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;  // contiguous [batch, hq, lq, ev]
  std::vector<int64_t> q_batch_offset, k_batch_offset, v_batch_offset, mask_batch_offset;
  int64_t q_sh = 0, q_sl = 0, q_se = 1;  // head, row, element strides
  int64_t k_sh = 0, k_ss = 0, k_se = 1;  // a head stride of 0 broadcasts one kv head
  int64_t v_sh = 0, v_ss = 0, v_se = 1;
  AttentionMask mask_kind = AttentionMask::None;
  DType mask_dtype = DType::Bool;
  const void* mask = nullptr;
  int64_t m_sh = 0, m_sl = 0, m_ss = 0;  // mask strides over [hq, lq, s] (0 = broadcast)
  bool causal = false;
  double scale = 1.0;
};

void scaled_dot_product_attention(const AttentionProblem& p);

// Which code path the kernel uses. Auto picks AVX-512 when the CPU has it, else AVX2
// (+ FMA, F16C), else Generic; tests force each path to cover it on any machine that
// has it. A forced Avx512 or Avx2 on a CPU without it runs Generic. float64 always runs
// Generic (accumulating in double).
enum class AttentionIsa : uint8_t { Auto, Generic, Avx512, Avx2 };
void set_attention_isa(AttentionIsa isa);
// The path Auto resolves to on this CPU (Avx512, Avx2 or Generic).
AttentionIsa detected_attention_isa();
// The path a request runs on this CPU (never Auto).
AttentionIsa resolved_attention_isa(AttentionIsa requested);

}  // namespace ingot::cpu
