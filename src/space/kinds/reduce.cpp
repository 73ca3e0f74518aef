// The space's entry for reduce stages: the SIMT grid with rows per block; a column reduction
// (not a loss) may split its reduced rows across a cluster.
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& r = std::get<dsl::ReduceStage>(p.stages.at(static_cast<size_t>(si)).body);
  const bool keep = o.keep_explicit;
  std::vector<int> clusters = {0};
  if (!dsl::dsl_reduce_is_loss(r.op)) {
    if (keep && r.knobs.cluster) clusters = {*r.knobs.cluster};
    else if (const dsl::Tensor* in = p.find_tensor(r.inputs.at(0));
             in && !dsl::simt_reduce_geometry(in->shape, r.dims).inner)
      clusters = {0, 2, 4, 8};
  }
  std::vector<StageConfig> out;
  space_enumerate_simt_grid(si, r.knobs, /*rows=*/true, clusters, o, out);
  return out;
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
    dsl::StageKind::reduce, true, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::ReduceStage>, space_simt_name, reduction_reads,
};

}  // namespace ucut::space
