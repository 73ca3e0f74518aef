// The language's entry for gemm stages: a GEMM with a fused epilogue (checker: check_gemm.cpp; no
// interpreter: CUTLASS is checked against PyTorch).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

const std::vector<std::string>& dsl_gemm_knobs() {
  static const std::vector<std::string> k = {"precision", "tile", "cluster", "stages", "schedule",
                                                  "scheduler", "split_k", "raster", "swizzle", "align", "math"};
  return k;
}

namespace {

void print(std::string& out, const Stage& s) {
  const auto& g = std::get<GemmStage>(s.body);
  out += s.outputs[0] + " = gemm(" + dsl_operand_str(g.a) + ", " + dsl_operand_str(g.b) + ") {\n";
  dsl_print_gemm_knobs(out, g.knobs);
  dsl_print_block(out, "epilogue", g.epilogue);
}

Status interpret(const Program&, const Stage&, InterpTensors&, const std::vector<double>&) {
  return make_error(ErrorCode::unsupported, "GEMM stages are not interpreted");
}

}  // namespace

extern const DslStageKind dsl_kind_gemm = {
    StageKind::gemm, dsl_gemm_knobs, true,
    &detail::Checker::check_gemm, print, interpret, dsl_no_plan,
};

}  // namespace ucut::dsl
