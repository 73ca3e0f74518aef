// The code generator's entry for reduce stages: the SIMT reductions and losses (stage_reduce.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_reduce = {dsl::StageKind::reduce, codegen_emit_reduce, false};

}  // namespace ucut::codegen
