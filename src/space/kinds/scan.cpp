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

// The SIMT bandwidth model, with what the row kernels measured (docs/benchmarks.md). `order torch`
// streams each warp's row through a shared-memory ring: 86-95% of SOL on 1 K- to 16 K-long
// aligned rows (runs AM, AO), about half that with 4-byte copies (unaligned rows, run AM). The
// fp64 row kernel walks a row in tiles of threads x items with no load ahead between tiles: on
// rows of one tile it is as fast (scan_cumsum_rows_1k, 92% of SOL, run P), on longer rows each
// tile waits for the last (kb1_cumsum, 32 K-long rows in 4 Ki tiles: 0.43x eager, about 19% of
// SOL, where the ring ran 2.03x; runs BO, CD, CR). Without this, both modelled alike and the
// tie went to the fp64 kernel by name: the kb suite's cumsums opened with it.
RankedConfig rank(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw) {
  RankedConfig r = space_rank_simt(p, st, c, hw);
  const auto& sc = std::get<dsl::ScanStage>(st.body);
  const dsl::Tensor* x = p.find_tensor(sc.input);
  if (!x || x->shape.empty()) return r;
  const int rank_n = static_cast<int>(x->shape.size());
  const int dim = sc.dim < 0 ? sc.dim + rank_n : sc.dim;
  if (dim != rank_n - 1) return r;  // the strided kernel: the generic model
  const int64_t cols = x->shape.back();
  const int64_t rows = cols > 0 ? x->numel() / cols : 0;
  auto plan = dsl::simt_plan_scan(rows, cols, dsl::dtype_bytes(x->dtype), c.simt);
  if (!plan) return r;  // validation reports it
  double eff;
  if (plan->torch) {
    // 128 threads streaming 16 chunks a segment ran best (run AM: 0.5635 ms against 0.5795-0.5894)
    eff = (cols % 4 == 0 ? 0.9 : 0.45) * (plan->threads == 128 && plan->items == 16 ? 1.0 : 0.97);
  } else {
    const int64_t tile = static_cast<int64_t>(plan->threads) * plan->items;
    eff = cols <= tile ? 0.9 : 0.2;
  }
  const double t_fixed = r.t_est - r.t_sol / (r.mainloop_eff * std::min(1.0, r.wave_eff * 2));
  r.mainloop_eff = eff;
  r.t_est = r.t_sol / (eff * std::min(1.0, r.wave_eff * 2)) + std::max(0.0, t_fixed);
  return r;
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& r = std::get<dsl::ScanStage>(st.body);
  data = r.input;
  reads = {r.input};
}

}  // namespace

extern const SpaceStageKind space_kind_scan = {
    dsl::StageKind::scan, false, enumerate, io, space_validate_simt, rank,
    space_apply_knobs<dsl::ScanStage>, space_simt_name, space_no_reduction_reads,
};

}  // namespace ucut::space
