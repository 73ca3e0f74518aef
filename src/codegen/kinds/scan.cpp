// The code generator's entry for scan stages: the SIMT scans (stage_scan.cpp).
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

extern const CodegenStageKind codegen_kind_scan = {dsl::StageKind::scan, codegen_emit_scan, false};

}  // namespace ucut::codegen
