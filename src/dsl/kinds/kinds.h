// The language's table of stage kinds (the registry's dsl column; the key is dsl::StageKind,
// dsl/stage_kinds.def): per kind, the knobs it takes, its checker, its canonical printer, its CPU
// interpreter and its launch plan's refusal. The checker (checker.cpp), the printer, the
// interpreter and simt_plan_refusal look a stage's kind up here instead of switching over kinds.
// One file per kind in this folder defines its entry (`dsl_kind_<id>`) and holds its printer and
// plan refusal; table.cpp lists them from stage_kinds.def, so a kind without an entry fails to link.
// The parser reads every kind with one grammar (`stage outs = kind ... { knobs blocks }`), so a
// kind has no parse entry of its own: its checker reads the parsed AstStage.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsl/checker.h"
#include "dsl/interp.h"
#include "dsl/program.h"
#include "dsl/stage_kind.h"
#include "support/result.h"

namespace ucut::dsl {

using TensorFinder = std::function<const Tensor*(const std::string&)>;

struct DslStageKind {
  StageKind id;
  const std::vector<std::string>& (*knobs)();  // knob names it accepts, in canonical print order
  // The checker checks knob names before the kind's check (torch refuses knobs itself).
  bool check_knob_names;
  bool (detail::Checker::*check)(const AstStage& s, Stage& st, std::vector<detail::TensorUse>& reads);
  // Appends the stage after "stage " and before its closing "}\n".
  void (*print)(std::string& out, const Stage& st);
  Status (*interpret)(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& scalars);
  // Why the stage's knobs have no launch plan (dsl/simt_plan.h); nullopt when they have one or the
  // kind has no planned kernel.
  std::optional<Error> (*plan_refusal)(const Stage& st, const TensorFinder& find);
};

const DslStageKind& dsl_kind(StageKind k);

#define UCUT_STAGE_KIND(id, Type) extern const DslStageKind dsl_kind_##id;
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND

// ---- parts the entries share ------------------------------------------------------------------

// gemm.cpp: the GEMM knobs (gemm and grouped_gemm stages).
const std::vector<std::string>& dsl_gemm_knobs();
// rowwise.cpp: the knobs of the stages that work in rows (rowwise and reduce stages).
const std::vector<std::string>& dsl_row_knobs();

// printer.cpp
void dsl_print_block(std::string& out, const char* keyword, const Epilogue& epi);
void dsl_print_gemm_knobs(std::string& out, const GemmKnobs& k);
void dsl_print_simt_knobs(std::string& out, const SimtKnobs& k, const std::string& kind);
std::string dsl_operand_str(const Operand& o);
std::string dsl_outputs_str(const Stage& s, size_t n);

// interp.cpp
Status interp_rowwise_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc);
Status interp_reduce_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc);
Status interp_scan_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc);
Status interp_elementwise_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc);
Status interp_attention_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc);

template <class P>
std::optional<Error> dsl_plan_refusal_of(const Result<P>& r) {
  if (r) return std::nullopt;
  return r.error();
}
inline std::optional<Error> dsl_no_plan(const Stage&, const TensorFinder&) { return std::nullopt; }

}  // namespace ucut::dsl
