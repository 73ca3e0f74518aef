// The space's entry for torch stages: no knobs (the host runs it), one configuration named after
// the kind, nothing to judge; PyTorch's own kernels ranked by their traffic and a call per op.
#include "dsl/names.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program&, int si, const SpaceOptions&) {
  return space_enumerate_none(si);
}

void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  data = st.outputs.at(0);
  reads = std::get<dsl::TorchStage>(st.body).reads;
}

std::string name(const dsl::Program&, const dsl::Stage& st, const StageConfig&) { return dsl::dsl_stage_kind(st); }

}  // namespace

extern const SpaceStageKind space_kind_torch = {
    dsl::StageKind::torch, false, enumerate, io, space_validate_none, space_rank_torch, space_apply_none, name,
    space_no_reduction_reads,
};

}  // namespace ucut::space
