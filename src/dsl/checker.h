// The checker: AST (ast.h) to a checked Program (program.h), or diagnostics. It resolves names,
// infers GEMM dimensions, checks shapes, dtypes, epilogue typing, knob values, the data flow
// between stages (each out/tmp written once, tmp written before it is read) and calls the GEMM
// legality rules (gemm_rules.h). Runs after dsl_parse; golden tests: tests/golden/dsl/errors.
//
// The work is split by stage kind: checker.cpp (program, declarations, data flow),
// check_expr.cpp (epilogue blocks), check_gemm.cpp (gemm, grouped_gemm), check_simt.cpp
// (rowwise, reduce, scan, elementwise), check_torch.cpp (torch), check_conv.cpp (conv),
// check_window.cpp (window).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/program.h"

namespace ucut::dsl {

// Runs the checker; `default_name` names the program when it has no `name` line.
std::optional<Program> dsl_check(const AstProgram& ast, const std::string& default_name,
                                 std::vector<Diagnostic>& diags);

namespace detail {

// A read of a tensor by a stage, for the data-flow check.
struct TensorUse {
  std::string name;
  Span span;
};

// What an epilogue/prologue/body block may do and what its loads are measured against.
struct BlockRules {
  std::string what;                 // "the epilogue of this gemm stage", for messages
  std::string target;               // the name the block must store exactly once
  bool allow_acc = true;
  bool allow_loads = true;
  bool allow_reductions = false;    // rowsum/colmax ... into extra tensors (GEMM epilogues)
  bool broadcast = false;           // elementwise: full loads broadcast numpy-style
  bool allow_vectors = true;        // v[row] / v[col] reads
  bool allow_index = false;         // `row` / `col`: the element's position (rowwise, elementwise)
  std::string index_hint;           // where the position is available instead (refusal's hint)
  std::vector<int64_t> shape;       // shape of the value being computed (the stored tensor)
  int64_t rows = 0, cols = 0;       // [row] length and [col] length
  int64_t batch = 1;                // GEMM batch: row/col vectors may be [batch, len]
};

class Checker;
// check_gemm.cpp: the GEMM knobs a stage wrote (gemm, grouped_gemm and conv stages).
bool parse_gemm_knobs(Checker& c, const AstStage& s, GemmKnobs& k);

class Checker {
 public:
  Checker(const AstProgram& ast, std::vector<Diagnostic>& diags) : ast_(ast), diags_(diags) {}
  std::optional<Program> run(const std::string& default_name);

  // ---- shared helpers (checker.cpp) ----
  void error(Span at, std::string message, std::string hint = {});
  const Tensor* tensor(const std::string& name) const { return prog_.find_tensor(name); }
  // Looks up a tensor; on failure reports "unknown tensor" with did-you-mean and returns null.
  const Tensor* need_tensor(const AstName& n, const std::string& what);
  std::string did_you_mean_tensor(const std::string& name) const;
  static std::string shape_str(const std::vector<int64_t>& s);
  static std::string tensor_str(const Tensor& t);  // "x : f32[1024, 8192]"
  // Knob parsing for the knobs a stage kind accepts; reports unknown/duplicate/misplaced knobs.
  bool check_knob_names(const AstStage& s);
  const AstKnob* knob(const AstStage& s, const std::string& name) const;
  // The knob when it is written with a value other than `auto`, else null.
  const AstKnob* set_knob(const AstStage& s, const std::string& name) const;
  // An integer knob: nullopt for auto (or absent). `ok` is set false on a reported error.
  std::optional<int> int_knob(const AstStage& s, const std::string& name, int lo, int hi, bool& ok,
                              const std::string& hint, bool pow2 = false);
  // A word knob: the index of its value among `values` (values[0] is "auto"); 0 when absent.
  // `ok` is set false on a reported error (with "did you mean").
  int word_knob(const AstStage& s, const std::string& name, const std::vector<std::string>& values, bool& ok);

  // ---- check_expr.cpp ----
  bool check_block(const AstBlock* block, const BlockRules& rules, Span stage_span, Epilogue& out,
                   std::vector<TensorUse>& reads, std::vector<TensorUse>& extra_outputs);

  // ---- check_gemm.cpp ----
  bool check_gemm(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool check_grouped_gemm(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  // A stage's arguments split into the positional ones (tensor names, first) and `key=value`
  // settings among `keys`; reports a positional one after a setting, a positional one that is not
  // a plain tensor name (`operands_msg`, hint `example`), an unknown setting ("<what> has no
  // setting": did you mean, else the settings, else `no_keys_hint`) and a repeated one.
  bool split_stage_args(const AstStage& s, const std::string& what, const std::vector<std::string>& keys,
                        const std::string& operands_msg, const std::string& example, const std::string& no_keys_hint,
                        std::vector<const AstArg*>& pos, std::map<std::string, const AstArg*>& kw);
  // ---- check_conv.cpp ----
  bool check_conv(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  // ---- check_window.cpp ----
  bool check_window(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);

  // ---- check_simt.cpp ----
  bool check_rowwise(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool check_reduce(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool check_scan(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool check_attention(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool check_elementwise(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  // ---- check_torch.cpp ----
  bool check_torch(const AstStage& s, Stage& st, std::vector<TensorUse>& reads);
  bool simt_knobs(const AstStage& s, SimtKnobs& k, const Tensor& data);
  // A checked non-GEMM stage whose knobs have no launch plan (dsl/simt_plan.h) is reported at the
  // knob most likely at fault; true when the plan exists (or the stage is a GEMM).
  bool simt_plan_ok(const AstStage& s, const Stage& st);
  const AstBlock* block(const AstStage& s, const std::string& name) const;
  bool check_blocks_allowed(const AstStage& s, const std::vector<std::string>& allowed);
  bool check_args_none(const AstStage& s);
  Program& program() { return prog_; }

 private:
  ExprPtr expr(const AstExpr& e, const BlockRules& rules, const std::set<std::string>& lets,
               std::vector<TensorUse>& reads, bool& ok);
  bool check_load_shape(const Tensor& t, LoadMode mode, const BlockRules& rules, Span at);
  bool check_view_decl(const AstDecl& d, Tensor& t);  // checker.cpp

  const AstProgram& ast_;
  std::vector<Diagnostic>& diags_;
  Program prog_;
  int errors_ = 0;
};

}  // namespace detail
}  // namespace ucut::dsl
