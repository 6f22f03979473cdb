// The machine's honest limits, for benchmarks to report fractions of.
//
// read_probe: streaming-read bandwidth over a 1 GiB buffer (well past the L3), with the
// access pattern of a GEMV: every pool thread reads its own block of rows, several rows
// at once (interleaved streams, one 64-byte line of each per step), with 512-bit loads
// where the CPU has them. The best of several layouts (1, 4, 8, 16 streams) and passes
// is the figure: what the machine really streams, not what one pattern happens to reach.
// flop_probe: the peak of the f32 FMA (AVX-512 or AVX2) and AVX512_BF16 dot-product
// instructions on all pool threads, independent accumulators (no dependency chains).
#pragma once

#include <map>
#include <string>

namespace ingot::bench {

struct ReadProbe {
  double best_gbs = 0;                   // 1e9 bytes/s, all pool threads
  int best_streams = 0;                  // the layout that reached it
  std::map<int, double> gbs_by_streams;  // best pass per layout
};
// `passes` per layout; the first call also faults the buffer in.
ReadProbe read_probe(int passes = 3);

struct FlopProbe {
  double f32_gflops = 0;   // fused multiply-add, 2 FLOP each
  double bf16_gflops = 0;  // vdpbf16ps (2 FLOP per bf16 pair); 0 without AVX512_BF16
};
FlopProbe flop_probe();

}  // namespace ingot::bench
