// The language's entry for scan stages: prefix scans along a dim (checker: check_simt.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k = {"threads", "vector_width", "items_per_thread", "order"};
  return k;
}

void print(std::string& out, const Stage& s) {
  const auto& c = std::get<ScanStage>(s.body);
  out += s.outputs[0] + " = scan " + c.op + "(" + c.input + ", dim=" + std::to_string(c.dim) +
         ", exclusive=" + (c.exclusive ? "true" : "false") + ", reverse=" + (c.reverse ? "true" : "false");
  if (!c.mask.empty()) out += ", mask=" + c.mask;
  out += ") {\n";
  dsl_print_simt_knobs(out, c.knobs, "scan");
}

std::optional<Error> plan_refusal(const Stage& st, const TensorFinder& find) {
  const auto& r = std::get<ScanStage>(st.body);
  const Tensor* in = find(r.input);
  const Tensor* out = st.outputs.empty() ? nullptr : find(st.outputs[0]);
  if (!in || !out || r.dim < 0 || static_cast<size_t>(r.dim) >= in->shape.size()) return std::nullopt;
  const auto d = static_cast<size_t>(r.dim);
  int64_t after = 1;  // elements after the scanned dimension: 1 scans rows (the planned kernel)
  for (size_t i = d + 1; i < in->shape.size(); ++i) after *= in->shape[i];
  if (after != 1 || in->shape[d] <= 0) return std::nullopt;
  return dsl_plan_refusal_of(simt_plan_scan(in->numel() / in->shape[d], in->shape[d],
                                std::max(dtype_bytes(in->dtype), dtype_bytes(out->dtype)), r.knobs));
}

}  // namespace

extern const DslStageKind dsl_kind_scan = {
    StageKind::scan, knobs, true,
    &detail::Checker::check_scan, print, interp_scan_stage, plan_refusal,
};

}  // namespace ucut::dsl
