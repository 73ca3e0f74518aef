// The space's entry for rowwise stages: the SIMT grid with rows per block, and rows longer than a
// 512-thread block caches split across a cluster (single-input ops only).
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

// Whether a cluster of `cluster` blocks of 512 or 1024 threads holds the stage's row in registers
// with 16-byte accesses (the code generator's plan, dsl/simt_plan.h).
bool caches_row(const dsl::Program& p, const dsl::RowwiseStage& r, int cluster) {
  const dsl::Tensor* t = p.find_tensor(r.input);
  const int bytes = t ? dsl::dtype_bytes(t->dtype) : 4;
  for (int th : {512, 1024}) {
    dsl::SimtKnobs k;
    k.threads = th;
    k.rows_per_block = 1;
    k.vector_width = 16 / bytes;
    k.cluster = cluster;
    const auto plan = dsl::simt_plan_rowwise(r.rows, r.cols, bytes, k, true);
    if (plan && plan->cached) return true;
  }
  return false;
}

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& r = std::get<dsl::RowwiseStage>(p.stages.at(static_cast<size_t>(si)).body);
  const bool keep = o.keep_explicit;
  std::vector<int> clusters = {0};
  if (keep && r.knobs.cluster) clusters = {*r.knobs.cluster};
  else if (r.cols / 4 > dsl::kClusterRowVectors && r.operands.empty()) {  // multi-input ops: no cluster
    clusters = {1, 2, 4, 8};  // 16: slower where 8 caches the row (runs M, N)
    // A row no cluster of 8 can cache (kb1_softmax's 393216 f32: 48 a thread in 1024-thread blocks)
    // is streamed twice by every other configuration: a cluster of 16 caches it (24 a thread)
    if (!caches_row(p, r, 8) && caches_row(p, r, 16)) clusters.push_back(16);
  }
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

// group_norm's row is a (sample, group) pair: C/groups channels of every position, not the last
// dimension. Ranked by the last dimension, kb1_groupnorm's 512-wide rows looked short, the
// short-row rule (rank.cpp) put 8 rows a block first, and the suite opened with 112 blocks for
// 132 SMs: 0.77x eager (runs CD, CR), where one row a block had run 1.49x (run BN).
int64_t row_length(const dsl::Program& p, const dsl::Stage& st) {
  const auto& r = std::get<dsl::RowwiseStage>(st.body);
  const dsl::Tensor* t = p.find_tensor(r.input);
  if (!t) return 0;
  const auto g = r.attrs.find("groups");
  return dsl::dsl_rowwise_geometry(r.op, t->shape, g == r.attrs.end() ? 0 : static_cast<int64_t>(g->second)).cols;
}

}  // namespace

extern const SpaceStageKind space_kind_rowwise = {
    dsl::StageKind::rowwise, true, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::RowwiseStage>, space_simt_name, reduction_reads, row_length,
};

}  // namespace ucut::space
