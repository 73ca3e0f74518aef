// The language's kind table: one entry per row of dsl/stage_kinds.def, in its order.
#include "dsl/kinds/kinds.h"

namespace ucut::dsl {

const DslStageKind& dsl_kind(StageKind k) {
  static const DslStageKind* const table[] = {
#define UCUT_STAGE_KIND(id, Type) &dsl_kind_##id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  static_assert(sizeof(table) / sizeof(table[0]) == kStageKindCount);
  return *table[dsl_stage_kind_index(k)];
}

}  // namespace ucut::dsl
