// The space's entry for elementwise stages: the SIMT grid over threads and vector width.
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const auto& r = std::get<dsl::ElementwiseStage>(p.stages.at(static_cast<size_t>(si)).body);
  std::vector<StageConfig> out;
  space_enumerate_simt_grid(si, r.knobs, /*rows=*/false, {0}, o, out);
  return out;
}

// Its data is its output's shape; it reads what its body loads.
void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  data = st.outputs.at(0);
  space_block_loads(std::get<dsl::ElementwiseStage>(st.body).body, reads);
}

}  // namespace

extern const SpaceStageKind space_kind_elementwise = {
    dsl::StageKind::elementwise, false, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::ElementwiseStage>, space_simt_name, space_no_reduction_reads,
};

}  // namespace ucut::space
