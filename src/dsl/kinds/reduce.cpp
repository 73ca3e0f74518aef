// The language's entry for reduce stages: reductions over dims and losses (checker:
// check_simt.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl {

namespace {

void print(std::string& out, const Stage& s) {
  const auto& d = std::get<ReduceStage>(s.body);
  out += (s.outputs.size() > 1 ? dsl_outputs_str(s, s.outputs.size()) : s.outputs[0]) + " = reduce " + d.op + "(";
  for (size_t i = 0; i < d.inputs.size(); ++i) out += (i ? ", " : "") + d.inputs[i];
  if (d.reduction.empty() && !d.dims.empty()) {  // a rank-0 input has no dims to list
    out += ", dims=[";
    for (size_t i = 0; i < d.dims.size(); ++i) out += (i ? ", " : "") + std::to_string(d.dims[i]);
    out += "]";
  } else if (!d.reduction.empty()) {
    out += ", reduction=" + d.reduction;
  }
  for (const auto& [k, v] : d.attrs) out += ", " + k + "=" + dsl_number_str(v);
  out += ") {\n";
  dsl_print_simt_knobs(out, d.knobs, "reduce");
  if (!d.prologue.stmts.empty()) dsl_print_block(out, "prologue", d.prologue);
  if (!d.epilogue.stmts.empty()) dsl_print_block(out, "epilogue", d.epilogue);  // arg ops: none
}

std::optional<Error> plan_refusal(const Stage& st, const TensorFinder& find) {
  const auto& r = std::get<ReduceStage>(st.body);
  // cross-entropy runs the rowwise kernel over its logits
  const Tensor* in = r.inputs.empty() ? nullptr : find(r.inputs[0]);
  if (!in) return std::nullopt;
  if (r.op == "cross_entropy") {
    if (in->shape.size() != 2) return std::nullopt;
    return dsl_plan_refusal_of(simt_plan_rowwise(in->shape[0], in->shape[1], dtype_bytes(in->dtype), r.knobs));
  }
  const ReduceGeometry g =
      simt_reduce_geometry(in->shape, dsl_reduce_is_loss(r.op) ? std::vector<int>{} : r.dims);
  return dsl_plan_refusal_of(simt_plan_reduce(g.inner, g.run, g.n_out, g.r_total, dtype_bytes(in->dtype), r.knobs,
                                  simt_reduce_state_bytes(st)));
}

}  // namespace

extern const DslStageKind dsl_kind_reduce = {
    StageKind::reduce, dsl_row_knobs, true,
    &detail::Checker::check_reduce, print, interp_reduce_stage, plan_refusal,
};

}  // namespace ucut::dsl
