// The language's entry for attention stages: fused scaled-dot-product attention (checker:
// check_simt.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k = {"threads"};
  return k;
}

void print(std::string& out, const Stage& s) {
  const auto& at = std::get<AttentionStage>(s.body);
  out += s.outputs[0] + " = attention(" + at.q + ", " + at.k + ", " + at.v +
         ", causal=" + (at.causal ? "true" : "false") + ", scale=" + dsl_number_str(at.scale) + ") {\n";
  dsl_print_simt_knobs(out, at.knobs, "attention");
}

}  // namespace

extern const DslStageKind dsl_kind_attention = {
    StageKind::attention, knobs, true,
    &detail::Checker::check_attention, print, interp_attention_stage, dsl_no_plan,
};

}  // namespace ucut::dsl
