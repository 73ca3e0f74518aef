// The SOL estimate's entry for grouped_gemm stages: each group's GEMM and epilogue at the precision's rate.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<GroupedGemmStage>(st.body);
  for (const auto& o : body.a) out.reads.push_back(o.tensor);
  for (const auto& o : body.b) out.reads.push_back(o.tensor);
  sol_epilogue_loads(body.epilogue, out.reads);
  const Tensor* a = body.a.empty() ? nullptr : ctx.prog.find_tensor(body.a[0].tensor);
  bool half = a && (a->dtype == DType::f16 || a->dtype == DType::bf16);
  out.rate = sol_gemm_rate(ctx.pk, body.knobs.precision, half, ctx.policy);
  for (const auto& g : body.mnk)
    out.flops += 2 * g[0] * g[1] * g[2] + int64_t(sol_epilogue_cost(body.epilogue)) * g[0] * g[1];
}

}  // namespace

extern const SolStageKind sol_kind_grouped_gemm = {StageKind::grouped_gemm, work};

}  // namespace ucut::sol
