// The code generator's entry for elementwise stages: the SIMT elementwise kernel (stage_elementwise.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_elementwise = {dsl::StageKind::elementwise, codegen_emit_elementwise, false};

}  // namespace ucut::codegen
