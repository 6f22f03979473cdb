#include "ingot/exporters/quantizers/gptq.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

#include "ingot/core/error.h"
#include "ingot/core/thread_pool.h"
#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantizers/group_grid.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::quant {

namespace {

// In place: the lower Cholesky factor L of the symmetric a [k, k] (a = L L^T; only the
// lower triangle is read and written). False when a is not positive definite.
bool cholesky_lower(std::vector<double>& a, int64_t k) {
  for (int64_t j = 0; j < k; ++j) {
    double* rj = a.data() + j * k;
    double d = rj[j];
    for (int64_t l = 0; l < j; ++l) d -= rj[l] * rj[l];
    if (!(d > 0.0) || !std::isfinite(d)) return false;
    const double djj = std::sqrt(d);
    rj[j] = djj;
    parallel_for(j + 1, k, 64, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        double* ri = a.data() + i * k;
        double s = ri[j];
        for (int64_t l = 0; l < j; ++l) s -= ri[l] * rj[l];
        ri[j] = s / djj;
      }
    });
  }
  return true;
}

// T [k, k] with T[j, i] = (L^-1)[i, j] for the lower triangular L: the inverse,
// transposed so that each of its columns (solved independently) is a contiguous row.
std::vector<double> inverse_lower_transposed(const std::vector<double>& L, int64_t k) {
  std::vector<double> t(size_t(k * k), 0.0);
  parallel_for(0, k, 8, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      double* x = t.data() + j * k;  // column j of L^-1: x[i] for i >= j
      x[j] = 1.0 / L[size_t(j * k + j)];
      for (int64_t i = j + 1; i < k; ++i) {
        const double* li = L.data() + i * k;
        double s = 0.0;
        for (int64_t l = j; l < i; ++l) s += li[l] * x[l];
        x[i] = -s / li[i];
      }
    }
  });
  return t;
}

}  // namespace

std::vector<double> inverse_hessian_factor(const float* hessian, int64_t k,
                                           const std::vector<int64_t>& order, double damp,
                                           const std::string& name) {
  // h: H in `order`, dead channels (never active: zero row and column) given a unit diagonal.
  std::vector<double> h(size_t(k * k));
  double mean_diag = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) h[size_t(i * k + j)] = hessian[order[i] * k + order[j]];
    if (h[size_t(i * k + i)] == 0.0) h[size_t(i * k + i)] = 1.0;
    mean_diag += h[size_t(i * k + i)];
  }
  mean_diag /= double(k);
  // H = R R^T with R upper is the lower factor of H reversed (J H J = L L^T, R = J L J),
  // and H^-1 = U^T U for U = R^-1 = J L^-1 J: one Cholesky and one triangular inverse.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const double add = damp * std::pow(10.0, attempt) * mean_diag;
    std::vector<double> rev(size_t(k * k));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j <= i; ++j)
        rev[size_t(i * k + j)] = h[size_t((k - 1 - i) * k + (k - 1 - j))] + (i == j ? add : 0.0);
    if (!cholesky_lower(rev, k)) continue;
    const std::vector<double> t = inverse_lower_transposed(rev, k);
    std::vector<double> u(size_t(k * k), 0.0);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < k; ++j)
        u[size_t(i * k + j)] = t[size_t((k - 1 - j) * k + (k - 1 - i))];
    return u;
  }
  INGOT_THROW(ValueError,
              "[gptq] '{}': the calibration Hessian is not positive definite even with damping "
              "{} (raise quantizer.damp or give more calibration samples)",
              name, damp * 1000.0);
}

HessianFactor factor_hessian(const float* hessian, int64_t k, const GptqOptions& options,
                             const std::string& name) {
  HessianFactor f;
  f.order.resize(static_cast<size_t>(k));
  std::iota(f.order.begin(), f.order.end(), 0);
  if (options.act_order) {
    std::stable_sort(f.order.begin(), f.order.end(), [&](int64_t a, int64_t b) {
      return hessian[a * k + a] > hessian[b * k + b];
    });
  }
  const std::vector<double> u = inverse_hessian_factor(hessian, k, f.order, options.damp, name);
  f.u.assign(u.begin(), u.end());
  return f;
}

QuantizedWeight gptq_quantize(const WeightToQuantize& w, const float* hessian,
                              const GptqOptions& options, const HessianFactor* factor) {
  const int64_t n = w.n, k = w.k, group = w.group, groups = k / group;
  HessianFactor own;
  if (!factor) {
    own = factor_hessian(hessian, k, options, w.name);
    factor = &own;
  }
  const std::vector<int64_t>& order = factor->order;
  const std::vector<float>& u = factor->u;
  std::vector<float> importance(static_cast<size_t>(k));  // H's diagonal: the search's channel weights
  for (int64_t c = 0; c < k; ++c) importance[size_t(c)] = hessian[c * k + c];
  auto fit = [&](const float* values, int64_t c0) {
    return options.search_scales
               ? searched_grid(values, importance.data() + c0, group, w.bits, w.zero_point)
               : range_grid(values, group, w.bits, w.zero_point);
  };

  QuantizedWeight out;
  out.values.assign(size_t(n * k), 0);
  out.scales.assign(size_t(n * groups), 0.0f);
  if (w.zero_point) out.zeros.assign(size_t(n * groups), 0);
  const int64_t block = std::max<int64_t>(1, options.block);
  const Tensor u_t = Tensor::from_vector(u, {k, k});
  // Rows in tiles (bounded memory for a large lm_head); within a tile each row's columns
  // go in order, a block's errors reaching the later columns as one GEMM.
  constexpr int64_t kTileRows = 1024;
  for (int64_t t0 = 0; t0 < n; t0 += kTileRows) {
    const int64_t rows = std::min(kTileRows, n - t0);
    std::vector<float> tile(static_cast<size_t>(rows * k));  // [rows, k] in processing order
    std::vector<GroupGrid> grids(static_cast<size_t>(rows * groups));
    parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
      std::vector<float> original(static_cast<size_t>(k));
      for (int64_t r = r0; r < r1; ++r) {
        // Dead channels zeroed.
        for (int64_t c = 0; c < k; ++c)
          original[size_t(c)] = hessian[c * k + c] == 0.0f ? 0.0f : w.data[(t0 + r) * k + c];
        for (int64_t p = 0; p < k; ++p) tile[size_t(r * k + p)] = original[size_t(order[p])];
        if (options.act_order)
          for (int64_t g = 0; g < groups; ++g)
            grids[size_t(r * groups + g)] = fit(&original[size_t(g * group)], g * group);
      }
    });
    for (int64_t b0 = 0; b0 < k; b0 += block) {
      const int64_t b1 = std::min(k, b0 + block), width = b1 - b0;
      std::vector<float> err(static_cast<size_t>(rows * width));  // [rows, width]
      parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          float* row = tile.data() + r * k;
          for (int64_t p = b0; p < b1; ++p) {
            const int64_t c = order[p], g = c / group;
            GroupGrid& grid = grids[size_t(r * groups + g)];
            // Without act_order p == c: a group's columns are row[c .. c + group).
            if (!options.act_order && c % group == 0) grid = fit(row + p, c);
            const int q = quantize_value(row[p], grid, w.bits, w.zero_point);
            out.values[size_t((t0 + r) * k + c)] = uint8_t(q);
            const float e = (row[p] - grid.scale * float(q - grid.zero)) / u[size_t(p * k + p)];
            err[size_t(r * width + p - b0)] = e;
            const float* up = u.data() + p * k;
            for (int64_t l = p + 1; l < b1; ++l) row[l] -= e * up[l];
          }
        }
      });
      if (b1 == k) break;
      // tile[:, b1:] -= err [rows, width] @ U[b0:b1, b1:]
      const Tensor update = contiguous(mm(Tensor::from_vector(err, {rows, width}),
                                          slice(slice(u_t, 0, b0, b1), 1, b1, k)));
      const float* d = update.data<float>();
      parallel_for(0, rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t l = b1; l < k; ++l) tile[size_t(r * k + l)] -= d[r * (k - b1) + (l - b1)];
      });
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t g = 0; g < groups; ++g) {
        const GroupGrid& grid = grids[size_t(r * groups + g)];
        out.scales[size_t((t0 + r) * groups + g)] = grid.scale;
        if (w.zero_point) out.zeros[size_t((t0 + r) * groups + g)] = uint8_t(grid.zero);
      }
    }
  }
  return out;
}

namespace {

class Gptq final : public Quantizer {
 public:
  explicit Gptq(const QuantizerConfig& c) {
    options_.damp = c.damp;
    options_.act_order = c.act_order;
  }
  std::string name() const override { return "gptq"; }
  CalibrationNeed calibration() const override { return CalibrationNeed::Hessian; }
  QuantizedWeight quantize(const WeightToQuantize& w) const override {
    INGOT_CHECK(w.stats && !w.stats->hessian.empty(), InternalError,
                "[gptq] '{}' reached the quantiser without calibration statistics", w.name);
    std::lock_guard<std::mutex> lock(mutex_);
    if (last_stats_ != w.stats) {
      last_factor_ = factor_hessian(w.stats->hessian.data(), w.k, options_, w.name);
      last_stats_ = w.stats;
    }
    return gptq_quantize(w, w.stats->hessian.data(), options_, &last_factor_);
  }

 private:
  GptqOptions options_;
  // The last input's factor: the linears reading one input (q/k/v, gate/up) come one after
  // the other in the graph, so each factor is computed once and only one is held.
  mutable std::mutex mutex_;
  mutable const ActivationStats* last_stats_ = nullptr;
  mutable HessianFactor last_factor_;
};

}  // namespace

INGOT_REGISTER_QUANTIZER(gptq, "gptq",
                         [](const QuantizerConfig& c) { return std::make_unique<Gptq>(c); });

}  // namespace ingot::exporters::quant
