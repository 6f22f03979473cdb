// Normalisations of torch's core ATen opset that ingot composes from other ops (no kernel
// of their own; composite_shape.cpp says how composites run and export):
//  * _native_batch_norm_legit_no_training: batch norm with the running statistics
//    (a model in eval mode): (x - mean) / sqrt(var + eps) * weight + bias over dim 1;
//    the saved mean / rstd outputs are empty, as torch returns them in this mode;
//  * native_group_norm: x [N, C, *] normalised over each group of C / group channels and
//    the spatial dims, then weight and bias per channel; returns mean and rstd [N, group];
//  * batch_norm (eval) and group_norm: the training dialect's names of the two.
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

const OpHandle kReshape("reshape"), kSub("sub.Tensor"), kMul("mul.Tensor"), kAdd("add.Tensor"),
    kAddS("add.Scalar"), kRsqrt("rsqrt"), kMeanDim("mean.dim"), kFull("full"),
    kSqueeze("squeeze.dims");

Tensor call1(const OpHandle& op, std::vector<Value> values) {
  return op(std::move(values)).at(0);
}

// A per-channel vector [C] shaped to broadcast over dim 1 of a rank-`rank` input.
Tensor per_channel(const Tensor& v, int64_t rank) {
  SymIntList shape(size_t(rank), SymInt(1));
  shape[1] = v.sym_size(0);
  return call1(kReshape, {v, shape});
}

void check_rank(const OpArgs& a, const Tensor& x) {
  INGOT_CHECK(x.dim() >= 2, ShapeError, "[{}] 'input' must be [N, C, ...], got {}", a.name(),
              x.shape_string());
  INGOT_CHECK(is_floating(x.dtype()), DTypeError, "[{}] 'input' must be floating, got {}", a.name(),
              x.dtype());
}

const OpRegistrar kBatchNormEval(
    define_op("_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
              "Tensor running_mean, Tensor running_var, float momentum, float eps) -> "
              "(Tensor, Tensor, Tensor)")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          check_rank(a, x);
          for (size_t i : {1, 2, 3, 4}) {
            if (a[i].is_none()) continue;
            INGOT_CHECK(a.tensor(i).dim() == 1 && bool(a.tensor(i).sym_size(0) == x.sym_size(1)),
                        ShapeError, "[{}] argument {} must be [C] = [{}], got {}", a.name(), i,
                        x.sym_size(1).str(), a.tensor(i).shape_string());
          }
          return std::vector<OutputMeta>{
              {x.dtype(), x.sym_sizes()}, {x.dtype(), Shape{0}}, {x.dtype(), Shape{0}}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const int64_t rank = x.dim();
          const Tensor mean = per_channel(a.tensor(3), rank);
          const Tensor rstd = call1(kRsqrt, {call1(kAddS, {per_channel(a.tensor(4), rank), a[6]})});
          Tensor y = call1(kMul, {call1(kSub, {x, mean}), rstd});
          if (!a[1].is_none()) y = call1(kMul, {y, per_channel(a.tensor(1), rank)});
          if (!a[2].is_none()) y = call1(kAdd, {y, per_channel(a.tensor(2), rank)});
          auto empty = [&] {
            return call1(kFull, {SymIntList{SymInt(0)}, Scalar(int64_t(0)), x.dtype()});
          };
          return std::vector<Tensor>{y, empty(), empty()};
        }));

const OpRegistrar kGroupNorm(
    define_op("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
              "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          check_rank(a, x);
          const int64_t group = a.int_(6);
          INGOT_CHECK(
              group > 0 && (!x.sym_size(1).maybe_int() || *x.sym_size(1).maybe_int() % group == 0),
              ValueError, "[{}] group {} must divide the {} channels", a.name(), group,
              x.sym_size(1).str());
          const Shape stats{x.sym_size(0), SymInt(group)};
          return std::vector<OutputMeta>{
              {x.dtype(), x.sym_sizes()}, {x.dtype(), stats}, {x.dtype(), stats}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const int64_t group = a.int_(6);
          const SymInt n = x.sym_size(0);
          // [N, group, C / group * HxW]: each row one group's values.
          const Tensor g = call1(kReshape, {x, SymIntList{n, SymInt(group), SymInt(-1)}});
          const Tensor mean = call1(kMeanDim, {g, IntShape{2}, true});
          const Tensor dev = call1(kSub, {g, mean});
          const Tensor var = call1(kMeanDim, {call1(kMul, {dev, dev}), IntShape{2}, true});
          const Tensor rstd = call1(kRsqrt, {call1(kAddS, {var, a[7]})});
          const Shape& s = x.sym_sizes();
          Tensor y = call1(kReshape, {call1(kMul, {dev, rstd}), SymIntList(s.begin(), s.end())});
          if (!a[1].is_none()) y = call1(kMul, {y, per_channel(a.tensor(1), x.dim())});
          if (!a[2].is_none()) y = call1(kAdd, {y, per_channel(a.tensor(2), x.dim())});
          return std::vector<Tensor>{y, call1(kSqueeze, {mean, IntShape{2}}),
                                     call1(kSqueeze, {rstd, IntShape{2}})};
        }));

const OpHandle kBatchNormEvalOp("_native_batch_norm_legit_no_training"),
    kGroupNormOp("native_group_norm");

const OpRegistrar kBatchNorm(
    define_op("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
              "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) "
              "-> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          check_rank(a, x);
          INGOT_CHECK(!a.boolean(5) && !a[3].is_none() && !a[4].is_none(), NotSupportedError,
                      "[{}] only eval mode with running statistics is supported (training "
                      "mode updates them); export the model in eval mode",
                      a.name());
          return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          return std::vector<Tensor>{
              kBatchNormEvalOp({a[0], a[1], a[2], a[3], a[4], a[6], a[7]}).at(0)};
        }));

const OpRegistrar kGroupNormComposite(
    define_op("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
              "float eps=1e-05, bool cudnn_enabled=True) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          check_rank(a, x);
          return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          SymInt hw = 1;
          for (int64_t d = 2; d < x.dim(); ++d) hw = hw * x.sym_size(d);
          return std::vector<Tensor>{kGroupNormOp({x, a[2], a[3], Value(x.sym_size(0)),
                                                   Value(x.sym_size(1)), Value(hw), a[1], a[4]})
                                         .at(0)};
        }));

}  // namespace
}  // namespace ingot
