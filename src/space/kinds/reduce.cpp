// The space's entry for reduce stages: the SIMT grid with rows per block; a column reduction
// (not a loss) may split its reduced rows across a cluster.
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

constexpr int kDeepUnroll = 16;

// Whether the stage keeps its innermost dimension (the column kernel), a loss never.
bool column(const dsl::Program& p, const dsl::ReduceStage& r) {
  if (dsl::dsl_reduce_is_loss(r.op)) return false;
  const dsl::Tensor* in = p.find_tensor(r.inputs.at(0));
  return in && !dsl::simt_reduce_geometry(in->shape, r.dims).inner;
}

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(si));
  const auto& r = std::get<dsl::ReduceStage>(st.body);
  const bool keep = o.keep_explicit;
  const bool col = column(p, r);
  std::vector<int> clusters = {0};
  if (col)
    clusters = keep && r.knobs.cluster ? std::vector<int>{*r.knobs.cluster} : std::vector<int>{0, 2, 4, 8};
  std::vector<StageConfig> out;
  space_enumerate_simt_grid(si, r.knobs, /*rows=*/true, clusters, o, out);
  // A column reduction whose vectors are narrower than 8 bytes (an odd kept run: kb1_sum_dim's
  // [128, 4096, 4095] reads 4-byte columns) also loads 16 reduced rows ahead instead of 8: the
  // same 64 bytes in flight a thread as the 8-byte vectors that ran at 98% of the bandwidth.
  // A value and its index (argmax/argmin, two-output max/min) too: the kernel keeps a thread's
  // index as a 32-bit row offset, and 16 rows ahead fit the kernel's 64-register bound (ptxas:
  // 64 registers, no spill at 512 threads; a 64-bit index spilled 272 bytes).
  if (col && !(keep && r.knobs.items_per_thread)) {
    const dsl::Tensor* in = p.find_tensor(r.inputs.at(0));
    const int bytes = in ? dsl::dtype_bytes(in->dtype) : 4;
    const size_t n = out.size();
    for (size_t i = 0; i < n; ++i)
      if (out[i].simt.vector_width.value_or(1) * bytes < 8) {
        StageConfig c = out[i];
        c.simt.items_per_thread = kDeepUnroll;
        out.push_back(std::move(c));
      }
  }
  return out;
}

// A column kernel's narrow vectors loaded 16 reduced rows ahead count as twice as wide, less the
// extra loads: what a thread has in flight, not the width of one load, fills the memory pipe
// (run Q, 16 Ki x 16 Ki: 8-byte vectors 8 rows ahead, 64 bytes a thread, at 98% of the bandwidth;
// the kb suite's middle-dim sums and maxima, [128, 4096, 4095]: 4-byte ones 8 ahead, 32 bytes, at
// 64-72%). 16 ahead is not yet measured (docs/benchmarks.md). Among equals, the column kernel's
// own choices (dsl/simt_plan.cpp): 512 threads (run Q: 2-4% ahead of 1024), and no cluster where
// the column tiles alone fill the GPU many times over (a cluster splits each tile's rows across
// blocks that then wait on each other).
RankedConfig rank(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw) {
  RankedConfig r = space_rank_simt(p, st, c, hw);
  const auto& red = std::get<dsl::ReduceStage>(st.body);
  if (!column(p, red)) return r;
  const dsl::Tensor* in = p.find_tensor(red.inputs.at(0));
  const int width = c.simt.vector_width.value_or(1) * (in ? dsl::dtype_bytes(in->dtype) : 4);
  double factor = c.simt.threads.value_or(512) == 512 ? 1.0 : 0.98;
  if (c.simt.items_per_thread.value_or(0) == kDeepUnroll)
    factor *= 0.98 * space_access_eff(2 * width) / space_access_eff(width);  // twice the loads for it
  if (c.simt.cluster.value_or(1) > 1 && in) {
    const auto g = dsl::simt_reduce_geometry(in->shape, red.dims);
    const int64_t cols = 32LL * c.simt.vector_width.value_or(1);
    const int64_t tiles = g.n_out / std::max<int64_t>(1, g.run) * ((g.run + cols - 1) / cols);
    if (tiles >= 8LL * hw.sms) factor *= 0.98;
  }
  space_simt_set_eff(r, std::min(1.0, r.mainloop_eff * factor));
  return r;
}

// The name: the SIMT grid's, and the rows a column kernel loads ahead where they are not its own.
std::string name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c) {
  std::string n = space_simt_name(p, st, c);
  if (c.simt.items_per_thread) n += "_u" + std::to_string(*c.simt.items_per_thread);
  return n;
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& r = std::get<dsl::ReduceStage>(st.body);
  data = r.inputs.at(0);
  reads = r.inputs;
  space_block_loads(r.prologue, reads);
  space_block_loads(r.epilogue, reads);
}

void reduction_reads(const dsl::Stage& st, std::set<std::string>& out) {
  const auto& d = std::get<dsl::ReduceStage>(st.body);
  out.insert(d.inputs.begin(), d.inputs.end());
}

}  // namespace

extern const SpaceStageKind space_kind_reduce = {
    dsl::StageKind::reduce, true, enumerate, io, space_validate_simt, rank,
    space_apply_knobs<dsl::ReduceStage>, name, reduction_reads,
};

}  // namespace ucut::space
