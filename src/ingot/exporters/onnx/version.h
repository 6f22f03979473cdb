// The ONNX operator-set and IR versions ingot writes.
//
// Default: opset 18 with IR version 8 (the pair the onnx 1.13 release introduced).
// Opset 18 has every op ingot's lowering needs (If/Loop/Scan, ScatterND with reduction,
// LayerNormalization, Reduce* with axes as an input) and runs on every ONNX Runtime
// since 1.14; a caller may ask for a newer opset (up to kMaxOpset), and the IR version
// follows it (each opset needs at least the IR version of the onnx release that added it).
#pragma once

#include <cstdint>

namespace ingot::exporters::onnx {

inline constexpr int64_t kDefaultOpset = 18;
inline constexpr int64_t kMinOpset = 17;
inline constexpr int64_t kMaxOpset = 28;

// ModelProto.producer_name; producer_version is ingot::version() (core/version.h).
inline constexpr const char* kProducerName = "ingot";

// The IR version written with `opset` (ValueError outside [kMinOpset, kMaxOpset]).
int64_t ir_version_for_opset(int64_t opset);

}  // namespace ingot::exporters::onnx
