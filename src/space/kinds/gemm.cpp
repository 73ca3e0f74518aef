// The space's entry for gemm stages: the policy's precision ladder times the kernel family's
// tiles and schedules (enumerate.cpp), the GEMM legality and space rules (validate.cpp), the
// mainloop/wave/epilogue model (rank.cpp) and the configuration name of the resolved knobs.
#include "dsl/gemm_rules.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  return space_enumerate_gemm(p, si, std::get<dsl::GemmStage>(p.stages.at(static_cast<size_t>(si)).body), o);
}

void io(const dsl::Program&, const dsl::Stage&, std::string&, std::vector<std::string>&) {}

std::vector<Violation> validate(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o) {
  return c.is_gemm ? space_validate_gemm(p, c, o) : space_validate_simt(p, c, o);
}

RankedConfig rank(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw) {
  return c.is_gemm ? space_rank_gemm(p, st, c, hw) : space_rank_simt(p, st, c, hw);
}

std::string name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c) {
  if (!c.is_gemm) return space_simt_name(p, st, c);
  dsl::GemmStage s = std::get<dsl::GemmStage>(st.body);
  s.knobs = c.gemm;
  const dsl::Tensor* out = p.find_tensor(st.outputs.at(0));
  return dsl::gemm_config_name(dsl::gemm_resolve_auto(p, s, *out), !c.gemm.stages.has_value());
}

}  // namespace

extern const SpaceStageKind space_kind_gemm = {
    dsl::StageKind::gemm, false, enumerate, io, validate, rank, space_apply_knobs<dsl::GemmStage>, name,
    space_no_reduction_reads,
};

}  // namespace ucut::space
