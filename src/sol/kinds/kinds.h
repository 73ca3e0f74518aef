// The SOL layer's table of stage kinds (the registry's sol column; the key is dsl::StageKind,
// dsl/stage_kinds.def): per kind, what sol_program_estimate counts for one stage — the tensors it
// reads, its FLOPs and the rate they run at. One file per kind in this folder defines its entry
// (`sol_kind_<id>`); table.cpp lists them from stage_kinds.def, so a kind without an entry fails
// to link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/stage_kind.h"
#include "sol/hardware.h"
#include "sol/peaks.h"

namespace ucut::sol {

struct SolRate {
  std::string name;  // "tf32", "auto->bf16", "simt", ...
  double rate;       // FLOP/s
};

// What an entry is given: the peaks, the program and policy, and the stage's main output's elements.
struct SolKindContext {
  const Peaks& pk;
  const dsl::Program& prog;
  Policy policy;
  int64_t out_elems;
};

// What an entry fills in (reads may repeat; the estimate counts each tensor once). The rate starts
// at FP32 SIMT's.
struct SolStageWork {
  std::vector<std::string> reads;
  SolRate rate;
  int64_t flops = 0;
};

struct SolStageKind {
  dsl::StageKind id;
  void (*work)(const SolKindContext& ctx, const dsl::Stage& st, SolStageWork& out);
};

const SolStageKind& sol_stage_kind(dsl::StageKind k);

#define UCUT_STAGE_KIND(id, Type) extern const SolStageKind sol_kind_##id;
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND

// ---- parts the entries share (program_estimate.cpp) -------------------------------------------

// FLOPs per element of an epilogue block and of a row-wise / reduce op (the Problem IR's convention).
int sol_epilogue_cost(const dsl::Epilogue& ep);
int sol_row_op_cost(const std::string& op);
// The tensors a block loads, appended.
void sol_epilogue_loads(const dsl::Epilogue& ep, std::vector<std::string>& out);
// The rate of a GEMM at a precision (auto: the policy's, or bf16's on 16-bit data).
SolRate sol_gemm_rate(const Peaks& pk, dsl::Precision prec, bool half_data, Policy policy);
int64_t sol_numel_of(const dsl::Program& prog, const std::string& name);

}  // namespace ucut::sol
