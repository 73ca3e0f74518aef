// The space's entry for attention stages: one knob, the block (the Hopper kernel, 64 or 128 query
// rows of mma.sync), those the data takes (dsl_attention_threads_ok: the Hopper kernel on 16-bit
// data only); every plan computes in the same order.
#include "dsl/names.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& r = std::get<dsl::AttentionStage>(p.stages.at(static_cast<size_t>(si)).body);
  const dsl::Tensor* q = p.find_tensor(r.q);
  std::vector<int> blocks;
  for (int th : {dsl::kAttentionHopperThreads, 128, 256})
    if (q && dsl::dsl_attention_threads_ok(th, q->dtype)) blocks.push_back(th);
  std::vector<StageConfig> out;
  for (int th : space_or_fixed<int>(o.keep_explicit, r.knobs.threads, blocks)) {
    StageConfig c;
    c.stage = si;
    c.is_gemm = false;
    c.simt.threads = th;
    out.push_back(std::move(c));
  }
  return out;
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  const auto& r = std::get<dsl::AttentionStage>(st.body);
  data = r.q;
  reads = {r.q, r.k, r.v};
}

std::string name(const dsl::Program&, const dsl::Stage& st, const StageConfig& c) {
  return std::string(dsl::dsl_stage_kind(st)) + "_th" + (c.simt.threads ? std::to_string(*c.simt.threads) : "A");
}

}  // namespace

extern const SpaceStageKind space_kind_attention = {
    dsl::StageKind::attention, false, enumerate, io, space_validate_simt, space_rank_attention,
    space_apply_knobs<dsl::AttentionStage>, name, space_no_reduction_reads,
};

}  // namespace ucut::space
