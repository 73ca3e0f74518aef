// The space's entry for scan stages: PyTorch's own fp32 order (`order torch`) beside the fp64
// plans, where the checker allows it (simt_torch_scan_refusal: an f32 row scan, inclusive or an
// exclusive cumsum); a program that fixes the order keeps it.
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(si));
  const auto& r = std::get<dsl::ScanStage>(st.body);
  const dsl::SimtKnobs& fx = r.knobs;
  const bool keep = o.keep_explicit;
  std::vector<StageConfig> out;
  const dsl::Tensor* in = p.find_tensor(r.input);
  const dsl::Tensor* y = st.outputs.empty() ? nullptr : p.find_tensor(st.outputs[0]);
  const bool torch_ok = in && y && dsl::simt_torch_scan_refusal(r, *in, *y).empty();
  // Its knobs are the block (warps, each a row) and the chunks in each segment a warp streams
  // through its shared-memory ring; every one of them sums in the same order.
  if (torch_ok && !(keep && fx.order == dsl::ScanOrder::fp64))
    for (int th : space_or_fixed<int>(keep, fx.threads, {128, 256}))
      for (int u : space_or_fixed<int>(keep, fx.items_per_thread, {16, 8, 4})) {
        StageConfig c;
        c.stage = si;
        c.is_gemm = false;
        c.simt.order = dsl::ScanOrder::torch;
        c.simt.threads = th;
        c.simt.items_per_thread = u;
        out.push_back(std::move(c));
      }
  if (keep && fx.order == dsl::ScanOrder::torch) return out;
  space_enumerate_simt_grid(si, fx, /*rows=*/false, {0}, o, out);
  return out;
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& r = std::get<dsl::ScanStage>(st.body);
  data = r.input;
  reads = {r.input};
}

}  // namespace

extern const SpaceStageKind space_kind_scan = {
    dsl::StageKind::scan, false, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::ScanStage>, space_simt_name, space_no_reduction_reads,
};

}  // namespace ucut::space
