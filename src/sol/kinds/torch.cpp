// The SOL estimate's entry for torch stages: PyTorch's operations: their traffic is counted, their FLOPs are not
// known here (no shape inference for them); the host's time is what the search measures.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<TorchStage>(st.body);
  (void)ctx;
  out.reads = body.reads;
}

}  // namespace

extern const SolStageKind sol_kind_torch = {StageKind::torch, work};

}  // namespace ucut::sol
