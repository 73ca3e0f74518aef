// The space layer's kind table: one entry per row of dsl/stage_kinds.def, in its order.
#include "space/kinds/kinds.h"

namespace ucut::space {

const SpaceStageKind& space_stage_kind(dsl::StageKind k) {
  static const SpaceStageKind* const table[] = {
#define UCUT_STAGE_KIND(id, Type) &space_kind_##id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  static_assert(sizeof(table) / sizeof(table[0]) == dsl::kStageKindCount);
  return *table[dsl::dsl_stage_kind_index(k)];
}

}  // namespace ucut::space
