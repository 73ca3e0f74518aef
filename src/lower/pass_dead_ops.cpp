// pass_dead_ops: marks ops whose results reach no problem output (e.g. the unused indices of
// torch.max, a value computed and dropped) so no later pass lowers or rejects them.
// Runs first. Golden test: tests/golden/lower/dead_op.json.
#include <set>

#include "lower/passes.h"

namespace ucut::lower {

Status pass_dead_ops(LowerState& s) {
  std::set<std::string> live(s.problem.outputs.begin(), s.problem.outputs.end());
  for (size_t i = s.ops.size(); i-- > 0;) {
    const problem::Op& op = s.ops[i];
    bool used = false;
    for (const auto& o : op.outputs) used = used || live.count(o);
    s.dead[i] = !used;
    if (!used) {
      s.notes.push_back(s.op_label(op.id) + " does not reach an output and is not lowered");
      continue;
    }
    for (const auto& in : op.inputs)
      if (in.is_tensor()) live.insert(in.tensor);
  }
  return ok_status();
}

}  // namespace ucut::lower
