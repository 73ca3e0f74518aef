// Parts the SIMT kinds' entries share: the knob grid, the configuration name, and the entries'
// "nothing" members (no knobs to write, no reduction reads).
#include "space/kinds/kinds.h"

#include "dsl/names.h"

namespace ucut::space {

void space_enumerate_simt_grid(int si, const dsl::SimtKnobs& fx, bool rows, const std::vector<int>& clusters,
                               const SpaceOptions& o, std::vector<StageConfig>& out) {
  const bool keep = o.keep_explicit;
  for (int th : space_or_fixed<int>(keep, fx.threads, {128, 256, 512, 1024}))
    for (int rpb : rows ? space_or_fixed<int>(keep, fx.rows_per_block, {1, 2, 4, 8}) : std::vector<int>{0})
      for (int v : space_or_fixed<int>(keep, fx.vector_width, {1, 2, 4, 8}))
        for (int cl : clusters) {
          StageConfig c;
          c.stage = si;
          c.is_gemm = false;
          c.simt = fx;
          if (c.simt.order == dsl::ScanOrder::torch) {  // the fp64 plans' items are their own
            c.simt.order = dsl::ScanOrder::auto_;
            c.simt.items_per_thread.reset();
          }
          c.simt.threads = th;
          c.simt.rows_per_block = rows ? std::optional<int>(rpb) : std::nullopt;
          c.simt.vector_width = v;
          if (cl > 0) c.simt.cluster = cl;
          out.push_back(std::move(c));
        }
}

std::vector<StageConfig> space_enumerate_none(int si) {
  StageConfig c;
  c.stage = si;
  c.is_gemm = false;
  return {c};
}

std::string space_simt_name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c) {
  (void)p;
  const std::string kind = dsl::dsl_stage_kind(st);
  auto num = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("A"); };
  if (c.simt.order == dsl::ScanOrder::torch)  // a warp a row; segments of u chunks of 32
    return kind + "_torch_th" + num(c.simt.threads) + "_u" + num(c.simt.items_per_thread);
  std::string n = kind + "_th" + num(c.simt.threads);
  if (c.simt.rows_per_block) n += "_rpb" + num(c.simt.rows_per_block);
  n += "_v" + num(c.simt.vector_width);
  if (c.simt.cluster) n += "_cl" + num(c.simt.cluster);
  return n;
}

void space_apply_none(dsl::Stage& st, const StageConfig& c) {
  (void)st;
  (void)c;
}

void space_no_reduction_reads(const dsl::Stage& st, std::set<std::string>& out) {
  (void)st;
  (void)out;
}

}  // namespace ucut::space
