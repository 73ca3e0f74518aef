// The SOL estimate's entry for conv stages: 2 N P Q K C R S FLOPs (the implicit GEMM's 2 M N K) at
// the precision's tensor-core rate, plus the epilogue; the bytes are x, w and the output (and what
// the epilogue reads), each once.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<ConvStage>(st.body);
  out.reads = {body.x, body.w};
  sol_epilogue_loads(body.epilogue, out.reads);
  const Tensor* x = ctx.prog.find_tensor(body.x);
  const bool half = x && (x->dtype == DType::f16 || x->dtype == DType::bf16);
  // f32 data runs TF32 whatever the policy: the sm90 conv has no fp32-faithful mode
  out.rate = sol_gemm_rate(ctx.pk, half ? body.knobs.precision : Precision::tf32, half, ctx.policy);
  const int64_t mn = body.m * body.n;
  out.flops = 2 * body.k * mn + int64_t(sol_epilogue_cost(body.epilogue)) * mn;
}

}  // namespace

extern const SolStageKind sol_kind_conv = {StageKind::conv, work};

}  // namespace ucut::sol
