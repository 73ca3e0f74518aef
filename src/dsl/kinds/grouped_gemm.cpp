// The language's entry for grouped_gemm stages: several GEMMs of one configuration in one launch
// (checker: check_gemm.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

namespace {

void print(std::string& out, const Stage& s) {
  const auto& gg = std::get<GroupedGemmStage>(s.body);
  out += dsl_outputs_str(s, gg.a.size()) + " = grouped_gemm(";
  for (size_t i = 0; i < gg.a.size(); ++i)
    out += std::string(i ? ", " : "") + "(" + dsl_operand_str(gg.a[i]) + ", " + dsl_operand_str(gg.b[i]) + ")";
  out += ") {\n";
  dsl_print_gemm_knobs(out, gg.knobs);
  dsl_print_block(out, "epilogue", gg.epilogue);
}

Status interpret(const Program&, const Stage&, InterpTensors&, const std::vector<double>&) {
  return make_error(ErrorCode::unsupported, "GEMM stages are not interpreted");
}

}  // namespace

extern const DslStageKind dsl_kind_grouped_gemm = {
    StageKind::grouped_gemm, dsl_gemm_knobs, true,
    &detail::Checker::check_grouped_gemm, print, interpret, dsl_no_plan,
};

}  // namespace ucut::dsl
