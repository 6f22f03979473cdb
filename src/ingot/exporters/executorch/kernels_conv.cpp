// convolution(input, weight, bias?, stride, padding, dilation, groups) on the portable
// kernels: aten::convolution.out(input, weight, bias?, stride, padding, dilation,
// transposed=false, output_padding=[0]*dims, groups, out). backend="xnnpack" takes the
// float32 ones with a constant weight first (xnnpack_delegate.cpp).
#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch {

namespace {

INGOT_EXECUTORCH_KERNEL(convolution, "convolution", [](KernelContext& k) {
  const size_t dims = k.in_info(1).sizes.size() - 2;
  const std::vector<sym::Expr> output_padding(dims, sym::integer(0));
  k.call("aten::convolution.out",
         {k.tensor(0), k.tensor(1), k.optional_tensor(2), k.int_list(3), k.int_list(4),
          k.int_list(5), k.bool_const(false), k.int_list_of(output_padding), k.int_(6)},
         {k.out()});
});

}  // namespace

}  // namespace ingot::exporters::executorch
