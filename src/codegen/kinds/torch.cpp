// The code generator's entry for torch stages: a call to the host, which runs the PyTorch operations (stage_torch.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_torch = {dsl::StageKind::torch, codegen_emit_torch, true};

}  // namespace ucut::codegen
