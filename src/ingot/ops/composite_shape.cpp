// Shape ops of torch's API that ingot composes from other ops (no kernel of their own):
// outer, unbind, flip, roll, repeat, repeat_interleave, constant_pad_nd, reflection /
// replication padding, fill.Scalar, and index_add (a scatter_add). Each is a registry op
// with a shape function and a decomposition: the runtime runs the decomposition, and
// decompose_to_core replaces the node by it before an exporter translates the graph, so
// every backend has them. Invariant: a decomposition never returns a view of its input
// (the runtime plans the input's memory as free after its last use), which is why some
// end in clone.
#include <algorithm>

#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

const OpHandle kMul("mul.Tensor"), kUnsqueeze("unsqueeze"), kSelect("select.int"), kClone("clone"),
    kIndexSelect("index_select"), kArange("arange.start_step"), kSlice("slice.Tensor"), kCat("cat"),
    kReshape("reshape"), kExpand("expand"), kFull("full"), kAbs("abs"), kSubS("sub.Scalar"),
    kAddS("add.Scalar"), kNeg("neg"), kClamp("clamp"), kScatterAdd("scatter_add"),
    kMulS("mul.Scalar"), kToCopy("_to_copy");

Tensor call1(const OpHandle& op, std::vector<Value> values) {
  return op(std::move(values)).at(0);
}

// --- outer(self [n], vec2 [m]) -> [n, m] ---------------------------------------------------

const OpRegistrar kOuter(define_op("outer(Tensor self, Tensor vec2) -> Tensor")
                             .shape([](const OpArgs& a) {
                               const Tensor &x = a.tensor(0), &y = a.tensor(1);
                               INGOT_CHECK(x.dim() == 1 && y.dim() == 1, ShapeError,
                                           "[{}] 'self' and 'vec2' must be 1-D, got {} and {}",
                                           a.name(), x.shape_string(), y.shape_string());
                               std::array<Value, 2> operands{x, y};
                               return std::vector<OutputMeta>{
                                   {result_type(operands), Shape{x.sym_size(0), y.sym_size(0)}}};
                             })
                             .decompose([](const OpArgs& a) {
                               return kMul({call1(kUnsqueeze, {a.tensor(0), int64_t(1)}),
                                            call1(kUnsqueeze, {a.tensor(1), int64_t(0)})});
                             }));

// --- unbind(self, dim) -> the slices along dim, as copies ---------------------------------

// The number of outputs is the size of `dim`, which must be static (torch specialises it
// the same way when it exports).
int64_t unbind_count(const OpArgs& a, int64_t dim) {
  const SymInt& n = a.tensor(0).sym_size(dim);
  INGOT_CHECK(n.maybe_int().has_value(), NotSupportedError,
              "[{}] dim {} has the symbolic size {}; unbind needs a static size (its output "
              "count)",
              a.name(), dim, n.str());
  return *n.maybe_int();
}

const OpRegistrar kUnbind(
    define_op("unbind.int(Tensor self, int dim=0) -> Tensor[]")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          INGOT_CHECK(x.dim() > 0, ShapeError, "[{}] 'self' must have at least one dim", a.name());
          const int64_t dim = wrap_dim(a.int_(1), x.dim(), a.name());
          Shape rest = x.sym_sizes();
          rest.erase(rest.begin() + dim);
          return std::vector<OutputMeta>(size_t(unbind_count(a, dim)), OutputMeta{x.dtype(), rest});
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const int64_t dim = wrap_dim(a.int_(1), x.dim(), a.name());
          std::vector<Tensor> out;
          for (int64_t i = 0; i < unbind_count(a, dim); ++i)
            out.push_back(call1(kClone, {call1(kSelect, {x, dim, SymInt(i)})}));
          return out;
        }));

// --- flip(self, dims): index_select with a reversed index per dim -------------------------

IntShape wrapped_unique_dims(const OpArgs& a, const IntShape& dims, int64_t rank) {
  IntShape out;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, rank, a.name());
    INGOT_CHECK(std::find(out.begin(), out.end(), w) == out.end(), ValueError,
                "[{}] dim {} appears more than once in dims", a.name(), w);
    out.push_back(w);
  }
  return out;
}

const OpRegistrar kFlip(
    define_op("flip(Tensor self, int[] dims) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          wrapped_unique_dims(a, a.int_list(1), x.dim());
          return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          Tensor x = a.tensor(0);
          const IntShape dims = wrapped_unique_dims(a, a.int_list(1), x.dim());
          if (dims.empty() || x.dim() == 0) return std::vector<Tensor>{call1(kClone, {x})};
          for (int64_t d : dims) {
            const SymInt n = x.sym_size(d);
            // (n - 1) - arange(n): an arange of length n keeps the size symbol plain
            // (a descending arange's length is a floordiv expression of it).
            Tensor idx = call1(kArange, {int64_t(0), Value(n), int64_t(1), DType::I64});
            idx = call1(kAddS, {call1(kMulS, {idx, Scalar(int64_t(-1))}), Value(n - 1)});
            x = call1(kIndexSelect, {x, d, idx});
          }
          return std::vector<Tensor>{x};
        }));

// --- roll(self, shifts, dims): cat of the two slices per dim; no dims rolls the flat view ---

const OpRegistrar kRoll(
    define_op("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const size_t n_shifts = a.sym_int_list(1).size(), n_dims = a.int_list(2).size();
          INGOT_CHECK(n_dims == 0 ? n_shifts == 1 : n_shifts == n_dims, ValueError,
                      "[{}] shifts ({} values) and dims ({} values) must have the same length "
                      "(one shift when dims is empty)",
                      a.name(), n_shifts, n_dims);
          for (int64_t d : a.int_list(2)) wrap_dim(d, x.dim(), a.name());
          return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& self = a.tensor(0);
          const SymIntList& shifts = a.sym_int_list(1);
          IntShape dims = a.int_list(2);
          Tensor x = self;
          if (dims.empty()) x = call1(kReshape, {self, SymIntList{SymInt(-1)}});
          if (dims.empty()) dims = {0};
          for (size_t k = 0; k < dims.size(); ++k) {
            const int64_t d = wrap_dim(dims[k], x.dim(), a.name());
            const SymInt n = x.sym_size(d);
            if (n.maybe_int() == 0) continue;
            // Python's modulo: the start of the part that comes first.
            const SymInt start = n - ((shifts[k] % n + n) % n);
            x = call1(kCat,
                      {TensorList{call1(kSlice, {x, d, Value(start), Value(n), int64_t(1)}),
                                  call1(kSlice, {x, d, int64_t(0), Value(start), int64_t(1)})},
                       d});
          }
          if (a.int_list(2).empty()) {
            x = call1(kReshape, {x, SymIntList(self.sym_sizes().begin(), self.sym_sizes().end())});
          }
          return std::vector<Tensor>{call1(kClone, {x})};
        }));

// --- repeat(self, repeats): [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...] --------

const OpRegistrar kRepeat(
    define_op("repeat(Tensor self, SymInt[] repeats) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const SymIntList& r = a.sym_int_list(1);
          INGOT_CHECK(int64_t(r.size()) >= x.dim(), ValueError,
                      "[{}] repeats has {} values; it needs at least one per dim of self {}",
                      a.name(), r.size(), x.shape_string());
          Shape out;
          const size_t lead = r.size() - size_t(x.dim());
          for (size_t i = 0; i < r.size(); ++i) {
            INGOT_CHECK(!r[i].maybe_int() || *r[i].maybe_int() >= 0, ValueError,
                        "[{}] repeats[{}] = {} is negative", a.name(), i, r[i].str());
            out.push_back(i < lead ? r[i] : r[i] * x.sym_size(int64_t(i - lead)));
          }
          return std::vector<OutputMeta>{{x.dtype(), std::move(out)}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const SymIntList& r = a.sym_int_list(1);
          const size_t lead = r.size() - size_t(x.dim());
          SymIntList interleaved, expanded, out;
          for (size_t i = 0; i < r.size(); ++i) {
            const SymInt s = i < lead ? SymInt(1) : x.sym_size(int64_t(i - lead));
            interleaved.insert(interleaved.end(), {SymInt(1), s});
            expanded.insert(expanded.end(), {r[i], s});
            out.push_back(r[i] * s);
          }
          Tensor y = call1(kReshape, {x, interleaved});
          y = call1(kExpand, {y, expanded});
          return std::vector<Tensor>{call1(kClone, {call1(kReshape, {y, out})})};
        }));

// --- constant_pad_nd(self, pad, value): pad pairs (left, right) from the last dim back;
// negative pads crop. -----------------------------------------------------------------------

std::vector<std::pair<int64_t, int64_t>> pad_pairs(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const IntShape pad = a.int_list(1);
  INGOT_CHECK(pad.size() % 2 == 0 && int64_t(pad.size()) <= 2 * x.dim(), ValueError,
              "[{}] pad must have an even length of at most 2 * {} (self {}), got {} values",
              a.name(), x.dim(), x.shape_string(), pad.size());
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t k = 0; k < pad.size(); k += 2) pairs.push_back({pad[k], pad[k + 1]});
  return pairs;
}

const OpRegistrar kConstantPad(
    define_op("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          Shape s = x.sym_sizes();
          const auto pairs = pad_pairs(a);
          for (size_t k = 0; k < pairs.size(); ++k) {
            SymInt& d = s[size_t(x.dim()) - 1 - k];
            d = d + pairs[k].first + pairs[k].second;
            INGOT_CHECK(!d.maybe_int() || *d.maybe_int() >= 0, ValueError,
                        "[{}] padding dim {} of self {} by ({}, {}) leaves a negative size",
                        a.name(), x.dim() - 1 - int64_t(k), x.shape_string(), pairs[k].first,
                        pairs[k].second);
          }
          return std::vector<OutputMeta>{{x.dtype(), std::move(s)}};
        })
        .decompose([](const OpArgs& a) {
          Tensor x = a.tensor(0);
          const auto pairs = pad_pairs(a);
          for (size_t k = 0; k < pairs.size(); ++k) {
            const int64_t d = x.dim() - 1 - int64_t(k);
            auto [left, right] = pairs[k];
            if (left < 0) x = call1(kSlice, {x, d, -left, Value(), int64_t(1)});
            if (right < 0) {
              x = call1(kSlice, {x, d, int64_t(0), Value(x.sym_size(d) + right), int64_t(1)});
            }
            TensorList parts;
            auto block = [&](int64_t n) {
              Shape s = x.sym_sizes();
              s[size_t(d)] = n;
              return call1(kFull, {SymIntList(s.begin(), s.end()), a[2], x.dtype()});
            };
            if (left > 0) parts.push_back(block(left));
            parts.push_back(x);
            if (right > 0) parts.push_back(block(right));
            if (parts.size() > 1) x = call1(kCat, {parts, d});
          }
          return std::vector<Tensor>{call1(kClone, {x})};
        }));

// --- reflection_pad{1,2,3}d / replication_pad{1,2,3}d(self, padding) --------------------
// Each padded dim (pairs from the last dim back) gathers its source index from
// i in [-left, n + right): reflected, (n - 1) - |(n - 1) - |i||; replicated, i clamped
// to [0, n - 1]. Symbolic sizes work (the index is computed in the graph).

template <bool kReflect>
OpDef index_pad_op(std::string_view schema, size_t dims) {
  return define_op(schema)
      .shape([dims](const OpArgs& a) {
        const Tensor& x = a.tensor(0);
        const SymIntList& pad = a.sym_int_list(1);
        INGOT_CHECK(pad.size() == 2 * dims && x.dim() >= int64_t(dims), ValueError,
                    "[{}] padding must have {} values and self at least {} dims, got {} values "
                    "and {}",
                    a.name(), 2 * dims, dims, pad.size(), x.shape_string());
        Shape s = x.sym_sizes();
        for (size_t k = 0; k < dims; ++k) {
          SymInt& d = s[size_t(x.dim()) - 1 - k];
          if (kReflect) {
            for (const SymInt& p : {pad[2 * k], pad[2 * k + 1]}) {
              INGOT_CHECK(!p.maybe_int() || !d.maybe_int() || *p.maybe_int() < *d.maybe_int(),
                          ValueError, "[{}] padding {} must be smaller than the dim's size {}",
                          a.name(), p.str(), d.str());
            }
          }
          d = d + pad[2 * k] + pad[2 * k + 1];
        }
        return std::vector<OutputMeta>{{x.dtype(), std::move(s)}};
      })
      .decompose([dims](const OpArgs& a) {
        Tensor x = a.tensor(0);
        const SymIntList& pad = a.sym_int_list(1);
        for (size_t k = 0; k < dims; ++k) {
          const int64_t d = x.dim() - 1 - int64_t(k);
          const SymInt n = x.sym_size(d), last = n - 1;
          Tensor i = call1(kArange,
                           {Value(-pad[2 * k]), Value(n + pad[2 * k + 1]), int64_t(1), DType::I64});
          if (kReflect) {
            i = call1(kSubS, {call1(kAbs, {i}), Value(last)});
            i = call1(kAddS, {call1(kNeg, {call1(kAbs, {i})}), Value(last)});
          } else {
            i = call1(kClamp, {i, Scalar(int64_t(0)), Value(last)});
          }
          x = call1(kIndexSelect, {x, d, i});
        }
        return std::vector<Tensor>{x};
      });
}

const OpRegistrar kReflect1(
    index_pad_op<true>("reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor", 1));
const OpRegistrar kReflect2(
    index_pad_op<true>("reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor", 2));
const OpRegistrar kReflect3(
    index_pad_op<true>("reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor", 3));
const OpRegistrar kReplicate1(
    index_pad_op<false>("replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor", 1));
const OpRegistrar kReplicate2(
    index_pad_op<false>("replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor", 2));
const OpRegistrar kReplicate3(
    index_pad_op<false>("replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor", 3));

// --- pad(self, pad, mode, value): F.pad in the training dialect -------------------------

const OpHandle kConstantPadOp("constant_pad_nd");

const OpRegistrar kPad(
    define_op("pad(Tensor self, SymInt[] pad, str mode='constant', float? value=None) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const std::string& mode = a.string(2);
          const size_t n = a.sym_int_list(1).size();
          INGOT_CHECK(mode == "constant" || ((mode == "reflect" || mode == "replicate") &&
                                             n % 2 == 0 && n >= 2 && n <= 6),
                      NotSupportedError,
                      "[{}] mode '{}' with {} pad values is not supported (constant; reflect and "
                      "replicate over 1 to 3 dims)",
                      a.name(), mode, n);
          Shape s = x.sym_sizes();
          const SymIntList& pad = a.sym_int_list(1);
          INGOT_CHECK(n % 2 == 0 && int64_t(n) <= 2 * x.dim(), ValueError,
                      "[{}] pad must have an even length of at most 2 * {}, got {}", a.name(),
                      x.dim(), n);
          for (size_t k = 0; k < n / 2; ++k) {
            SymInt& d = s[size_t(x.dim()) - 1 - k];
            d = d + pad[2 * k] + pad[2 * k + 1];
          }
          return std::vector<OutputMeta>{{x.dtype(), std::move(s)}};
        })
        .decompose([](const OpArgs& a) {
          const std::string& mode = a.string(2);
          const SymIntList& pad = a.sym_int_list(1);
          if (mode == "constant") {
            const Value fill = a[3].is_none() ? Value(Scalar(int64_t(0))) : Value(Scalar(a.f64(3)));
            return kConstantPadOp({a[0], a[1], fill});
          }
          const std::string op = fmt::format(
              "{}_pad{}d", mode == "reflect" ? "reflection" : "replication", pad.size() / 2);
          return call_op(OpRegistry::instance().get(op), {a[0], a[1]});
        }));

// --- repeat_interleave(self, repeats: int, dim, output_size): each element `repeats` times
// along dim (the flattened input when dim is None): [.., n, 1, ..] expanded to r, then
// merged. -----------------------------------------------------------------------------------

const OpRegistrar kRepeatInterleave(
    define_op("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
              "SymInt? output_size=None) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const SymInt& r = a.sym_int(1);
          INGOT_CHECK(!r.maybe_int() || *r.maybe_int() >= 0, ValueError,
                      "[{}] repeats must be >= 0, got {}", a.name(), r.str());
          if (a[2].is_none()) return std::vector<OutputMeta>{{x.dtype(), Shape{x.sym_numel() * r}}};
          const int64_t d = wrap_dim(a.int_(2), std::max<int64_t>(x.dim(), 1), a.name());
          Shape s = x.sym_sizes();
          if (s.empty()) s = {SymInt(1)};
          s[size_t(d)] = s[size_t(d)] * r;
          return std::vector<OutputMeta>{{x.dtype(), std::move(s)}};
        })
        .decompose([](const OpArgs& a) {
          Tensor x = a.tensor(0);
          const SymInt& r = a.sym_int(1);
          int64_t d = 0;
          if (a[2].is_none())
            x = call1(kReshape, {x, SymIntList{SymInt(-1)}});
          else
            d = wrap_dim(a.int_(2), std::max<int64_t>(x.dim(), 1), a.name());
          if (x.dim() == 0) x = call1(kReshape, {x, SymIntList{SymInt(1)}});
          const Shape& s = x.sym_sizes();
          SymIntList expanded(s.begin(), s.end()), merged(s.begin(), s.end());
          expanded.insert(expanded.begin() + d + 1, r);
          merged[size_t(d)] = merged[size_t(d)] * r;
          const Tensor y = call1(kExpand, {call1(kUnsqueeze, {x, d + 1}), expanded});
          return std::vector<Tensor>{call1(kClone, {call1(kReshape, {y, merged})})};
        }));

// --- index_add(self, dim, index [k], source, alpha): source's slices added at index ------
// along dim, as scatter_add with the index broadcast over source's other dims.

const OpRegistrar kIndexAdd(
    define_op("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
              "-> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor &x = a.tensor(0), &index = a.tensor(2), &src = a.tensor(3);
          const int64_t d = wrap_dim(a.int_(1), std::max<int64_t>(x.dim(), 1), a.name());
          INGOT_CHECK(index.dim() <= 1 && src.dim() == x.dim() && src.dtype() == x.dtype(),
                      ShapeError,
                      "[{}] index must be 1-D and source of self's rank and dtype, got index {}, "
                      "source {} {}, self {} {}",
                      a.name(), index.shape_string(), src.shape_string(), src.dtype(),
                      x.shape_string(), x.dtype());
          INGOT_CHECK(x.dim() == 0 || bool(src.sym_size(d) == index.sym_numel()), ShapeError,
                      "[{}] source has {} slices along dim {}, index {}", a.name(),
                      src.sym_size(d).str(), d, index.sym_numel().str());
          return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          Tensor src = a.tensor(3);
          const int64_t d = wrap_dim(a.int_(1), std::max<int64_t>(x.dim(), 1), a.name());
          SymIntList view(size_t(std::max<int64_t>(src.dim(), 1)), SymInt(1));
          view[size_t(d)] = SymInt(-1);
          const Shape& ss = src.sym_sizes();
          Tensor idx = call1(kReshape, {call1(kToCopy, {a.tensor(2), DType::I64}), view});
          idx = call1(kExpand, {idx, SymIntList(ss.begin(), ss.end())});
          const std::optional<Scalar> alpha = a.optional_scalar(4);
          if (!(alpha && alpha->is_integral() && alpha->to_int() == 1))
            src = call1(kMulS, {src, a[4]});
          return kScatterAdd({x, d, idx, src});
        }));

// --- fill.Scalar(self, value): a tensor of self's shape and dtype holding value -----------

const OpRegistrar kFill(define_op("fill.Scalar(Tensor self, Scalar value) -> Tensor")
                            .shape([](const OpArgs& a) {
                              const Tensor& x = a.tensor(0);
                              return std::vector<OutputMeta>{{x.dtype(), x.sym_sizes()}};
                            })
                            .decompose([](const OpArgs& a) {
                              const Tensor& x = a.tensor(0);
                              const Shape& s = x.sym_sizes();
                              return kFull({SymIntList(s.begin(), s.end()), a[1], x.dtype()});
                            }));

}  // namespace
}  // namespace ingot
