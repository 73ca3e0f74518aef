// The stage kind as a value: dsl::StageKind, one enumerator per row of dsl/stage_kinds.def, equal
// to the index of the kind's alternative in Stage::body. It is the key of every layer's table of
// stage kinds (the registry: dsl/kinds/kinds.h, sol/kinds/kinds.h, space/kinds/kinds.h,
// codegen/kinds/kinds.h), so code asks a table instead of switching over kinds.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "dsl/program.h"

namespace ucut::dsl {

enum class StageKind : int {
#define UCUT_STAGE_KIND(id, Type) id,
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
};

inline constexpr size_t kStageKindCount = 0
#define UCUT_STAGE_KIND(id, Type) +1
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND
    ;

static_assert(std::variant_size_v<decltype(Stage::body)> == kStageKindCount,
              "dsl/stage_kinds.def has one row per alternative of Stage::body");
#define UCUT_STAGE_KIND(id, Type)                                                                         \
  static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(StageKind::id),             \
                                                          decltype(Stage::body)>,                         \
                               Type>,                                                                     \
                "dsl/stage_kinds.def lists Stage::body's alternatives in order");
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND

inline StageKind dsl_stage_kind_of(const Stage& st) { return static_cast<StageKind>(st.body.index()); }
inline size_t dsl_stage_kind_index(StageKind k) { return static_cast<size_t>(k); }

// Every kind, in stage_kinds.def's order.
const std::array<StageKind, kStageKindCount>& dsl_stage_kind_list();
// The kind's word in the language ("gemm", "rowwise", ...).
const char* dsl_stage_kind_word(StageKind k);
std::optional<StageKind> dsl_stage_kind_parse(const std::string& word);

}  // namespace ucut::dsl
