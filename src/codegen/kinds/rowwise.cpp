// The code generator's entry for rowwise stages: the SIMT row kernels (stage_rowwise.cpp, runtime/simt_rowwise.cuh).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_rowwise = {dsl::StageKind::rowwise, codegen_emit_rowwise, false};

}  // namespace ucut::codegen
