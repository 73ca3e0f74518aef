// The language's entry for torch stages: PyTorch operations the host runs between kernel stages
// (checker: check_torch.cpp).
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"

namespace ucut::dsl {

namespace {

const std::vector<std::string>& knobs() {
  static const std::vector<std::string> k;
  return k;
}

void print(std::string& out, const Stage& s) {
  const auto& t = std::get<TorchStage>(s.body);
  out += dsl_outputs_str(s, s.outputs.size()) + " = torch {\n";
  for (const auto& op : t.ops) {
    out += "  ";
    if (!op.output_is_local.empty() && op.output_is_local[0]) out += "let ";
    if (op.outputs.size() == 1) {
      out += op.outputs[0];
    } else {
      out += "(";
      for (size_t i = 0; i < op.outputs.size(); ++i) out += (i ? ", " : "") + op.outputs[i];
      out += ")";
    }
    out += " = " + op.op + "(";
    bool first = true;
    for (const auto& in : op.inputs) {
      out += (first ? "" : ", ") + (in.absent ? std::string("none") : in.tensor.empty() ? dsl_number_str(in.number) : in.tensor);
      first = false;
    }
    for (const auto& [k, v] : op.attrs) {
      out += (first ? "" : ", ") + k + "=";
      first = false;
      if (v.kind == TorchOp::Attr::Kind::number) {
        out += dsl_number_str(v.number);
      } else if (v.kind == TorchOp::Attr::Kind::word) {
        out += v.word;
      } else {
        out += "[";
        for (size_t i = 0; i < v.list.size(); ++i) out += (i ? ", " : "") + std::to_string(v.list[i]);
        out += "]";
      }
    }
    out += ")\n";
  }
}

Status interpret(const Program&, const Stage&, InterpTensors&, const std::vector<double>&) {
  return make_error(ErrorCode::unsupported, "torch stages are run by PyTorch, not interpreted");
}

}  // namespace

extern const DslStageKind dsl_kind_torch = {
    StageKind::torch, knobs, false,
    &detail::Checker::check_torch, print, interpret, dsl_no_plan,
};

}  // namespace ucut::dsl
