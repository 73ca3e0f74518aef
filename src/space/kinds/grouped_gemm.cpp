// The space's entry for grouped_gemm stages: not enumerated yet (its knobs are tuned by hand).
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions&) {
  return make_error(ErrorCode::unsupported,
                    "stage " + p.stages.at(static_cast<size_t>(si)).name +
                        " is a grouped_gemm; its space is not enumerated yet",
                    "tune its knobs by hand");
}

void io(const dsl::Program&, const dsl::Stage&, std::string&, std::vector<std::string>&) {}

}  // namespace

extern const SpaceStageKind space_kind_grouped_gemm = {
    dsl::StageKind::grouped_gemm, false, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::GroupedGemmStage>, space_simt_name, space_no_reduction_reads,
};

}  // namespace ucut::space
