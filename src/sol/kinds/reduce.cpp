// The SOL estimate's entry for reduce stages: the op and prologue per input element, the epilogue per output element, on FP32 SIMT.
#include "sol/kinds/kinds.h"

#include <algorithm>

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<ReduceStage>(st.body);
  out.reads = body.inputs;
  sol_epilogue_loads(body.prologue, out.reads);
  sol_epilogue_loads(body.epilogue, out.reads);
  int64_t n = 0;
  for (const auto& in : body.inputs) n = std::max(n, sol_numel_of(ctx.prog, in));
  out.flops = n * (sol_row_op_cost(body.op) + sol_epilogue_cost(body.prologue)) +
              ctx.out_elems * sol_epilogue_cost(body.epilogue);
}

}  // namespace

extern const SolStageKind sol_kind_reduce = {StageKind::reduce, work};

}  // namespace ucut::sol
