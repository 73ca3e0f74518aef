// The code generator's entry for grouped_gemm stages: a CUTLASS grouped GEMM (gemm_grouped.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_grouped_gemm = {dsl::StageKind::grouped_gemm, codegen_emit_grouped_gemm, false};

}  // namespace ucut::codegen
