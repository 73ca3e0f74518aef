// The language's entry for elementwise stages: statements over broadcast loads (checker:
// check_simt.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k = {"threads", "vector_width", "items_per_thread"};
  return k;
}

void print(std::string& out, const Stage& s) {
  const auto& e = std::get<ElementwiseStage>(s.body);
  out += s.outputs[0] + " = elementwise {\n";
  // an internal stage of the f32x3s expansion; never parsed back (ElementwiseStage::transpose)
  if (e.transpose) out += "  # transposed: reads its inputs' last two dims swapped\n";
  dsl_print_simt_knobs(out, e.knobs, "elementwise");
  dsl_print_block(out, "body", e.body);
}

std::optional<Error> plan_refusal(const Stage& st, const TensorFinder& find) {
  const auto& r = std::get<ElementwiseStage>(st.body);
  const Tensor* out = st.outputs.empty() ? nullptr : find(st.outputs[0]);
  if (!out) return std::nullopt;
  const int64_t last = out->shape.empty() ? 1 : out->shape.back();
  return dsl_plan_refusal_of(
      simt_plan_elementwise(out->numel(), last, simt_elementwise_vector_bytes(r, last, find), r.knobs));
}

}  // namespace

extern const DslStageKind dsl_kind_elementwise = {
    StageKind::elementwise, knobs, true,
    &detail::Checker::check_elementwise, print, interp_elementwise_stage, plan_refusal,
};

}  // namespace ucut::dsl
