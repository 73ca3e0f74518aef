// The SOL estimate's entry for elementwise stages: its body per output element, on FP32 SIMT.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<ElementwiseStage>(st.body);
  sol_epilogue_loads(body.body, out.reads);
  out.flops = ctx.out_elems * sol_epilogue_cost(body.body);
}

}  // namespace

extern const SolStageKind sol_kind_elementwise = {StageKind::elementwise, work};

}  // namespace ucut::sol
