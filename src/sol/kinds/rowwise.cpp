// The SOL estimate's entry for rowwise stages: the op's FLOPs per input element plus its prologue and epilogue, on FP32 SIMT.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<RowwiseStage>(st.body);
  out.reads = {body.input};
  out.reads.insert(out.reads.end(), body.operands.begin(), body.operands.end());
  out.reads.insert(out.reads.end(), body.extra.begin(), body.extra.end());
  sol_epilogue_loads(body.prologue, out.reads);
  sol_epilogue_loads(body.epilogue, out.reads);
  int64_t n = sol_numel_of(ctx.prog, body.input);
  out.flops = n * (sol_row_op_cost(body.op) + sol_epilogue_cost(body.prologue) + sol_epilogue_cost(body.epilogue));
}

}  // namespace

extern const SolStageKind sol_kind_rowwise = {StageKind::rowwise, work};

}  // namespace ucut::sol
