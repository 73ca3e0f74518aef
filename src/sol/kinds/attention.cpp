// The SOL estimate's entry for attention stages: both products on tensor cores (16-bit rate, or 3xTF32's for f32),
// over the visible (query, key) pairs only: the causal mask halves the work, which the kernel skips.
#include "sol/kinds/kinds.h"

#include "dsl/names.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<AttentionStage>(st.body);
  out.reads = {body.q, body.k, body.v};
  const Tensor* q = ctx.prog.find_tensor(body.q);
  const bool half = q && q->dtype != DType::f32;  // f32 data: 3xTF32
  out.rate = sol_gemm_rate(ctx.pk, half ? Precision::auto_ : Precision::f32x3, half, ctx.policy);
  out.flops = dsl_attention_flops(body);
}

}  // namespace

extern const SolStageKind sol_kind_attention = {StageKind::attention, work};

}  // namespace ucut::sol
