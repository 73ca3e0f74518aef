// The space's entry for window stages: threads x outputs a thread (items_per_thread), validated by
// the window's launch plan (dsl/window_rules.h) and ranked by the SIMT bandwidth model.
#include "space/kinds/kinds.h"

#include <cmath>

#include "dsl/window_rules.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& w = std::get<dsl::WindowStage>(p.stages.at(static_cast<size_t>(si)).body);
  const int64_t last = w.out_size.empty() ? 1 : w.out_size.back();
  std::vector<StageConfig> out;
  for (int th : space_or_fixed<int>(o.keep_explicit, w.knobs.threads, {128, 256, 512}))
    for (int it : space_or_fixed<int>(o.keep_explicit, w.knobs.items_per_thread, {1, 2, 4})) {
      if (last % it != 0) continue;  // a thread's outputs stay in one row
      StageConfig c;
      c.stage = si;
      c.is_gemm = false;
      c.simt = w.knobs;
      c.simt.threads = th;
      c.simt.items_per_thread = it;
      out.push_back(std::move(c));
    }
  return out;
}

// Its data is its output's shape; it reads x, the weight and bias, and what its epilogue loads.
void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& w = std::get<dsl::WindowStage>(st.body);
  data = st.outputs.at(0);
  reads.push_back(w.x);
  if (!w.weight.empty()) reads.push_back(w.weight);
  if (!w.bias.empty()) reads.push_back(w.bias);
  space_block_loads(w.epilogue, reads);
}

// The SIMT bandwidth model. Where neighbouring outputs' windows overlap along the last dim
// (stride below the window's span), a thread's consecutive outputs share their loads (the
// kernel's interior walk loads each element once for all of them): counted as one wider access.
// Where they do not, a thread's outputs share nothing and its run only spreads a warp's loads
// (neighbouring threads items x stride elements apart; run CM: 11x11/11 and 3x3x3/2 pools at 2 and
// 4 items a thread ran 0.38x and 0.43x eager): ranked below one output a thread.
RankedConfig rank(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw) {
  const auto& w = std::get<dsl::WindowStage>(st.body);
  const int items = c.simt.items_per_thread.value_or(1);
  const bool adaptive = w.op == "adaptive_avg";
  const bool overlap = !adaptive && !w.window.empty() &&
                       w.stride.back() < (w.window.back() - 1) * w.dilation.back() + 1;
  StageConfig m = c;
  m.simt.vector_width = overlap ? items : 1;
  RankedConfig r = space_rank_simt(p, st, m, hw);
  if (!overlap && items > 1) {
    const double spread = 1.0 + 0.1 * std::log2(static_cast<double>(items));
    r.mainloop_eff /= spread;
    r.t_est *= spread;
  }
  r.config = c;
  return r;
}

std::string name(const dsl::Program&, const dsl::Stage&, const StageConfig& c) {
  auto num = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("A"); };
  return "window_th" + num(c.simt.threads) + "_i" + num(c.simt.items_per_thread);
}

}  // namespace

extern const SpaceStageKind space_kind_window = {
    dsl::StageKind::window, false, enumerate, io, space_validate_simt, rank,
    space_apply_knobs<dsl::WindowStage>, name, space_no_reduction_reads,
};

}  // namespace ucut::space
