// The code generator's entry for conv stages: a CUTLASS 3.x sm90 implicit-GEMM fprop (conv_sm90.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_conv = {dsl::StageKind::conv, codegen_emit_conv, false};

}  // namespace ucut::codegen
