// The window stage's shared rules (dsl::WindowStage, program.h): PyTorch's output size of a
// pooled or convolved dim, the adaptive windows, and the launch plan. The checker, the
// interpreter, the code generator and the search space all use these, so a checked stage always
// has the kernel the code generator makes.
#pragma once

#include <cstdint>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::dsl {

// PyTorch's output size of one dim (pooling_output_shape; a conv is ceil_mode false):
// (in + lo + hi - dilation*(k-1) - 1) / stride + 1, rounded up under ceil_mode, where the last
// window must start inside the input or its low padding. 0 or less: no window fits.
int64_t window_out_size(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t dilation,
                        bool ceil_mode);

// PyTorch's adaptive window of output i of `out` along a dim of `in`: [start, end).
inline int64_t window_adaptive_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
inline int64_t window_adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

// The window stage's kernel: one thread computes `items` consecutive outputs along the last dim
// (a grid-stride loop over groups of them), `threads` a block; auto: 256 threads, 1 item (the
// taps of neighbouring outputs overlap, so neighbouring threads' reads hit L1). A window of at
// least kWindowWarpTaps taps (a global or large adaptive pool) with one item a thread is reduced
// by a warp instead: the lanes split each row of the window (coalesced), then combine by shuffles,
// so a few large outputs still fill the GPU.
inline constexpr int64_t kWindowWarpTaps = 256;
struct WindowPlan {
  int threads = 256;
  int items = 1;
  int lanes = 1;        // threads an output: 1, or 32 (a warp)
  int64_t groups = 0;   // output groups of `items`
  int64_t blocks = 0;   // at most kSimtSmCount * 16 (grid-stride beyond)
};
// The most taps one output's window has (adaptive: the longest window along each dim).
int64_t window_max_taps(const WindowStage& w);
Result<WindowPlan> window_plan(const WindowStage& w);
// Whether every index the window kernel computes fits in 32 bits (x and the output under 2^31
// elements; for adaptive windows also (out + 1) * in along each dim): its index arithmetic is
// then 32-bit, else 64-bit.
bool window_fits_int32(const WindowStage& w);

}  // namespace ucut::dsl
