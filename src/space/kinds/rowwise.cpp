// The space's entry for rowwise stages: the SIMT grid with rows per block, and rows longer than a
// 512-thread block caches split across a cluster (single-input ops only).
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& r = std::get<dsl::RowwiseStage>(p.stages.at(static_cast<size_t>(si)).body);
  const bool keep = o.keep_explicit;
  std::vector<int> clusters = {0};
  if (keep && r.knobs.cluster) clusters = {*r.knobs.cluster};
  else if (r.cols / 4 > dsl::kClusterRowVectors && r.operands.empty())  // multi-input ops: no cluster
    clusters = {1, 2, 4, 8};  // 16: slower (runs M, N)
  std::vector<StageConfig> out;
  space_enumerate_simt_grid(si, r.knobs, /*rows=*/true, clusters, o, out);
  return out;
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& r = std::get<dsl::RowwiseStage>(st.body);
  data = r.input;
  reads = r.extra;
  reads.push_back(r.input);
  reads.insert(reads.end(), r.operands.begin(), r.operands.end());
  space_block_loads(r.prologue, reads);  // a prologue's second input of a loss
  space_block_loads(r.epilogue, reads);
}

void reduction_reads(const dsl::Stage& st, std::set<std::string>& out) {
  const auto& w = std::get<dsl::RowwiseStage>(st.body);
  out.insert(w.input);
  out.insert(w.operands.begin(), w.operands.end());
}

}  // namespace

extern const SpaceStageKind space_kind_rowwise = {
    dsl::StageKind::rowwise, true, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::RowwiseStage>, space_simt_name, reduction_reads,
};

}  // namespace ucut::space
