// The SOL estimate's entry for scan stages: one FLOP per element, on FP32 SIMT.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

void work(const SolKindContext& ctx, const Stage& st, SolStageWork& out) {
  const auto& body = std::get<ScanStage>(st.body);
  out.reads = {body.input};
  if (!body.mask.empty()) out.reads.push_back(body.mask);
  out.flops = sol_numel_of(ctx.prog, body.input);
}

}  // namespace

extern const SolStageKind sol_kind_scan = {StageKind::scan, work};

}  // namespace ucut::sol
