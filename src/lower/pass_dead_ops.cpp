// pass_dead_ops: merges an op that repeats an earlier one (the same operation on the same
// operands with the same attributes: Mamba2 takes the cumsum of A twice), its readers reading the
// earlier result, then marks ops whose results reach no problem output (e.g. the unused indices of
// torch.max, a value computed and dropped, a repeat) so no later pass lowers or rejects them.
// Runs first. Golden tests: tests/golden/lower/dead_op.json, repeated_op.json.
#include <map>
#include <set>

#include "lower/passes.h"

namespace ucut::lower {

namespace {

bool same_operand(const problem::Operand& a, const problem::Operand& b) {
  return a.tensor == b.tensor && a.scalar.has_value() == b.scalar.has_value() &&
         (!a.scalar || *a.scalar == *b.scalar);
}

void merge_repeated_ops(LowerState& s) {
  std::map<std::string, std::string> alias;  // a repeat's output -> the first op's
  auto renamed = [&](const std::string& t) {
    auto it = alias.find(t);
    return it == alias.end() ? t : it->second;
  };
  const std::set<std::string> outputs(s.problem.outputs.begin(), s.problem.outputs.end());
  for (size_t j = 0; j < s.ops.size(); ++j) {
    for (auto& in : s.ops[j].inputs)
      if (in.is_tensor()) in.tensor = renamed(in.tensor);
    const problem::Op& b = s.ops[j];
    if (b.op == "opaque" || b.op == "dropout") continue;  // not known to be a function of its operands
    for (size_t i = 0; i < j; ++i) {
      const problem::Op& a = s.ops[i];
      if (a.op != b.op || a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size() ||
          a.attrs != b.attrs)
        continue;
      bool same = true;
      for (size_t k = 0; k < a.inputs.size() && same; ++k) same = same_operand(a.inputs[k], b.inputs[k]);
      for (size_t k = 0; k < a.outputs.size() && same; ++k) {
        const problem::Tensor& ta = s.need(a.outputs[k]);
        const problem::Tensor& tb = s.need(b.outputs[k]);
        same = ta.shape == tb.shape && ta.dtype == tb.dtype && !outputs.count(b.outputs[k]);
      }
      if (!same) continue;
      for (size_t k = 0; k < b.outputs.size(); ++k) alias[b.outputs[k]] = a.outputs[k];
      s.notes.push_back(s.op_label(b.id) + " repeats " + s.op_label(a.id) + ": its readers read that result");
      break;
    }
  }
}

}  // namespace

Status pass_dead_ops(LowerState& s) {
  merge_repeated_ops(s);
  s.mark_dead_ops(true);
  return ok_status();
}

}  // namespace ucut::lower
