#include "ingot/exporters/onnx/version.h"

#include "ingot/core/error.h"

namespace ingot::exporters::onnx {

int64_t ir_version_for_opset(int64_t opset) {
  INGOT_CHECK(opset >= kMinOpset && opset <= kMaxOpset, ValueError,
              "[onnx] opset {} is outside the supported range [{}, {}]", opset, kMinOpset,
              kMaxOpset);
  // onnx release -> (IR version, highest default-domain opset): 1.12 -> (8, 17),
  // 1.13 -> (8, 18), 1.14 -> (9, 19), 1.15 -> (9, 20), 1.16 -> (10, 21), 1.17 -> (10, 22),
  // 1.18 -> (11, 23), 1.19 -> (12, 24), 1.20 -> (13, 25), 1.21 -> (13, 26),
  // 1.22 -> (13, 27), 1.23 -> (14, 28).
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset == 23) return 11;
  if (opset == 24) return 12;
  if (opset <= 27) return 13;
  return 14;
}

}  // namespace ingot::exporters::onnx
