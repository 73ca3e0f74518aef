// The lowering pipeline, in order. Nothing else lives here: each pass is one file (passes.h).
#include "lower/lower.h"

#include "lower/passes.h"

namespace ucut::lower {

Result<LoweredProgram> lower_problem(const problem::Problem& problem, const LowerOptions& options) {
  LowerState s(problem, options);
  for (auto pass : {pass_dead_ops,        // drop ops that reach no output
                    pass_views,           // reshapes and transposes become aliases
                    pass_expand_ops,      // written-out RMSNorm -> rms_norm; eval batch_norm -> elementwise
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

}  // namespace ucut::lower
