// The SOL estimate's entry for gemm stages: 2 M N K FLOPs at the precision's tensor-core rate, plus the epilogue.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<GemmStage>(st.body);
  out.reads = {body.a.tensor, body.b.tensor};
  sol_epilogue_loads(body.epilogue, out.reads);
  const Tensor* a = ctx.prog.find_tensor(body.a.tensor);
  bool half = a && (a->dtype == DType::f16 || a->dtype == DType::bf16);
  out.rate = sol_gemm_rate(ctx.pk, body.knobs.precision, half, ctx.policy);
  int64_t mn = body.m * body.n * body.batch;
  out.flops = 2 * body.k * mn + int64_t(sol_epilogue_cost(body.epilogue)) * mn;
}

}  // namespace

extern const SolStageKind sol_kind_gemm = {StageKind::gemm, work};

}  // namespace ucut::sol
