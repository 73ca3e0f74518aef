// The space's entry for elementwise stages: the SIMT grid over threads and vector width (one
// configuration for a permuting stage, whose tiles take no knobs).
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"

namespace ucut::space {

namespace {

std::optional<dsl::PermuteTiling> permuting(const dsl::Program& p, const dsl::Stage& st) {
  const dsl::Tensor* out = st.outputs.empty() ? nullptr : p.find_tensor(st.outputs[0]);
  if (!out) return std::nullopt;
  return dsl::simt_permute_tiling(std::get<dsl::ElementwiseStage>(st.body), *out,
                                  [&](const std::string& n) { return p.find_tensor(n); });
}

// A permuting stage (a layout copy, dsl/simt_plan.h) has one configuration: its tiles take no knobs.
Result<std::vector<StageConfig>> enumerate(const dsl::Program& p, int si, const SpaceOptions& o) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(si));
  const auto& r = std::get<dsl::ElementwiseStage>(st.body);
  std::vector<StageConfig> out;
  if (permuting(p, st)) {
    StageConfig c;
    c.stage = si;
    c.is_gemm = false;
    c.simt = r.knobs;
    out.push_back(std::move(c));
    return out;
  }
  space_enumerate_simt_grid(si, r.knobs, /*rows=*/false, {0}, o, out);
  return out;
}

std::string name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c) {
  if (auto pt = permuting(p, st)) return pt->name();
  return space_simt_name(p, st, c);
}

// Its data is its output's shape; it reads what its body loads.
void io(const dsl::Program&, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads) {
  data = st.outputs.at(0);
  space_block_loads(std::get<dsl::ElementwiseStage>(st.body).body, reads);
}

}  // namespace

extern const SpaceStageKind space_kind_elementwise = {
    dsl::StageKind::elementwise, false, enumerate, io, space_validate_simt, space_rank_simt,
    space_apply_knobs<dsl::ElementwiseStage>, name, space_no_reduction_reads,
};

}  // namespace ucut::space
