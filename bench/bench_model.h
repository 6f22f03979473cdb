// A Qwen3-0.6B-shaped checkpoint for the load / export benchmarks, and process memory
// probes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ingot::bench {

// Writes (once per process) config.json and a bf16 model.safetensors with Qwen3-0.6B's
// tensor shapes to the temp dir; the data section is a hole (zeros, sparse on disk).
// Returns the folder and the weight file size.
std::pair<std::string, size_t> synthetic_qwen3_checkpoint();

// The same for any architecture: `config_json` (a config.json text) and the bf16
// tensors' names and shapes, written to <temp>/<name>; the data section is a hole.
using TensorShapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;
std::pair<std::string, size_t> write_synthetic_checkpoint(const std::string& name,
                                                          const std::string& config_json,
                                                          const TensorShapes& shapes);

// Writes config.json and model.safetensors of a Qwen3-0.6B-shaped model with random bf16
// weights (deterministic for `seed`: matrices uniform with std 0.02, norm weights near 1)
// to `folder`, for benchmarks that compare outputs across runtimes. Returns the file size.
size_t write_random_qwen3_checkpoint(const std::string& folder, uint64_t seed);

// A /proc/self/status field in kB ("VmRSS:", "VmHWM:").
int64_t status_kb(const char* field);
// Resets the peak-RSS mark (VmHWM) to the current RSS.
void reset_peak_rss();

}  // namespace ingot::bench
