// The code generator's entry for window stages: the SIMT window kernel (stage_window.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_window = {dsl::StageKind::window, codegen_emit_window, false};

}  // namespace ucut::codegen
