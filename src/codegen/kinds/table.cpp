// The code generator's kind table: one entry per row of dsl/stage_kinds.def, in its order.
#include "codegen/kinds/kinds.h"

namespace ucut::codegen {

const CodegenStageKind& codegen_stage_kind(dsl::StageKind k) {
  static const CodegenStageKind* const table[] = {
#define UCUT_STAGE_KIND(id, Type) &codegen_kind_##id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  static_assert(sizeof(table) / sizeof(table[0]) == dsl::kStageKindCount);
  return *table[dsl::dsl_stage_kind_index(k)];
}

}  // namespace ucut::codegen
