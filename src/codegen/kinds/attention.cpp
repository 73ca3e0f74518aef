// The code generator's entry for attention stages: the fused attention kernels (stage_attention.cpp, runtime/attention*.cuh).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_attention = {dsl::StageKind::attention, codegen_emit_attention, false};

}  // namespace ucut::codegen
