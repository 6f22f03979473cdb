#include <cmath>
#include <numbers>

#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo, hi;  // input range
};

double sigmoid_ref(double v) { return 1.0 / (1.0 + std::exp(-v)); }

const std::vector<UnaryCase>& float_math_cases() {
  static const std::vector<UnaryCase> cases = {
      {"sqrt", [](const Tensor& t) { return ingot::sqrt(t); }, [](double v) { return std::sqrt(v); }, 0.0, 3},
      {"rsqrt", [](const Tensor& t) { return ingot::rsqrt(t); }, [](double v) { return 1 / std::sqrt(v); }, 0.2, 3},
      {"exp", [](const Tensor& t) { return ingot::exp(t); }, [](double v) { return std::exp(v); }, -3, 3},
      {"log", [](const Tensor& t) { return ingot::log(t); }, [](double v) { return std::log(v); }, 0.1, 3},
      {"sin", [](const Tensor& t) { return ingot::sin(t); }, [](double v) { return std::sin(v); }, -3, 3},
      {"cos", [](const Tensor& t) { return ingot::cos(t); }, [](double v) { return std::cos(v); }, -3, 3},
      {"tanh", [](const Tensor& t) { return ingot::tanh(t); }, [](double v) { return std::tanh(v); }, -3, 3},
      {"sigmoid", [](const Tensor& t) { return ingot::sigmoid(t); }, sigmoid_ref, -4, 4},
      {"silu", [](const Tensor& t) { return ingot::silu(t); }, [](double v) { return v * sigmoid_ref(v); }, -4, 4},
      {"gelu", [](const Tensor& t) { return ingot::gelu(t); },
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, -4, 4},
      {"gelu_tanh", [](const Tensor& t) { return ingot::gelu(t, "tanh"); },
       [](double v) {
         const double k = std::sqrt(2 / std::numbers::pi);
         return 0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v)));
       },
       -4, 4},
      {"neg", [](const Tensor& t) { return ingot::neg(t); }, [](double v) { return -v; }, -3, 3},
      {"abs", [](const Tensor& t) { return ingot::abs(t); }, [](double v) { return std::abs(v); }, -3, 3},
      {"relu", [](const Tensor& t) { return ingot::relu(t); }, [](double v) { return v < 0 ? 0 : v; }, -3, 3},
  };
  return cases;
}

const IntShape kShapes[] = {{2, 3, 4}, {5, 1, 7}, {0, 3}, {1}, {}, {70000}};

TEST(Unary, MatchesReferenceForFloatDTypesWithViews) {
  std::mt19937 rng(11);
  for (const UnaryCase& c : float_math_cases()) {
    for (DType t : testing::kFloatDTypes) {
      for (const IntShape& shape : kShapes) {
        const Tensor a = testing::random_tensor(shape, t, rng, c.lo, c.hi);
        std::vector<double> expected;
        for (double v : values(a)) expected.push_back(c.ref(v));
        for (bool nc : {false, true}) {
          const Tensor x = nc ? testing::noncontiguous_like(a) : a;
          const Tensor y = c.op(x);
          const std::string what = fmt::format("{} {} {}{}", c.name, t, shape_str(shape), nc ? " strided" : "");
          EXPECT_EQ(y.dtype(), t) << what;
          EXPECT_EQ(y.sizes(), shape) << what;
          testing::expect_close(y, expected, testing::default_atol(t), testing::default_rtol(t), what);
        }
      }
    }
  }
}

TEST(Unary, IntegerInputsPromoteToFloat32ForFloatMath) {
  std::mt19937 rng(3);
  const char* float_ops[] = {"sqrt", "exp", "sin", "cos", "tanh", "sigmoid", "log", "rsqrt"};
  for (const UnaryCase& c : float_math_cases()) {
    if (std::find_if(std::begin(float_ops), std::end(float_ops),
                     [&](const char* n) { return std::string(n) == c.name; }) == std::end(float_ops)) {
      continue;
    }
    for (DType t : {DType::Bool, DType::U8, DType::I8, DType::I16, DType::I32, DType::I64}) {
      const Tensor a = testing::random_tensor({3, 5}, t, rng, 0, 3);
      const Tensor y = c.op(testing::noncontiguous_like(a));
      EXPECT_EQ(y.dtype(), DType::F32) << c.name << " " << dtype_name(t);
      std::vector<double> expected;
      for (double v : values(a)) expected.push_back(c.ref(v));
      testing::expect_close(y, expected, 1e-5, 1e-5, fmt::format("{} {}", c.name, t));
    }
  }
}

TEST(Unary, NegAbsReluKeepIntegerDTypes) {
  std::mt19937 rng(5);
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64}) {
    const Tensor a = testing::random_tensor({4, 6}, t, rng, -50, 50);
    const Tensor x = testing::noncontiguous_like(a);
    std::vector<double> n, ab, r;
    for (double v : values(a)) {
      n.push_back(-v);
      ab.push_back(std::abs(v));
      r.push_back(v < 0 ? 0 : v);
    }
    EXPECT_EQ(ingot::neg(x).dtype(), t);
    EXPECT_EQ(values(ingot::neg(x)), n);
    EXPECT_EQ(values(ingot::abs(x)), ab);
    EXPECT_EQ(values(ingot::relu(x)), r);
    EXPECT_EQ(values(-x), n);
  }
  const Tensor u = Tensor::from_vector<uint8_t>({0, 1, 200}, {3});
  EXPECT_EQ(values(ingot::neg(u)), (std::vector<double>{0, 255, 56}));  // wraps like torch
  EXPECT_EQ(values(ingot::abs(u)), (std::vector<double>{0, 1, 200}));
  const Tensor b = Tensor::from_vector<bool>({true, false}, {2});
  EXPECT_EQ(ingot::abs(b).dtype(), DType::Bool);
  EXPECT_EQ(values(ingot::abs(b)), (std::vector<double>{1, 0}));
}

TEST(Unary, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const Tensor x = Tensor::from_vector<float>({float(-inf), -1.f, 0.f, float(inf), float(nan)}, {5});
  testing::expect_close(ingot::relu(x), {0, 0, 0, inf, nan}, 0, 0);
  testing::expect_close(ingot::sigmoid(x), {0, sigmoid_ref(-1), 0.5, 1, nan}, 1e-6, 1e-6);
  testing::expect_close(ingot::exp(x), {0, std::exp(-1.0), 1, inf, nan}, 1e-6, 1e-6);
  testing::expect_close(ingot::rsqrt(x), {nan, nan, inf, 0, nan}, 0, 0);
  testing::expect_close(ingot::silu(x), {nan, -sigmoid_ref(-1), 0, inf, nan}, 1e-6, 1e-6);
}

TEST(Unary, Errors) {
  const Tensor b = Tensor::from_vector<bool>({true}, {1});
  const Tensor i = Tensor::from_vector<int64_t>({1}, {1});
  EXPECT_THROW(ingot::neg(b), DTypeError);
  EXPECT_THROW(ingot::relu(b), DTypeError);
  EXPECT_THROW(ingot::silu(i), DTypeError);
  EXPECT_THROW(ingot::gelu(i), DTypeError);
  EXPECT_THROW(ingot::gelu(Tensor::from_vector<float>({1.f}, {1}), "fast"), ValueError);
  try {
    ingot::silu(i);
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[silu]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot
