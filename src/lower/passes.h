// The lowering passes, one per file, run in the order lower.cpp lists. Each takes the working
// state (lower_state.h) and either refines it or returns why the problem cannot be lowered.
// Each pass's file opens with what it does, what must run before it and the golden test
// (tests/golden/lower/<name>.json -> .ucut) that shows it.
#pragma once

#include "lower/lower.h"
#include "lower/lower_state.h"
#include "support/result.h"

namespace ucut::lower {

Status pass_dead_ops(LowerState& s);           // pass_dead_ops.cpp
Status pass_views(LowerState& s);              // pass_views.cpp
Status pass_expand_ops(LowerState& s);         // pass_expand_ops.cpp
Status pass_strided_copies(LowerState& s);     // pass_strided_copies.cpp
Status pass_match_conv(LowerState& s);         // pass_match_conv.cpp
Status pass_check_ops(LowerState& s);          // pass_check_ops.cpp
Status pass_match_gemm(LowerState& s);         // pass_match_gemm.cpp
Status pass_simt_stages(LowerState& s);        // pass_simt_stages.cpp
Status pass_fuse_epilogue(LowerState& s);      // pass_fuse_epilogue.cpp
Status pass_row_reductions(LowerState& s);     // pass_row_reductions.cpp
Status pass_split_stores(LowerState& s);       // pass_split_stores.cpp
Status pass_precision(LowerState& s);          // pass_precision.cpp
Result<LoweredProgram> pass_emit(LowerState& s);  // pass_emit.cpp

}  // namespace ucut::lower
