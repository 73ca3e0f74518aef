// Grouped GEMM emission. Each group is emitted as its own GEMM (same knobs, same epilogue form)
// in a namespace ucut_s<i>_g<j>, and the launcher runs the groups in order on the stream. This
// compiles one instantiation per group form: each group's stored kernel unit (groups of one form
// share one) goes into the library with the stage; CUTLASS's ptr-array grouped kernel (one launch
// for all groups, KernelPtrArrayTmaWarpSpecialized*) is the planned replacement.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/gemm_common.h"

namespace ucut::codegen {

Result<StageCode> codegen_emit_grouped_gemm(const dsl::Program& p, int i) {
  const auto& stage = p.stages.at(i);
  const auto* g = std::get_if<dsl::GroupedGemmStage>(&stage.body);
  if (!g) return make_error(ErrorCode::internal, "codegen_emit_grouped_gemm called on another stage kind");
  if (g->a.size() != g->mnk.size() || g->b.size() != g->mnk.size() || stage.outputs.size() < g->mnk.size())
    return make_error(ErrorCode::internal, "grouped GEMM: operand, shape and output counts differ");
  StageCode code;
  code.needs_cutlass = true;
  std::string launch = "namespace ucut_s" + std::to_string(i) + " {\nint run(const ucut_rt::StageArgs& a) {\n";
  std::string ws = "0";
  // Group j keeps its own GemmStage alive for the plan's pointer.
  std::vector<dsl::GemmStage> stages(g->mnk.size());
  for (size_t j = 0; j < g->mnk.size(); ++j) {
    dsl::GemmStage& s = stages[j];
    s.a = g->a[j];
    s.b = g->b[j];
    s.m = g->mnk[j][0];
    s.n = g->mnk[j][1];
    s.k = g->mnk[j][2];
    s.knobs = g->knobs;
    s.epilogue = g->epilogue;
    std::string ns = fmt::format("ucut_s{}_g{}", i, j);
    auto plan = gemm_plan(p, i, s, stage.outputs[j], ns);
    if (!plan) return plan.error();
    auto c = dsl::gemm_family(plan->knobs.precision) == dsl::GemmFamily::sm80 ? gemm_emit_sm80(p, *plan)
                                                                               : gemm_emit_sm90(p, *plan);
    if (!c) return c.error();
    if (j == 0) {
      code.includes = c->includes;
      code.config_name = "grouped" + std::to_string(g->mnk.size()) + "_" + c->config_name;
    }
    // Each group's stored unit (groups of one form share it): the binding calls them all.
    if (!c->unit.empty()) {
      const bool have = c->unit_name == code.unit_name ||
                        std::any_of(code.more_units.begin(), code.more_units.end(),
                                    [&](const auto& u) { return u.first == c->unit_name; });
      if (code.unit.empty()) {
        code.unit = c->unit;
        code.unit_name = c->unit_name;
      } else if (!have) {
        code.more_units.emplace_back(c->unit_name, c->unit);
      }
    }
    code.binding_device = code.binding_device || c->binding_device;
    for (const auto& inc : c->binding_includes)
      if (std::find(code.binding_includes.begin(), code.binding_includes.end(), inc) == code.binding_includes.end())
        code.binding_includes.push_back(inc);
    code.definitions += c->definitions + "\n";
    launch += fmt::format("  if (int rc = {}(a)) return rc;\n", c->launcher);
    ws = "std::max<size_t>(" + ws + ", " + c->workspace_expr + ")";
  }
  launch += "  return 0;\n}\n}  // namespace ucut_s" + std::to_string(i) + "\n";
  code.definitions += launch;
  code.launcher = "ucut_s" + std::to_string(i) + "::run";
  code.workspace_expr = ws;
  return code;
}

}  // namespace ucut::codegen
