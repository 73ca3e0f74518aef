// The window stage's rules (window_rules.h).
#include "dsl/window_rules.h"

#include <algorithm>
#include <string>

#include "dsl/simt_plan.h"

namespace ucut::dsl {

int64_t window_out_size(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t dilation,
                        bool ceil_mode) {
  const int64_t span = in + lo + hi - dilation * (k - 1) - 1;
  if (span < 0 || stride < 1) return 0;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  // ceil_mode's extra window must start inside the input or its low padding (PyTorch's rule)
  if (ceil_mode && (out - 1) * stride >= in + lo) --out;
  return out;
}

int64_t window_max_taps(const WindowStage& w) {
  int64_t taps = 1;
  for (size_t i = 0; i < w.in_size.size(); ++i)
    taps *= w.op == "adaptive_avg" ? (w.in_size[i] + w.out_size[i] - 1) / w.out_size[i] + 1 : w.window[i];
  return taps;
}

bool window_fits_int32(const WindowStage& w) {
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  int64_t x = w.batch * w.channels, out = w.batch * w.out_channels;
  for (size_t i = 0; i < w.in_size.size(); ++i) {
    x *= w.in_size[i];
    out *= w.out_size[i];
    if (w.op == "adaptive_avg" && (w.out_size[i] + 1) * w.in_size[i] >= kMax) return false;
  }
  return x < kMax && out < kMax;
}

Result<WindowPlan> window_plan(const WindowStage& w) {
  WindowPlan p;
  p.threads = w.knobs.threads.value_or(256);
  p.items = w.knobs.items_per_thread.value_or(1);
  const int64_t last = w.out_size.empty() ? 1 : w.out_size.back();
  if (p.threads % 32 != 0 || p.threads < 32 || p.threads > 1024)
    return make_error(ErrorCode::invalid_input, "threads " + std::to_string(p.threads) + " is not a multiple of 32 from 32 to 1024",
                      "use 128, 256 or 512");
  if (p.items < 1 || p.items > 8 || last % p.items != 0)
    return make_error(ErrorCode::invalid_input,
                      "items_per_thread " + std::to_string(p.items) + " does not divide the output's last dim " +
                          std::to_string(last) + " (a thread's outputs stay in one row), or is above 8",
                      "use 1, or a divisor of " + std::to_string(last) + " up to 8");
  int64_t total = w.batch * w.out_channels;
  for (int64_t o : w.out_size) total *= o;
  p.groups = total / p.items;
  p.lanes = p.items == 1 && window_max_taps(w) >= kWindowWarpTaps ? 32 : 1;
  const int64_t per_block = p.threads / p.lanes;
  p.blocks = std::max<int64_t>(1, std::min<int64_t>((p.groups + per_block - 1) / per_block, int64_t{kSimtSmCount} * 16));
  return p;
}

}  // namespace ucut::dsl
