// The code generator's entry for gemm stages: a CUTLASS GEMM (gemm_common.cpp picks gemm_sm90.cpp, gemm_sm80.cpp or gemm_gemv.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_gemm = {dsl::StageKind::gemm, codegen_emit_gemm, false};

}  // namespace ucut::codegen
