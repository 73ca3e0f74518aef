// The code generator's table of stage kinds (the registry's codegen column; the key is
// dsl::StageKind, dsl/stage_kinds.def): per kind, its stage emitter (stage_emitter.h) and whether
// the host runs it (the library then exports ucut_set_host). The library emitter (library.cpp)
// looks a stage's kind up here. One file per kind in this folder defines its entry
// (`codegen_kind_<id>`); table.cpp lists them from stage_kinds.def, so a kind without an entry
// fails to link.
#pragma once

#include "codegen/stage_emitter.h"
#include "dsl/stage_kind.h"

namespace ucut::codegen {

struct CodegenStageKind {
  dsl::StageKind id;
  StageEmitter emit;
  bool host;  // run by the host (PyTorch) through ucut_set_host, not by a kernel
};

const CodegenStageKind& codegen_stage_kind(dsl::StageKind k);

#define UCUT_STAGE_KIND(id, Type) extern const CodegenStageKind codegen_kind_##id;
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND

}  // namespace ucut::codegen
