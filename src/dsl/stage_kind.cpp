#include "dsl/stage_kind.h"

namespace ucut::dsl {

const std::array<StageKind, kStageKindCount>& dsl_stage_kind_list() {
  static const std::array<StageKind, kStageKindCount> kinds = {
#define UCUT_STAGE_KIND(id, Type) StageKind::id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  return kinds;
}

const char* dsl_stage_kind_word(StageKind k) {
  static const char* const words[] = {
#define UCUT_STAGE_KIND(id, Type) #id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
  };
  return words[dsl_stage_kind_index(k)];
}

std::optional<StageKind> dsl_stage_kind_parse(const std::string& word) {
  for (StageKind k : dsl_stage_kind_list())
    if (word == dsl_stage_kind_word(k)) return k;
  return std::nullopt;
}

}  // namespace ucut::dsl
