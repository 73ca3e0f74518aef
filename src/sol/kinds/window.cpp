// The SOL estimate's entry for window stages: one FLOP a tap of every output (two for a depthwise
// conv's multiply-add) plus the epilogue, on FP32 SIMT; the bytes are x (and weight, bias) and the
// output, each once: the windows overlap, and the stage is bound by memory.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& w = std::get<WindowStage>(st.body);
  out.reads = {w.x};
  if (!w.weight.empty()) out.reads.push_back(w.weight);
  if (!w.bias.empty()) out.reads.push_back(w.bias);
  sol_epilogue_loads(w.epilogue, out.reads);
  int64_t taps = 1;
  for (size_t i = 0; i < w.in_size.size(); ++i)
    taps *= w.op == "adaptive_avg" ? (w.in_size[i] + w.out_size[i] - 1) / w.out_size[i] : w.window[i];
  out.flops = ctx.out_elems * (taps * (w.op == "sum" ? 2 : 1) + sol_epilogue_cost(w.epilogue));
}

}  // namespace

extern const SolStageKind sol_kind_window = {StageKind::window, work};

}  // namespace ucut::sol
