// The SOL layer's kind table: one entry per row of dsl/stage_kinds.def, in its order.
#include "sol/kinds/kinds.h"

namespace ucut::sol {

const SolStageKind& sol_stage_kind(dsl::StageKind k) {
  static const SolStageKind* const table[] = {
#define UCUT_STAGE_KIND(id, Type) &sol_kind_##id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  static_assert(sizeof(table) / sizeof(table[0]) == dsl::kStageKindCount);
  return *table[dsl::dsl_stage_kind_index(k)];
}

}  // namespace ucut::sol
