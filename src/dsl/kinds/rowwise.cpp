// The language's entry for rowwise stages: one op over each row: softmax, norms, row reductions,
// losses over rows (checker: check_simt.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl {

const std::vector<std::string>& dsl_row_knobs() {
  static const std::vector<std::string> k = {"threads", "rows_per_block", "vector_width",
                                                  "items_per_thread", "passes", "cluster"};
  return k;
}

namespace {

void print(std::string& out, const Stage& s) {
  const auto& r = std::get<RowwiseStage>(s.body);
  out += s.outputs[0] + " = rowwise " + r.op + "(" + r.input;
  for (const auto& o : r.operands) out += ", " + o;
  if (!r.weight.empty()) out += ", weight=" + r.weight;
  if (!r.bias.empty()) out += ", bias=" + r.bias;
  for (const auto& [k, v] : r.attrs) out += ", " + k + "=" + dsl_number_str(v);
  out += ") {\n";
  dsl_print_simt_knobs(out, r.knobs, "rowwise");
  if (!r.prologue.stmts.empty()) dsl_print_block(out, "prologue", r.prologue);
  if (!r.epilogue.stmts.empty()) dsl_print_block(out, "epilogue", r.epilogue);
}

std::optional<Error> plan_refusal(const Stage& st, const TensorFinder& find) {
  const auto& r = std::get<RowwiseStage>(st.body);
  const Tensor* in = find(r.input);
  if (!in) return std::nullopt;
  // the ops over several inputs run the streaming multi-input kernel: no cluster
  return dsl_plan_refusal_of(simt_plan_rowwise(r.rows, r.cols, dtype_bytes(in->dtype), r.knobs,
                                   /*cluster_ok=*/dsl_rowwise_inputs(r.op) == 1));
}

}  // namespace

extern const DslStageKind dsl_kind_rowwise = {
    StageKind::rowwise, dsl_row_knobs, true,
    &detail::Checker::check_rowwise, print, interp_rowwise_stage, plan_refusal,
};

}  // namespace ucut::dsl
