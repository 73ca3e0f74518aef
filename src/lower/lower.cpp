// The lowering pipeline, in order, and the torch-stage retry around it: an operation a pass cannot
// express (LowerState::unsupported names it) runs in a torch stage and the problem is lowered
// again, until it lowers or the operation cannot run in a torch stage either.
#include "lower/lower.h"

#include <algorithm>
#include <map>

#include "lower/passes.h"

namespace ucut::lower {

namespace {

Result<LoweredProgram> run_passes(LowerState& s) {
  for (auto pass : {pass_dead_ops,        // drop ops that reach no output
                    pass_views,           // reshapes and transposes become aliases
                    pass_expand_ops,      // written-out RMSNorm -> rms_norm; eval batch_norm -> elementwise
                    pass_strided_copies,  // split/slice/permute chains -> DSL views and copies
                    pass_match_conv,      // conv1d/2d/3d -> NHWC copies + conv drafts, or 1x1 -> GEMM ops
                    pass_check_ops,       // reject what the language cannot express, with the op
                    pass_match_gemm,      // GEMM-family ops -> gemm drafts (operands, M N K, bias)
                    pass_simt_stages,     // row ops, reductions, losses, scans, elementwise -> drafts
                    pass_fuse_epilogue,   // elementwise ops join the stage computing their input
                    pass_row_reductions,  // row/column reductions of GEMM values -> the epilogue
                    pass_split_stores,    // one stored value per stage
                    pass_precision}) {    // GEMM math under the policy (bf16 conversions)
    if (Status st = pass(s); !st) return st.error();
  }
  return pass_emit(s);  // drafts -> Program, printed and re-checked
}

bool is_torch(const dsl::Stage& st) { return std::holds_alternative<dsl::TorchStage>(st.body); }

}  // namespace

Result<LoweredProgram> lower_problem(const problem::Problem& problem, const LowerOptions& options) {
  LowerOptions o = options;
  std::vector<std::string> why;  // one line per op moved to a torch stage
  std::map<int, Error> refused;   // each moved op's refusal, the diagnostic if a torch stage fails too
  for (;;) {
    LowerState s(problem, o);
    auto r = run_passes(s);
    if (!r) {
      const int op = s.unsupported_op;
      if (auto it = refused.find(op); it != refused.end()) {
        // The op cannot run in a torch stage either: its first refusal says what to change.
        Error e = it->second;
        e.message += "; it cannot run in a torch stage either (" + r.error().message + ")";
        return e;
      }
      if (!o.torch_stages || r.error().code != ErrorCode::unsupported || op < 0 || o.torch_ops.count(op))
        return r.error();
      o.torch_ops.insert(op);
      why.push_back(r.error().message);
      refused.emplace(op, r.error());
      continue;
    }
    if (!o.torch_ops.empty() && std::all_of(r->program.stages.begin(), r->program.stages.end(), is_torch))
      return make_error(ErrorCode::unsupported,
                        (o.label.empty() ? problem.name : o.label) + ": no kernel stage: every operation runs in "
                        "PyTorch (" + why.front() + ")",
                        "the problem stays on PyTorch (the fallback)");
    r->torch_ops.assign(o.torch_ops.begin(), o.torch_ops.end());
    for (const auto& w : why) r->notes.push_back("torch stage: " + w);
    return r;
  }
}

}  // namespace ucut::lower
